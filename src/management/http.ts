/**
 * RabbitMQ's management HTTP conventions: error bodies {"error","reason"} with its status codes
 * and words (rabbit_mgmt_util:halt_response and friends), request bodies decoded as its
 * decode/1 does, and its coercions of "true"/"2" strings (rabbit_misc:parse_bool/parse_int).
 */
import type { Json, JsonDocument, JsonItems, JsonObject } from './json.js';

/** A response that ends the request: status, and RabbitMQ's error body (none when error is null). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    /**
     * The body's "error"; null for an empty body. Usually a string; RabbitMQ sends a few as
     * Erlang strings, i.e. arrays of character codes (a vhost it failed to add).
     */
    readonly error: Json | null,
    /** The body's "reason": a string, or a tuple printed as a JSON array. */
    readonly reason: Json = '',
    readonly headers: Record<string, string> = {},
  ) {
    super(`${status} ${error ?? ''} ${typeof reason === 'string' ? reason : JSON.stringify(reason)}`);
  }
}

/** The catch-all 404 (unknown path, missing object). */
export const objectNotFound = () => new HttpError(404, 'Object Not Found', 'Not Found');
export const badRequest = (reason: Json) => new HttpError(400, 'bad_request', reason);
export const notFound = (reason: Json) => new HttpError(404, 'not_found', reason);
/**
 * 500 with an empty body: what RabbitMQ answers when its handler crashes on a value of a type it
 * did not expect (a number where a pattern or password goes, tags that are neither a string nor
 * a list).
 */
export const handlerCrashed = () => new HttpError(500, null);
/** 401 for a logged-in user refused something ("not_authorised", British spelling, as RabbitMQ). */
export const notAuthorised = (reason: Json) => new HttpError(401, 'not_authorised', reason);
/** 401 for a failed login, with the Basic challenge ("not_authorized", American spelling). */
export const loginFailed = () => new HttpError(401, 'not_authorized', 'Login failed', { 'www-authenticate': AUTH_REALM });
export const AUTH_REALM = 'Basic realm="RabbitMQ Management"';

/**
 * A request body as rabbit_mgmt_util:decode/1 reads it: empty, "null" and "undefined" are {};
 * a JSON object is itself; true/false/null are {}; a JSON string, number or array, or anything
 * that does not parse, is a 400.
 */
export function decodeBody(text: string): Record<string, unknown> {
  if (text === '' || text === 'null' || text === 'undefined') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest('not_json');
  }
  if (value === null || typeof value === 'boolean') return {};
  if (typeof value === 'string') {
    throw badRequest('invalid payload: the request body JSON-decoded to a string. Is the input doubly-JSON-encoded?');
  }
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest('not_json');
  return value as Record<string, unknown>;
}

/**
 * rabbit_mgmt_util:with_decode's required keys: the values of keys, or 400
 * "[{key_missing,k}]" naming every one missing. A null value counts as missing unless
 * nullIsMissing is false (RabbitMQ's get_or_missing takes JSON null as a value: the handler
 * then crashes on it, or not).
 */
export function requireKeys(body: Record<string, unknown>, keys: readonly string[], nullIsMissing = true): unknown[] {
  const missing = keys.filter((k) => body[k] === undefined || (nullIsMissing && body[k] === null));
  if (missing.length > 0) throw badRequest(`[${missing.map((k) => `{key_missing,${k}}`).join(',')}]`);
  return keys.map((k) => body[k]);
}

/** rabbit_misc:parse_bool: true/false or "true"/"false"; undefined stays undefined. */
export function parseBool(v: unknown): boolean | undefined {
  if (v === true || v === 'true') return true;
  if (v === false || v === 'false') return false;
  if (v === undefined || v === null) return undefined;
  throw badRequest(['not_boolean', v as Json]);
}

/**
 * rabbit_misc:parse_bool on a body value read with maps:get(Key, Body, undefined): a missing key
 * is undefined, but JSON null is a value, and not a boolean (400 ["not_boolean",null]).
 */
export function parseBodyBool(v: unknown): boolean | undefined {
  if (v === null) throw badRequest(['not_boolean', null]);
  return parseBool(v);
}

/** rabbit_misc:parse_int: an integer, a number (truncated) or a string of digits. */
export function parseInt(v: unknown): number {
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'string' && /^[+-]?[0-9]+$/.test(v)) return Number(v);
  throw badRequest(['not_integer', v as Json]);
}

/** What a handler answers: a status, an optional JSON body and extra headers. */
export interface Reply {
  status: number;
  /** JsonItems: an array the server writes a chunk per turn; JsonDocument: an object of such arrays. */
  body?: Json | JsonItems | JsonDocument;
  headers?: Record<string, string>;
}

export const ok = (body: Json | JsonItems | JsonDocument): Reply => ({ status: 200, body });
export const noContent = (): Reply => ({ status: 204 });


export type { Json, JsonObject };
