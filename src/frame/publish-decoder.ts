/**
 * basic.publish (60.40), the method a broker receives most, decoded straight from its method
 * frame's payload into reused fields: no Method or args object per publish, and the exchange
 * name and routing key decoded to strings only when their bytes differ from the previous
 * publish's (a publisher usually sends the same ones again), so the common case allocates
 * nothing. The generic decoder (decodeMethod, generated/methods.ts) remains the reference: a
 * payload this one does not take (another method, or basic.publish with the wrong length) is
 * left to it, and it answers exactly as RabbitMQ does.
 */
const BASIC_PUBLISH = 0x003c0028;

export class BasicPublishDecoder {
  exchange = '';
  routingKey = '';
  mandatory = false;
  immediate = false;
  /** The bytes exchange and routingKey were decoded from. */
  private exchangeBytes: Buffer = Buffer.alloc(0);
  private routingKeyBytes: Buffer = Buffer.alloc(0);

  /**
   * Decodes the method-frame payload p[start, end) (all of p by default) if it is a well-formed
   * basic.publish (class and method ids, reserved short, exchange and routing-key shortstrs,
   * the bit octet, nothing after) and returns true; returns false, the fields unspecified, for
   * anything else.
   */
  decode(p: Buffer, start = 0, end = p.length): boolean {
    if (end - start < 9 || p.readUInt32BE(start) !== BASIC_PUBLISH) return false;
    const s1 = start + 7;
    const e1 = s1 + p[start + 6]!;
    if (e1 + 1 > end) return false;
    const s2 = e1 + 1;
    const e2 = s2 + p[e1]!;
    if (e2 + 1 !== end) return false;
    const bits = p[e2]!;
    if (!same(this.exchangeBytes, p, s1, e1)) {
      this.exchange = p.toString('utf8', s1, e1);
      this.exchangeBytes = Buffer.from(p.subarray(s1, e1));
    }
    if (!same(this.routingKeyBytes, p, s2, e2)) {
      this.routingKey = p.toString('utf8', s2, e2);
      this.routingKeyBytes = Buffer.from(p.subarray(s2, e2));
    }
    this.mandatory = (bits & 1) !== 0;
    this.immediate = (bits & 2) !== 0;
    return true;
  }
}

/** a holds the bytes of p[start, end). */
function same(a: Buffer, p: Buffer, start: number, end: number): boolean {
  const n = end - start;
  if (a.length !== n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== p[start + i]) return false;
  return true;
}
