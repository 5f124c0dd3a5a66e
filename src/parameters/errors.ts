/**
 * How runtime-parameter, vhost-limit and global-parameter operations fail, as RabbitMQ's
 * management API answers (the HTTP layer maps each class to one status). A vhost that does not
 * exist is policy/'s VHostNotFoundError (404 {"error":"not_found","reason":"vhost_not_found"}),
 * shared with the policy operations.
 */
import { escapeHtmlTags } from '../erlang/format.js';

/**
 * A value RabbitMQ refuses: 400 {"error":"bad_request","reason": httpReason}. `reason` is
 * RabbitMQ's text as rabbitmqctl prints it; /api/parameters HTML-escapes it
 * (rabbit_mgmt_wm_parameter), /api/vhost-limits does not (rabbit_mgmt_wm_limit).
 */
export class ParameterValidationError extends Error {
  readonly status = 400;
  constructor(
    readonly reason: string,
    private readonly escapedOverHttp: boolean,
  ) {
    super(reason);
  }

  /** The reason as the management API sends it. */
  get httpReason(): string {
    return this.escapedOverHttp ? escapeHtmlTags(this.reason) : this.reason;
  }
}

/**
 * What makes RabbitMQ's handler crash: its management API answers 500 with an empty body. Where
 * RabbitMQ changes something before it crashes, Warren changes nothing (the README lists them).
 */
export class ParameterInternalError extends Error {
  readonly status = 500;
}

/** The body lacks a key the handler requires: 400 "[{key_missing,value}]" (rabbit_mgmt_util:decode/2). */
export function keyMissing(key: string): ParameterValidationError {
  return new ParameterValidationError(`[{key_missing,${key}}]`, false);
}
