import { compilePcre } from '../erlang/re.js';
import { latin1ToText } from '../erlang/format.js';
import { formatParts } from '../erlang/pretty.js';
import { charList, int, tuple } from '../erlang/term.js';
import { ValidatorCrash, validateDefinitionEntries, type ErrorParts } from './definition-validators.js';
import { jsonTerm, sortedEntries } from './json-term.js';
import type { ApplyTo, JsonValue, Policy, PolicyKind } from './policy.js';

/**
 * A policy RabbitMQ refuses: its management API answers 400 {"error":"bad_request","reason":…}
 * with httpReason; rabbitmqctl prints reason as it is.
 */
export class PolicyValidationError extends Error {
  readonly status = 400;
  constructor(
    readonly reason: string,
    /** /api/policies HTML-escapes validation errors (rabbit_mgmt_wm_policy); /api/operator-policies does not. */
    private readonly escapedOverHttp = false,
  ) {
    super(reason);
  }

  /** The reason as the management API sends it. */
  get httpReason(): string {
    return this.escapedOverHttp ? escapeHtmlTags(this.reason) : this.reason;
  }
}

/**
 * A value that crashes RabbitMQ's validators (a definition that is not an object, a non-string
 * apply-to, ha-mode or max-age…): its management API answers 500 with an empty body.
 */
export class PolicyInternalError extends Error {
  readonly status = 500;
}

/** rabbit_mgmt_format:escape_html_tags/1: <, > and & as HTML entities. */
export function escapeHtmlTags(s: string): string {
  return s.replace(/[<>&]/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&amp;'));
}

/** What a policy is set with: JSON values as received (undefined = absent). */
export interface PolicyInput {
  pattern: unknown;
  definition: unknown;
  /** Absent: 0. */
  priority?: unknown;
  /** Absent: "all". */
  applyTo?: unknown;
}

function isJsonObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validates a policy as rabbit_policy:set → rabbit_runtime_parameters:set_any does, and returns
 * it compiled. The checks run as rabbit_parameter_validation:proplist runs them (priority,
 * pattern, apply-to, definition) and the errors are reported in reverse, one a line, after
 * "Validation failed" and an empty line. Throws PolicyValidationError (400) or
 * PolicyInternalError (where RabbitMQ crashes: 500).
 */
export function validatePolicy(kind: PolicyKind, vhost: string, name: string, input: PolicyInput): Policy {
  const priority = input.priority === undefined ? 0 : input.priority;
  const applyTo = input.applyTo === undefined ? 'all' : input.applyTo;
  const errors: ErrorParts[] = [];
  // priority: rabbit_parameter_validation:number/2
  if (typeof priority !== 'number') errors.push(['priority should be a number, actually was ', { p: jsonTerm(priority as JsonValue) }]);
  // pattern: rabbit_parameter_validation:regex/2
  const pattern = input.pattern;
  let compiled;
  if (typeof pattern !== 'string') {
    errors.push(['pattern should be a binary but was ', { p: jsonTerm(pattern as JsonValue) }]);
  } else {
    const c = compilePcre(pattern);
    if (c.ok) compiled = c.regex;
    else errors.push(['pattern should be regular expression but is invalid: ', { p: tuple(charList(c.error.message), int(c.error.offset)) }]);
  }
  // apply-to: printed with ~s, which has no clause for a number, a list or a map (a crash)
  if (applyTo !== 'all' && applyTo !== 'queues' && applyTo !== 'exchanges') {
    if (typeof applyTo !== 'string' && typeof applyTo !== 'boolean' && applyTo !== null) {
      throw new PolicyInternalError('apply-to cannot be printed with ~s');
    }
    errors.push([`apply-to '${String(applyTo)}' unrecognised; should be 'queues', 'exchanges' or 'all'`]);
  }
  // definition: rabbit_policy:validation/3 (the HTTP API passes maps:to_list(Definition),
  // which crashes on anything but an object)
  const definition = input.definition;
  if (!isJsonObject(definition)) throw new PolicyInternalError('definition is not an object');
  const entries = sortedEntries(definition);
  try {
    const err = entries.length === 0 ? ['no policy provided'] : validateDefinitionEntries(kind, entries);
    if (err) errors.push(err);
  } catch (e) {
    if (e instanceof ValidatorCrash) throw new PolicyInternalError(e.message);
    throw e;
  }
  if (errors.length > 0) {
    const lines = errors.reverse().map((parts) => latin1ToText(formatParts(parts)) + '\n');
    throw new PolicyValidationError(`Validation failed\n\n${lines.join('')}`, kind === 'policy');
  }
  const sorted = Object.fromEntries(entries) as Record<string, JsonValue>;
  const policy = {
    kind,
    vhost,
    name,
    pattern: pattern as string,
    applyTo: applyTo as ApplyTo,
    priority: priority as number,
    definition: Object.freeze(sorted),
    compiled: compiled!,
  };
  return Object.freeze({ ...policy, key: JSON.stringify([kind, vhost, name, policy.pattern, policy.applyTo, policy.priority, sorted]) });
}

/**
 * PUT /api/policies/{vhost}/{name} and /api/operator-policies/…: RabbitMQ's handler first
 * requires "pattern" and "definition" in the body (400 "[{key_missing,definition}]"), then
 * sets the policy with "priority" and "apply-to" when given. body is the parsed JSON object.
 */
export function validatePolicyBody(kind: PolicyKind, vhost: string, name: string, body: Record<string, unknown>): Policy {
  const missing = ['pattern', 'definition'].filter((k) => !(k in body));
  if (missing.length > 0) throw new PolicyValidationError(`[${missing.map((k) => `{key_missing,${k}}`).join(',')}]`);
  return validatePolicy(kind, vhost, name, { pattern: body['pattern'], definition: body['definition'], priority: body['priority'], applyTo: body['apply-to'] });
}
