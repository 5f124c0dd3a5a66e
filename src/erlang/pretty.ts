/**
 * `~p` of terms too long for their line, as Erlang prints them in the reply texts clients see.
 *
 * io_lib_pretty breaks a term that does not fit in 80 columns over several lines, indenting
 * continuation lines to the column where the term started; clients see those newlines and
 * spaces, e.g. `FRAME_ERROR - type 1, all octets = <<0,60,...>>: {invalid_frame_end_marker,\n
 * <spaces>0}`. This ports the parts of OTP 25's io_lib_pretty (print/print_length/cind/pp/
 * pp_binary) that tuples and binaries need, printed with the latin1 encoding (`~p`, not `~tp`).
 * Lists are printed on one line, never broken (see format.ts). Its output is compared against
 * `erl` in test/erlang/pretty.test.ts.
 *
 * Output strings hold latin1 code points; use latin1ToText (format.ts) for the wire.
 */
import { formatTerm, printableBinary, printableList } from './format.js';
import type { ErlTerm } from './term.js';

const LINE_LENGTH = 80;

/** io_lib_pretty's intermediate format, for the term shapes we print. */
type If =
  | { k: 'leaf'; s: string; len: number }
  | { k: 'bin'; tokens: string[]; len: number }
  // A tagged tuple (an atom, then more) prints its tag first; {} is a leaf.
  | { k: 'tuple'; tagged: true; items: [If, If, ...If[]]; len: number }
  | { k: 'tuple'; tagged: false; items: [If, ...If[]]; len: number }
  | { k: 'list'; items: [If, ...If[]]; len: number };

function printLength(t: ErlTerm): If {
  switch (t.kind) {
    case 'tuple': {
      const [first, ...others] = t.items;
      if (first === undefined) return { k: 'leaf', s: '{}', len: 2 };
      const head = printLength(first);
      const rest = others.map(printLength);
      let len = 2 + others.length + head.len;
      for (const i of rest) len += i.len;
      const [second, ...more] = rest;
      if (first.kind === 'atom' && second !== undefined) return { k: 'tuple', tagged: true, items: [head, second, ...more], len };
      return { k: 'tuple', tagged: false, items: [head, ...rest], len };
    }
    case 'list': {
      const [first, ...others] = t.items;
      const text = printableList(t.items);
      if (text !== undefined) return { k: 'leaf', s: text, len: text.length };
      if (first === undefined) return { k: 'leaf', s: '[]', len: 2 };
      const items: [If, ...If[]] = [printLength(first), ...others.map(printLength)];
      let len = 2 + others.length;
      for (const i of items) len += i.len;
      return { k: 'list', items, len };
    }
    case 'binary': {
      const text = t.bytes.length === 0 ? '<<>>' : printableBinary(t.bytes);
      if (text !== undefined) return { k: 'leaf', s: text, len: text.length };
      const tokens: string[] = [];
      let len = 4 + t.bytes.length - 1;
      for (const b of t.bytes) {
        const tok = String(b);
        tokens.push(tok);
        len += tok.length;
      }
      return { k: 'bin', tokens, len };
    }
    default: {
      const s = formatTerm(t); // atoms, numbers, and maps (kept on one line)
      return { k: 'leaf', s, len: s.length };
    }
  }
}

function write(f: If): string {
  switch (f.k) {
    case 'leaf':
      return f.s;
    case 'bin':
      return '<<' + f.tokens.join(',') + '>>';
    case 'tuple':
      return '{' + f.items.map(write).join(',') + '}';
    case 'list':
      return '[' + f.items.map(write).join(',') + ']';
  }
}

const isAtomic = (f: If): boolean => f.k === 'leaf'; // io_lib_pretty's ?ATM
const spaces = (n: number): string => (n > 0 ? ' '.repeat(n) : '');
const lastDepth = (rest: number, ld: number): number => (rest > 0 ? 0 : ld + 1);

class NoGood extends Error {}

/** `~p` of `t` when `col0` characters precede it on the current line. */
export function printTerm(t: ErlTerm, col0: number): string {
  if (t.kind !== 'tuple' && t.kind !== 'binary' && t.kind !== 'list') return formatTerm(t);
  const col = col0 + 1; // io_lib_format passes the 1-based column
  const f = printLength(t);
  const ll = LINE_LENGTH;
  const m = f.len; // line_max_chars defaults to the term's own length
  if (f.len < ll - col && f.len <= m) return write(f);
  let tind = 1;
  for (const tryInd of [-1, 4]) {
    try {
      tind = cind(f, col, ll, m, tryInd, 0, 0);
      break;
    } catch (e) {
      if (!(e instanceof NoGood)) throw e;
    }
  }
  return pp(f, col, ll, m, tind, spaces(col - 1), 0, 0);
}

function pp(f: If, col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  if (f.len < ll - col - ld && f.len + w + ld <= m) return write(f);
  switch (f.k) {
    case 'tuple':
      if (f.tagged) return '{' + ppTagTuple(f.items, col, ll, m, tind, ind, ld, w + 1) + '}';
      return '{' + ppList(f.items, col + 1, ll, m, tind, ' ' + ind, ld, w + 1) + '}';
    case 'list':
      return '[' + ppList(f.items, col + 1, ll, m, tind, ' ' + ind, ld, w + 1) + ']';
    case 'bin':
      return ppBinary(f.tokens, col + 2, ll, m, '  ' + ind, ld, w);
    case 'leaf':
      return f.s;
  }
}

function ppTagTuple(items: [If, If, ...If[]], col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  const [tag, ...rest] = items;
  const tagInd = tag.len + 2;
  const tcol = col + tagInd;
  if (tind > 0 && tagInd > tind) {
    const col1 = col + tind;
    const indent = spaces(tind) + ind;
    return write(tag) + ppTail(rest, col1, tcol, ll, m, tind, indent, ld, w + tag.len);
  }
  const indent = spaces(tagInd) + ind;
  return write(tag) + ',' + ppList(rest, tcol, ll, m, tind, indent, ld, w + tag.len + 1);
}

function ppList(items: [If, ...If[]], col0: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  const [e, ...es] = items;
  const { s, width } = ppElement(e, col0, ll, m, tind, ind, lastDepth(es.length, ld), w);
  return s + ppTail(es, col0, col0 + width, ll, m, tind, ind, ld, w + width);
}

function ppTail(items: If[], col0: number, col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  const [e, ...es] = items;
  if (e === undefined) return '';
  const ld1 = lastDepth(es.length, ld);
  const elen = 1 + e.len;
  if (
    (ld1 === 0 && elen + 1 < ll - col && w + elen + 1 <= m && isAtomic(e)) ||
    (ld1 > 0 && elen < ll - col - ld1 && w + elen + ld1 <= m && isAtomic(e))
  ) {
    return ',' + write(e) + ppTail(es, col0, col + elen, ll, m, tind, ind, ld, w + elen);
  }
  const { s, width } = ppElement(e, col0, ll, m, tind, ind, ld1, 0);
  return ',\n' + ind + s + ppTail(es, col0, col0 + width, ll, m, tind, ind, ld, width);
}

function ppElement(e: If, col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): { s: string; width: number } {
  if (e.len < ll - col - ld && e.len + w + ld <= m && isAtomic(e)) return { s: write(e), width: e.len };
  return { s: pp(e, col, ll, m, tind, ind, ld, w), width: ll }; // force a new line after it
}

function ppBinary(tokens: string[], col: number, ll: number, m: number, ind: string, ld: number, w: number): string {
  const n0 = Math.max(8, Math.min(ll - col, m - 4 - w) - ld);
  let n = n0;
  let out = '<<';
  const last = tokens.length - 1;
  for (const [i, bs] of tokens.entries()) {
    if (i < last) {
      const len = bs.length + 1;
      if (n - len < 0) {
        out += '\n' + ind + bs + ',';
        n = n0 - len;
      } else {
        out += bs + ',';
        n -= len;
      }
    } else {
      out += bs.length > n ? '\n' + ind + bs : bs;
    }
  }
  return out + '>>';
}

function cind(f: If, col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  if (f.len < ll - col - ld && f.len + w + ld <= m) return ind;
  if (f.k === 'tuple') {
    if (f.tagged) return cindTagTuple(f.items, col, ll, m, ind, ld, w + 1);
    return cindList(f.items, col + 1, ll, m, ind, ld, w + 1);
  }
  if (f.k === 'list') return cindList(f.items, col + 1, ll, m, ind, ld, w + 1);
  return ind;
}

function cindTagTuple(items: [If, If, ...If[]], col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  const [tag, ...rest] = items;
  const tagInd = tag.len + 2;
  const tcol = col + tagInd;
  if (ind > 0 && tagInd > ind) {
    const col1 = col + ind;
    if (m + col1 <= ll || col1 <= Math.floor(ll / 2)) return cindTail(rest, col1, tcol, ll, m, ind, ld, w + tag.len);
    throw new NoGood();
  }
  if (m + tcol < ll || tcol < Math.floor(ll / 2)) return cindList(rest, tcol, ll, m, ind, ld, w + tag.len + 1);
  throw new NoGood();
}

function cindList(items: [If, ...If[]], col0: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  const [e, ...es] = items;
  const we = cindElement(e, col0, ll, m, ind, lastDepth(es.length, ld), w);
  return cindTail(es, col0, col0 + we, ll, m, ind, ld, w + we);
}

function cindTail(items: If[], col0: number, col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  const [e, ...es] = items;
  if (e === undefined) return ind;
  const ld1 = lastDepth(es.length, ld);
  const elen = 1 + e.len;
  if (
    (ld1 === 0 && elen + 1 < ll - col && w + elen + 1 <= m && isAtomic(e)) ||
    (ld1 > 0 && elen < ll - col - ld1 && w + elen + ld1 <= m && isAtomic(e))
  ) {
    return cindTail(es, col0, col + elen, ll, m, ind, ld, w + elen);
  }
  const we = cindElement(e, col0, ll, m, ind, ld1, 0);
  return cindTail(es, col0, col0 + we, ll, m, ind, ld, we);
}

function cindElement(e: If, col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  if (e.len < ll - col - ld && e.len + w + ld <= m && isAtomic(e)) return e.len;
  cind(e, col, ll, m, ind, ld, w);
  return ll;
}

/** Formats a `~s`/`~p` sequence the way io_lib:format does, tracking the column. */
export function formatParts(parts: Array<string | { p: ErlTerm }>): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'string') out += part;
    else {
      const nl = out.lastIndexOf('\n');
      out += printTerm(part.p, out.length - nl - 1);
    }
  }
  return out;
}
