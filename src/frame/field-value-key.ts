import type { FieldValue } from './field-table.js';

/**
 * A Map key for a header value, equal for two values exactly when Erlang's exact match (`=:=`,
 * an ETS or Mnesia key) finds them equal: what the message-deduplication plugin caches and what
 * a last-value queue keys on. Every integer type is one integer (short 7 and long 7 are the
 * same key, as in Erlang) and is the JS number itself (a small integer costs V8 no
 * allocation; an integer beyond 2^53 is a string 'i…'); everything else is a string with a
 * prefix for its kind: floats are another kind (7.0 is not 7), longstr and byte array are both
 * binaries; arrays and tables compare element by element, in order.
 */
export type FieldKey = string | number;

export function fieldValueKey(v: FieldValue): FieldKey {
  switch (v.type) {
    case 'S':
    case 'x':
      // latin1 maps every byte to one char: distinct byte strings stay distinct.
      return 's' + v.value.toString('latin1');
    case 'b': case 'B': case 's': case 'u': case 'I': case 'i': case 'T':
      return v.value;
    case 'l': {
      const n = Number(v.value);
      return Number.isSafeInteger(n) ? n : 'i' + v.value.toString();
    }
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

/** A key as text, for the store: an integer key is 'i' and its digits (fieldKeyFromText reverses it). */
export function fieldKeyText(key: FieldKey): string {
  return typeof key === 'number' ? 'i' + String(key) : key;
}

/** The key fieldKeyText wrote. */
export function fieldKeyFromText(text: string): FieldKey {
  if (text.startsWith('i')) {
    const n = Number(text.slice(1));
    if (Number.isSafeInteger(n) && 'i' + String(n) === text) return n;
  }
  return text;
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
