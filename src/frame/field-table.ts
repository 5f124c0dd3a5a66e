/**
 * AMQP field tables and arrays (spec 4.2.5.5 with RabbitMQ's type tags, see
 * https://www.rabbitmq.com/amqp-0-9-1-errata.html#section_3).
 *
 * Values keep their wire type so the broker can re-encode headers and arguments unchanged.
 * Decoding mirrors rabbit_binary_parser:parse_table/1 of RabbitMQ 3.10: the tags below, 'L' read
 * as a signed 64-bit 'l', NaN/Infinity floats rejected (Erlang cannot hold them), and anything it
 * cannot parse (unknown tag, lengths past the end) is an error. RabbitMQ has no nesting limit; we
 * stop at MAX_DEPTH levels so hostile input cannot exhaust the stack.
 *
 * Errors: decoding throws AbruptClose (a ConnectionError), because that is what RabbitMQ does when
 * a method's table does not parse (its reader crashes and the socket is reset). Content-header
 * decoding turns it into 541 INTERNAL_ERROR, as RabbitMQ's channel crash does.
 */
import { encodeError, tableCrash } from './frame-errors.js';
import { copyBytes, utf8Length, writeShortstr, writeU32 } from './wire.js';

export type FieldValue =
  | { type: 't'; value: boolean }
  | { type: 'b' | 'B' | 's' | 'u' | 'I' | 'i' | 'f' | 'd'; value: number }
  | { type: 'l'; value: bigint }
  | { type: 'T'; value: number }
  | { type: 'D'; value: { places: number; digits: number } }
  | { type: 'S'; value: Buffer }
  | { type: 'x'; value: Buffer }
  | { type: 'A'; value: FieldValue[] }
  | { type: 'F'; value: FieldTable }
  | { type: 'V'; value: null };

export type FieldTable = Record<string, FieldValue>;
export type FieldType = FieldValue['type'];

/**
 * The prototype of the tables made here: no properties and no prototype of its own, so a
 * table's keys are only its own (a header named `__proto__` or `toString` is data, and looking
 * up an absent one gives undefined) as with `Object.create(null)`, which however makes a
 * dictionary-mode object in V8, slower to fill, copy and enumerate: dead-lettering a message
 * that already has an x-death header (a TTL retry loop) decodes, copies, sorts and encodes its
 * tables, 34 -> 23 µs a message in-process with this.
 */
const TABLE_PROTOTYPE: object = Object.freeze(Object.create(null));
const Table = function (this: object) {} as unknown as new () => FieldTable;
Table.prototype = TABLE_PROTOTYPE as FieldTable;

/** An empty table without a prototype chain to inherit keys from (see TABLE_PROTOTYPE). */
export function newTable(): FieldTable {
  return new Table();
}

/**
 * A copy of t (or an empty table) made with newTable: `{ ...t }` of such a table takes V8's
 * slow path (its prototype is not Object.prototype) and makes a plain object.
 */
export function copyTable(t: FieldTable | undefined): FieldTable {
  const out = newTable();
  if (t !== undefined) for (const k in t) out[k] = t[k]!; // own keys only: nothing is inherited
  return out;
}

export const MAX_DEPTH = 1000;

// --- decoding --------------------------------------------------------------------------------

/** Reads the 4-byte length at `offset` and the table after it; returns the offset after it. */
export function decodeTable(buf: Buffer, offset: number): { table: FieldTable; offset: number } {
  if (offset + 4 > buf.length) throw tableCrash();
  const len = buf.readUInt32BE(offset);
  const start = offset + 4;
  const end = start + len;
  if (end > buf.length) throw tableCrash();
  return { table: parseTable(buf, start, end, 0), offset: end };
}

/** Keys of at most this many octets are looked up in KEYS before they are decoded. */
const KEY_CACHE_MAX = 32;
/** The last key decoded per slot (FNV-1a of its octets, low 8 bits): its octets and its string. */
const KEYS: Array<{ octets: Uint8Array; key: string } | undefined> = new Array(256).fill(undefined);

/**
 * buf.toString('utf8', start, end) for a table key. Headers repeat the same few keys (an x-death
 * entry has six), and a short key found in KEYS is its string again without a decode: Buffer's
 * toString and its native slice cost ~0.2–0.3 µs a key, the hash and compare a few ns an octet.
 */
function keyString(buf: Buffer, start: number, end: number): string {
  const n = end - start;
  if (n > KEY_CACHE_MAX) return buf.toString('utf8', start, end);
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  const slot = h & 0xff;
  const hit = KEYS[slot];
  if (hit !== undefined && hit.octets.length === n) {
    const o = hit.octets;
    let same = true;
    for (let i = 0; i < n; i++) {
      if (o[i] !== buf[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return hit.key;
  }
  const key = buf.toString('utf8', start, end);
  const octets = new Uint8Array(n);
  copyBytes(buf, start, end, octets, 0);
  KEYS[slot] = { octets, key };
  return key;
}

/** Parses the table fields in buf[start, end) (no length prefix). */
export function parseTable(buf: Buffer, start: number, end: number, depth = 0): FieldTable {
  if (depth > MAX_DEPTH) throw tableCrash();
  const table = newTable();
  let o = start;
  while (o < end) {
    const nlen = buf[o]!;
    const kstart = o + 1;
    o = kstart + nlen;
    if (o >= end) throw tableCrash(); // key, then at least the tag
    const key = keyString(buf, kstart, o);
    const r = parseValue(buf, o, end, depth);
    // A key given twice: the first counts, as rabbit_misc:table_lookup finds it.
    if (table[key] === undefined) table[key] = r.v;
    o = r.o;
  }
  return table;
}

/** Parses the array values in buf[start, end) (no length prefix). */
export function parseArray(buf: Buffer, start: number, end: number, depth = 0): FieldValue[] {
  if (depth > MAX_DEPTH) throw tableCrash();
  const arr: FieldValue[] = [];
  let o = start;
  while (o < end) {
    const r = parseValue(buf, o, end, depth);
    arr.push(r.v);
    o = r.o;
  }
  return arr;
}

/** Decodes one tagged value at `offset`; never reads past `end`. */
export function decodeFieldValue(buf: Buffer, offset: number, end = buf.length): { value: FieldValue; offset: number } {
  const r = parseValue(buf, offset, end, 0);
  return { value: r.v, offset: r.o };
}

function need(o: number, n: number, end: number): void {
  if (o + n > end) throw tableCrash();
}

function parseValue(buf: Buffer, o: number, end: number, depth: number): { v: FieldValue; o: number } {
  const tag = buf[o++];
  switch (tag) {
    case 0x53 /* S */:
    case 0x78 /* x */:
    case 0x46 /* F */:
    case 0x41 /* A */: {
      need(o, 4, end);
      const len = buf.readUInt32BE(o);
      const s = o + 4;
      const e = s + len;
      if (e > end) throw tableCrash();
      if (tag === 0x53) return { v: { type: 'S', value: buf.subarray(s, e) }, o: e };
      if (tag === 0x78) return { v: { type: 'x', value: buf.subarray(s, e) }, o: e };
      if (tag === 0x46) return { v: { type: 'F', value: parseTable(buf, s, e, depth + 1) }, o: e };
      return { v: { type: 'A', value: parseArray(buf, s, e, depth + 1) }, o: e };
    }
    case 0x54 /* T */:
      need(o, 8, end);
      return { v: { type: 'T', value: buf.readUInt32BE(o) * 0x100000000 + buf.readUInt32BE(o + 4) }, o: o + 8 };
    case 0x62 /* b */:
      need(o, 1, end);
      return { v: { type: 'b', value: buf.readInt8(o) }, o: o + 1 };
    case 0x42 /* B */:
      need(o, 1, end);
      return { v: { type: 'B', value: buf[o]! }, o: o + 1 };
    case 0x73 /* s */:
      need(o, 2, end);
      return { v: { type: 's', value: buf.readInt16BE(o) }, o: o + 2 };
    case 0x75 /* u */:
      need(o, 2, end);
      return { v: { type: 'u', value: buf.readUInt16BE(o) }, o: o + 2 };
    case 0x49 /* I */:
      need(o, 4, end);
      return { v: { type: 'I', value: buf.readInt32BE(o) }, o: o + 4 };
    case 0x69 /* i */:
      need(o, 4, end);
      return { v: { type: 'i', value: buf.readUInt32BE(o) }, o: o + 4 };
    case 0x64 /* d */: {
      need(o, 8, end);
      const value = buf.readDoubleBE(o);
      if (!Number.isFinite(value)) throw tableCrash();
      return { v: { type: 'd', value }, o: o + 8 };
    }
    case 0x66 /* f */: {
      need(o, 4, end);
      const value = buf.readFloatBE(o);
      if (!Number.isFinite(value)) throw tableCrash();
      return { v: { type: 'f', value }, o: o + 4 };
    }
    case 0x6c /* l */:
    case 0x4c /* L: RabbitMQ reads it as a signed long too */:
      need(o, 8, end);
      return { v: { type: 'l', value: buf.readBigInt64BE(o) }, o: o + 8 };
    case 0x74 /* t */:
      need(o, 1, end);
      return { v: { type: 't', value: buf[o] !== 0 }, o: o + 1 };
    case 0x44 /* D */:
      need(o, 5, end);
      return { v: { type: 'D', value: { places: buf[o]!, digits: buf.readUInt32BE(o + 1) } }, o: o + 5 };
    case 0x56 /* V */:
      return { v: { type: 'V', value: null }, o };
    default:
      throw tableCrash();
  }
}

// --- encoding --------------------------------------------------------------------------------

/**
 * Byte length of a key (a shortstr). Keys are measured and written without Buffer's native
 * calls (byteLength, write and copy cost a fixed ~0.1 µs each, more than the loop takes for a
 * short ASCII string): a dead-lettered message's x-death header has a dozen keys and strings.
 */
function keyBytes(k: string): number {
  const n = utf8Length(k);
  if (n > 255) throw encodeError(`field table key longer than 255 bytes: '${k.slice(0, 40)}...'`);
  return n;
}

/** Encoded size of a table including its 4-byte length prefix. */
export function tableSize(t: FieldTable): number {
  let n = 4;
  for (const k in t) {
    const v = t[k];
    if (v === undefined) continue;
    n += 1 + keyBytes(k) + fieldValueSize(v);
  }
  return n;
}

function arraySize(a: FieldValue[]): number {
  let n = 4;
  for (const v of a) n += fieldValueSize(v);
  return n;
}

/** Encoded size of a value including its tag. */
export function fieldValueSize(v: FieldValue): number {
  switch (v.type) {
    case 't':
    case 'b':
    case 'B':
      return 2;
    case 's':
    case 'u':
      return 3;
    case 'I':
    case 'i':
    case 'f':
      return 5;
    case 'd':
    case 'l':
    case 'T':
      return 9;
    case 'D':
      return 6;
    case 'S':
    case 'x':
      return 5 + v.value.length;
    case 'A':
      return 1 + arraySize(v.value);
    case 'F':
      return 1 + tableSize(v.value);
    case 'V':
      return 1;
    default:
      throw encodeError(`unknown field value type '${(v as { type: unknown }).type}'`);
  }
}

/** Writes the table (with its length prefix) at `offset`; returns the offset after it. */
export function writeTable(buf: Buffer, offset: number, t: FieldTable): number {
  const start = offset;
  let o = offset + 4;
  for (const k in t) {
    const v = t[k];
    if (v === undefined) continue;
    o = writeFieldValue(buf, writeShortstr(buf, o, k, keyBytes(k)), v);
  }
  buf.writeUInt32BE(o - start - 4, start);
  return o;
}

function writeArray(buf: Buffer, offset: number, a: FieldValue[]): number {
  let o = offset + 4;
  for (const v of a) o = writeFieldValue(buf, o, v);
  buf.writeUInt32BE(o - offset - 4, offset);
  return o;
}

/** Writes one tagged value at `offset`; returns the offset after it. */
export function writeFieldValue(buf: Buffer, offset: number, v: FieldValue): number {
  let o = offset;
  buf[o++] = v.type.charCodeAt(0);
  switch (v.type) {
    case 't':
      buf[o] = v.value ? 1 : 0;
      return o + 1;
    case 'b':
      buf.writeInt8(v.value, o);
      return o + 1;
    case 'B':
      buf.writeUInt8(v.value, o);
      return o + 1;
    case 's':
      buf.writeInt16BE(v.value, o);
      return o + 2;
    case 'u':
      buf.writeUInt16BE(v.value, o);
      return o + 2;
    case 'I':
      buf.writeInt32BE(v.value, o);
      return o + 4;
    case 'i':
      buf.writeUInt32BE(v.value, o);
      return o + 4;
    case 'f':
      buf.writeFloatBE(v.value, o);
      return o + 4;
    case 'd':
      buf.writeDoubleBE(v.value, o);
      return o + 8;
    case 'l':
      buf.writeBigInt64BE(v.value, o);
      return o + 8;
    case 'T':
      buf.writeUInt32BE(Math.floor(v.value / 0x100000000), o);
      buf.writeUInt32BE(v.value >>> 0, o + 4);
      return o + 8;
    case 'D':
      buf[o] = v.value.places;
      buf.writeUInt32BE(v.value.digits, o + 1);
      return o + 5;
    case 'S':
    case 'x':
      return copyBytes(v.value, 0, v.value.length, buf, writeU32(buf, o, v.value.length));
    case 'A':
      return writeArray(buf, o, v.value);
    case 'F':
      return writeTable(buf, o, v.value);
    case 'V':
      return o;
  }
}

/** A table's encoding with its 4-byte length prefix. */
export function encodeTable(t: FieldTable): Buffer {
  const buf = Buffer.allocUnsafe(tableSize(t));
  wrapRange(() => writeTable(buf, 0, t));
  return buf;
}

/** Out-of-range numbers make Buffer writers throw RangeError; report them as broker bugs. */
export function wrapRange<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof RangeError || e instanceof TypeError) throw encodeError(e.message);
    throw e;
  }
}

// --- reading values --------------------------------------------------------------------------

const FIELD_TYPE_ATOMS: Readonly<Record<FieldType, string>> = {
  S: 'longstr', I: 'signedint', T: 'timestamp', b: 'byte', B: 'unsignedbyte', s: 'short', u: 'unsignedshort',
  i: 'unsignedint', l: 'long', f: 'float', d: 'double', t: 'bool', D: 'decimal', F: 'table', A: 'array',
  x: 'binary', V: 'void',
};

/** The type atom RabbitMQ (rabbit_binary_parser) gives a field type, as its reply texts print it ('signedint', 'longstr'...). */
export function fieldTypeName(type: FieldType): string {
  return FIELD_TYPE_ATOMS[type];
}

/** The types RabbitMQ checks as integers: b B s u I i l (not the timestamp T). */
export function isIntegerType(type: FieldType): boolean {
  return 'bBsuIil'.includes(type);
}

/** The value of an integer type (see isIntegerType) as a number, else undefined. */
export function fieldInteger(v: FieldValue | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (v.type === 'l') return Number(v.value);
  return isIntegerType(v.type) ? (v.value as number) : undefined;
}

/** A longstr's text (UTF-8), else undefined. */
export function fieldString(v: FieldValue | undefined): string | undefined {
  return v !== undefined && v.type === 'S' ? v.value.toString('utf8') : undefined;
}

/** The value the table itself holds under name (never one inherited from a prototype), else undefined. */
export function ownField(t: FieldTable | undefined, name: string): FieldValue | undefined {
  return t !== undefined && Object.hasOwn(t, name) ? t[name] : undefined;
}

// --- builders --------------------------------------------------------------------------------

const toBuf = (v: string | Buffer): Buffer => (typeof v === 'string' ? Buffer.from(v, 'utf8') : v);

export const F = {
  bool: (value: boolean): FieldValue => ({ type: 't', value }),
  int8: (value: number): FieldValue => ({ type: 'b', value }),
  uint8: (value: number): FieldValue => ({ type: 'B', value }),
  int16: (value: number): FieldValue => ({ type: 's', value }),
  uint16: (value: number): FieldValue => ({ type: 'u', value }),
  int32: (value: number): FieldValue => ({ type: 'I', value }),
  uint32: (value: number): FieldValue => ({ type: 'i', value }),
  int64: (value: number | bigint): FieldValue => ({ type: 'l', value: BigInt(value) }),
  float: (value: number): FieldValue => ({ type: 'f', value }),
  double: (value: number): FieldValue => ({ type: 'd', value }),
  decimal: (places: number, digits: number): FieldValue => ({ type: 'D', value: { places, digits } }),
  timestamp: (value: number): FieldValue => ({ type: 'T', value }),
  str: (value: string | Buffer): FieldValue => ({ type: 'S', value: toBuf(value) }),
  bytes: (value: string | Buffer): FieldValue => ({ type: 'x', value: toBuf(value) }),
  array: (value: FieldValue[]): FieldValue => ({ type: 'A', value }),
  table: (value: FieldTable): FieldValue => ({ type: 'F', value }),
  void: (): FieldValue => ({ type: 'V', value: null }),
};

// --- plain JS conversion ---------------------------------------------------------------------

/** A plain JS view of a value: S→string, l→number (bigint when unsafe), F→object, A→array... */
export function toJS(v: FieldValue): unknown {
  switch (v.type) {
    case 'S':
      return v.value.toString('utf8');
    case 'l':
      return v.value >= BigInt(Number.MIN_SAFE_INTEGER) && v.value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(v.value)
        : v.value;
    case 'F':
      return tableToJS(v.value);
    case 'A':
      return v.value.map(toJS);
    case 'D':
      return { places: v.value.places, digits: v.value.digits };
    default:
      return v.value;
  }
}

export function tableToJS(t: FieldTable): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k in t) {
    const v = t[k];
    if (v !== undefined) Object.defineProperty(out, k, { value: toJS(v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * amqplib 2.x's codec (lib/codec.js) number guess: a float when it has a fraction (below 2^50) or
 * is at least 2^63, else the smallest of b/s/I/l. We mirror it so tables built here look like
 * those a Node client sends.
 */
function isFloatingPoint(n: number): boolean {
  return n >= 0x8000000000000000 || (Math.abs(n) < 0x4000000000000 && Math.floor(n) !== n);
}

const EXPLICIT: Record<string, FieldType> = {
  bool: 't', boolean: 't',
  byte: 'b', int8: 'b',
  unsignedbyte: 'B', uint8: 'B',
  short: 's', int16: 's',
  unsignedshort: 'u', uint16: 'u',
  int: 'I', int32: 'I', signedint: 'I',
  unsignedint: 'i', uint32: 'i',
  long: 'l', int64: 'l',
  float: 'f',
  double: 'd', float64: 'd',
  decimal: 'D',
  timestamp: 'T',
  string: 'S', longstr: 'S',
  binary: 'x', bytearray: 'x',
  array: 'A',
  table: 'F',
  void: 'V',
};

/** Infers a wire type for a plain JS value (amqplib's choices); `{'!': type, value}` forces one. */
export function fromJS(v: unknown, depth = 0): FieldValue {
  if (depth > MAX_DEPTH) throw encodeError('field table nested too deeply');
  if (v === null || v === undefined) return F.void();
  switch (typeof v) {
    case 'string':
      return F.str(v);
    case 'boolean':
      return F.bool(v);
    case 'bigint':
      return F.int64(v);
    case 'number':
      if (isFloatingPoint(v) || !Number.isFinite(v)) return F.double(v);
      if (v >= -128 && v < 128) return F.int8(v);
      if (v >= -0x8000 && v < 0x8000) return F.int16(v);
      if (v >= -0x80000000 && v < 0x80000000) return F.int32(v);
      return F.int64(BigInt(Math.trunc(v)));
    case 'object': {
      if (Buffer.isBuffer(v)) return F.bytes(v);
      if (Array.isArray(v)) return F.array(v.map((e) => fromJS(e, depth + 1)));
      if (v instanceof Date) return F.timestamp(Math.floor(v.getTime() / 1000));
      const o = v as Record<string, unknown>;
      if (Object.hasOwn(o, '!')) return explicit(String(o['!']), o['value'], depth);
      return F.table(tableFromJS(o, depth + 1));
    }
    default:
      throw encodeError(`cannot encode a ${typeof v} in a field table`);
  }
}

function explicit(name: string, value: unknown, depth: number): FieldValue {
  const type = EXPLICIT[name] ?? (name.length === 1 ? (name as FieldType) : undefined);
  const num = (): number => Number(value);
  switch (type) {
    case 't':
      return F.bool(Boolean(value));
    case 'b':
    case 'B':
    case 's':
    case 'u':
    case 'I':
    case 'i':
    case 'f':
    case 'd':
      return { type, value: num() };
    case 'l':
      return F.int64(typeof value === 'bigint' ? value : BigInt(Math.trunc(num())));
    case 'T':
      return F.timestamp(value instanceof Date ? Math.floor(value.getTime() / 1000) : num());
    case 'D': {
      const d = value as { places?: unknown; digits?: unknown } | null;
      if (!d || typeof d.places !== 'number' || typeof d.digits !== 'number') {
        throw encodeError("decimal value must be {places: 0..255, digits: uint32}");
      }
      return F.decimal(d.places, d.digits);
    }
    case 'S':
      return F.str(Buffer.isBuffer(value) ? value : String(value));
    case 'x':
      return F.bytes(Buffer.isBuffer(value) ? value : String(value));
    case 'A':
      if (!Array.isArray(value)) throw encodeError('array value must be an array');
      return F.array(value.map((e) => fromJS(e, depth + 1)));
    case 'F':
      return F.table(tableFromJS(value as Record<string, unknown>, depth + 1));
    case 'V':
      return F.void();
    default:
      throw encodeError(`unknown field type '${name}'`);
  }
}

/** A FieldTable from a plain object; undefined members are left out (as amqplib does). */
export function tableFromJS(obj: Record<string, unknown>, depth = 0): FieldTable {
  if (depth > MAX_DEPTH) throw encodeError('field table nested too deeply');
  const t = newTable();
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v !== undefined) t[k] = fromJS(v, depth);
  }
  return t;
}
