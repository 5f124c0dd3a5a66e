import { compilePcre, type CompiledPattern } from '../erlang/re.js';
import { escapeHtmlTags, latin1ToText } from '../erlang/format.js';
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


/** What a policy is set with: JSON values as received (undefined = absent). */
export interface PolicyInput {
  pattern: unknown;
  definition: unknown;
  /** Absent: 0. */
  priority?: unknown;
  /** Absent: "all". */
  applyTo?: unknown;
  /**
   * The definition is any term, validated as rabbit_policy:validation/3 takes it (definitionTermError),
   * as a definitions import passes it; otherwise it must be a JSON object, as the policy API's
   * handler needs (anything else crashes it: PolicyInternalError).
   */
  definitionTerm?: boolean;
}

function isJsonObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** rabbit_parameter_validation:number/2 on a policy's priority. */
export function priorityError(priority: unknown): ErrorParts | undefined {
  return typeof priority === 'number' ? undefined : ['priority should be a number, actually was ', { p: jsonTerm(priority as JsonValue) }];
}

/** rabbit_parameter_validation:regex/2 on a policy's pattern: its error, or the compiled pattern. */
export function checkPattern(pattern: unknown): { error: ErrorParts } | { compiled: CompiledPattern } {
  if (typeof pattern !== 'string') return { error: ['pattern should be a binary but was ', { p: jsonTerm(pattern as JsonValue) }] };
  const c = compilePcre(pattern);
  if (c.ok) return { compiled: c.regex };
  return { error: ['pattern should be regular expression but is invalid: ', { p: tuple(charList(c.error.message), int(c.error.offset)) }] };
}

/**
 * rabbit_policy:apply_to_validation/2. It prints the value with ~s, which has no clause for a
 * number, a list or a map: RabbitMQ crashes (PolicyInternalError).
 */
export function applyToError(applyTo: unknown): ErrorParts | undefined {
  if (applyTo === 'all' || applyTo === 'queues' || applyTo === 'exchanges') return undefined;
  if (typeof applyTo !== 'string' && typeof applyTo !== 'boolean' && applyTo !== null) {
    throw new PolicyInternalError('apply-to cannot be printed with ~s');
  }
  return [`apply-to '${String(applyTo)}' unrecognised; should be 'queues', 'exchanges' or 'all'`];
}

/** rabbit_policy:validation/3 on a definition's entries (a JSON object's, in Erlang's order). */
function definitionEntriesError(kind: PolicyKind, entries: Array<[string, JsonValue]>): ErrorParts | undefined {
  try {
    return entries.length === 0 ? ['no policy provided'] : validateDefinitionEntries(kind, entries);
  } catch (e) {
    if (e instanceof ValidatorCrash) throw new PolicyInternalError(e.message);
    throw e;
  }
}

/**
 * rabbit_policy:validation/3 on a definition as the runtime-parameters API passes it (PUT
 * /api/parameters/operator_policy/…, a definitions import's operator_policy parameters): an
 * object is validated key by key; an empty list is "no policy provided"; another list (JSON has
 * no proplists) is "definition must be a dictionary"; anything else a parse error naming the
 * validator. Throws PolicyInternalError where a key's validator crashes.
 */
export function definitionTermError(kind: PolicyKind, definition: JsonValue | undefined): ErrorParts | undefined {
  if (isJsonObject(definition)) return definitionEntriesError(kind, sortedEntries(definition));
  if (Array.isArray(definition)) {
    return definition.length === 0 ? ['no policy provided'] : ['definition must be a dictionary: ', { p: jsonTerm(definition) }];
  }
  const validator = kind === 'policy' ? 'policy_validator' : 'operator_policy_validator';
  return ['parse error while reading policy definition: ', { p: jsonTerm(definition) }, `. Validator: ${validator}.`];
}

/** "Validation failed", an empty line, then each error on its line (rabbit_runtime_parameters:format_error). */
export function validationFailedText(errors: readonly ErrorParts[]): string {
  return `Validation failed\n\n${errors.map((parts) => latin1ToText(formatParts(parts)) + '\n').join('')}`;
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
  const priorityErr = priorityError(priority);
  if (priorityErr) errors.push(priorityErr);
  const pattern = checkPattern(input.pattern);
  if ('error' in pattern) errors.push(pattern.error);
  const applyToErr = applyToError(applyTo);
  if (applyToErr) errors.push(applyToErr);
  // definition: the HTTP API passes maps:to_list(Definition), which crashes on anything but an object
  const definition = input.definition;
  if (!isJsonObject(definition) && !input.definitionTerm) throw new PolicyInternalError('definition is not an object');
  const entries = isJsonObject(definition) ? sortedEntries(definition) : [];
  const definitionErr = isJsonObject(definition) ? definitionEntriesError(kind, entries) : definitionTermError(kind, definition as JsonValue | undefined);
  if (definitionErr) errors.push(definitionErr);
  if (errors.length > 0) throw new PolicyValidationError(validationFailedText(errors.reverse()), kind === 'policy');
  const sorted = Object.fromEntries(entries) as Record<string, JsonValue>;
  const policy = {
    kind,
    vhost,
    name,
    pattern: input.pattern as string,
    applyTo: applyTo as ApplyTo,
    priority: priority as number,
    definition: Object.freeze(sorted),
    compiled: (pattern as { compiled: CompiledPattern }).compiled,
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
