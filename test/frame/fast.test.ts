import { expect } from 'chai';
import { encodeBasicAck, encodeBasicDeliver, encodeBasicNack } from '../../src/frame/fast.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { int, rng, type Rng } from './helpers.js';

function str(r: Rng): string {
  const parts = ['', 'amq.ctag-', 'q', 'é', '中文', '😀', 'x'.repeat(100)];
  let s = '';
  for (let i = int(r, 4); i > 0; i--) s += parts[int(r, parts.length)];
  while (Buffer.byteLength(s) > 255) s = s.slice(0, -1);
  return s;
}

describe('fast encoders equal the generic encoder byte for byte (fuzz)', () => {
  const r = rng(99);
  it('basic.deliver', () => {
    for (let i = 0; i < 3000; i++) {
      const a = { consumerTag: str(r), deliveryTag: int(r, 2 ** 53), redelivered: r() < 0.5, exchange: str(r), routingKey: str(r) };
      const ch = int(r, 65536);
      expect(encodeBasicDeliver(ch, a.consumerTag, a.deliveryTag, a.redelivered, a.exchange, a.routingKey)).to.deep.equal(
        encodeMethodFrame(ch, 'basic.deliver', a),
      );
    }
  });
  it('basic.ack', () => {
    for (let i = 0; i < 3000; i++) {
      const tag = i < 3 ? [0, 1, Number.MAX_SAFE_INTEGER][i]! : int(r, 2 ** 53);
      const multiple = r() < 0.5;
      expect(encodeBasicAck(7, tag, multiple)).to.deep.equal(encodeMethodFrame(7, 'basic.ack', { deliveryTag: tag, multiple }));
    }
  });
  it('basic.nack', () => {
    for (let i = 0; i < 3000; i++) {
      const a = { deliveryTag: int(r, 2 ** 53), multiple: r() < 0.5, requeue: r() < 0.5 };
      expect(encodeBasicNack(65535, a.deliveryTag, a.multiple, a.requeue)).to.deep.equal(encodeMethodFrame(65535, 'basic.nack', a));
    }
  });
});
