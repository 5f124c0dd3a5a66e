/**
 * basic.publish (60.40), the method a broker receives most, decoded straight from its method
 * frame's payload into reused fields: no Method or args object per publish, and the exchange
 * name and routing key decoded to strings only when their bytes differ from the previous
 * publish's (a publisher usually sends the same ones again), so the common case allocates
 * nothing. The generic decoder (decodeMethod, generated/methods.ts) remains the reference: a
 * payload this one does not take (another method, or basic.publish with the wrong length) is
 * left to it, and it answers exactly as RabbitMQ does.
 */
import { readU32 } from './wire.js';

const BASIC_PUBLISH = 0x003c0028;

export class BasicPublishDecoder {
  exchange = '';
  routingKey = '';
  mandatory = false;
  immediate = false;
  /**
   * The bytes exchange and routingKey were decoded from (a shortstr is at most 255 octets): a
   * publisher that changes its key every time costs a copy of the bytes, no allocation.
   */
  private readonly exchangeBytes: Buffer;
  private exchangeLength = 0;
  private readonly routingKeyBytes: Buffer;
  private routingKeyLength = 0;

  constructor() {
    // One allocation for both (510 octets, Node's pool).
    const bytes = Buffer.allocUnsafe(510);
    this.exchangeBytes = bytes.subarray(0, 255);
    this.routingKeyBytes = bytes.subarray(255);
  }

  /**
   * Decodes the method-frame payload p[start, end) (all of p by default) if it is a well-formed
   * basic.publish (class and method ids, reserved short, exchange and routing-key shortstrs,
   * the bit octet, nothing after) and returns true; returns false, the fields unspecified, for
   * anything else.
   */
  decode(p: Buffer, start = 0, end = p.length): boolean {
    if (end - start < 9 || readU32(p, start) !== BASIC_PUBLISH) return false;
    const s1 = start + 7;
    const e1 = s1 + p[start + 6]!;
    if (e1 + 1 > end) return false;
    const s2 = e1 + 1;
    const e2 = s2 + p[e1]!;
    if (e2 + 1 !== end) return false;
    const bits = p[e2]!;
    if (!same(this.exchangeBytes, this.exchangeLength, p, s1, e1)) {
      this.exchange = p.toString('utf8', s1, e1);
      this.exchangeLength = copy(p, s1, e1, this.exchangeBytes);
    }
    if (!same(this.routingKeyBytes, this.routingKeyLength, p, s2, e2)) {
      this.routingKey = p.toString('utf8', s2, e2);
      this.routingKeyLength = copy(p, s2, e2, this.routingKeyBytes);
    }
    this.mandatory = (bits & 1) !== 0;
    this.immediate = (bits & 2) !== 0;
    return true;
  }
}

/** a[0, length) holds the bytes of p[start, end). */
function same(a: Buffer, length: number, p: Buffer, start: number, end: number): boolean {
  if (length !== end - start) return false;
  for (let i = 0; i < length; i++) if (a[i] !== p[start + i]) return false;
  return true;
}

/** Copies p[start, end) to the start of into; returns its length. */
function copy(p: Buffer, start: number, end: number, into: Buffer): number {
  const n = end - start;
  for (let i = 0; i < n; i++) into[i] = p[start + i]!;
  return n;
}
