/**
 * Just enough of Erlang's term model to reproduce two things RabbitMQ users can observe:
 * the reply texts RabbitMQ builds with io_lib:format("~p") (e.g. the headers exchange's
 * "Invalid x-match field value <<\"foo\">>; ..."), and erlang:phash2/1 of the values the
 * consistent-hash exchange hashes (see erlang-phash2.ts).
 *
 * A field value becomes the term rabbit_binary_parser:parse_table/1 (RabbitMQ 3.10) produces:
 * longstr/binary → binary, integer types → integer, f/d → float, t → true/false, D →
 * {Places, Digits}, F → [{Key, TypeAtom, Value}], A → [{TypeAtom, Value}], V → undefined.
 */
import { FIELD_TYPE_ATOMS, type FieldTable, type FieldValue } from '../frame/field-table.js';

export type ErlTerm =
  | { readonly kind: 'atom'; readonly name: string }
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'binary'; readonly bytes: Uint8Array }
  | { readonly kind: 'tuple'; readonly items: readonly ErlTerm[] }
  | { readonly kind: 'list'; readonly items: readonly ErlTerm[] };

export const atom = (name: string): ErlTerm => ({ kind: 'atom', name });
export const int = (value: number | bigint): ErlTerm => ({ kind: 'int', value: BigInt(value) });
export const float = (value: number): ErlTerm => ({ kind: 'float', value });
export const binary = (bytes: Uint8Array | string): ErlTerm => ({
  kind: 'binary',
  bytes: typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes,
});
export const tuple = (...items: ErlTerm[]): ErlTerm => ({ kind: 'tuple', items });
export const list = (items: readonly ErlTerm[]): ErlTerm => ({ kind: 'list', items });

/** The Erlang value (without its type atom) of a field value. */
export function fieldValueTerm(v: FieldValue): ErlTerm {
  switch (v.type) {
    case 'S':
    case 'x':
      return binary(v.value);
    case 't':
      return atom(v.value ? 'true' : 'false');
    case 'f':
    case 'd':
      return float(v.value);
    case 'D':
      return tuple(int(v.value.places), int(v.value.digits));
    case 'F':
      return fieldTableTerm(v.value);
    case 'A':
      return list(v.value.map((e) => tuple(atom(FIELD_TYPE_ATOMS[e.type]), fieldValueTerm(e))));
    case 'V':
      return atom('undefined');
    default:
      return int(v.value);
  }
}

/** {TypeAtom, Value}: what rabbit_misc:table_lookup/2 returns for a present key. */
export function typedFieldValueTerm(v: FieldValue): ErlTerm {
  return tuple(atom(FIELD_TYPE_ATOMS[v.type]), fieldValueTerm(v));
}

/** [{Key, TypeAtom, Value}] in the table's key order. */
export function fieldTableTerm(t: FieldTable): ErlTerm {
  return list(Object.entries(t).map(([k, v]) => tuple(binary(k), atom(FIELD_TYPE_ATOMS[v.type]), fieldValueTerm(v))));
}

/**
 * io_lib:format("~p", [Term]) on one line, in latin1 code points (see latin1ToText). Erlang's
 * pretty printer also breaks terms longer than its 80-column line width over several lines; that
 * is not reproduced (only matters for long nested tables in error texts; src/frame/erlang-format.ts
 * has a port of that line breaking for the terms frame errors use).
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
      return `[${t.items.map(formatTerm).join(',')}]`;
  }
}

/**
 * Erlang builds reply texts as lists of latin1 code points (one per byte). This turns such a
 * string into the JavaScript string whose UTF-8 encoding is the same bytes, when those bytes are
 * valid UTF-8 (so a binary holding "é" prints as <<"é">> on the wire, as RabbitMQ's does).
 */
export function latin1ToText(s: string): string {
  // eslint-disable-next-line no-control-regex
  if (/^[\x00-\x7f]*$/.test(s)) return s;
  const text = Buffer.from(s, 'latin1').toString('utf8');
  return text.includes('\ufffd') ? s : text;
}

/** io_lib:format("~s", [Binary]): the bytes as characters (latin1). */
export function formatString(bytes: Uint8Array | string): string {
  return typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('latin1');
}

const RESERVED = new Set(
  'after and andalso band begin bnot bor bsl bsr bxor case catch cond div end fun if let not of or orelse receive rem try when xor'.split(' '),
);

function formatAtom(name: string): string {
  if (/^[a-zß-öø-ÿ][A-Za-z0-9_@À-ÖØ-öø-ÿ]*$/.test(name) && !RESERVED.has(name)) return name;
  return `'${name.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

const ESCAPES: Record<number, string> = { 8: '\\b', 9: '\\t', 10: '\\n', 11: '\\v', 12: '\\f', 13: '\\r', 27: '\\e', 34: '\\"', 92: '\\\\' };

/** A binary prints as <<"text">> when every byte is printable latin1, else as <<1,2,3>>. */
function formatBinary(bytes: Uint8Array): string {
  if (bytes.length === 0) return '<<>>';
  let printable = true;
  for (const b of bytes) {
    if (!((b >= 32 && b <= 126) || b >= 160 || ESCAPES[b] !== undefined)) {
      printable = false;
      break;
    }
  }
  if (!printable) return `<<${Array.from(bytes).join(',')}>>`;
  let s = '';
  for (const b of bytes) s += ESCAPES[b] ?? String.fromCharCode(b);
  return `<<"${s}">>`;
}

/**
 * float_to_list(F, [short]) as OTP 25 prints it (what ~p uses): the shortest digits that read
 * back as F, written in plain or scientific notation, whichever is shorter (plain on a tie), but
 * always scientific from 2^53 up. Always a ".": 1.0, 1.0e20, 1.5e-5.
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
