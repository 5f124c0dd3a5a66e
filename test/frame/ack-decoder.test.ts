import { expect } from 'chai';
import { decodeMethod, encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { basicAckMultiple, basicAckTag } from '../../src/frame/ack-decoder.js';
import { int, rng } from './helpers.js';

/** The payload of a method frame. */
function payloadOf(frame: Buffer): Buffer {
  return frame.subarray(7, frame.length - 1);
}

/** What decodeMethod makes of p: basic.ack's fields, or undefined (another method, or a throw). */
function generic(p: Buffer): { deliveryTag: number; multiple: boolean } | undefined {
  try {
    const m = decodeMethod(p);
    return m.name === 'basic.ack' ? { deliveryTag: m.args.deliveryTag, multiple: m.args.multiple } : undefined;
  } catch {
    return undefined;
  }
}

/** basicAckTag's reading of p placed inside a larger buffer (as the connection hands it over). */
function fast(p: Buffer): { deliveryTag: number; multiple: boolean } | undefined {
  const buf = Buffer.concat([Buffer.from([1, 2, 3]), p, Buffer.from([0xce, 9])]);
  const tag = basicAckTag(buf, 3, 3 + p.length);
  return tag < 0 ? undefined : { deliveryTag: tag, multiple: basicAckMultiple(buf, 3 + p.length) };
}

describe('basicAckTag reads basic.ack as decodeMethod does', () => {
  it('gives the same tag and multiple flag for well-formed acks, other bits ignored', () => {
    const r = rng(80);
    const tags = [0, 1, 2, 255, 256, 0xffffffff, 0x100000000, 2 ** 53 - 1];
    for (let i = 0; i < 500; i++) {
      const deliveryTag = i < tags.length ? tags[i]! : int(r, 2 ** 31) * (r() < 0.1 ? 4096 : 1);
      const p = Buffer.from(payloadOf(encodeMethodFrame(1, 'basic.ack', { deliveryTag, multiple: r() < 0.5 })));
      // Bits after `multiple` are reserved: decodeMethod ignores them, so must this.
      if (r() < 0.3) p[p.length - 1] = p[p.length - 1]! | (int(r, 127) << 1);
      expect(fast(p)).to.deep.equal(generic(p));
      expect(fast(p)?.deliveryTag).to.equal(deliveryTag);
    }
  });

  it('takes nothing but a basic.ack of exactly 13 octets (the rest is left to decodeMethod)', () => {
    const ack = payloadOf(encodeMethodFrame(1, 'basic.ack', { deliveryTag: 7, multiple: true }));
    expect(fast(ack.subarray(0, 12))).to.equal(undefined);
    expect(fast(Buffer.concat([ack, Buffer.from([0])]))).to.equal(undefined);
    expect(fast(Buffer.alloc(0))).to.equal(undefined);
    for (const m of [
      encodeMethodFrame(1, 'basic.nack', { deliveryTag: 7, multiple: true, requeue: true }),
      encodeMethodFrame(1, 'basic.reject', { deliveryTag: 7, requeue: false }),
      encodeMethodFrame(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 7, global: false }),
      encodeMethodFrame(1, 'basic.recover', { requeue: true }),
    ]) {
      expect(fast(payloadOf(m)), 'another method').to.equal(undefined);
    }
    // The same size and ids but class 60 method 81 (no such method) is not an ack either.
    const other = Buffer.from(ack);
    other[3] = 81;
    expect(fast(other)).to.equal(undefined);
  });
});
