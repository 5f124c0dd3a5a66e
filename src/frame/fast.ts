/**
 * Hand-tuned encoders for the frames sent most: basic.deliver, basic.ack and basic.nack.
 * Byte-for-byte equal to encodeMethodFrame's output (fuzzed against it in test/frame/fast.test.ts).
 */
import { shortstrLength, writeShortstr, writeU64 } from './wire.js';

/** basic.deliver (60.60) method frame. */
export function encodeBasicDeliver(
  channel: number,
  consumerTag: string,
  deliveryTag: number,
  redelivered: boolean,
  exchange: string,
  routingKey: string,
): Buffer {
  const prefix = basicDeliverPrefix(channel, consumerTag);
  const le = shortstrLength(exchange);
  const lr = shortstrLength(routingKey);
  const b = Buffer.allocUnsafe(basicDeliverFrameSize(prefix.length, le, lr));
  writeBasicDeliver(b, 0, prefix, deliveryTag, redelivered, exchange, le, routingKey, lr);
  return b;
}

/**
 * The first octets of every basic.deliver frame to one consumer: frame type, channel, a size
 * left 0 (writeBasicDeliver writes it), class and method ids and the consumer tag as a shortstr.
 * Made once per consumer, copied into each delivery. Throws for a tag over 255 octets.
 */
export function basicDeliverPrefix(channel: number, consumerTag: string): Buffer {
  const lc = shortstrLength(consumerTag);
  const b = Buffer.alloc(12 + lc);
  b[0] = 1;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(0x003c003c, 7);
  writeShortstr(b, 11, consumerTag, lc);
  return b;
}

/** Octets of a basic.deliver method frame with this prefix whose exchange and routing key take le and lr octets. */
export function basicDeliverFrameSize(prefixLength: number, le: number, lr: number): number {
  return prefixLength + 12 + le + lr; // delivery-tag 8, bits 1, 2 length octets, frame-end 1
}

/**
 * Writes a basic.deliver method frame into b at `at` (basicDeliverFrameSize octets; prefix from
 * basicDeliverPrefix, le and lr from shortstrLength); returns the offset after it.
 * FrameWriter.writeDeliver uses it to encode straight into its coalescing buffer.
 */
export function writeBasicDeliver(
  b: Buffer, at: number, prefix: Buffer, deliveryTag: number, redelivered: boolean, exchange: string, le: number, routingKey: string, lr: number,
): number {
  let o = writeBasicDeliverHead(b, at, prefix, deliveryTag, redelivered, le + lr);
  o = writeShortstr(b, o, exchange, le);
  o = writeShortstr(b, o, routingKey, lr);
  b[o] = 0xce;
  return o + 1;
}

/**
 * The first octets of a basic.deliver method frame, up to its exchange: the prefix with the
 * payload size filled in (`strings`: the exchange's and routing key's octets), the delivery tag
 * and the redelivered bit. Returns the offset after them. FrameWriter copies the rest of a
 * delivery from a kept tail (WireCache) after these.
 */
export function writeBasicDeliverHead(b: Buffer, at: number, prefix: Buffer, deliveryTag: number, redelivered: boolean, strings: number): number {
  // The whole prefix at once: TypedArray's set() of a whole array is a builtin, not a call into
  // C++ as Buffer's copy() is, and cheaper than a copy loop from a dozen octets on.
  const n = prefix.length;
  b.set(prefix, at);
  const size = n + 4 + strings; // payload: after the 7-octet frame header, before frame-end
  b[at + 3] = size >>> 24;
  b[at + 4] = (size >>> 16) & 0xff;
  b[at + 5] = (size >>> 8) & 0xff;
  b[at + 6] = size & 0xff;
  const o = at + n;
  writeU64(b, o, deliveryTag);
  b[o + 8] = redelivered ? 1 : 0;
  return o + 9;
}

/** basic.ack (60.80) method frame: 21 octets. */
export function encodeBasicAck(channel: number, deliveryTag: number, multiple: boolean): Buffer {
  const b = Buffer.allocUnsafe(21);
  b[0] = 1;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(13, 3);
  b.writeUInt32BE(0x003c0050, 7);
  writeU64(b, 11, deliveryTag);
  b[19] = multiple ? 1 : 0;
  b[20] = 0xce;
  return b;
}

/** basic.nack (60.120) method frame: 21 octets. */
export function encodeBasicNack(channel: number, deliveryTag: number, multiple: boolean, requeue: boolean): Buffer {
  const b = Buffer.allocUnsafe(21);
  b[0] = 1;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(13, 3);
  b.writeUInt32BE(0x003c0078, 7);
  writeU64(b, 11, deliveryTag);
  b[19] = (multiple ? 1 : 0) | (requeue ? 2 : 0);
  b[20] = 0xce;
  return b;
}
