/**
 * A refusal of the users database (AccessError, src/access) answered as RabbitMQ's management
 * API answers the same refusal: rabbit_mgmt_util:with_decode turns a thrown {error, Reason}
 * into 400 bad_request with Reason printed by format_reason (an atom as a string, a tuple as
 * an array, an Erlang string as an array of character codes); a few refusals crash its
 * handler instead (500).
 */
import { AccessError } from '../access/access-control.js';
import { InvalidPatternError } from '../access/permission-pattern.js';
import { badRequest, handlerCrashed, HttpError, type Json } from './http.js';

export interface AccessFailureOptions {
  /**
   * By reason, the value a {Reason, Value} tuple names: the password_hash of not_base64, the
   * user of no_such_user, the algorithm of invalid_hashing_algorithm.
   */
  subjects?: Readonly<Record<string, Json>>;
  /**
   * Permissions (not topic permissions): RabbitMQ reports the invalid pattern as the Erlang
   * string binary_to_list made of it, i.e. the array of its UTF-8 bytes.
   */
  patternAsCharlist?: boolean;
}

/** An Erlang string (a list of bytes) as rabbit_json encodes one: an array of numbers. */
export function charlist(s: string): number[] {
  return [...Buffer.from(s, 'utf8')];
}

/** Rethrows err as RabbitMQ's HTTP answer when it is an AccessError; anything else unchanged. */
export function accessFailure(err: unknown, opts: AccessFailureOptions = {}): never {
  if (!(err instanceof AccessError)) throw err;
  switch (err.reason) {
    case 'not_base64':
    case 'no_such_user':
    case 'invalid_hashing_algorithm':
      throw badRequest([err.reason, opts.subjects?.[err.reason] ?? null]);
    case 'invalid_regexp': {
      // {invalid_regexp, Regexp, {Message, Offset}}: PCRE's message as an Erlang string.
      const cause = err.cause;
      if (!(cause instanceof InvalidPatternError)) throw badRequest(err.reason);
      const pattern: Json = opts.patternAsCharlist ? charlist(cause.pattern) : cause.pattern;
      throw badRequest(['invalid_regexp', pattern, [charlist(cause.pcreMessage), cause.offset]]);
    }
    case 'invalid_user_limits':
      // rabbit_auth_backend_internal throws {errors, ...}, which with_decode does not catch.
      throw handlerCrashed();
    case 'invalid_queue_type':
      // rabbit_mgmt_wm_vhost: internal_server_error("Error occured while adding vhost", ...),
      // whose "error" is an Erlang string.
      throw new HttpError(500, charlist('Error occured while adding vhost'), 'invalid_queue_type');
    default:
      throw badRequest(err.reason);
  }
}
