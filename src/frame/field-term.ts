/**
 * Field values as the Erlang terms rabbit_binary_parser:parse_table/1 (RabbitMQ 3.10) makes of
 * them, for the reply texts that print them and the hashes taken over them (src/erlang):
 * longstr/binary → binary, integer types → integer, f/d → float, t → true/false, D →
 * {Places, Digits}, F → [{Key, TypeAtom, Value}], A → [{TypeAtom, Value}], V → undefined.
 */
import { atom, binary, float, int, list, tuple, type ErlTerm } from '../erlang/term.js';
import { fieldTypeName, type FieldTable, type FieldValue } from './field-table.js';

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
      return list(v.value.map(typedFieldValueTerm));
    case 'V':
      return atom('undefined');
    default:
      return int(v.value);
  }
}

/** {TypeAtom, Value}: what rabbit_misc:table_lookup/2 returns for a present key. */
export function typedFieldValueTerm(v: FieldValue): ErlTerm {
  return tuple(atom(fieldTypeName(v.type)), fieldValueTerm(v));
}

/** [{Key, TypeAtom, Value}] in the table's key order. */
export function fieldTableTerm(t: FieldTable): ErlTerm {
  return list(Object.entries(t).map(([k, v]) => tuple(binary(k), atom(fieldTypeName(v.type)), fieldValueTerm(v))));
}
