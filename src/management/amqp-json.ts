/**
 * AMQP field tables and message properties as JSON, both ways, as RabbitMQ's management plugin
 * converts them: rabbit_misc:amqp_table (table → JSON, for arguments, headers and client
 * properties), rabbit_misc:to_amqp_table (JSON → table, for arguments and headers in request
 * bodies) and rabbit_mgmt_format's (to_)basic_properties.
 */
import type { FieldTable, FieldValue } from '../frame/field-table.js';
import type { BasicProperties } from '../frame/generated/properties.js';
import { badRequest } from './http.js';
import { float, type Json, type JsonObject } from './json.js';
import { asMap } from './query.js';
import { compareUtf8 } from '../sorted.js';

/** rabbit_misc:amqp_table: a field table as a JSON object (a map: `columns` does not descend). */
export function tableToJson(t: FieldTable | undefined): JsonObject {
  const out: Record<string, Json> = {};
  if (t) for (const [k, v] of Object.entries(t)) out[k] = valueToJson(v);
  return asMap(out);
}

function valueToJson(v: FieldValue): Json {
  switch (v.type) {
    case 'S':
    case 'x':
      return utf8Safe(v.value);
    case 't':
      return v.value;
    case 'f':
    case 'd':
      return float(v.value);
    case 'l':
      return Number.isSafeInteger(Number(v.value)) ? Number(v.value) : v.value;
    case 'D':
      // amqp_value(decimal, {Before, After}) prints "~p.~p" of the scale and the digits.
      return float(Number(`${v.value.places}.${v.value.digits}`));
    case 'A':
      return v.value.map(valueToJson);
    case 'F':
      return tableToJson(v.value);
    case 'V':
      return 'undefined';
    default:
      return v.value;
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** rabbit_misc:utf8_safe: the string, or its base64 (76-character lines) when not UTF-8. */
function utf8Safe(b: Buffer): string {
  try {
    return STRICT_UTF8.decode(b);
  } catch {
    // not UTF-8
  }
  const lines = b.toString('base64').match(/.{1,76}/g) ?? [];
  return `Not UTF-8, base64 is: ${lines.join('\n')}`;
}

/**
 * rabbit_misc:to_amqp_table: a JSON object as a field table. RabbitMQ folds over the decoded
 * map, whose keys come in term order, so the table's keys are sorted bytewise (this decides
 * the hash in a binding's properties_key). Strings are longstr, integers long, other numbers
 * double, booleans bool, arrays array, objects table; null is refused. An empty array is an
 * empty table.
 */
export function jsonToTable(obj: unknown): FieldTable {
  // An empty JSON array is also an empty proplist to RabbitMQ (what PHP's json_encode([]) sends).
  if (Array.isArray(obj) && obj.length === 0) return Object.create(null) as FieldTable;
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw badRequest(`arguments must be a JSON object, got ${JSON.stringify(obj)}`);
  }
  const keys = Object.keys(obj).sort(compareUtf8);
  const table: FieldTable = Object.create(null) as FieldTable;
  for (const k of keys) table[k] = jsonToValue((obj as Record<string, unknown>)[k]);
  return table;
}

function jsonToValue(v: unknown): FieldValue {
  if (typeof v === 'string') return { type: 'S', value: Buffer.from(v, 'utf8') };
  if (typeof v === 'boolean') return { type: 't', value: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { type: 'l', value: BigInt(v) } : { type: 'd', value: v };
  if (Array.isArray(v)) return { type: 'A', value: v.map(jsonToValue) };
  if (v === null) throw badRequest('null_not_allowed');
  if (typeof v === 'object') return { type: 'F', value: jsonToTable(v) };
  throw badRequest(['unhandled_type', String(v)]);
}

/** The P_basic fields in record order, with their JSON names. */
const FIELDS: Array<[keyof BasicProperties, string]> = [
  ['contentType', 'content_type'], ['contentEncoding', 'content_encoding'], ['headers', 'headers'],
  ['deliveryMode', 'delivery_mode'], ['priority', 'priority'], ['correlationId', 'correlation_id'],
  ['replyTo', 'reply_to'], ['expiration', 'expiration'], ['messageId', 'message_id'],
  ['timestamp', 'timestamp'], ['type', 'type'], ['userId', 'user_id'], ['appId', 'app_id'], ['clusterId', 'cluster_id'],
];
const INTEGER_FIELDS = new Set(['delivery_mode', 'priority', 'timestamp']);

/**
 * rabbit_mgmt_format:basic_properties: the properties set, in RabbitMQ's (reversed record)
 * order; none at all is an empty list, [], as jsx writes an empty proplist.
 */
export function propertiesToJson(p: BasicProperties): Json {
  const out: Record<string, Json> = {};
  for (let i = FIELDS.length - 1; i >= 0; i--) {
    const [field, name] = FIELDS[i]!;
    const v = p[field];
    if (v === undefined) continue;
    out[name] = field === 'headers' ? tableToJson(v as FieldTable) : (v as Json);
  }
  return Object.keys(out).length === 0 ? [] : asMap(out);
}

/**
 * rabbit_mgmt_format:to_basic_properties: delivery_mode, priority and timestamp must be
 * integers (["not_int", key]), headers an object, the rest strings (["not_string", key]);
 * unknown keys are ignored.
 */
export function jsonToProperties(obj: Record<string, unknown>): BasicProperties {
  const p: Record<string, unknown> = {};
  for (const [field, name] of FIELDS) {
    const v = obj[name];
    if (v === undefined || v === null) continue;
    if (name === 'headers') p[field] = jsonToTable(v);
    else if (INTEGER_FIELDS.has(name)) {
      if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(['not_int', name]);
      // The wire holds an octet (a 64-bit timestamp): Erlang's encoder keeps the low bits.
      p[field] = name === 'timestamp' ? v : v & 0xff;
    } else {
      if (typeof v !== 'string') throw badRequest(['not_string', name]);
      p[field] = v;
    }
  }
  return p as BasicProperties;
}

