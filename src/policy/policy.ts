import type { CompiledPattern } from '../erlang/re.js';

/** A JSON value as a policy holds it (definitions are JSON objects). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Policies (`/api/policies`) or operator policies (`/api/operator-policies`). */
export type PolicyKind = 'policy' | 'operator-policy';

export type ApplyTo = 'all' | 'queues' | 'exchanges';

/** A policy's definition: its keys in sorted order, as RabbitMQ keeps and reports them. */
export type PolicyDefinition = Readonly<Record<string, JsonValue>>;

/**
 * A validated policy, in RabbitMQ's definitions shape plus its compiled pattern. Immutable: a
 * change is a new Policy, so "did the policy that applies to this queue change" is `!==`.
 */
export interface Policy {
  readonly kind: PolicyKind;
  readonly vhost: string;
  readonly name: string;
  readonly pattern: string;
  readonly applyTo: ApplyTo;
  /** A number (RabbitMQ accepts floats too). */
  readonly priority: number;
  readonly definition: PolicyDefinition;
  readonly compiled: CompiledPattern;
  /** The policy's content as one string: two policies with equal keys are the same policy. */
  readonly key: string;
}

/** RabbitMQ's definitions-file and HTTP shape of a policy. */
export interface PolicyRecord {
  vhost: string;
  name: string;
  pattern: string;
  'apply-to': ApplyTo;
  definition: Record<string, JsonValue>;
  priority: number;
}

export function policyRecord(p: Policy): PolicyRecord {
  return { vhost: p.vhost, name: p.name, pattern: p.pattern, 'apply-to': p.applyTo, definition: { ...p.definition }, priority: p.priority };
}

/** The policies that apply to one queue or exchange (each undefined when none does). */
export interface PolicyMatch {
  readonly policy: Policy | undefined;
  readonly operatorPolicy: Policy | undefined;
}

export const NO_POLICY: PolicyMatch = Object.freeze({ policy: undefined, operatorPolicy: undefined });
