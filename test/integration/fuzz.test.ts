import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { loadSpec } from '../../src/frame/codegen/spec-model.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame, type MethodArgsInput, type MethodName } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { sampleArgs } from '../support/random-methods.js';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { int, rng, type Rng } from '../frame/helpers.js';

const METHOD_SPECS = loadSpec(readFileSync('spec/amqp0-9-1.stripped.extended.xml', 'utf8')).flatMap((c) => c.methods);

/** One random but well-framed frame: any method with random arguments, a header, a body or a heartbeat. */
function randomFrame(r: Rng): Buffer {
  const ch = int(r, 4);
  const pick = r();
  if (pick < 0.7) {
    const m = METHOD_SPECS[int(r, METHOD_SPECS.length)]!;
    const name = `${m.className}.${m.name}` as MethodName;
    return encodeMethodFrame(ch, name, sampleArgs(m, r, 'random') as unknown as MethodArgsInput<MethodName>);
  }
  if (pick < 0.85) return encodeContentHeaderFrame(ch, 60, int(r, 64), r() < 0.5 ? {} : { deliveryMode: 2, headers: {} });
  if (pick < 0.95) return encodeFrame(3, ch, Buffer.alloc(int(r, 64), 'z'));
  return encodeFrame(8, 0, Buffer.alloc(0));
}

/**
 * Bad input never takes the broker down or harms another client's data (issue: malformed
 * input). Several peers send thousands of random, well-framed methods, headers and bodies;
 * afterwards the broker still serves new clients and another client's queue is intact.
 */
describe('fuzzing with random well-framed input', () => {
  const broker = useBroker();

  it('survives random methods on random channels from many connections; other clients are unharmed', async function () {
    this.timeout(30000);
    const owner = await connect(broker.url);
    const och = await confirmChannel(owner);
    await och.assertQueue('precious', { durable: true });
    for (let i = 0; i < 10; i++) och.sendToQueue('precious', Buffer.from(`keep-${i}`), { persistent: true });
    await och.waitForConfirms();

    const r = rng(20261123);
    for (let peer = 0; peer < 30; peer++) {
      const c = await RawClient.open(broker.url);
      for (let k = 1; k <= 3; k++) c.method(k, 'channel.open', { reserved1: '' });
      for (let i = 0; i < 300 && !c.closed; i++) c.write(randomFrame(r));
      // Each peer ends up closed by the broker (or we drop it); either way the broker lives on.
      await c.until(() => c.closed || c.frames.some((f) => f.method?.name === 'connection.close'), 2000);
      c.destroy();
    }

    const conn = await connect(broker.url);
    const ch = await channel(conn);
    const { messageCount } = await ch.checkQueue('precious');
    expect(messageCount).to.equal(10);
    const first = await ch.get('precious', { noAck: false });
    expect(first && first.content.toString()).to.equal('keep-0');
    await conn.close();
    await owner.close();
  });
});
