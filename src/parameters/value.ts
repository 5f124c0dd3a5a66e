/**
 * Parameter values as RabbitMQ keeps them. A request body or a definitions file gives a JSON
 * value; RabbitMQ turns a JSON object at the top into a proplist (maps:to_list: its entries
 * ordered by key, bytewise), so `{}` becomes `[]` and is shown as `[]` from then on; objects
 * inside it stay maps, which its JSON encoder also writes ordered by key.
 */
import { sortedEntries } from '../policy/json-term.js';
import type { JsonValue } from '../policy/policy.js';

export type { JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A JSON value as RabbitMQ stores it when it is set over HTTP or imported (a fresh copy: nothing
 * the caller keeps can change it). Throws TypeError for what is not JSON (undefined, a function,
 * a bigint, a cycle).
 */
export function storedValue(v: unknown): JsonValue {
  const json = JSON.stringify(v);
  if (json === undefined) throw new TypeError('a parameter value must be JSON');
  const copy = JSON.parse(json) as JsonValue;
  if (isJsonObject(copy) && Object.keys(copy).length === 0) return [];
  return ordered(copy);
}

/** Objects with their keys ordered bytewise, at every depth (Erlang's order for small maps). */
function ordered(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(ordered);
  if (isJsonObject(v)) return objectOf(sortedEntries(v).map(([k, x]) => [k, ordered(x)]));
  return v;
}

/** An object from entries in their order (a key "__proto__" stays an own key). */
export function objectOf(entries: ReadonlyArray<readonly [string, JsonValue]>): JsonObject {
  return Object.fromEntries(entries) as JsonObject;
}

/** A deep copy, for values and records handed out. */
export function copyOf<T>(v: T): T {
  return structuredClone(v);
}

