/**
 * Small primitives shared by the generated codec (generated/*.ts) and the hand-written fast paths.
 */
import { encodeError, truncateReplyText } from './frame-errors.js';

export const TWO_32 = 0x100000000;

/** An unsigned 64-bit big-endian integer as a number (exact below 2^53). */
export function readU64(b: Buffer, o: number): number {
  return u64(b.readUInt32BE(o), b.readUInt32BE(o + 4));
}

/**
 * hi · 2^32 + lo, kept as V8 keeps a small integer (a Smi) when hi is 0. The product is a heap
 * number even when it is whole and small, and a heap number stored in an object's field turns
 * that field to a double in every object of the shape: the code compiled for a small integer
 * there is thrown away and compiled again (a stream's first replay read entries from the store
 * and did this to the publish path's, mid-run).
 */
export function u64(hi: number, lo: number): number {
  return hi === 0 ? lo : hi * TWO_32 + lo;
}

/** A float64 read from octets, as a small integer when it is one (see u64): counts, sizes, offsets. */
export function wholeAsSmi(n: number): number {
  return n === (n | 0) ? n | 0 : n;
}

/**
 * The 4 big-endian octets at b[o, o + 4) as an unsigned integer, for callers that know the bytes
 * are there (Buffer.readUInt32BE checks its offset on every call; this does not).
 */
export function readU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}

/** The 2 big-endian octets at b[o, o + 2), for callers that know the bytes are there. */
export function readU16(b: Uint8Array, o: number): number {
  return (b[o]! << 8) | b[o + 1]!;
}

/**
 * Writes v, an integer in [0, 2^32) the caller has checked, as 4 big-endian octets; returns the
 * offset after them. Octet stores: Buffer.writeUInt32BE checks its arguments on every call.
 */
export function writeU32(b: Uint8Array, o: number, v: number): number {
  b[o] = v >>> 24;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
  return o + 4;
}

export function writeU64(b: Buffer, o: number, v: number): void {
  if (!(v >= 0 && v <= Number.MAX_SAFE_INTEGER) || v !== Math.floor(v)) {
    throw encodeError(`longlong out of range: ${v}`);
  }
  // Octet stores: v is checked above, so Buffer's range checks are not needed (every delivery
  // tag goes through here).
  const hi = Math.floor(v / TWO_32);
  const lo = v >>> 0;
  b[o] = hi >>> 24;
  b[o + 1] = (hi >>> 16) & 0xff;
  b[o + 2] = (hi >>> 8) & 0xff;
  b[o + 3] = hi & 0xff;
  b[o + 4] = lo >>> 24;
  b[o + 5] = (lo >>> 16) & 0xff;
  b[o + 6] = (lo >>> 8) & 0xff;
  b[o + 7] = lo & 0xff;
}

/**
 * UTF-8 validity exactly as RabbitMQ 3.10 checks shortstrs (rabbit_binary_parser:assert_utf8 →
 * xmerl_ucs:from_utf8): overlong forms, stray continuation bytes, truncated sequences and 5/6-byte
 * forms are rejected; surrogates and code points up to 0x1FFFFF (4-byte lead bytes F0..F7) pass.
 */
export function isRabbitUtf8(b: Buffer, start: number, end: number): boolean {
  let i = start;
  while (i < end) {
    const c1 = b[i]!;
    if (c1 < 0x80) {
      i++;
      continue;
    }
    if ((c1 & 0xe0) === 0xc0 && i + 1 < end && (b[i + 1]! & 0xc0) === 0x80) {
      if ((((c1 & 0x1f) << 6) | (b[i + 1]! & 0x3f)) < 0x80) return false;
      i += 2;
      continue;
    }
    if ((c1 & 0xf0) === 0xe0 && i + 2 < end && (b[i + 1]! & 0xc0) === 0x80 && (b[i + 2]! & 0xc0) === 0x80) {
      if ((((c1 & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f)) < 0x800) return false;
      i += 3;
      continue;
    }
    if (
      (c1 & 0xf8) === 0xf0 &&
      i + 3 < end &&
      (b[i + 1]! & 0xc0) === 0x80 &&
      (b[i + 2]! & 0xc0) === 0x80 &&
      (b[i + 3]! & 0xc0) === 0x80
    ) {
      const cp = ((c1 & 0x0f) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
      if (cp < 0x10000) return false;
      i += 4;
      continue;
    }
    return false;
  }
  return true;
}

/**
 * Octets of s in UTF-8: its length when it is ASCII (one octet per UTF-16 unit, counted by a
 * loop, cheaper than Buffer.byteLength's call into C++ for a short string), else byteLength.
 */
export function utf8Length(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  return s.length;
}

/** Byte length of a shortstr value; more than 255 is a broker bug. */
export function shortstrLength(s: string): number {
  const n = utf8Length(s);
  if (n > 255) throw encodeError(`shortstr longer than 255 bytes: '${s.slice(0, 40)}...'`);
  return n;
}

/** Writes a shortstr whose byte length `n` is already known; returns the offset after it. */
export function writeShortstr(b: Buffer, o: number, s: string, n: number): number {
  b[o] = n;
  if (n === s.length) {
    for (let i = 0; i < n; i++) b[o + 1 + i] = s.charCodeAt(i);
  } else {
    b.write(s, o + 1, n, 'utf8');
  }
  return o + 1 + n;
}

/** A reply-text as RabbitMQ sends it: cut to 252 octets plus "..." when over 255. */
export function replyTextBytes(s: string): Buffer {
  return truncateReplyText(Buffer.from(s, 'utf8'));
}

export function longstrBytes(v: Buffer | string): Buffer {
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

export function writeBytes(b: Buffer, o: number, v: Buffer): number {
  v.copy(b, o);
  return o + v.length;
}

/**
 * Copies src[start, end) to dst at `at` and returns where it ends. A short range is copied byte
 * by byte: Buffer#copy costs a fixed ~0.1 µs (argument checks, a Uint8Array view), more than
 * the loop takes for the few octets of a header or small body.
 */
export function copyBytes(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  const n = end - start;
  if (n <= 64) for (let i = 0; i < n; i++) dst[at + i] = src[start + i]!;
  else dst.set(src.subarray(start, end), at);
  return at + n;
}
