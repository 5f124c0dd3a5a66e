import { expect } from 'chai';
import { channel, connect, type Channel, type ChannelModel } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';

/**
 * Issue 10: the in-memory identity of a binding joined its fields with NUL bytes, so two
 * bindings whose (destination, routing key) differed only by where a NUL sat were one binding:
 * the second bind was ignored, and unbinding either removed the other. RabbitMQ keeps both.
 */
describe('bindings whose names and keys contain NUL bytes (issue 10)', () => {
  const b = useBroker();
  let conn: ChannelModel;
  let ch: Channel;

  beforeEach(async () => {
    conn = await connect(b.url);
    ch = await channel(conn);
  });
  afterEach(async () => {
    await conn.close();
  });

  /** Bodies now ready on queue, taken with basic.get. */
  async function bodies(queue: string): Promise<string[]> {
    const out: string[] = [];
    for (let m = await ch.get(queue, { noAck: true }); m; m = await ch.get(queue, { noAck: true })) out.push(m.content.toString());
    return out;
  }

  it('keeps (queue "q\\0a", key "b") and (queue "q", key "a\\0b") apart: both exist and both route', async () => {
    const x = 'nul-x';
    const q1 = 'nul-q\u0000a';
    const q2 = 'nul-q';
    await ch.assertExchange(x, 'direct', { durable: false, autoDelete: true });
    await ch.assertQueue(q1, { exclusive: true });
    await ch.assertQueue(q2, { exclusive: true });
    await ch.bindQueue(q1, x, 'b');
    await ch.bindQueue(q2, x, 'a\u0000b');
    ch.publish(x, 'b', Buffer.from('to q1'));
    ch.publish(x, 'a\u0000b', Buffer.from('to q2'));
    expect(await bodies(q1)).to.deep.equal(['to q1']);
    expect(await bodies(q2)).to.deep.equal(['to q2']);

    // Unbinding one leaves the other in place.
    await ch.unbindQueue(q1, x, 'b');
    ch.publish(x, 'b', Buffer.from('unrouted'));
    ch.publish(x, 'a\u0000b', Buffer.from('still to q2'));
    expect(await bodies(q2)).to.deep.equal(['still to q2']);
    expect(await bodies(q1)).to.deep.equal([]);
  });

  it('keeps exchange-to-exchange bindings apart the same way', async () => {
    const src = 'nul-src';
    const d1 = 'nul-d\u0000k';
    const d2 = 'nul-d';
    await ch.assertExchange(src, 'direct', { autoDelete: false, durable: false });
    await ch.assertExchange(d1, 'fanout', { autoDelete: false, durable: false });
    await ch.assertExchange(d2, 'fanout', { autoDelete: false, durable: false });
    const q1 = (await ch.assertQueue('', { exclusive: true })).queue;
    const q2 = (await ch.assertQueue('', { exclusive: true })).queue;
    await ch.bindQueue(q1, d1, '');
    await ch.bindQueue(q2, d2, '');
    await ch.bindExchange(d1, src, 'x');
    await ch.bindExchange(d2, src, 'k\u0000x');
    ch.publish(src, 'x', Buffer.from('via d1'));
    ch.publish(src, 'k\u0000x', Buffer.from('via d2'));
    expect(await bodies(q1)).to.deep.equal(['via d1']);
    expect(await bodies(q2)).to.deep.equal(['via d2']);
    for (const e of [src, d1, d2]) await ch.deleteExchange(e);
  });
});
