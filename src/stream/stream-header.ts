/**
 * The content header a stream stores for a message: the published one with an x-stream-offset
 * header added. For the common message without headers (no table, or an empty one as amqplib
 * sends) it is built from the published bytes (the headers flag set, a one-entry table after
 * content-type and content-encoding) instead of decoding and re-encoding the properties;
 * withOffsetHeader returns undefined where the full re-encoding is needed (a message with
 * headers: some are dropped or normalised).
 */

import { copyBytes, writeU64 } from '../frame/wire.js';

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
/** The table's bytes before the int64: its length, the field name and the tag 'l'. */
const TABLE_PREFIX = Buffer.concat([Buffer.from([0, 0, 0, FIELD_SIZE, NAME.length]), NAME, Buffer.from('l', 'latin1')]);

/**
 * Where the published header's bytes go around the added table, as layout() last found them
 * (module state: no object per message): the table goes at `at`, the published bytes from
 * `rest` on follow it (an empty table the publisher sent, from `at` to `rest`, is dropped).
 */
let flags = 0;
let at = 0;
let rest = 0;

/** Finds the layout of header (flags, at, rest); false when the message has headers already (or property flags this does not know). */
function layout(header: Buffer): boolean {
  const n = header.length;
  if (n < PROPERTIES_AT) return false;
  flags = (header[FLAGS_AT]! << 8) | header[FLAGS_AT + 1]!;
  if ((flags & CONTINUATION) !== 0) return false;
  at = PROPERTIES_AT;
  if (flags & CONTENT_TYPE) at += 1 + header[at]!;
  if (flags & CONTENT_ENCODING) at += 1 + header[at]!;
  rest = at;
  if (flags & HEADERS) {
    // An empty table (amqplib sends one with every message) is replaced; any other is not done here.
    if (at + 4 > n || (header[at]! | header[at + 1]! | header[at + 2]! | header[at + 3]!) !== 0) return false;
    rest = at + 4;
  }
  return rest <= n;
}

/**
 * The size of the header with an x-stream-offset table added (offsetHeaderInto writes it), or
 * -1 when the message has headers already and needs the full re-encoding.
 */
export function offsetHeaderSize(header: Buffer): number {
  return layout(header) ? header.length - (rest - at) + TABLE_SIZE : -1;
}

/**
 * Writes the header payload with an x-stream-offset table added at out[o...] (offsetHeaderSize
 * octets: check it is not -1 first), byte for byte what encoding the published properties plus
 * headers {x-stream-offset: long offset} gives. Returns where it ends. Byte stores rather than
 * Buffer's write methods: this runs for every message a stream takes.
 */
export function offsetHeaderInto(header: Buffer, offset: number, out: Buffer, o: number): number {
  layout(header);
  const start = o;
  o = copyBytes(header, 0, at, out, o);
  out[start + 2] = 0; // weight: always 0 when encoded
  out[start + 3] = 0;
  const withHeaders = flags | HEADERS;
  out[start + FLAGS_AT] = withHeaders >>> 8;
  out[start + FLAGS_AT + 1] = withHeaders & 0xff;
  o = copyBytes(TABLE_PREFIX, 0, TABLE_PREFIX.length, out, o);
  // The offset as an int64 (a safe integer, never negative): no BigInt per message.
  writeU64(out, o, offset);
  return copyBytes(header, rest, header.length, out, o + 8);
}

/** offsetHeaderInto into a buffer of its own; undefined when the message has headers already. */
export function withOffsetHeader(header: Buffer, offset: number): Buffer | undefined {
  const size = offsetHeaderSize(header);
  if (size < 0) return undefined;
  const out = Buffer.allocUnsafe(size);
  offsetHeaderInto(header, offset, out, 0);
  return out;
}
