/**
 * JSON as RabbitMQ's management API writes it: compact, and with floats written as floats
 * (`"rate":0.0`, not `0`), because strict clients (serde, Jackson with exact types) and the
 * golden samples tell an integer from a float. A JS number is written as an integer when it is
 * one; wrap a value in Float to write it as a float whatever its value.
 */

/** A number RabbitMQ sends as an Erlang float (rates, averages): 0 is written 0.0. */
export class Float {
  constructor(readonly value: number) {}
}

export const float = (value: number): Float => new Float(value);

export type Json = null | boolean | number | bigint | string | Float | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: Json | undefined;
}

/** Compact JSON text; object members whose value is undefined are left out. */
export function encodeJson(value: Json): string {
  const out: string[] = [];
  write(value, out);
  return out.join('');
}

function write(v: Json, out: string[]): void {
  if (v === null) {
    out.push('null');
  } else if (typeof v === 'string') {
    out.push(JSON.stringify(v));
  } else if (typeof v === 'number') {
    out.push(Number.isFinite(v) ? String(v) : 'null');
  } else if (typeof v === 'bigint') {
    out.push(v.toString());
  } else if (typeof v === 'boolean') {
    out.push(v ? 'true' : 'false');
  } else if (v instanceof Float) {
    out.push(formatFloat(v.value));
  } else if (Array.isArray(v)) {
    out.push('[');
    (v as readonly Json[]).forEach((item, i) => {
      if (i > 0) out.push(',');
      write(item, out);
    });
    out.push(']');
  } else {
    out.push('{');
    let first = true;
    for (const [k, item] of Object.entries(v as JsonObject)) {
      if (item === undefined) continue;
      if (!first) out.push(',');
      first = false;
      out.push(JSON.stringify(k), ':');
      write(item, out);
    }
    out.push('}');
  }
}

/** An Erlang float as jsx prints it: the shortest round-trip digits, always with a fraction. */
export function formatFloat(f: number): string {
  if (!Number.isFinite(f)) return 'null';
  const s = String(f);
  if (/[.e]/.test(s)) return s.includes('e') && !s.includes('.') ? s.replace('e', '.0e') : s;
  return `${s}.0`;
}

/** `{rate: 0.0}`: the `_details` object of a counter whose rate Warren does not sample. */
export const noRate = (): JsonObject => ({ rate: float(0) });
