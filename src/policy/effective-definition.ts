import type { JsonValue, PolicyDefinition, PolicyMatch } from './policy.js';
import { sortedEntries } from './json-term.js';

/** Keys where an operator policy and a policy both set a value: the lower one applies. */
const MIN_MERGED = new Set(['message-ttl', 'max-length', 'max-length-bytes', 'max-in-memory-length', 'max-in-memory-bytes', 'expires', 'delivery-limit']);

/** rabbit_policies:merge_policy_value/3 (and booleans: the operator's). */
function mergeValue(key: string, value: JsonValue, opValue: JsonValue): JsonValue {
  if (MIN_MERGED.has(key) && typeof value === 'number' && typeof opValue === 'number') return Math.min(value, opValue);
  return opValue;
}

/**
 * rabbit_policy:effective_definition/1: the policy's definition merged with the operator
 * policy's (the lower value where both set a key), in key order; undefined when neither
 * applies. The management API reports it as effective_policy_definition ({} when undefined).
 */
export function effectiveDefinition(match: PolicyMatch): PolicyDefinition | undefined {
  const { policy, operatorPolicy } = match;
  if (!policy && !operatorPolicy) return undefined;
  if (!operatorPolicy) return policy!.definition;
  if (!policy) return operatorPolicy.definition;
  const merged: Record<string, JsonValue> = { ...operatorPolicy.definition };
  for (const [k, v] of Object.entries(policy.definition)) {
    const op = operatorPolicy.definition[k];
    merged[k] = op === undefined ? v : mergeValue(k, v, op);
  }
  return Object.freeze(Object.fromEntries(sortedEntries(merged)));
}

/** rabbit_policy:get/2: one key's value from the policy and operator policy that apply. */
export function policyValue(match: PolicyMatch, key: string): JsonValue | undefined {
  const value = match.policy?.definition[key];
  const opValue = match.operatorPolicy?.definition[key];
  if (value === undefined) return opValue;
  if (opValue === undefined) return value;
  return mergeValue(key, value, opValue);
}
