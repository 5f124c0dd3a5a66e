/**
 * Field values as the broker receives them from amqplib (the client the recorded cases were sent
 * with): fromJS makes amqplib's type choices (strings → longstr 'S'; integers → the smallest of
 * byte 'b', short 's', signedint 'I', long 'l'; other numbers → double 'd'; booleans → 't'; null
 * → void 'V'; Buffers → 'x'; arrays → 'A'; other objects → table 'F'; {'!': type, value} picks
 * the type), and the value goes through the codec, so e.g. a 'float' is rounded to 32 bits.
 */
import { decodeFieldValue, decodeTable, encodeTable, fieldValueSize, fromJS, tableFromJS, writeFieldValue, type FieldTable, type FieldValue } from '../../src/frame/field-table.js';

export function fv(v: unknown): FieldValue {
  const value = fromJS(v);
  const buf = Buffer.alloc(fieldValueSize(value));
  writeFieldValue(buf, 0, value);
  return decodeFieldValue(buf, 0).value;
}

export function ft(o: Record<string, unknown> | undefined): FieldTable {
  return decodeTable(encodeTable(tableFromJS(o ?? {})), 0).table;
}

/** Shorthands for hand-written tables. */
export const S = (s: string): FieldValue => ({ type: 'S', value: Buffer.from(s, 'utf8') });
export const I = (n: number): FieldValue => ({ type: 'I', value: n });
export const L = (n: number | bigint): FieldValue => ({ type: 'l', value: BigInt(n) });
export const D = (n: number): FieldValue => ({ type: 'd', value: n });
export const V: FieldValue = { type: 'V', value: null };

/** Routes one message and returns the destinations, sorted, for easy comparison. */
export function routed<D>(router: { route(msg: any, out: Set<D>): void }, msg: { routingKey?: string; headers?: FieldTable; ccRoutingKeys?: string[]; properties?: Record<string, unknown> }): D[] {
  const out = new Set<D>();
  router.route({ routingKey: msg.routingKey ?? '', headers: msg.headers, ccRoutingKeys: msg.ccRoutingKeys, properties: msg.properties }, out);
  return [...out].sort();
}
