import type { FieldValue } from './field-table.js';

/**
 * A string that identifies a header value the way an Erlang term identifies it as an ETS or
 * Mnesia key (exact match, `=:=`): what the message-deduplication plugin caches and what a
 * last-value queue keys on. Every integer type is one integer (short 7 and long 7 are the same
 * key, as in Erlang), floats are another kind (7.0 is not 7), longstr and byte array are both
 * binaries; arrays and tables compare element by element, in order. Used as a Map key.
 */
export function fieldValueKey(v: FieldValue): string {
  switch (v.type) {
    case 'S':
    case 'x':
      // latin1 maps every byte to one char: distinct byte strings stay distinct.
      return 's' + v.value.toString('latin1');
    case 'b': case 'B': case 's': case 'u': case 'I': case 'i': case 'T':
      return 'i' + String(v.value);
    case 'l':
      return 'i' + v.value.toString();
    case 'f':
    case 'd':
      return 'f' + String(v.value);
    case 't':
      return v.value ? 'true' : 'false';
    case 'D':
      return `D${v.value.places}:${v.value.digits}`;
    case 'V':
      return 'undefined';
    case 'A':
      return '[' + v.value.map((e) => JSON.stringify(fieldValueKey(e))).join(',') + ']';
    case 'F':
      return '{' + Object.entries(v.value).map(([k, e]) => JSON.stringify(k) + ':' + JSON.stringify(fieldValueKey(e))).join(',') + '}';
  }
}

/** A numeric header value as a number (integers, floats, decimals); undefined for any other type. */
export function fieldNumber(v: FieldValue | undefined): number | undefined {
  if (v === undefined) return undefined;
  switch (v.type) {
    case 'b': case 'B': case 's': case 'u': case 'I': case 'i': case 'f': case 'd':
      return v.value;
    case 'l':
      return Number(v.value);
    case 'D':
      return v.value.digits / 10 ** v.value.places;
    default:
      return undefined;
  }
}
