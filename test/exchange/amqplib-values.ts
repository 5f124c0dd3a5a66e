/**
 * Field values written the way amqplib (the client the recorded cases were sent with) encodes
 * plain JavaScript values in a field table (amqplib lib/codec.js encodeFieldValue): strings →
 * longstr 'S'; integers → the smallest of byte 'b', short 's', signedint 'I', long 'l'; other
 * numbers → double 'd'; booleans → 't'; null → void 'V'; Buffers → 'x'; arrays → 'A'; other
 * objects → table 'F'; {'!': type, value} picks the type.
 */
import type { FieldTable, FieldValue } from '../../src/frame/field-table.js';

export function fv(v: unknown): FieldValue {
  if (v !== null && typeof v === 'object' && Object.prototype.hasOwnProperty.call(v, '!')) {
    const { '!': t, value } = v as { '!': string; value: any };
    switch (t) {
      case 'long':
        return { type: 'l', value: BigInt(value) };
      case 'timestamp':
        return { type: 'T', value };
      case 'decimal':
        return { type: 'D', value };
      case 'int':
        return { type: 'I', value };
      case 'short':
        return { type: 's', value };
      case 'byte':
        return { type: 'b', value };
      case 'float':
        return { type: 'f', value: Math.fround(value) }; // sent as 32 bits
      case 'double':
        return { type: 'd', value };
      default:
        throw new Error(`no such amqplib type ${t}`);
    }
  }
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return { type: 'd', value: v };
    if (v >= -128 && v < 128) return { type: 'b', value: v };
    if (v >= -0x8000 && v < 0x8000) return { type: 's', value: v };
    if (v >= -0x80000000 && v < 0x80000000) return { type: 'I', value: v };
    return { type: 'l', value: BigInt(v) };
  }
  if (typeof v === 'string') return { type: 'S', value: Buffer.from(v, 'utf8') };
  if (typeof v === 'boolean') return { type: 't', value: v };
  if (v === null) return { type: 'V', value: null };
  if (Buffer.isBuffer(v)) return { type: 'x', value: v };
  if (Array.isArray(v)) return { type: 'A', value: v.map(fv) };
  return { type: 'F', value: ft(v as Record<string, unknown>) };
}

export function ft(o: Record<string, unknown> | undefined): FieldTable {
  const t: FieldTable = {};
  if (o !== undefined) for (const [k, v] of Object.entries(o)) t[k] = fv(v);
  return t;
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
