/**
 * Stable JSON: object keys sorted, two-space indentation, so golden files diff cleanly and do
 * not depend on the order a broker or client library happened to produce keys in.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Deep copy with sorted keys; undefined members dropped; Buffers, bigints, Dates made plain. */
export function sortKeys(v: unknown): Json {
  if (v === null || v === undefined) return null;
  if (Buffer.isBuffer(v)) return { $buffer: v.toString('hex') };
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object') {
    const out: { [key: string]: Json } = {};
    for (const k of Object.keys(v as object).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return String(v);
}

export function stableStringify(v: unknown, indent = 2): string {
  return JSON.stringify(sortKeys(v), null, indent);
}

/** One line, for diffs. */
export function oneLine(v: unknown, max = 300): string {
  const s = v === undefined ? '(nothing)' : JSON.stringify(sortKeys(v));
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
