import { expect } from 'chai';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/** A body split into many small frames reaches the queue whole (the assembler copies, keeps no frame). */
describe('publishing a body in many small frames', () => {
  const broker = useBroker();

  it('routes a 64 KiB body sent as 1- to 13-byte frames in confirm mode, and confirms it', async () => {
    const conn = await connect(broker.url);
    const ch = await channel(conn);
    await ch.assertQueue('tiny-frames');

    const body = Buffer.alloc(64 * 1024);
    for (let i = 0; i < body.length; i++) body[i] = (i * 7 + (i >> 10)) & 0xff;
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'confirm.select', { nowait: false });
    await c.expect('confirm.select-ok');
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'tiny-frames', mandatory: false, immediate: false });
    const frames = [encodeContentHeaderFrame(1, 60, body.length, { contentType: 'application/octet-stream' })];
    for (let off = 0, n = 1; off < body.length; off += n, n = (n % 13) + 1) {
      frames.push(encodeFrame(3, 1, body.subarray(off, Math.min(body.length, off + n))));
    }
    c.write(Buffer.concat(frames));
    const ack = await c.expect('basic.ack');
    expect(ack).to.include({ deliveryTag: 1, multiple: false });

    const got = await ch.get('tiny-frames', { noAck: true });
    expect(got && got.content.equals(body), 'body arrives intact').to.equal(true);
    expect(got && got.properties.contentType).to.equal('application/octet-stream');
    c.close();
    await conn.close();
  });
});
