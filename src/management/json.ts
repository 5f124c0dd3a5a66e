import { randomBytes } from 'node:crypto';

/**
 * JSON as RabbitMQ's management API writes it: compact, and with floats written as floats
 * (`"rate":0.0`, not `0`), because strict clients (serde, Jackson with exact types) and the
 * golden samples tell an integer from a float. A JS number is written as an integer when it is
 * one; wrap a value in Float to write it as a float whatever its value.
 */

/**
 * The placeholder a Float stands for while encodeJson runs (see there): a private-use character,
 * a random secret of this process (never written out) and a count, fresh for each call.
 */
let floatTag: string | undefined;
const TAG_SECRET = randomBytes(8).toString('hex');
let tagCount = 0;

/** A number RabbitMQ sends as an Erlang float (rates, averages): 0 is written 0.0. */
export class Float {
  constructor(readonly value: number) {}

  /** Inside encodeJson, a placeholder string it replaces; elsewhere the number. */
  toJSON(): string | number {
    return floatTag === undefined ? this.value : floatTag + formatFloat(this.value);
  }
}

export const float = (value: number): Float => new Float(value);

export type Json = null | boolean | number | bigint | string | Float | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [key: string]: Json | undefined;
}

/**
 * A JSON array too large to make and write in one turn (a list of 100,000 queues is 138 MB):
 * the server writes it `chunk` items at a time, a turn each (ManagementServer.write), asking
 * for each chunk's items as it goes, so they are never all in memory at once.
 */
export class JsonItems {
  constructor(
    readonly length: number,
    /** The items [from, to), in order. */
    readonly items: (from: number, to: number) => Json[],
  ) {}
}

/**
 * A JSON object with members too large to make and write in one turn (the definitions of a
 * broker of 100,000 queues): the server writes its members in order, a JsonItems member a chunk
 * of items per turn, as it writes a JsonItems reply. Its text is encodeJson's of the same object.
 */
export class JsonDocument {
  constructor(readonly members: ReadonlyArray<readonly [string, Json | JsonItems]>) {}

  /** Items in its JsonItems members. */
  get itemCount(): number {
    let n = 0;
    for (const [, value] of this.members) if (value instanceof JsonItems) n += value.length;
    return n;
  }

  /** The whole object at once (a caller that needs a value, or a small document). */
  toJson(): Record<string, Json> {
    const obj: Record<string, Json> = {};
    for (const [key, value] of this.members) obj[key] = value instanceof JsonItems ? value.items(0, value.length) : value;
    return obj;
  }
}

/**
 * Compact JSON text; object members whose value is undefined are left out. Written by
 * JSON.stringify, whose output is this format except for floats: each Float writes itself as
 * a string holding a tag no client could have chosen (a secret of this process and a count) and its digits,
 * and the quoted tags are then taken out, leaving the digits. The list of 20,000 queues (28 MB)
 * took 2.2 s written a value at a time, 0.35 s so. A bigint, which JSON.stringify refuses, has
 * the value written a value at a time.
 */
export function encodeJson(value: Json): string {
  const tag = `\uE000${TAG_SECRET}${(tagCount++).toString(36)}:`;
  floatTag = tag;
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof TypeError && /BigInt/.test(err.message))) throw err;
    const out: string[] = [];
    write(value, out);
    return out.join('');
  } finally {
    floatTag = undefined;
  }
  return text.includes(tag) ? text.replace(new RegExp(`"${tag}([^"]*)"`, 'g'), '$1') : text;
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
