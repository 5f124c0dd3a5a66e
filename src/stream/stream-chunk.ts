/**
 * A chunk of a stream's log as one store record: the messages appended in one turn (osiris'
 * write batch), encoded one after the other. One record per chunk instead of one per message is
 * what makes a stream's confirmed publish cheap (a store write per chunk, not per message), and
 * what a reader reads at once.
 *
 * Layout: u8 version, u32 count, then per message: u8 exchange length, exchange (UTF-8), u8
 * routing-key length, routing key, u32 header length, header (the content-header payload as
 * delivered, x-stream-offset included), u32 body length, body.
 */

/** A message as a stream holds it. */
export interface StreamMessage {
  exchange: string;
  routingKey: string;
  /** The content-header payload as delivered (with its x-stream-offset header). */
  header: Buffer;
  body: Buffer;
}

/** A message read from a chunk. */
export interface StreamEntry extends StreamMessage {
  offset: number;
  /** The store id of its chunk's record (shared by the chunk's messages). */
  id: number;
  /** The last offset of its chunk. */
  chunkEnd: number;
}

const VERSION = 1;
const PREFIX = 1 + 4;
/** Per message besides the strings, header and body: two u8 and two u32 lengths. */
const FRAMING = 1 + 1 + 4 + 4;

/** Bytes a message takes in a chunk record. */
export function encodedSize(m: StreamMessage): number {
  return FRAMING + Buffer.byteLength(m.exchange) + Buffer.byteLength(m.routingKey) + m.header.length + m.body.length;
}

/** Encodes messages (whose encoded sizes sum to `size`, see encodedSize) as one chunk record. */
export function encodeChunk(messages: readonly StreamMessage[], size: number): Buffer {
  const buf = Buffer.allocUnsafe(PREFIX + size);
  buf[0] = VERSION;
  buf.writeUInt32BE(messages.length, 1);
  let p = PREFIX;
  for (const m of messages) {
    p = writeString(buf, p, m.exchange);
    p = writeString(buf, p, m.routingKey);
    buf.writeUInt32BE(m.header.length, p);
    p += 4 + m.header.copy(buf, p + 4);
    buf.writeUInt32BE(m.body.length, p);
    p += 4 + m.body.copy(buf, p + 4);
  }
  return buf;
}

function writeString(buf: Buffer, p: number, s: string): number {
  const n = buf.write(s, p + 1, 'utf8');
  buf[p] = n;
  return p + 1 + n;
}

/**
 * A chunk record read back: its messages by offset, decoded on demand as views of the record
 * (the header and body of a message are subarrays: nothing is copied). The start of every message
 * is found in one pass when the chunk is opened.
 */
export class DecodedChunk {
  readonly count: number;
  /** Offset of the chunk's first message. */
  readonly first: number;
  private readonly starts: Uint32Array;

  constructor(
    /** Offset of the chunk's last message (the key of its record). */
    readonly last: number,
    /** The store id of the record. */
    readonly id: number,
    private readonly buf: Buffer,
  ) {
    if (buf[0] !== VERSION) throw new Error(`stream chunk ending at offset ${last}: unknown format ${buf[0]}`);
    const count = buf.readUInt32BE(1);
    this.count = count;
    const first = (this.first = last - count + 1);
    const starts = new Uint32Array(count);
    let p = PREFIX;
    for (let i = 0; i < count; i++) {
      starts[i] = p;
      p += 1 + buf[p]!;
      p += 1 + buf[p]!;
      p += 4 + buf.readUInt32BE(p);
      p += 4 + buf.readUInt32BE(p);
    }
    if (p !== buf.length) throw new Error(`stream chunk at offset ${first}: ${buf.length - p} bytes left over after ${count} messages`);
    this.starts = starts;
  }

  /** The message at offset (first ≤ offset ≤ last). */
  message(offset: number): StreamEntry {
    const buf = this.buf;
    let p = this.starts[offset - this.first]!;
    const exLen = buf[p++]!;
    const exchange = exLen === 0 ? '' : buf.toString('utf8', p, p + exLen);
    p += exLen;
    const rkLen = buf[p++]!;
    const routingKey = buf.toString('utf8', p, p + rkLen);
    p += rkLen;
    const headerLen = buf.readUInt32BE(p);
    p += 4;
    const header = buf.subarray(p, p + headerLen);
    p += headerLen;
    const bodyLen = buf.readUInt32BE(p);
    p += 4;
    return { offset, id: this.id, chunkEnd: this.last, exchange, routingKey, header, body: buf.subarray(p, p + bodyLen) };
  }
}
