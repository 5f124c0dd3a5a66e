/**
 * Erlang's term printing on one line, as RabbitMQ's reply texts show terms: io_lib:format's `~w`
 * (io_lib:write), `~p` for terms that fit on the line, and `~s`. Expected strings come from OTP
 * 25 (test/erlang/format.test.ts). `~p` of a term too long for its line breaks it over several
 * lines: see pretty.ts.
 *
 * Output strings hold latin1 code points (one per byte, as Erlang's char lists do); latin1ToText
 * turns them into the JS string that goes on the wire.
 */
import type { ErlTerm } from './term.js';

/**
 * io_lib:format("~p", [Term]) on one line. A non-empty list of printable latin1 character codes
 * prints as a string ("missing )"), as io_lib:printable_list decides.
 */
export function formatTerm(t: ErlTerm): string {
  switch (t.kind) {
    case 'atom':
      return formatAtom(t.name);
    case 'int':
      return t.value.toString();
    case 'float':
      return formatFloat(t.value);
    case 'binary':
      return formatBinary(t.bytes);
    case 'tuple':
      return `{${t.items.map(formatTerm).join(',')}}`;
    case 'list':
      return printableList(t.items) ?? `[${t.items.map(formatTerm).join(',')}]`;
    case 'map':
      return `#{${t.entries.map(([k, v]) => `${formatTerm(k)} => ${formatTerm(v)}`).join(',')}}`;
  }
}

/** `"text"` when items are a non-empty list of printable latin1 characters (~p prints it so). */
export function printableList(items: readonly ErlTerm[]): string | undefined {
  if (items.length === 0) return undefined;
  let s = '';
  for (const t of items) {
    if (t.kind !== 'int' || t.value < 0n || t.value > 255n) return undefined;
    const b = Number(t.value);
    if (!((b >= 32 && b <= 126) || b >= 160 || ESCAPES[b] !== undefined)) return undefined;
    s += ESCAPES[b] ?? String.fromCharCode(b);
  }
  return `"${s}"`;
}

/** `~w`: io_lib:write. Like formatTerm, but a binary is always written as its bytes. */
export function writeTerm(t: ErlTerm): string {
  switch (t.kind) {
    case 'binary':
      return writeBinaryInts(t.bytes, Infinity);
    case 'tuple':
      return `{${t.items.map(writeTerm).join(',')}}`;
    case 'list':
      return `[${t.items.map(writeTerm).join(',')}]`;
    case 'map':
      return `#{${t.entries.map(([k, v]) => `${writeTerm(k)} => ${writeTerm(v)}`).join(',')}}`;
    default:
      return formatTerm(t);
  }
}

/** `<<1,2,3>>`; stops once the text is longer than `limit` characters (then it is cut anyway). */
export function writeBinaryInts(b: Uint8Array, limit: number): string {
  let s = '<<';
  for (let i = 0; i < b.length; i++) {
    if (i > 0) s += ',';
    s += b[i];
    if (s.length > limit) return s;
  }
  return s + '>>';
}

/** io_lib:format("~s", [Binary]): the bytes as characters (latin1). */
export function formatString(bytes: Uint8Array | string): string {
  return typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('latin1');
}

/**
 * Erlang builds reply texts as lists of latin1 code points (one per byte); RabbitMQ sends those
 * bytes. This gives the JS string whose UTF-8 encoding is the same bytes, when they are valid
 * UTF-8 (so a binary holding "é" prints as <<"é">> on the wire, as RabbitMQ's does). When they
 * are not, no JS string has those bytes, and `onInvalid` picks the stand-in: 'replace' decodes
 * them as a UTF-8 client decodes RabbitMQ's bytes (U+FFFD for each bad sequence), 'latin1'
 * keeps the latin1 characters.
 */
export function latin1ToText(s: string, onInvalid: 'replace' | 'latin1' = 'replace'): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  const text = Buffer.from(s, 'latin1').toString('utf8');
  return onInvalid === 'latin1' && text.includes('\ufffd') ? s : text;
}

const RESERVED = new Set(
  'after and andalso band begin bnot bor bsl bsr bxor case catch cond div end fun if let not of or orelse receive rem try when xor'.split(' '),
);

/** An atom bare when it may be, else quoted. */
function formatAtom(name: string): string {
  if (/^[a-zß-öø-ÿ][A-Za-z0-9_@À-ÖØ-öø-ÿ]*$/.test(name) && !RESERVED.has(name)) return name;
  return `'${name.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

const ESCAPES: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 27: '\\e', 34: '\\"', 92: '\\\\' };

/**
 * The `<<"text">>` form of a binary when every byte is printable latin1 (`~p`, not `~tp`), else
 * undefined (then it prints as <<1,2,3>>).
 */
export function printableBinary(bytes: Uint8Array): string | undefined {
  for (const b of bytes) {
    if (!((b >= 32 && b <= 126) || b >= 160 || ESCAPES[b] !== undefined)) return undefined;
  }
  let s = '';
  for (const b of bytes) s += ESCAPES[b] ?? String.fromCharCode(b);
  return `<<"${s}">>`;
}

function formatBinary(bytes: Uint8Array): string {
  if (bytes.length === 0) return '<<>>';
  return printableBinary(bytes) ?? writeBinaryInts(bytes, Infinity);
}

/**
 * float_to_list(F, [short]) as OTP 25 prints it (what ~p and ~w use): the shortest digits that
 * read back as F, written in plain or scientific notation, whichever is shorter (plain on a tie),
 * but always scientific from 2^53 up. Always a ".": 1.0, 1.0e20, 1.5e-5.
 */
export function formatFloat(f: number): string {
  if (f === 0) return Object.is(f, -0) ? '-0.0' : '0.0';
  const sign = f < 0 ? '-' : '';
  const abs = Math.abs(f);
  // Shortest round-trip digits and decimal exponent, from JavaScript's own shortest formatting.
  const [mantissa, expPart] = abs.toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exp = Number(expPart); // abs = d.ddd × 10^exp
  const scientific = `${digits[0]}.${digits.length > 1 ? digits.slice(1) : '0'}e${exp}`;
  let plain: string;
  if (exp >= digits.length - 1) plain = `${digits}${'0'.repeat(exp - digits.length + 1)}.0`;
  else if (exp >= 0) plain = `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
  else plain = `0.${'0'.repeat(-exp - 1)}${digits}`;
  const useScientific = abs >= 2 ** 53 || scientific.length < plain.length;
  return sign + (useScientific ? scientific : plain);
}

/**
 * rabbit_misc:escape_html_tags/1: `&`, `<` and `>` as HTML entities. The management API applies
 * it to reasons that echo client input (policy and parameter validation failures).
 */
export function escapeHtmlTags(s: string): string {
  return s.replace(/[<>&]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&amp;'));
}
