/**
 * Comparing field tables and values the two ways RabbitMQ 3.10 does.
 *
 * 1. Binding identity (`fieldTablesEqual`). rabbit_binding:binding_action/3 sorts the top-level
 *    arguments by key (rabbit_misc:sort_field_table = lists:keysort/2) and the route is then looked
 *    up by exact term match. So: top-level key order does not matter; every value must have the
 *    same type tag and the same value; nested tables and arrays are compared in their own order
 *    (they are not sorted). Nested-table order here is the object's key order, which matches wire
 *    order except for integer-like keys (JavaScript lists those first).
 *
 * 2. Erlang `==` on the parsed values (`fieldValuesLooselyEqual`), which is what
 *    rabbit_exchange_type_headers:headers_match/5 uses (`PV == DV`): at the top level only the
 *    VALUE is compared, not the type tag — integers and floats compare numerically (signedint 1 ==
 *    long 1 == double 1.0), longstr and binary ('x') compare as binaries, an empty table equals an
 *    empty array (both are []). Inside tables and arrays values carry their type atom, so nested
 *    entries must agree on type and value.
 */
import { ownField, type FieldTable, type FieldValue } from '../frame/field-table.js';

/** Binding-identity equality of two argument tables (top-level order-insensitive). */
export function fieldTablesEqual(a: FieldTable, b: FieldTable): boolean {
  if (a === b) return true;
  const entries = Object.entries(a);
  if (entries.length !== Object.keys(b).length) return false;
  for (const [k, av] of entries) {
    const bv = ownField(b, k);
    if (bv === undefined || !fieldValuesIdentical(av, bv)) return false;
  }
  return true;
}

/** Exact equality (Erlang =:= on {Type, Value}): same type tag, same value; nested in order. */
export function fieldValuesIdentical(a: FieldValue, b: FieldValue): boolean {
  if (a.type !== b.type) return false;
  return sameTypeValuesEqual(a, b, fieldValuesIdentical);
}

/** Erlang `==` on the values RabbitMQ's parser produces for a and b (see the file comment). */
export function fieldValuesLooselyEqual(a: FieldValue, b: FieldValue): boolean {
  const ka = kindOf(a);
  const kb = kindOf(b);
  if (ka === 'number' && kb === 'number') return numbersEqual(a.value as number | bigint, b.value as number | bigint);
  if (ka === 'list' && kb === 'list') {
    // A table is a list of {Key, Type, Value}, an array a list of {Type, Value}: only [] == [].
    if (a.type !== b.type) return listLength(a) === 0 && listLength(b) === 0;
    return sameTypeValuesEqual(a, b, nestedLooselyEqual);
  }
  if (ka !== kb) return false;
  if (ka === 'binary') return (a.value as Buffer).equals(b.value as Buffer);
  if (a.type !== b.type) return false;
  return sameTypeValuesEqual(a, b, nestedLooselyEqual);
}

/** Inside a table or array each value is tagged with its type atom: {signedint,1} /= {long,1}. */
function nestedLooselyEqual(a: FieldValue, b: FieldValue): boolean {
  return a.type === b.type && fieldValuesLooselyEqual(a, b);
}

type Kind = 'number' | 'binary' | 'bool' | 'decimal' | 'list' | 'void';

function kindOf(v: FieldValue): Kind {
  switch (v.type) {
    case 'S':
    case 'x':
      return 'binary';
    case 't':
      return 'bool';
    case 'D':
      return 'decimal';
    case 'F':
    case 'A':
      return 'list';
    case 'V':
      return 'void';
    default:
      return 'number';
  }
}

function listLength(v: FieldValue): number {
  if (v.type === 'A') return v.value.length;
  if (v.type === 'F') return Object.keys(v.value).length;
  return -1;
}

/** Numeric equality across number and bigint (Erlang compares integers and floats by value). */
function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === 'number' && typeof b === 'number') return a === b;
  // Mixed number/bigint: loose equality compares the mathematical values exactly.
  // eslint-disable-next-line eqeqeq
  return a == b;
}

/** Compares two values already known to share a type tag; `inner` compares nested entries. */
function sameTypeValuesEqual(a: FieldValue, b: FieldValue, inner: (x: FieldValue, y: FieldValue) => boolean): boolean {
  switch (a.type) {
    case 'S':
    case 'x':
      return a.value.equals((b as typeof a).value);
    case 't':
      return a.value === (b as typeof a).value;
    case 'l':
    case 'b':
    case 'B':
    case 's':
    case 'u':
    case 'I':
    case 'i':
    case 'f':
    case 'd':
    case 'T':
      return numbersEqual(a.value, (b as typeof a).value);
    case 'D': {
      const bv = (b as typeof a).value;
      return a.value.places === bv.places && a.value.digits === bv.digits;
    }
    case 'V':
      return true;
    case 'A': {
      const bv = (b as typeof a).value;
      if (a.value.length !== bv.length) return false;
      for (let i = 0; i < a.value.length; i++) if (!inner(a.value[i]!, bv[i]!)) return false;
      return true;
    }
    case 'F': {
      const at = a.value;
      const bt = (b as typeof a).value;
      const ak = Object.keys(at);
      const bk = Object.keys(bt);
      if (ak.length !== bk.length) return false;
      for (let i = 0; i < ak.length; i++) {
        const k = ak[i]!; // i < ak.length = bk.length
        if (k !== bk[i] || !inner(at[k]!, bt[k]!)) return false;
      }
      return true;
    }
  }
}
