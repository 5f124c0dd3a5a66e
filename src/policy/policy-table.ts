import type { MetadataStore } from '../store/metadata-store.js';
import { NO_POLICY, policyRecord, type Policy, type PolicyKind, type PolicyMatch, type PolicyRecord } from './policy.js';
import { validatePolicy } from './validation.js';
import { compareUtf8 } from '../sorted.js';

/** What a policy can apply to: an exchange, or a queue of a type. */
export type PolicyTarget = { kind: 'exchange' } | { kind: 'queue'; queueType: 'classic' | 'quorum' | 'stream' };

/**
 * Policy keys each queue type does not support (rabbit_*_queue:capabilities/0
 * unsupported_policies): a policy whose definition holds one of them does not apply to a queue
 * of that type at all (rabbit_queue_type:is_policy_applicable/2), so a lower-priority policy may.
 */
const UNSUPPORTED: Record<'classic' | 'quorum' | 'stream', ReadonlySet<string>> = {
  classic: new Set(['max-age', 'stream-max-segment-size-bytes', 'queue-leader-locator', 'initial-cluster-size', 'delivery-limit', 'dead-letter-strategy']),
  quorum: new Set([
    'max-priority', 'queue-mode', 'single-active-consumer', 'ha-mode', 'ha-params', 'ha-sync-mode', 'ha-promote-on-shutdown',
    'ha-promote-on-failure', 'queue-master-locator', 'max-age', 'stream-max-segment-size-bytes', 'initial-cluster-size',
  ]),
  stream: new Set([
    'expires', 'message-ttl', 'dead-letter-exchange', 'dead-letter-routing-key', 'max-length', 'max-in-memory-length',
    'max-in-memory-bytes', 'max-priority', 'overflow', 'queue-mode', 'single-active-consumer', 'delivery-limit', 'ha-mode',
    'ha-params', 'ha-sync-mode', 'ha-promote-on-shutdown', 'ha-promote-on-failure', 'queue-master-locator', 'dead-letter-strategy',
  ]),
};

/** The store key of a policy: vhost, NUL, name. */
function storeKey(vhost: string, name: string): string {
  return `${vhost}\u0000${name}`;
}

/**
 * The policies and operator policies of one vhost, persisted as the store's 'policy' and
 * 'operator-policy' definitions (value: RabbitMQ's definitions shape), and the choice of the one
 * policy (and one operator policy) that applies to a queue or exchange.
 */
export class PolicyTable {
  private readonly byKind: Record<PolicyKind, Map<string, Policy>> = { policy: new Map(), 'operator-policy': new Map() };

  constructor(
    readonly vhost: string,
    private readonly metadata: MetadataStore,
  ) {}

  get size(): number {
    return this.byKind.policy.size + this.byKind['operator-policy'].size;
  }

  get(kind: PolicyKind, name: string): Policy | undefined {
    return this.byKind[kind].get(name);
  }

  /**
   * The policies of a kind as RabbitMQ lists them over HTTP (rabbit_mgmt_wm_policies sorts by
   * priority, then by the whole record: vhost, then name).
   */
  list(kind: PolicyKind): Policy[] {
    return [...this.byKind[kind].values()].sort((a, b) => a.priority - b.priority || compareUtf8(a.name, b.name));
  }

  /** Stores a validated policy; false when an equal one was already set (nothing changes then). */
  set(policy: Policy, persist = true): boolean {
    if (policy.vhost !== this.vhost) throw new Error(`policy ${policy.name} belongs to vhost ${policy.vhost}, not ${this.vhost}`);
    const old = this.byKind[policy.kind].get(policy.name);
    if (old?.key === policy.key) return false;
    this.byKind[policy.kind].set(policy.name, policy);
    if (persist) this.metadata.putDefinition({ kind: policy.kind, key: storeKey(this.vhost, policy.name), value: policyRecord(policy) });
    return true;
  }

  /** Removes a policy; false when there was none of that name. */
  clear(kind: PolicyKind, name: string): boolean {
    if (!this.byKind[kind].delete(name)) return false;
    this.metadata.deleteDefinition(kind, storeKey(this.vhost, name));
    return true;
  }

  /** Removes every policy of the vhost (and from the store): the vhost is being deleted. */
  clearAll(): void {
    for (const kind of ['policy', 'operator-policy'] as const) {
      for (const name of [...this.byKind[kind].keys()]) this.clear(kind, name);
    }
  }

  /** Loads a stored policy (recovery); a record that no longer validates is skipped and reported. */
  load(kind: PolicyKind, record: PolicyRecord): void {
    const p = validatePolicy(kind, this.vhost, record.name, {
      pattern: record.pattern, definition: record.definition, priority: record.priority, applyTo: record['apply-to'],
    });
    this.set(p, false);
  }

  /**
   * The policy and operator policy that apply to a queue or exchange named name: of those whose
   * apply-to covers it, whose definition the queue's type supports and whose pattern matches,
   * the one with the highest priority (rabbit_policy:match/2). Definitions are not merged across
   * policies of one kind. Among policies of equal priority RabbitMQ takes the first in its
   * parameter table's hash order; Warren takes the first by name.
   */
  match(target: PolicyTarget, name: string): PolicyMatch {
    if (this.size === 0) return NO_POLICY;
    const policy = this.best(this.byKind.policy, target, name);
    const operatorPolicy = this.best(this.byKind['operator-policy'], target, name);
    return policy === undefined && operatorPolicy === undefined ? NO_POLICY : { policy, operatorPolicy };
  }

  private best(policies: Map<string, Policy>, target: PolicyTarget, name: string): Policy | undefined {
    let best: Policy | undefined;
    for (const p of policies.values()) {
      if (best !== undefined && (p.priority < best.priority || (p.priority === best.priority && compareUtf8(p.name, best.name) > 0))) continue;
      if (!appliesTo(p, target)) continue;
      if (!p.compiled.matches(name)) continue;
      best = p;
    }
    return best;
  }
}

function appliesTo(p: Policy, target: PolicyTarget): boolean {
  if (target.kind === 'exchange') return p.applyTo !== 'queues';
  if (p.applyTo === 'exchanges') return false;
  const unsupported = UNSUPPORTED[target.queueType];
  for (const key of Object.keys(p.definition)) if (unsupported.has(key)) return false;
  return true;
}
