/**
 * A chunk of a stream's log as one store record: the messages appended until the store commits
 * (MessageStore.beforeCommit; osiris' write batch), encoded one after the other. One record per
 * chunk instead of one per message is what makes a stream's confirmed publish cheap (a store
 * write per chunk, not per message), and what a reader reads at once.
 *
 * Layout: u8 version, u32 count, then per message: u8 exchange length, exchange (UTF-8), u8
 * routing-key length, routing key, u32 header length, header (the content-header payload as
 * delivered, x-stream-offset included), u32 body length, body.
 */

import { copyBytes, shortstrLength, writeShortstr } from '../frame/wire.js';
import { Message } from '../queue/message.js';
import { offsetHeaderInto, offsetHeaderSize } from './stream-header.js';

/** A message read from a chunk. */
export interface StreamEntry {
  offset: number;
  /** The last offset of its chunk. */
  chunkEnd: number;
  /** The message as delivered; its id is the store id of its chunk's record (shared by the chunk's messages). */
  msg: Message;
}

const VERSION = 1;
const PREFIX = 1 + 4;
/** Per message besides the strings, header and body: two u8 and two u32 lengths. */
const FRAMING = 1 + 1 + 4 + 4;

/**
 * A chunk record being written: each message is encoded into one growing buffer as it is
 * appended (no object, header or body copy of its own per message), and finish() makes the
 * record.
 */
export class ChunkBuilder {
  /** Messages added. */
  count = 0;
  private buf: Buffer;
  private at = PREFIX;

  constructor(private readonly capacity = 16 * 1024) {
    this.buf = Buffer.allocUnsafe(Math.max(capacity, PREFIX));
  }

  /**
   * Starts a new record in the same memory (finish() copies each record out), so that a stream
   * writing a small chunk every turn allocates no 16 KiB for each; memory grown past four times
   * the initial capacity (a large chunk) is let go.
   */
  reset(): this {
    this.count = 0;
    this.at = PREFIX;
    if (this.buf.length > 4 * this.capacity) this.buf = Buffer.allocUnsafe(Math.max(this.capacity, PREFIX));
    return this;
  }

  /** The record's size so far. */
  get size(): number {
    return this.at;
  }

  /** Adds a message whose header is as delivered already. */
  add(exchange: string, routingKey: string, header: Buffer, body: Buffer, bodyOffset = 0, bodySize = body.length - bodyOffset): void {
    const p = this.strings(exchange, routingKey, header.length + bodySize);
    this.buf.writeUInt32BE(header.length, p);
    this.body(copyBytes(header, 0, header.length, this.buf, p + 4), body, bodyOffset, bodySize);
  }

  /**
   * Adds a published message with the x-stream-offset header for offset written in place
   * (stream-header.ts); false, adding nothing, when its header needs the full re-encoding.
   */
  addWithOffset(exchange: string, routingKey: string, published: Buffer, offset: number, body: Buffer, bodyOffset: number, bodySize: number): boolean {
    const headerSize = offsetHeaderSize(published);
    if (headerSize < 0) return false;
    let p = this.strings(exchange, routingKey, headerSize + bodySize);
    this.buf.writeUInt32BE(headerSize, p);
    p = offsetHeaderInto(published, offset, this.buf, p + 4);
    this.body(p, body, bodyOffset, bodySize);
    return true;
  }

  /** The record: its exact bytes, in memory of its own (a copy: the builder's memory is reused after reset()). */
  finish(): Buffer {
    const buf = this.buf;
    buf[0] = VERSION;
    buf.writeUInt32BE(this.count, 1);
    return Buffer.from(buf.subarray(0, this.at));
  }

  /** Makes room for a message of the given header + body size, writes its strings; where the header length goes. */
  private strings(exchange: string, routingKey: string, contentSize: number): number {
    const le = shortstrLength(exchange);
    const lr = shortstrLength(routingKey);
    const needed = this.at + FRAMING + le + lr + contentSize;
    if (needed > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, needed));
      this.buf.copy(grown, 0, 0, this.at);
      this.buf = grown;
    }
    return writeShortstr(this.buf, writeShortstr(this.buf, this.at, exchange, le), routingKey, lr);
  }

  private body(p: number, body: Buffer, bodyOffset: number, bodySize: number): void {
    const buf = this.buf;
    buf.writeUInt32BE(bodySize, p);
    this.at = copyBytes(body, bodyOffset, bodyOffset + bodySize, buf, p + 4);
    this.count++;
  }
}

/** A string decoded from a record, and where its bytes are. */
interface Decoded {
  text: string;
  at: number;
  len: number;
}

const NOTHING_DECODED: Decoded = { text: '', at: 0, len: -1 };

/**
 * A chunk record read back: its messages by offset, decoded on demand into the record's memory
 * (a message's header is a view of it, its body a range of it: nothing is copied). The start of
 * every message is found in one pass when the chunk is opened.
 */
export class DecodedChunk {
  readonly count: number;
  /** Offset of the chunk's first message. */
  readonly first: number;
  private readonly starts: Uint32Array;
  /** The exchange and routing key decoded last, with where their bytes are (message()). */
  private exchange: Decoded = NOTHING_DECODED;
  private routingKey: Decoded = NOTHING_DECODED;

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

  /**
   * The message at offset (first ≤ offset ≤ last), as delivered. Readers keep recent messages for
   * each other (RecentMessages), long enough for the young generation to promote them, so a
   * message holds as little of its own as it can: its body is a range of the record, and its
   * exchange and routing key are the previous message's strings when they have the same bytes
   * (most chunks have one routing key).
   */
  message(offset: number): StreamEntry {
    const buf = this.buf;
    let p = this.starts[offset - this.first]!;
    const exLen = buf[p++]!;
    const exchange = exLen === 0 ? '' : (this.exchange = this.decoded(this.exchange, p, exLen)).text;
    p += exLen;
    const rkLen = buf[p++]!;
    const routingKey = (this.routingKey = this.decoded(this.routingKey, p, rkLen)).text;
    p += rkLen;
    const headerLen = buf.readUInt32BE(p);
    p += 4;
    const header = buf.subarray(p, p + headerLen);
    p += headerLen;
    const bodyLen = buf.readUInt32BE(p);
    const msg = new Message(this.id, exchange, routingKey, header, buf, undefined, p + 4, bodyLen);
    return { offset, chunkEnd: this.last, msg };
  }

  /** The string of the len bytes at p: last's own string when its bytes are the same. */
  private decoded(last: Decoded, p: number, len: number): Decoded {
    const buf = this.buf;
    if (last.len === len) {
      let i = 0;
      while (i < len && buf[last.at + i] === buf[p + i]) i++;
      if (i === len) return last;
    }
    return { text: buf.toString('utf8', p, p + len), at: p, len };
  }
}
