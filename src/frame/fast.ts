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
  const lc = shortstrLength(consumerTag);
  const le = shortstrLength(exchange);
  const lr = shortstrLength(routingKey);
  const b = Buffer.allocUnsafe(basicDeliverFrameSize(lc, le, lr));
  writeBasicDeliver(b, 0, channel, consumerTag, lc, deliveryTag, redelivered, exchange, le, routingKey, lr);
  return b;
}

/** Octets of a basic.deliver method frame whose shortstrs take lc, le and lr octets. */
export function basicDeliverFrameSize(lc: number, le: number, lr: number): number {
  return 24 + lc + le + lr; // payload: ids 4 + 3 length octets + delivery-tag 8 + bits 1; frame 8
}

/**
 * Writes a basic.deliver method frame into b at `at` (basicDeliverFrameSize octets; lc, le, lr
 * from shortstrLength); returns the offset after it. FrameWriter.writeDeliver uses it to encode
 * straight into its coalescing buffer.
 */
export function writeBasicDeliver(
  b: Buffer, at: number, channel: number,
  consumerTag: string, lc: number, deliveryTag: number, redelivered: boolean, exchange: string, le: number, routingKey: string, lr: number,
): number {
  const size = 16 + lc + le + lr;
  b[at] = 1;
  b.writeUInt16BE(channel, at + 1);
  b.writeUInt32BE(size, at + 3);
  b.writeUInt32BE(0x003c003c, at + 7);
  let o = writeShortstr(b, at + 11, consumerTag, lc);
  writeU64(b, o, deliveryTag);
  b[o + 8] = redelivered ? 1 : 0;
  o = writeShortstr(b, o + 9, exchange, le);
  o = writeShortstr(b, o, routingKey, lr);
  b[o] = 0xce;
  return o + 1;
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
