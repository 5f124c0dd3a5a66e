/**
 * The `policy` and `operator_policy` runtime parameter components: RabbitMQ stores policies as
 * runtime parameters, so /api/parameters shows (and, for operator policies, sets) them. Warren
 * keeps them in the policy tables (src/policy, Broker.policies); this file translates between
 * the two shapes and validates a value as rabbit_policy:validate/5 does when a policy arrives
 * as a parameter (priority and pattern are mandatory there, unlike over /api/operator-policies).
 */
import { applyToError, checkPattern, definitionTermError, priorityError } from '../policy/validation.js';
import type { PolicyKind, PolicyRecord } from '../policy/policy.js';
import type { PolicyInput } from '../policy/validation.js';
import { proplistErrors, type Constraint, type ErrorParts } from './parameter-validation.js';
import { objectOf, type JsonValue } from './value.js';

export const POLICY_COMPONENT = 'policy';
export const OPERATOR_POLICY_COMPONENT = 'operator_policy';

/** The policy kind a component holds, if it is one of the two. */
export function policyKindOf(component: string): PolicyKind | undefined {
  return component === POLICY_COMPONENT ? 'policy' : component === OPERATOR_POLICY_COMPONENT ? 'operator-policy' : undefined;
}

export function componentOf(kind: PolicyKind): string {
  return kind === 'policy' ? POLICY_COMPONENT : OPERATOR_POLICY_COMPONENT;
}

/** rabbit_policy:policy_validation/0 and operator_policy_validation/0, for a kind. */
function constraints(kind: PolicyKind): Constraint[] {
  return [
    { key: 'priority', mandatory: true, validate: (_k, v) => priorityError(v) },
    { key: 'pattern', mandatory: true, validate: (_k, v) => { const c = checkPattern(v); return 'error' in c ? c.error : undefined; } },
    { key: 'apply-to', validate: (_k, v) => applyToError(v) },
    { key: 'definition', mandatory: true, validate: (_k, v) => definitionTermError(kind, v) },
  ];
}

/**
 * rabbit_policy:validate/5 on a value given as a parameter: the errors in the order RabbitMQ
 * prints them. Throws PolicyInternalError where RabbitMQ's validators crash.
 */
export function validatePolicyParameter(kind: PolicyKind, name: string, value: JsonValue | undefined): ErrorParts[] {
  return proplistErrors(name, constraints(kind), value);
}

/** A valid policy parameter value as the policy operations take it (apply-to "all" when absent). */
export function policyInputOf(value: Record<string, JsonValue>): PolicyInput {
  return { pattern: value['pattern'], definition: value['definition'], priority: value['priority'], applyTo: value['apply-to'] };
}

/**
 * A policy as /api/parameters shows it: the value holds pattern, definition, priority and
 * apply-to in that order, as a policy set over /api/policies or /api/operator-policies is stored
 * (rabbit_policy:set/8).
 */
export function policyParameterValue(r: PolicyRecord): JsonValue {
  return objectOf([
    ['pattern', r.pattern],
    ['definition', r.definition],
    ['priority', r.priority],
    ['apply-to', r['apply-to']],
  ]);
}
