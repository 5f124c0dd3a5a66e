import type { Logger } from '../log.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import type { Queue } from '../queue/queue.js';
import { effectiveDefinition } from './effective-definition.js';
import { policyRecord, type JsonValue, type PolicyKind, type PolicyRecord } from './policy.js';
import { validatePolicy, validatePolicyBody, type PolicyInput } from './validation.js';
import { compareUtf8 } from '../sorted.js';

/** The vhost a policy operation names does not exist (the management API: 404 vhost_not_found). */
export class VHostNotFoundError extends Error {
  constructor(readonly vhost: string) {
    super(`no vhost '${vhost}'`);
  }
}

/** What the management API reports about the policies of a queue or exchange. */
export interface PolicyInfo {
  /** The policy's name; null when none applies. */
  policy: string | null;
  /** The operator policy's name; null when none applies. */
  operator_policy: string | null;
  /** Both definitions merged (rabbit_policy:effective_definition); {} when none applies. */
  effective_policy_definition: Record<string, JsonValue>;
}

/**
 * The broker's policy operations, for the management API, definitions import/export, the
 * config file and embedders (Broker.policies). Validation errors are thrown as RabbitMQ reports
 * them: PolicyValidationError (400, with .reason and .httpReason), PolicyInternalError (500),
 * VHostNotFoundError (404 vhost_not_found).
 */
export class PolicyOperations {
  constructor(
    private readonly vhosts: ReadonlyMap<string, VHost>,
    private readonly metadata: MetadataStore,
    private readonly log: Logger,
  ) {}

  private vhost(name: string): VHost {
    const v = this.vhosts.get(name);
    if (!v) throw new VHostNotFoundError(name);
    return v;
  }

  /**
   * Sets a policy (PUT /api/policies/{vhost}/{name}) from its fields as received: pattern,
   * definition, and optionally priority (default 0) and apply-to (default "all"). Returns
   * 'created' (HTTP 201) or 'updated' (204; also when nothing changed).
   */
  put(kind: PolicyKind, vhost: string, name: string, input: PolicyInput): 'created' | 'updated' {
    const v = this.vhost(vhost);
    const policy = validatePolicy(kind, vhost, name, input);
    const existed = v.policies.get(kind, name) !== undefined;
    v.setPolicy(policy);
    return existed ? 'updated' : 'created';
  }

  /**
   * put() from a parsed request body, as rabbit_mgmt_wm_policy takes it: "pattern" and
   * "definition" are required (400 "[{key_missing,pattern}]"), "priority" and "apply-to" are
   * optional, other keys are ignored.
   */
  putBody(kind: PolicyKind, vhost: string, name: string, body: Record<string, unknown>): 'created' | 'updated' {
    const v = this.vhost(vhost);
    const policy = validatePolicyBody(kind, vhost, name, body);
    const existed = v.policies.get(kind, name) !== undefined;
    v.setPolicy(policy);
    return existed ? 'updated' : 'created';
  }

  /** Deletes a policy (DELETE …/{vhost}/{name}); false when there was none (HTTP 404). */
  delete(kind: PolicyKind, vhost: string, name: string): boolean {
    return this.vhost(vhost).clearPolicy(kind, name);
  }

  /** One policy in RabbitMQ's shape (GET …/{vhost}/{name}); undefined when missing (404). */
  get(kind: PolicyKind, vhost: string, name: string): PolicyRecord | undefined {
    const p = this.vhost(vhost).policies.get(kind, name);
    return p && policyRecord(p);
  }

  /**
   * Policies of one vhost, or of all when vhost is undefined (GET /api/policies[/{vhost}]), in
   * the management API's order: by priority, then vhost, then name.
   */
  list(kind: PolicyKind, vhost?: string): PolicyRecord[] {
    const vhosts = vhost === undefined ? [...this.vhosts.values()] : [this.vhost(vhost)];
    return vhosts
      .flatMap((v) => v.policies.list(kind))
      .sort((a, b) => a.priority - b.priority || compareUtf8(a.vhost, b.vhost) || compareUtf8(a.name, b.name))
      .map(policyRecord);
  }

  /** policy, operator_policy and effective_policy_definition of a queue or exchange of vhost. */
  infoOf(vhost: string, entity: Queue | Exchange): PolicyInfo {
    const match = this.vhost(vhost).policiesOf(entity);
    return {
      policy: match.policy?.name ?? null,
      operator_policy: match.operatorPolicy?.name ?? null,
      effective_policy_definition: { ...(effectiveDefinition(match) ?? {}) },
    };
  }

  /** infoOf for the queue of that name; undefined when there is no such queue. */
  queueInfo(vhost: string, queue: string): PolicyInfo | undefined {
    const q = this.vhost(vhost).queues.get(queue);
    return q && this.infoOf(vhost, q);
  }

  /** infoOf for the exchange of that name; undefined when there is no such exchange. */
  exchangeInfo(vhost: string, exchange: string): PolicyInfo | undefined {
    const x = this.vhost(vhost).exchanges.get(exchange);
    return x && this.infoOf(vhost, x);
  }

  /**
   * Loads the stored policies of every existing vhost (at boot, before queues and exchanges are
   * recovered, so they are created with their policies). A stored policy whose vhost does not
   * exist stays in the store; one that no longer validates is logged and skipped.
   */
  recover(): number {
    let loaded = 0;
    const touched = new Set<VHost>();
    for (const d of this.metadata.loadDefinitions()) {
      if (d.kind !== 'policy' && d.kind !== 'operator-policy') continue;
      const record = d.value as PolicyRecord;
      const v = this.vhosts.get(record.vhost);
      if (!v) continue;
      try {
        v.policies.load(d.kind, record);
        touched.add(v);
        loaded++;
      } catch (err) {
        this.log.warn({ err: (err as Error).message, policy: record.name, vhost: record.vhost }, 'stored policy skipped: it does not validate');
      }
    }
    // The vhosts' standard exchanges exist already.
    for (const v of touched) v.reapplyPolicies();
    return loaded;
  }

  /**
   * Applies policies given in RabbitMQ's definitions shape (the config file's "policies", a
   * definitions import): each is validated and set as put() does. Throws on the first invalid one.
   */
  apply(kind: PolicyKind, records: readonly PolicyRecord[]): void {
    for (const r of records) {
      this.put(kind, r.vhost, r.name, { pattern: r.pattern, definition: r.definition, priority: r.priority, applyTo: r['apply-to'] });
    }
  }
}
