/**
 * erlang:phash2/1, so that x-consistent-hash picks the same bucket RabbitMQ does.
 *
 * phash2 is documented as portable: the same term hashes the same on every machine and ERTS
 * version. This is a port of make_hash2 from erts (erl_term_hashing.c / utils.c: Bob Jenkins'
 * lookup2 MIX over 32-bit words, "block_hash" for binaries, hashpjw for atom names), for the
 * term kinds in ErlTerm: atoms, integers (small and big), floats, binaries, tuples and proper
 * lists. The result is masked to 27 bits, as phash2/1 does. Checked against erlang:phash2/1 of
 * OTP 25 (test/erlang/phash2.test.ts).
 */
import type { ErlTerm } from './term.js';

const HCONST = 0x9e3779b9;
const HCONST_2 = 0x3c6ef372;
const HCONST_3 = 0xdaa66d2b;
const HCONST_4 = 0x78dde6e4;
const HCONST_9 = 0x8ff34781;
const HCONST_10 = 0x2e2ac13a;
const HCONST_11 = 0xcc623af3;
const HCONST_12 = 0x6a99b4ac;
const HCONST_13 = 0x08d12e65;
/** erl_term.h's NIL_DEF tag, hashed for a list's [] tail when something was hashed before. */
const NIL_DEF = 2;
/** make_hash2's value for a lone [] (hash still 0 when the [] is reached). */
const NIL_FIRST = 3468870702;

/** Jenkins' lookup2 state; mix() is the MIX(a,b,c) macro over unsigned 32-bit words. */
class Jenkins {
  a = 0;
  b = 0;
  c = 0;

  mix(): void {
    let a = this.a;
    let b = this.b;
    let c = this.c;
    a = (a - b - c) >>> 0; a = (a ^ (c >>> 13)) >>> 0;
    b = (b - c - a) >>> 0; b = (b ^ (a << 8)) >>> 0;
    c = (c - a - b) >>> 0; c = (c ^ (b >>> 13)) >>> 0;
    a = (a - b - c) >>> 0; a = (a ^ (c >>> 12)) >>> 0;
    b = (b - c - a) >>> 0; b = (b ^ (a << 16)) >>> 0;
    c = (c - a - b) >>> 0; c = (c ^ (b >>> 5)) >>> 0;
    a = (a - b - c) >>> 0; a = (a ^ (c >>> 3)) >>> 0;
    b = (b - c - a) >>> 0; b = (b ^ (a << 10)) >>> 0;
    c = (c - a - b) >>> 0; c = (c ^ (b >>> 15)) >>> 0;
    this.a = a;
    this.b = b;
    this.c = c;
  }
}

/** UINT32_HASH_2(x, y, k) applied to the running hash. */
function hash2(hash: number, x: number, y: number, k: number): number {
  const j = new Jenkins();
  j.a = (k + x) >>> 0;
  j.b = (k + y) >>> 0;
  j.c = hash;
  j.mix();
  return j.c;
}

/** block_hash(): the binary in 12-byte blocks, then the tail and the length. */
function blockHash(bytes: Uint8Array, initval: number): number {
  const j = new Jenkins();
  j.a = j.b = HCONST;
  j.c = initval;
  const len = bytes.length;
  let k = 0;
  const word = (i: number) => (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
  while (len - k >= 12) {
    j.a = (j.a + word(k)) >>> 0;
    j.b = (j.b + word(k + 4)) >>> 0;
    j.c = (j.c + word(k + 8)) >>> 0;
    j.mix();
    k += 12;
  }
  j.c = (j.c + (len >>> 0)) >>> 0;
  const rest = len - k;
  const byteAt = (i: number, shift: number) => (bytes[k + i]! << shift) >>> 0;
  // The C switch falls through from the highest remaining byte down.
  if (rest >= 11) j.c = (j.c + byteAt(10, 24)) >>> 0;
  if (rest >= 10) j.c = (j.c + byteAt(9, 16)) >>> 0;
  if (rest >= 9) j.c = (j.c + byteAt(8, 8)) >>> 0;
  if (rest >= 8) j.b = (j.b + byteAt(7, 24)) >>> 0;
  if (rest >= 7) j.b = (j.b + byteAt(6, 16)) >>> 0;
  if (rest >= 6) j.b = (j.b + byteAt(5, 8)) >>> 0;
  if (rest >= 5) j.b = (j.b + byteAt(4, 0)) >>> 0;
  if (rest >= 4) j.a = (j.a + byteAt(3, 24)) >>> 0;
  if (rest >= 3) j.a = (j.a + byteAt(2, 16)) >>> 0;
  if (rest >= 2) j.a = (j.a + byteAt(1, 8)) >>> 0;
  if (rest >= 1) j.a = (j.a + byteAt(0, 0)) >>> 0;
  j.mix();
  return j.c;
}

/**
 * atom.c's atom_hash(): hashpjw over the atom's UTF-8 name, where a two-byte sequence for a
 * latin1 character (lead byte 0xC2/0xC3) counts as that one character.
 */
export function atomHash(name: string): number {
  const p = Buffer.from(name, 'utf8');
  let h = 0;
  for (let i = 0; i < p.length; i++) {
    let v = p[i]!;
    if (i + 1 < p.length && (v & 0xfe) === 0xc2 && (p[i + 1]! & 0xc0) === 0x80) {
      v = ((v << 6) | (p[i + 1]! & 0x3f)) & 0xff;
      i++;
    }
    h = ((h << 4) + v) >>> 0;
    const g = (h & 0xf0000000) >>> 0;
    if (g !== 0) {
      h = (h ^ (g >>> 24)) >>> 0;
      h = (h ^ g) >>> 0;
    }
  }
  return h;
}

const SSMALL28_MIN = -(2n ** 27n);
const SSMALL28_MAX = 2n ** 27n - 1n;
const MASK32 = 0xffffffffn;

function hashInteger(hash: number, v: bigint): number {
  if (v >= SSMALL28_MIN && v <= SSMALL28_MAX) {
    // SINT32_HASH: negative numbers are mixed twice, first as their magnitude.
    const y = Number(v);
    if (y < 0) hash = hash2(hash, -y >>> 0, 0, HCONST);
    return hash2(hash, y >>> 0, 0, HCONST);
  }
  // NOT_SSMALL28_HASH and bignums (64-bit digits, least significant first).
  const con = v < 0n ? HCONST_10 : HCONST_11;
  let t = v < 0n ? -v : v;
  do {
    const digit = t & 0xffffffffffffffffn;
    hash = hash2(hash, Number(digit & MASK32), Number(digit >> 32n), con);
    t >>= 64n;
  } while (t > 0n);
  return hash;
}

function hashFloat(hash: number, f: number): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, f === 0 ? 0 : f, true); // -0.0 hashes as 0.0
  const lo = view.getUint32(0, true);
  const hi = view.getUint32(4, true);
  return hash2(hash, hi, lo, HCONST_12);
}

/** A list from `start` on; start === items.length is its [] tail. */
interface ListRest {
  readonly items: readonly ErlTerm[];
  readonly start: number;
}

function isByte(t: ErlTerm): t is { kind: 'int'; value: bigint } {
  return t.kind === 'int' && t.value >= 0n && t.value <= 255n;
}

/** make_hash2(Term), unmasked (32 bits). */
function makeHash2(term: ErlTerm): number {
  let hash = 0;
  const stack: (ErlTerm | ListRest)[] = [term];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (!('kind' in top)) {
      // The rest of a list: a run of bytes is hashed 4 at a time, then one element, then the rest.
      const { items } = top;
      let k = top.start;
      if (k === items.length) {
        hash = hash === 0 ? NIL_FIRST : hash2(hash, NIL_DEF, 0, HCONST_2);
        continue;
      }
      let c = 0;
      let sh = 0;
      let item = items[k];
      for (; item !== undefined && isByte(item); item = items[++k]) {
        sh = ((sh << 8) + Number(item.value)) >>> 0;
        if (c === 3) {
          hash = hash2(hash, sh, 0, HCONST_4);
          c = sh = 0;
        } else {
          c++;
        }
      }
      if (c > 0) hash = hash2(hash, sh, 0, HCONST_4);
      if (item !== undefined) {
        stack.push({ items, start: k + 1 });
        stack.push(item);
      } else {
        stack.push({ items, start: k });
      }
      continue;
    }
    switch (top.kind) {
      case 'atom': {
        const h = atomHash(top.name);
        hash = hash === 0 ? h : hash2(hash, h, 0, HCONST_3);
        break;
      }
      case 'int':
        hash = hashInteger(hash, top.value);
        break;
      case 'float':
        hash = hashFloat(hash, top.value);
        break;
      case 'binary': {
        const con = (HCONST_13 + hash) >>> 0;
        hash = top.bytes.length === 0 ? con : blockHash(top.bytes, con);
        break;
      }
      case 'tuple':
        hash = hash2(hash, top.items.length, 0, HCONST_9);
        for (let i = top.items.length - 1; i >= 0; i--) stack.push(top.items[i]!);
        break;
      case 'list':
        stack.push({ items: top.items, start: 0 });
        break;
      case 'map':
        // No hashed term is a map (field tables hash as lists of tuples).
        throw new Error('phash2 of a map is not implemented');
    }
  }
  return hash;
}

/** erlang:phash2(Term): make_hash2 masked to 0..2^27-1. */
export function phash2(term: ErlTerm): number {
  return makeHash2(term) & 0x7ffffff;
}

/** erlang:phash2(Term, Range): make_hash2 modulo Range (1..2^32; 2^32 keeps all 32 bits). */
export function phash2Range(term: ErlTerm, range: number): number {
  const hash = makeHash2(term);
  return range >= 2 ** 32 ? hash : hash % range;
}
