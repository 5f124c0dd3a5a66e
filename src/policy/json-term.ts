import { atom, binary, float, int, list, map, type ErlTerm } from '../erlang/term.js';
import type { JsonValue } from './policy.js';
import { compareUtf8 } from '../sorted.js';

/**
 * A JSON value as RabbitMQ holds it after decoding a request body: strings are binaries,
 * integers and floats are numbers, true/false/null are atoms, arrays are lists and objects are
 * maps (whose entries Erlang orders by key). Used to print values into error texts with ~p.
 *
 * JSON.parse cannot tell `1.0` from `1`: a number with an integral value is an integer here.
 * undefined is a key the body lacks, which RabbitMQ reads as the atom undefined.
 */
export function jsonTerm(v: JsonValue | undefined): ErlTerm {
  if (v === undefined) return atom('undefined');
  if (v === null) return atom('null');
  if (typeof v === 'boolean') return atom(String(v));
  if (typeof v === 'string') return binary(v);
  if (typeof v === 'number') return Number.isInteger(v) ? int(BigInt(v)) : float(v);
  if (Array.isArray(v)) return list(v.map(jsonTerm));
  return map(sortedEntries(v).map(([k, x]) => [binary(k), jsonTerm(x)] as const));
}

/** An object's entries in Erlang's order for binary keys: bytewise. */
export function sortedEntries<T>(o: Readonly<Record<string, T>>): Array<[string, T]> {
  return Object.entries(o).sort(([a], [b]) => compareUtf8(a, b));
}
