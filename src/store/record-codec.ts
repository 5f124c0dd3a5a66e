/**
 * Hand-written binary layouts of everything the LMDB store keeps (src/store/README.md draws
 * them). No JSON and no msgpack on the hot path: an entry value is 25 bytes (followed by its
 * message when that is stored inline), a message value is its two shortstrs, the header and
 * the body in one buffer.
 */

import { copyBytes, readU32, shortstrLength, TWO_32, u64, wholeAsSmi, writeShortstr, writeU32 } from '../frame/wire.js';
import type { PersistedMessage, QueueEntry, StoredEntry } from './message-store.js';

/** A message value: format byte, exchange, routing key, header, body. */
const MESSAGE_FORMAT = 1;
/** The same with the BCC routing keys after the routing key: u32 count, then per key a u32 length and its UTF-8. */
const MESSAGE_FORMAT_BCC = 2;

/**
 * Writes a non-negative integer below 2^53 as 8 big-endian bytes (so keys sort numerically).
 * The store checks ids and seqs on the way in (checkU53), so this writes without checking.
 */
export function writeU64(buf: Uint8Array, offset: number, n: number): void {
  const hi = Math.floor(n / TWO_32);
  writeU32(buf, offset, hi);
  writeU32(buf, offset + 4, n - hi * TWO_32);
}

export function readU64(buf: Uint8Array, offset: number): number {
  return u64(readU32(buf, offset), readU32(buf, offset + 4));
}

export function checkU53(what: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} must be an integer in [0, 2^53), got ${n}`);
}

// ---- entries: key = queue id (u32) | seq (u64); value = 25 bytes -------------------------------

export const ENTRY_KEY_SIZE = 12;
export const ENTRY_VALUE_SIZE = 25;

export function entryKey(queueId: number, seq: number): Buffer {
  const key = Buffer.allocUnsafe(ENTRY_KEY_SIZE);
  key.writeUInt32BE(queueId, 0);
  writeU64(key, 4, seq);
  return key;
}

export function entryKeyInto(key: Buffer, queueId: number, seq: number, offset = 0): Buffer {
  writeU32(key, offset, queueId);
  writeU64(key, offset + 4, seq);
  return key;
}

export function seqOfEntryKey(key: Uint8Array): number {
  return readU64(key, 4);
}

export function queueIdOfEntryKey(key: Uint8Array): number {
  return readU32(key, 0);
}

/**
 * Entry value: msgId u64 | flags u8 (bit 0 = redelivered, bit 1 = inline) | deliveryCount u32 |
 * expiresAt f64 | body size u32; with the inline flag (format 5) the message layout follows
 * (`encodeMessageInto`): a message of one entry stored in its entry, one record, not two.
 */
export function writeEntryValue(buf: Buffer, offset: number, e: StoredEntry): void {
  writeU64(buf, offset, e.msgId);
  buf[offset + 8] = e.redelivered ? 1 : 0;
  writeU32(buf, offset + 9, e.deliveryCount >>> 0);
  buf.writeDoubleBE(e.expiresAt, offset + 13);
  writeU32(buf, offset + 21, e.size);
}

const INLINE_FLAG = 2;

/** An entry value with its message inside (writeEntryValue, then the message layout); returns where it ends. */
export function writeInlineEntryValue(buf: Buffer, offset: number, e: StoredEntry, msg: PersistedMessage): number {
  writeEntryValue(buf, offset, e);
  buf[offset + 8] = (e.redelivered ? 1 : 0) | INLINE_FLAG;
  return encodeMessageInto(buf, offset + ENTRY_VALUE_SIZE, msg);
}

/**
 * An entry as the LMDB store holds it. `inline`: its message is stored inside it (format 5);
 * `inlineMsg`: that message, while the store has it in memory (written by a batch not yet
 * committed, or read back to be written again), else null; `value`: the record's value as a
 * range read returned it (its own copy, checksum verified), so that the message of an entry
 * just read needs no second lookup, else null.
 */
export interface HeldEntry extends StoredEntry {
  inline: boolean;
  inlineMsg: PersistedMessage | null;
  value: Buffer | null;
}

/** The entry of a value; `own`: buf is the caller's own copy, kept as the entry's `value`. */
export function readEntryValue(seq: number, buf: Buffer, own = false): HeldEntry {
  const flags = buf[8]!;
  return {
    seq,
    msgId: readU64(buf, 0),
    redelivered: (flags & 1) === 1,
    deliveryCount: readU32(buf, 9),
    expiresAt: wholeAsSmi(buf.readDoubleBE(13)),
    size: readU32(buf, 21),
    inline: (flags & INLINE_FLAG) !== 0,
    inlineMsg: null,
    value: own ? buf : null,
  };
}

/** Whether an entry value holds its message (inline). */
export function isInlineEntryValue(buf: Uint8Array): boolean {
  return (buf[8]! & INLINE_FLAG) !== 0;
}

/**
 * The message inside an inline entry value (without its checksum: `unsealed`); header and body
 * are views of `buf`, which must be the caller's own copy.
 */
export function decodeInlineMessage(id: number, buf: Buffer): PersistedMessage {
  return decodeMessage(id, buf.subarray(ENTRY_VALUE_SIZE));
}

/** Reads only the message id of an entry value (recovery scans). */
export function msgIdOfEntryValue(buf: Uint8Array): number {
  return readU64(buf, 0);
}

export function sizeOfEntryValue(buf: Uint8Array): number {
  return readU32(buf, 21);
}

export function checkEntry(entry: QueueEntry): void {
  checkU53('seq', entry.seq);
  checkU53('msgId', entry.msgId);
  if (!Number.isInteger(entry.deliveryCount) || entry.deliveryCount < 0 || entry.deliveryCount >= TWO_32) {
    throw new RangeError(`deliveryCount must be an integer in [0, 2^32), got ${entry.deliveryCount}`);
  }
  if (typeof entry.expiresAt !== 'number' || !(entry.expiresAt >= 0)) {
    throw new RangeError(`expiresAt must be a number >= 0, got ${entry.expiresAt}`);
  }
}

// ---- messages: key = msgId (u64); value = format | shortstr exchange | shortstr rk | u32 header | header | body

export function messageKey(id: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  writeU64(key, 0, id);
  return key;
}

export function messageKeyInto(key: Buffer, id: number): Buffer {
  writeU64(key, 0, id);
  return key;
}

/** More than 255 bytes in UTF-8 (a UTF-16 unit is at most 3 bytes, so a short string is measured without encoding it). */
function longerThanShortstr(s: string): boolean {
  return s.length > 85 && Buffer.byteLength(s) > 255;
}

/** Throws on what cannot be encoded, before anything is changed. */
export function checkMessage(msg: PersistedMessage): void {
  checkU53('message id', msg.id);
  if (longerThanShortstr(msg.exchange)) throw new RangeError('exchange name longer than 255 bytes');
  if (longerThanShortstr(msg.routingKey)) throw new RangeError('routing key longer than 255 bytes');
}

/** What enqueue and move check before anything is changed: the entry, the message, and that one is the other's. */
export function checkEntryOf(op: 'enqueue' | 'move', entry: QueueEntry, msg: PersistedMessage): void {
  checkEntry(entry);
  checkMessage(msg);
  if (entry.msgId !== msg.id) throw new Error(`${op}: entry.msgId ${entry.msgId} is not msg.id ${msg.id}`);
}

/** The length of a message's body, without making a view of it where the message knows it (bodySize). */
export function bodyLength(msg: PersistedMessage): number {
  return msg.bodySize ?? msg.body.length;
}

/** Bytes of the message value layout (without anything the caller appends). */
export function messageSize(msg: PersistedMessage): number {
  let n = 1 + 1 + shortstrLength(msg.exchange) + 1 + shortstrLength(msg.routingKey) + 4 + msg.header.length + bodyLength(msg);
  const bcc = msg.bccRoutingKeys;
  if (bcc !== undefined) {
    n += 4;
    for (const k of bcc) n += 4 + Buffer.byteLength(k);
  }
  return n;
}

/**
 * Writes the message value layout at buf[offset...]; returns where it ends. Byte copies rather
 * than Buffer's write and copy calls, and the body from its range: this runs for every
 * persistent message.
 */
export function encodeMessageInto(buf: Buffer, offset: number, msg: PersistedMessage): number {
  let p = offset;
  const bcc = msg.bccRoutingKeys;
  buf[p++] = bcc === undefined ? MESSAGE_FORMAT : MESSAGE_FORMAT_BCC;
  p = writeShortstr(buf, p, msg.exchange, shortstrLength(msg.exchange));
  p = writeShortstr(buf, p, msg.routingKey, shortstrLength(msg.routingKey));
  if (bcc !== undefined) {
    p = writeU32(buf, p, bcc.length);
    for (const k of bcc) {
      const n = buf.write(k, p + 4, 'utf8');
      p = writeU32(buf, p, n) + n;
    }
  }
  const header = msg.header;
  p = copyBytes(header, 0, header.length, buf, writeU32(buf, p, header.length));
  const mem = msg.bodyMemory;
  if (mem === undefined) return copyBytes(msg.body, 0, msg.body.length, buf, p);
  const from = msg.bodyOffset ?? 0;
  return copyBytes(mem, from, from + bodyLength(msg), buf, p);
}

/** The message value layout, followed by `reserve` bytes left for the caller (a checksum). */
export function encodeMessage(msg: PersistedMessage, reserve = 0): Buffer {
  const buf = Buffer.allocUnsafeSlow(messageSize(msg) + reserve);
  encodeMessageInto(buf, 0, msg);
  return buf;
}

/** Decodes a message value; header and body are views of `buf` (which must be the caller's own copy). */
export function decodeMessage(id: number, buf: Buffer): PersistedMessage {
  const format = buf[0];
  if (format !== MESSAGE_FORMAT && format !== MESSAGE_FORMAT_BCC) throw new Error(`message ${id}: unknown stored format ${format}`);
  let p = 1;
  const exLen = buf[p++]!;
  const exchange = buf.toString('utf8', p, p + exLen);
  p += exLen;
  const rkLen = buf[p++]!;
  const routingKey = buf.toString('utf8', p, p + rkLen);
  p += rkLen;
  let bccRoutingKeys: string[] | undefined;
  if (format === MESSAGE_FORMAT_BCC) {
    bccRoutingKeys = [];
    const count = readU32(buf, p);
    p += 4;
    for (let i = 0; i < count; i++) {
      const n = readU32(buf, p);
      bccRoutingKeys.push(buf.toString('utf8', p + 4, p + 4 + n));
      p += 4 + n;
    }
  }
  const headerLen = readU32(buf, p);
  p += 4;
  const header = buf.subarray(p, p + headerLen);
  p += headerLen;
  const msg: PersistedMessage = { id, exchange, routingKey, header, body: buf.subarray(p) };
  if (bccRoutingKeys !== undefined) msg.bccRoutingKeys = bccRoutingKeys;
  return msg;
}

function sameKeys(a: string[] | undefined, b: string[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.length === b.length && a.every((k, i) => k === b[i]);
}

export function sameMessage(a: PersistedMessage, b: PersistedMessage): boolean {
  return (
    a.id === b.id &&
    a.exchange === b.exchange &&
    a.routingKey === b.routingKey &&
    sameKeys(a.bccRoutingKeys, b.bccRoutingKeys) &&
    a.header.equals(b.header) &&
    a.body.length === b.body.length &&
    (a.body === b.body || a.body.equals(b.body))
  );
}

// ---- shared by both stores ---------------------------------------------------------------------

/** The store's own copy of an entry given to enqueue, with its message's body size: one object, the fields read once. */
export function storedEntry(e: QueueEntry, msg: PersistedMessage): StoredEntry {
  return { seq: e.seq, msgId: e.msgId, redelivered: e.redelivered, deliveryCount: e.deliveryCount, expiresAt: e.expiresAt, size: bodyLength(msg) };
}

/** storedEntry for the LMDB store: not inline until its batch is flushed (CommitEngine.operations decides). */
export function heldEntry(e: QueueEntry, msg: PersistedMessage): HeldEntry {
  return { seq: e.seq, msgId: e.msgId, redelivered: e.redelivered, deliveryCount: e.deliveryCount, expiresAt: e.expiresAt, size: bodyLength(msg), inline: false, inlineMsg: null, value: null };
}

/** A copy of a stored entry for a reader (no aliasing of the store's object). */
export function publicEntry(e: StoredEntry): StoredEntry {
  return { seq: e.seq, msgId: e.msgId, redelivered: e.redelivered, deliveryCount: e.deliveryCount, expiresAt: e.expiresAt, size: e.size };
}

export function sharedRewriteError(msgId: number, refs: number): Error {
  return new Error(
    `move: message ${msgId} is shared by ${refs} entries and cannot be rewritten in place; ` +
      'give the rewritten message a new id from nextMessageId()',
  );
}

// ---- small records (metadata, queue index) ------------------------------------------------------

/** Builds a record from length-prefixed fields: strings (u16 + UTF-8), buffers (u32 + bytes), bytes. */
export class RecordWriter {
  private parts: Buffer[] = [];
  private size = 0;

  str(s: string): this {
    const b = Buffer.from(s, 'utf8');
    if (b.length > 0xffff) throw new RangeError('string field longer than 65535 bytes');
    const len = Buffer.allocUnsafe(2);
    len.writeUInt16BE(b.length, 0);
    return this.push(len).push(b);
  }

  buf(b: Buffer): this {
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32BE(b.length, 0);
    return this.push(len).push(b);
  }

  u8(n: number): this {
    return this.push(Buffer.from([n & 0xff]));
  }

  f64(n: number): this {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleBE(n, 0);
    return this.push(b);
  }

  u64(n: number): this {
    const b = Buffer.allocUnsafe(8);
    writeU64(b, 0, n);
    return this.push(b);
  }

  done(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }

  private push(b: Buffer): this {
    this.parts.push(b);
    this.size += b.length;
    return this;
  }
}

export class RecordReader {
  private p = 0;
  /** `end`: where the record ends in b (rest() stops there): a stored value's checksum follows it. */
  constructor(
    private readonly b: Buffer,
    private readonly end = b.length,
  ) {}

  str(): string {
    const len = this.b.readUInt16BE(this.p);
    this.p += 2;
    const s = this.b.toString('utf8', this.p, this.p + len);
    this.p += len;
    return s;
  }

  /** A copy, so the result outlives LMDB's buffers; or `common` itself, uncopied, when the bytes are its. */
  buf(common?: Buffer): Buffer {
    const len = this.b.readUInt32BE(this.p);
    const start = this.p + 4;
    this.p = start + len;
    if (common !== undefined && len === common.length && this.b.compare(common, 0, len, start, start + len) === 0) return common;
    return Buffer.from(this.b.subarray(start, start + len));
  }

  u8(): number {
    return this.b[this.p++]!;
  }

  f64(): number {
    const n = this.b.readDoubleBE(this.p);
    this.p += 8;
    return n;
  }

  u64(): number {
    const n = readU64(this.b, this.p);
    this.p += 8;
    return n;
  }

  rest(): Buffer {
    const out = this.b.subarray(this.p, this.end);
    this.p = this.end;
    return out;
  }
}
