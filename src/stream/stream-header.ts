/**
 * The content header a stream stores for a message: the published one with an x-stream-offset
 * header added. For the common message without headers (no table, or an empty one as amqplib
 * sends) it is built from the published bytes (the headers flag set, a one-entry table after
 * content-type and content-encoding) instead of decoding and re-encoding the properties;
 * withOffsetHeader returns undefined where the full re-encoding is needed (a message with
 * headers: some are dropped or normalised).
 */

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
 * The header payload with an x-stream-offset table added, byte for byte what encoding the
 * published properties plus headers {x-stream-offset: long offset} gives; undefined when the
 * message has headers already (or property flags this does not know).
 */
export function withOffsetHeader(header: Buffer, offset: number): Buffer | undefined {
  if (header.length < PROPERTIES_AT) return undefined;
  const flags = header.readUInt16BE(FLAGS_AT);
  if ((flags & CONTINUATION) !== 0) return undefined;
  let at = PROPERTIES_AT;
  if (flags & CONTENT_TYPE) at += 1 + header[at]!;
  if (flags & CONTENT_ENCODING) at += 1 + header[at]!;
  /** Where the published header goes on after its (empty) table, if any. */
  let rest = at;
  if (flags & HEADERS) {
    // An empty table (amqplib sends one with every message) is replaced; any other is not done here.
    if (at + 4 > header.length || header.readUInt32BE(at) !== 0) return undefined;
    rest = at + 4;
  }
  if (rest > header.length) return undefined;
  const out = Buffer.allocUnsafe(header.length - (rest - at) + TABLE_SIZE);
  header.copy(out, 0, 0, at);
  out.writeUInt16BE(0, 2); // weight: always 0 when encoded
  out.writeUInt16BE(flags | HEADERS, FLAGS_AT);
  let o = at;
  o = out.writeUInt32BE(FIELD_SIZE, o);
  out[o++] = NAME.length;
  o += NAME.copy(out, o);
  out[o++] = 0x6c; // 'l'
  // The offset as an int64 (offsets are safe integers, never negative): no BigInt per message.
  o = out.writeUInt32BE(Math.floor(offset / 0x1_0000_0000), o);
  o = out.writeUInt32BE(offset >>> 0, o);
  header.copy(out, o, rest);
  return out;
}
