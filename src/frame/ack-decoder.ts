/**
 * basic.ack (60.80), the method a consumer sends most, read straight from its method frame's
 * payload p[start, end): no Method or args object per ack. The generic decoder
 * (decodeMethod, generated/methods.ts) remains the reference: a payload this one does not take
 * (another method, or basic.ack of the wrong length) is left to it.
 */
import { readU64 } from './wire.js';

const BASIC_ACK = 0x003c0050;
/** Class and method ids, the delivery tag (longlong) and the bit octet. */
const BASIC_ACK_SIZE = 4 + 8 + 1;

/**
 * The delivery tag of a well-formed basic.ack in p[start, end), as decodeMethod reads it; -1
 * for anything else. Its `multiple` flag is basicAckMultiple(p, end).
 */
export function basicAckTag(p: Buffer, start: number, end: number): number {
  if (end - start !== BASIC_ACK_SIZE || p.readUInt32BE(start) !== BASIC_ACK) return -1;
  return readU64(p, start + 4);
}

/** The `multiple` bit of the basic.ack that basicAckTag took from p[.., end). */
export function basicAckMultiple(p: Buffer, end: number): boolean {
  return (p[end - 1]! & 1) !== 0;
}
