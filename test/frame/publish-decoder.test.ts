import { expect } from 'chai';
import { decodeMethod, encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { BasicPublishDecoder } from '../../src/frame/publish-decoder.js';
import { int, rng, type Rng } from './helpers.js';

function str(r: Rng): string {
  const parts = ['', 'amq.', 'q', 'é', '中文', '😀', 'x'.repeat(100)];
  let s = '';
  for (let i = int(r, 3); i > 0; i--) s += parts[int(r, parts.length)];
  while (Buffer.byteLength(s) > 255) s = s.slice(0, -1);
  return s;
}

/** The payload of a method frame. */
function payloadOf(frame: Buffer): Buffer {
  return frame.subarray(7, frame.length - 1);
}

/** What decodeMethod makes of p: basic.publish's fields, or undefined (another method, or a throw). */
function generic(p: Buffer): { exchange: string; routingKey: string; mandatory: boolean; immediate: boolean } | undefined {
  try {
    const m = decodeMethod(p);
    if (m.name !== 'basic.publish') return undefined;
    const { exchange, routingKey, mandatory, immediate } = m.args;
    return { exchange, routingKey, mandatory, immediate };
  } catch {
    return undefined;
  }
}

describe('BasicPublishDecoder decodes basic.publish as decodeMethod does (fuzz)', () => {
  const r = rng(19);

  it('gives the same fields for well-formed publishes, reusing strings for repeated bytes', () => {
    const d = new BasicPublishDecoder();
    let last = { exchange: '', routingKey: '' };
    for (let i = 0; i < 3000; i++) {
      // Often the same exchange and key again, as a publisher sends them.
      const a = r() < 0.5 ? { ...last, mandatory: r() < 0.5, immediate: r() < 0.2 }
        : { exchange: str(r), routingKey: str(r), mandatory: r() < 0.5, immediate: r() < 0.2 };
      last = a;
      const p = payloadOf(encodeMethodFrame(1, 'basic.publish', a));
      expect(d.decode(p)).to.equal(true);
      expect({ exchange: d.exchange, routingKey: d.routingKey, mandatory: d.mandatory, immediate: d.immediate }).to.deep.equal(generic(p));
    }
  });

  it('refuses what decodeMethod refuses or decodes as another method: truncated, extended, corrupted', () => {
    const d = new BasicPublishDecoder();
    for (let i = 0; i < 3000; i++) {
      const a = { exchange: str(r), routingKey: str(r), mandatory: r() < 0.5, immediate: false };
      let p = Buffer.from(payloadOf(encodeMethodFrame(1, 'basic.publish', a)));
      const change = int(r, 4);
      if (change === 0) p = p.subarray(0, int(r, p.length));
      else if (change === 1) p = Buffer.concat([p, Buffer.alloc(1 + int(r, 3))]);
      else if (change === 2) p[int(r, p.length)] = int(r, 256);
      const expected = generic(p);
      expect(d.decode(p)).to.equal(expected !== undefined);
      if (expected) expect({ exchange: d.exchange, routingKey: d.routingKey, mandatory: d.mandatory, immediate: d.immediate }).to.deep.equal(expected);
    }
  });

  it('takes no other method', () => {
    const d = new BasicPublishDecoder();
    expect(d.decode(payloadOf(encodeMethodFrame(1, 'basic.get', { queue: 'q', noAck: false })))).to.equal(false);
    expect(d.decode(Buffer.alloc(3))).to.equal(false);
  });
});
