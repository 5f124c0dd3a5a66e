/**
 * The content header a stream stores for a message: the published one with an x-stream-offset
 * header added. For the common message without headers (no table, or an empty one as amqplib
 * sends) it is built from the published bytes (the headers flag set, a one-entry table after
 * content-type and content-encoding) instead of decoding and re-encoding the properties;
 * withOffsetHeader returns undefined where the full re-encoding is needed (a message with
 * headers: some are dropped or normalised).
 */

import { copyBytes } from '../frame/wire.js';

/** Content header payload: class-id (2), weight (2), body size (8), property flags (2). */
const FLAGS_AT = 12;
const PROPERTIES_AT = 14;
const CONTENT_TYPE = 0x8000;
const CONTENT_ENCODING = 0x4000;
const HEADERS = 0x2000;
const CONTINUATION = 0x0001;

const NAME = Buffer.from('x-stream-offset', 'latin1');
/** The table: its length (4), then the one field: name (1 + 15), tag 'l' (1), int64 (8). */
const FIELD_SIZE = 1 + NAME.length + 1 + 8;
const TABLE_SIZE = 4 + FIELD_SIZE;

/**
 * Where the published header's bytes go around the added table: the table goes at `at`, the
 * published bytes from `rest` on follow it (an empty table the publisher sent, from `at` to
 * `rest`, is dropped). Undefined when the message has headers already (or property flags this
 * does not know).
 */
function layout(header: Buffer): { flags: number; at: number; rest: number } | undefined {
  if (header.length < PROPERTIES_AT) return undefined;
  const flags = header.readUInt16BE(FLAGS_AT);
  if ((flags & CONTINUATION) !== 0) return undefined;
  let at = PROPERTIES_AT;
  if (flags & CONTENT_TYPE) at += 1 + header[at]!;
  if (flags & CONTENT_ENCODING) at += 1 + header[at]!;
  let rest = at;
  if (flags & HEADERS) {
    // An empty table (amqplib sends one with every message) is replaced; any other is not done here.
    if (at + 4 > header.length || header.readUInt32BE(at) !== 0) return undefined;
    rest = at + 4;
  }
  if (rest > header.length) return undefined;
  return { flags, at, rest };
}

/**
 * The size of the header with an x-stream-offset table added (offsetHeaderInto writes it), or
 * -1 when the message has headers already and needs the full re-encoding.
 */
export function offsetHeaderSize(header: Buffer): number {
  const l = layout(header);
  return l === undefined ? -1 : header.length - (l.rest - l.at) + TABLE_SIZE;
}

/**
 * Writes the header payload with an x-stream-offset table added at out[o...] (offsetHeaderSize
 * octets: check it is not -1 first), byte for byte what encoding the published properties plus
 * headers {x-stream-offset: long offset} gives. Returns where it ends.
 */
export function offsetHeaderInto(header: Buffer, offset: number, out: Buffer, o: number): number {
  const { flags, at, rest } = layout(header)!;
  const start = o;
  copyBytes(header, 0, at, out, o);
  out.writeUInt16BE(0, start + 2); // weight: always 0 when encoded
  out.writeUInt16BE(flags | HEADERS, start + FLAGS_AT);
  o = out.writeUInt32BE(FIELD_SIZE, start + at);
  out[o++] = NAME.length;
  o = copyBytes(NAME, 0, NAME.length, out, o);
  out[o++] = 0x6c; // 'l'
  // The offset as an int64 (offsets are safe integers, never negative): no BigInt per message.
  o = out.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), o);
  o = out.writeUInt32BE(offset >>> 0, o);
  return copyBytes(header, rest, header.length, out, o);
}

/** offsetHeaderInto into a buffer of its own; undefined when the message has headers already. */
export function withOffsetHeader(header: Buffer, offset: number): Buffer | undefined {
  const size = offsetHeaderSize(header);
  if (size < 0) return undefined;
  const out = Buffer.allocUnsafe(size);
  offsetHeaderInto(header, offset, out, 0);
  return out;
}
