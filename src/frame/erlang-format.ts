/**
 * Just enough of Erlang's term printing to word frame errors exactly as RabbitMQ 3.10 does.
 *
 * RabbitMQ builds some reply texts with `io_lib:format`: `~w` (`io_lib:write`, one line) and `~p`
 * (`io_lib_pretty`, which breaks terms that do not fit in 80 columns, indenting continuation lines
 * to the column where the term started). Clients see those newlines and spaces in the reply-text,
 * e.g. `FRAME_ERROR - type 1, all octets = <<0,60,...>>: {invalid_frame_end_marker,\n<spaces>0}`.
 * This module ports the parts of OTP 25's io_lib_pretty (print/print_length/cind/pp/pp_binary)
 * that the terms RabbitMQ's frame errors use need: integers, plain atoms, binaries and tuples,
 * printed with the latin1 encoding (`~p`, not `~tp`). Its output is compared against `erl` in
 * test/frame/erlang-format.test.ts.
 *
 * Output strings hold latin1 code points (one per byte, as Erlang's char lists do); use
 * `latin1ToText` to turn them into the JS string whose UTF-8 encoding gives the same bytes
 * whenever those bytes are valid UTF-8.
 */

export class ErlAtom {
  constructor(readonly name: string) {}
}
export class ErlTuple {
  readonly items: ErlTerm[];
  constructor(items: ErlTerm[]) {
    this.items = items;
  }
}
export type ErlTerm = number | bigint | ErlAtom | ErlTuple | Buffer;

export const atom = (name: string): ErlAtom => new ErlAtom(name);
export const tuple = (...items: ErlTerm[]): ErlTuple => new ErlTuple(items);

const LINE_LENGTH = 80;

/** `~w`: io_lib:write. Binaries are always written as byte lists. */
export function writeTerm(t: ErlTerm): string {
  if (typeof t === 'number' || typeof t === 'bigint') return String(t);
  if (t instanceof ErlAtom) return t.name;
  if (t instanceof ErlTuple) return '{' + t.items.map(writeTerm).join(',') + '}';
  return writeBinaryInts(t, Infinity);
}

/** `<<1,2,3>>`; stops once the text is longer than `limit` characters (then it is cut anyway). */
export function writeBinaryInts(b: Buffer, limit: number): string {
  let s = '<<';
  for (let i = 0; i < b.length; i++) {
    if (i > 0) s += ',';
    s += b[i];
    if (s.length > limit) return s;
  }
  return s + '>>';
}

// --- ~p -------------------------------------------------------------------------------------

/** io_lib_pretty's intermediate format, for the term shapes we print. */
type If =
  | { k: 'leaf'; s: string; len: number }
  | { k: 'bin'; tokens: string[]; len: number }
  | { k: 'tuple'; tagged: boolean; items: If[]; len: number };

function isLatin1Printable(c: number): boolean {
  return (
    (c >= 0x20 && c <= 0x7e) ||
    (c >= 0xa0 && c <= 0xff) ||
    c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0b || c === 0x08 || c === 0x0c || c === 0x1b
  );
}

const ESCAPES: Record<number, string> = {
  0x22: '\\"',
  0x5c: '\\\\',
  0x0a: '\\n',
  0x0d: '\\r',
  0x09: '\\t',
  0x0b: '\\v',
  0x08: '\\b',
  0x0c: '\\f',
  0x1b: '\\e',
};

function printLength(t: ErlTerm): If {
  if (typeof t === 'number' || typeof t === 'bigint') {
    const s = String(t);
    return { k: 'leaf', s, len: s.length };
  }
  if (t instanceof ErlAtom) return { k: 'leaf', s: t.name, len: t.name.length };
  if (t instanceof ErlTuple) {
    if (t.items.length === 0) return { k: 'leaf', s: '{}', len: 2 };
    const items = t.items.map(printLength);
    let len = 2 + items.length - 1;
    for (const i of items) len += i.len;
    return { k: 'tuple', tagged: t.items[0] instanceof ErlAtom && t.items.length > 1, items, len };
  }
  if (t.length === 0) return { k: 'leaf', s: '<<>>', len: 4 };
  let printable = true;
  for (let i = 0; i < t.length; i++) {
    if (!isLatin1Printable(t[i]!)) {
      printable = false;
      break;
    }
  }
  if (printable) {
    let s = '"';
    for (let i = 0; i < t.length; i++) {
      const c = t[i]!;
      s += ESCAPES[c] ?? String.fromCharCode(c);
    }
    s += '"';
    return { k: 'leaf', s: '<<' + s + '>>', len: 4 + s.length };
  }
  const tokens: string[] = [];
  let len = 4 + t.length - 1;
  for (let i = 0; i < t.length; i++) {
    const tok = String(t[i]);
    tokens.push(tok);
    len += tok.length;
  }
  return { k: 'bin', tokens, len };
}

function write(f: If): string {
  switch (f.k) {
    case 'leaf':
      return f.s;
    case 'bin':
      return '<<' + f.tokens.join(',') + '>>';
    case 'tuple':
      return '{' + f.items.map(write).join(',') + '}';
  }
}

const isAtomic = (f: If): boolean => f.k === 'leaf'; // io_lib_pretty's ?ATM
const spaces = (n: number): string => (n > 0 ? ' '.repeat(n) : '');
const lastDepth = (rest: number, ld: number): number => (rest > 0 ? 0 : ld + 1);

class NoGood extends Error {}

/** `~p` of `t` when `col0` characters precede it on the current line. */
export function printTerm(t: ErlTerm, col0: number): string {
  if (!(t instanceof ErlTuple) && !Buffer.isBuffer(t)) return writeTerm(t);
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
    case 'bin':
      return ppBinary(f.tokens, col + 2, ll, m, '  ' + ind, ld, w);
    case 'leaf':
      return f.s;
  }
}

function ppTagTuple(items: If[], col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  const tag = items[0]!;
  const rest = items.slice(1);
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

function ppList(items: If[], col0: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  const [e, ...es] = items;
  const { s, width } = ppElement(e!, col0, ll, m, tind, ind, lastDepth(es.length, ld), w);
  return s + ppTail(es, col0, col0 + width, ll, m, tind, ind, ld, w + width);
}

function ppTail(items: If[], col0: number, col: number, ll: number, m: number, tind: number, ind: string, ld: number, w: number): string {
  if (items.length === 0) return '';
  const [e, ...es] = items as [If, ...If[]];
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
  for (let i = 0; i < tokens.length; i++) {
    const bs = tokens[i]!;
    if (i < tokens.length - 1) {
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
  return ind;
}

function cindTagTuple(items: If[], col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  const tag = items[0]!;
  const rest = items.slice(1);
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

function cindList(items: If[], col0: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  const [e, ...es] = items;
  const we = cindElement(e!, col0, ll, m, ind, lastDepth(es.length, ld), w);
  return cindTail(es, col0, col0 + we, ll, m, ind, ld, w + we);
}

function cindTail(items: If[], col0: number, col: number, ll: number, m: number, ind: number, ld: number, w: number): number {
  if (items.length === 0) return ind;
  const [e, ...es] = items as [If, ...If[]];
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

/** Erlang char list (latin1 code points) → the JS string with the same bytes when they are valid UTF-8. */
export function latin1ToText(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  return Buffer.from(s, 'latin1').toString('utf8');
}
