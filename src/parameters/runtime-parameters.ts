import type { Logger } from '../log.js';
import { VHostNotFoundError, type PolicyOperations } from '../policy/policy-operations.js';
import { PolicyValidationError, validationFailedText } from '../policy/validation.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { NO_LIMITS } from '../vhost/vhost-limits.js';
import type { VHost } from '../vhost/vhost.js';
import { keyMissing, ParameterInternalError, ParameterValidationError } from './errors.js';
import { s, type ErrorParts } from './parameter-validation.js';
import { componentOf, OPERATOR_POLICY_COMPONENT, policyInputOf, policyKindOf, policyParameterValue, validatePolicyParameter } from './policy-component.js';
import { parameterDefinition, parameterFromDefinition, parameterKey, parameterRecord, type ParameterRecord } from './records.js';
import { copyOf, storedValue, type JsonValue } from './value.js';
import { LIMITS_NAME, limitsOf, validateVhostLimits, VHOST_LIMITS } from './vhost-limits-component.js';
import { compareUtf8 } from '../sorted.js';

/**
 * A component another folder registers (RuntimeParameters.register), as a RabbitMQ plugin
 * registers a runtime_parameter module: its parameters are stored, listed, exported and
 * recovered here; the component validates values and acts on changes.
 */
/**
 * Who sets a parameter: rabbit_runtime_parameters hands a component's validation the #user{}
 * of an HTTP request, and `none` for definitions imports and recovery (undefined here).
 */
export interface ActingUser {
  readonly name: string;
  /** RabbitMQ's check_vhost_access: the vhost exists and the user holds a permission entry there. */
  mayAccessVhost(vhost: string): boolean;
}

export interface ParameterComponent {
  /** The errors, in RabbitMQ's print order; may throw ParameterValidationError / ParameterInternalError. */
  validate(vhost: string, name: string, value: JsonValue | undefined, user: ActingUser | undefined): ErrorParts[];
  /** The parameter was set (also at recovery). */
  notify(vhost: string, name: string, value: JsonValue): void;
  /** The parameter was cleared (deleted, its vhost deleted, broker reset). */
  clear(vhost: string, name: string): void;
}

export interface RuntimeParametersDeps {
  vhosts: ReadonlyMap<string, VHost>;
  metadata: MetadataStore;
  policies: PolicyOperations;
  log: Logger;
}

/**
 * RabbitMQ's runtime parameters (rabbit_runtime_parameters): values per vhost, component and
 * name, each component validating its own and acting on changes. RabbitMQ 3.10 without plugins
 * has three components: `vhost-limits` (stored here; sets VHost.limits), and `policy` and
 * `operator_policy`, which are the policy tables of src/policy seen as parameters (listed and,
 * for operator policies, set and deleted through Broker.policies). Any other component is
 * refused as RabbitMQ refuses it: "component X not found".
 *
 * Public operations (Broker.parameters) map 1:1 to /api/parameters; see README.md.
 */
export class RuntimeParameters {
  /** The vhost-limits parameters and those of registered components, by parameterKey(vhost, component, name). */
  private readonly stored = new Map<string, ParameterRecord>();
  private readonly components = new Map<string, ParameterComponent>();

  constructor(private readonly deps: RuntimeParametersDeps) {}

  /** Registers a component (e.g. src/shovel's `shovel`); call before recover(). */
  register(name: string, component: ParameterComponent): void {
    this.components.set(name, component);
  }

  // ---- reading ---------------------------------------------------------------------------------

  /**
   * GET /api/parameters (component undefined: every component but `policy`, as
   * rabbit_runtime_parameters:list/0 leaves policies out), /api/parameters/{component} (every
   * vhost) and /api/parameters/{component}/{vhost}: undefined when that vhost does not exist
   * (404 Object Not Found). An unknown component lists nothing. Ordered by vhost, then name, as
   * the management API sorts them.
   */
  list(component?: string, vhost?: string): ParameterRecord[] | undefined {
    if (vhost !== undefined && !this.deps.vhosts.has(vhost)) return undefined;
    const out: ParameterRecord[] = [];
    const inVhost = (r: { vhost: string }) => vhost === undefined || r.vhost === vhost;
    for (const r of this.stored.values()) if ((component === undefined || component === r.component) && inVhost(r)) out.push(copyOf(r));
    for (const kind of ['policy', 'operator-policy'] as const) {
      const c = componentOf(kind);
      if (component === c || (component === undefined && c === OPERATOR_POLICY_COMPONENT)) {
        for (const r of this.deps.policies.list(kind, vhost)) out.push(parameterRecord(r.vhost, c, r.name, policyParameterValue(r)));
      }
    }
    return out.sort((a, b) => compareUtf8(a.vhost, b.vhost) || compareUtf8(a.name, b.name) || compareUtf8(a.component, b.component));
  }

  /** GET /api/parameters/{component}/{vhost}/{name}: undefined when missing (404), also for a missing vhost. */
  get(component: string, vhost: string, name: string): ParameterRecord | undefined {
    if (!this.deps.vhosts.has(vhost)) return undefined;
    const kind = policyKindOf(component);
    if (kind) {
      const r = this.deps.policies.get(kind, vhost, name);
      return r && parameterRecord(vhost, component, name, policyParameterValue(r));
    }
    const r = this.stored.get(parameterKey(vhost, component, name));
    return r && (copyOf(r));
  }

  // ---- writing ---------------------------------------------------------------------------------

  /**
   * PUT /api/parameters/{component}/{vhost}/{name} with the request body already JSON-parsed:
   * the vhost must exist (VHostNotFoundError, 404 vhost_not_found, before the body is looked
   * at), the body must hold "value" (400 "[{key_missing,value}]"), then put().
   */
  putBody(component: string, vhost: string, name: string, body: Record<string, unknown>, user?: ActingUser): 'created' | 'updated' {
    if (!this.deps.vhosts.has(vhost)) throw new VHostNotFoundError(vhost);
    if (!('value' in body) || body['value'] === undefined) throw keyMissing('value');
    return this.put(component, vhost, name, body['value'], user);
  }

  /**
   * Sets a parameter as rabbit_runtime_parameters:set does: 'created' (HTTP 201) or 'updated'
   * (204, also when nothing changed). Throws VHostNotFoundError (404), ParameterValidationError
   * (400: "policies may not be set using this method" for the policy component, "Validation
   * failed…" for an unknown component or a value the component refuses) or
   * ParameterInternalError (500: a vhost-limits parameter not named `limits`, or a value that
   * crashes RabbitMQ's policy validators). `user` is who sets it (an HTTP request's user; none
   * for imports): a component may check what that user may do (ActingUser).
   */
  put(component: string, vhost: string, name: string, value: unknown, user?: ActingUser): 'created' | 'updated' {
    const v = this.deps.vhosts.get(vhost);
    if (!v) throw new VHostNotFoundError(vhost);
    return this.set(v, component, name, storedValue(value), user);
  }

  private set(v: VHost, component: string, name: string, value: JsonValue, user?: ActingUser): 'created' | 'updated' {
    if (component === 'policy') throw new ParameterValidationError('policies may not be set using this method', true);
    const errors = this.validate(component, name, value, user);
    if (errors.length > 0) throw new ParameterValidationError(validationFailedText(errors), true);
    if (component === OPERATOR_POLICY_COMPONENT) {
      const input = policyInputOf(value as Record<string, JsonValue>);
      try {
        return this.deps.policies.put('operator-policy', v.name, name, input);
      } catch (e) {
        // Validated above as RabbitMQ validates: only a disagreement between the two would land here.
        if (e instanceof PolicyValidationError) throw new ParameterValidationError(e.reason, true);
        throw e;
      }
    }
    const registered = this.components.get(component);
    if (registered) {
      const key = parameterKey(v.name, component, name);
      const existed = this.stored.has(key);
      const record = parameterRecord(v.name, component, name, value);
      this.stored.set(key, record);
      this.deps.metadata.putDefinition(parameterDefinition(record));
      registered.notify(v.name, name, copyOf(value));
      return existed ? 'updated' : 'created';
    }
    // vhost-limits: rabbit_vhost_limit:notify/5 has a clause for `limits` only; RabbitMQ stores
    // the parameter and then crashes (500). Warren refuses it and stores nothing.
    if (name !== LIMITS_NAME) throw new ParameterInternalError(`a ${VHOST_LIMITS} parameter must be named '${LIMITS_NAME}', not '${name}'`);
    const key = parameterKey(v.name, component, name);
    const existed = this.stored.has(key);
    const record = parameterRecord(v.name, component, name, value);
    this.stored.set(key, record);
    this.deps.metadata.putDefinition(parameterDefinition(record));
    v.limits = limitsOf(value);
    return existed ? 'updated' : 'created';
  }

  /** The component's validation (rabbit_runtime_parameters:set_any0), errors in print order. */
  private validate(component: string, name: string, value: JsonValue | undefined, user: ActingUser | undefined): ErrorParts[] {
    if (component === VHOST_LIMITS) return validateVhostLimits(name, value);
    const registered = this.components.get(component);
    if (registered) return registered.validate('', name, value, user);
    if (component === OPERATOR_POLICY_COMPONENT) {
      try {
        return validatePolicyParameter('operator-policy', name, value);
      } catch (e) {
        throw new ParameterInternalError((e as Error).message);
      }
    }
    return [[`component ${s(component)} not found`]];
  }

  /**
   * DELETE /api/parameters/{component}/{vhost}/{name}: false when there is no such parameter
   * (404; also for a missing vhost). A policy exists as a parameter but RabbitMQ's handler
   * crashes on it (500): ParameterInternalError, and the policy stays.
   */
  delete(component: string, vhost: string, name: string): boolean {
    const v = this.deps.vhosts.get(vhost);
    if (!v) return false;
    const kind = policyKindOf(component);
    if (kind === 'policy') {
      if (this.deps.policies.get('policy', vhost, name) === undefined) return false;
      throw new ParameterInternalError('policies may not be cleared using this method');
    }
    if (kind === 'operator-policy') return this.deps.policies.delete('operator-policy', vhost, name);
    const key = parameterKey(vhost, component, name);
    if (!this.stored.delete(key)) return false;
    this.deps.metadata.deleteDefinition('parameter', key);
    if (component === VHOST_LIMITS) v.limits = NO_LIMITS;
    this.components.get(component)?.clear(vhost, name);
    return true;
  }

  // ---- definitions, recovery, vhost deletion ---------------------------------------------------

  /**
   * Applies parameters given in RabbitMQ's definitions shape (a definitions import's
   * `parameters`, the config file's), in order, as rabbit_definitions:add_parameter does: the
   * value is validated before the vhost is looked up. A refusal throws a
   * ParameterValidationError whose reason is RabbitMQ's import error, "<reason>
   * (vhost/component/name)", HTML-escaped; a missing vhost throws VHostNotFoundError (an import
   * reports it as "Please create virtual host \"v\" prior to importing definitions.").
   */
  apply(records: ReadonlyArray<{ vhost: string; component: string; name: string; value: unknown }>): void {
    for (const r of records) {
      try {
        if (r.value === undefined) {
          // RabbitMQ validates the atom undefined, which no component takes as a value.
          const errors = this.validate(r.component, r.name, undefined, undefined);
          throw errors.length > 0 ? new ParameterValidationError(validationFailedText(errors), true) : new ParameterInternalError('a parameter without a value');
        }
        const value = storedValue(r.value);
        const v = this.deps.vhosts.get(r.vhost);
        if (v) {
          this.set(v, r.component, r.name, value);
          continue;
        }
        if (r.component === 'policy') throw new ParameterValidationError('policies may not be set using this method', true);
        const errors = this.validate(r.component, r.name, value, undefined);
        if (errors.length > 0) throw new ParameterValidationError(validationFailedText(errors), true);
        throw new VHostNotFoundError(r.vhost);
      } catch (e) {
        if (e instanceof ParameterValidationError) {
          throw new ParameterValidationError(`${e.reason} (${r.vhost}/${r.component}/${r.name})`, true);
        }
        throw e;
      }
    }
  }

  /**
   * Loads the stored parameters at boot, after the vhosts (and before queues are recovered): each
   * vhost gets its limits back. A parameter of a vhost that no longer exists is deleted; one
   * that no longer validates is logged and skipped. Returns how many were loaded.
   */
  recover(): number {
    let loaded = 0;
    for (const d of this.deps.metadata.loadDefinitions()) {
      if (d.kind !== 'parameter') continue;
      const r = parameterFromDefinition(d);
      const v = r && this.deps.vhosts.get(r.vhost);
      if (!r || !v) {
        this.deps.log.warn({ key: d.key }, 'deleting a stored runtime parameter: malformed, or its vhost no longer exists');
        this.deps.metadata.deleteDefinition('parameter', d.key);
        continue;
      }
      const registered = this.components.get(r.component);
      if (registered) {
        let valid = false;
        try {
          valid = registered.validate(r.vhost, r.name, r.value, undefined).length === 0;
        } catch {
          // refused: skipped below
        }
        if (valid) {
          this.stored.set(d.key, r);
          registered.notify(r.vhost, r.name, copyOf(r.value));
          loaded++;
          continue;
        }
      }
      if (r.component !== VHOST_LIMITS || r.name !== LIMITS_NAME || validateVhostLimits(r.name, r.value).length > 0) {
        this.deps.log.warn({ vhost: r.vhost, component: r.component, name: r.name }, 'stored runtime parameter skipped: it does not validate');
        continue;
      }
      this.stored.set(d.key, r);
      v.limits = limitsOf(r.value);
      loaded++;
    }
    return loaded;
  }

  /**
   * Deletes every stored parameter (vhost limits), from the store too, and lifts the limits
   * (broker.reset()). Operator policies are the policy operations' to delete.
   */
  clear(): void {
    for (const [key, r] of [...this.stored]) {
      this.stored.delete(key);
      this.deps.metadata.deleteDefinition('parameter', key);
      const v = this.deps.vhosts.get(r.vhost);
      if (v && r.component === VHOST_LIMITS) v.limits = NO_LIMITS;
      this.components.get(r.component)?.clear(r.vhost, r.name);
    }
  }

  /** The vhost was deleted (Broker.onVhostDeleted): its parameters go with it, from the store too. */
  vhostDeleted(vhost: string): void {
    for (const [key, r] of this.stored) {
      if (r.vhost !== vhost) continue;
      this.stored.delete(key);
      this.deps.metadata.deleteDefinition('parameter', key);
      this.components.get(r.component)?.clear(r.vhost, r.name);
    }
  }

  /**
   * Sets the vhost's `limits` parameter to a value whose entries are already in RabbitMQ's order
   * (VHostLimitOperations: the limit set last comes first). Throws as put() does.
   */
  setVhostLimits(vhost: string, value: JsonValue): 'created' | 'updated' {
    const v = this.deps.vhosts.get(vhost);
    if (!v) throw new VHostNotFoundError(vhost);
    return this.set(v, VHOST_LIMITS, LIMITS_NAME, copyOf(value));
  }

  /** The stored value of the vhost's `limits` parameter, if it has one (for VHostLimitOperations). */
  limitsValue(vhost: string): JsonValue | undefined {
    const r = this.stored.get(parameterKey(vhost, VHOST_LIMITS, LIMITS_NAME));
    return r && copyOf(r.value);
  }

  /** Every vhost with a `limits` parameter and its value. */
  allLimits(): Array<{ vhost: string; value: JsonValue }> {
    const out: Array<{ vhost: string; value: JsonValue }> = [];
    for (const r of this.stored.values()) if (r.component === VHOST_LIMITS && r.name === LIMITS_NAME) out.push({ vhost: r.vhost, value: copyOf(r.value) });
    return out;
  }
}
