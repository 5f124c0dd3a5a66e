import { preconditionFailed } from '../errors.js';
import { formatTerm } from '../erlang/format.js';
import { atom } from '../erlang/term.js';
import { fieldTypeName, isIntegerType, type FieldTable, type FieldType, type FieldValue } from '../frame/field-table.js';

function typeClass(type: FieldType): string {
  return isIntegerType(type) ? 'int' : 'fd'.includes(type) ? 'float' : type;
}

function plain(v: FieldValue): string {
  switch (v.type) {
    case 'S':
    case 'x':
      return v.value.toString('utf8');
    case 'l':
      return v.value.toString();
    case 'F':
    case 'A':
    case 'D':
      return JSON.stringify(v.value, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
    default:
      return String(v.value);
  }
}

function describe(v: FieldValue | undefined): string {
  return v === undefined ? 'none' : `the value '${plain(v)}' of type '${fieldTypeName(v.type)}'`;
}

function fieldValuesEqual(a: FieldValue, b: FieldValue): boolean {
  return typeClass(a.type) === typeClass(b.type) && plain(a) === plain(b);
}

/**
 * Checks a redeclaration against the existing entity, as rabbit_misc:assert_args_equivalence
 * does: only the keys RabbitMQ cares about are compared; a difference is 406 PRECONDITION_FAILED.
 */
export function assertArgsEquivalent(current: FieldTable, received: FieldTable, resource: string, keys: readonly string[]): void {
  for (const key of keys) {
    const cur = current[key];
    const rec = received[key];
    if (cur === undefined && rec === undefined) continue;
    if (cur !== undefined && rec !== undefined) {
      if (fieldValuesEqual(cur, rec)) continue;
      throw preconditionFailed(`inequivalent arg '${key}' for ${resource}: received '${plain(rec)}' but current is '${plain(cur)}'`);
    }
    throw preconditionFailed(`inequivalent arg '${key}' for ${resource}: received ${describe(rec)} but current is ${describe(cur)}`);
  }
}

/**
 * The durable/auto_delete/internal/type check of a redeclaration. RabbitMQ prints the values
 * as terms inside its quotes: an exchange type is an atom, which Erlang quotes itself where its
 * name needs it (received ''x-consistent-hash'' but current is 'direct').
 */
export function assertFieldEquivalent(name: string, current: string | boolean, received: string | boolean, resource: string): void {
  if (current !== received) {
    const term = (v: string | boolean) => (typeof v === 'string' ? formatTerm(atom(v)) : String(v));
    throw preconditionFailed(`inequivalent arg '${name}' for ${resource}: received '${term(received)}' but current is '${term(current)}'`);
  }
}
