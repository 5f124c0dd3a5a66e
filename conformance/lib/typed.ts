/**
 * A field table as it was on the wire, with every value's type tag kept: scalars become
 * "<tag>:<value>" strings ("l:3", "S:text", "x:<hex>", "D:2,12345"), tables become objects and
 * arrays become arrays of the same. Client libraries lose the tags (amqplib reads b, s, I and l
 * all as a number), but brokers differ exactly there, so fidelity cases compare this form.
 */
import type { FieldTable, FieldValue } from '../../src/frame/field-table.js';

export type Typed = string | Typed[] | { [key: string]: Typed };

export function typedValue(v: FieldValue): Typed {
  switch (v.type) {
    case 'F':
      return typedTable(v.value);
    case 'A':
      return v.value.map(typedValue);
    case 'S':
      return `S:${v.value.toString('utf8')}`;
    case 'x':
      return `x:${v.value.toString('hex')}`;
    case 'D':
      return `D:${v.value.places},${v.value.digits}`;
    case 'V':
      return 'V:';
    case 'l':
      return `l:${v.value.toString()}`;
    default:
      return `${v.type}:${String(v.value)}`;
  }
}

export function typedTable(t: FieldTable): { [key: string]: Typed } {
  const out: { [key: string]: Typed } = {};
  for (const k of Object.keys(t)) {
    const v = t[k];
    if (v !== undefined) out[k] = typedValue(v);
  }
  return out;
}
