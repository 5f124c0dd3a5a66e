import { VHostNotFoundError } from '../policy/policy-operations.js';
import { validationFailedText } from '../policy/validation.js';
import type { VHost } from '../vhost/vhost.js';
import { keyMissing, ParameterInternalError, ParameterValidationError } from './errors.js';
import type { VHostLimitsRecord } from './records.js';
import type { RuntimeParameters } from './runtime-parameters.js';
import { isJsonObject, objectOf, type JsonValue } from './value.js';
import { LIMITS_NAME, validateVhostLimits } from './vhost-limits-component.js';
import { compareUtf8 } from '../sorted.js';

/**
 * RabbitMQ's vhost limits as its management API and rabbitmqctl set_vhost_limits handle them
 * (rabbit_vhost_limit, rabbit_mgmt_wm_limits, rabbit_mgmt_wm_limit): one limit at a time, kept
 * in the vhost's `limits` runtime parameter (RuntimeParameters), whose value lists the limits
 * in the order they were last set. Public operations (Broker.vhostLimits) map 1:1 to
 * /api/vhost-limits; see README.md.
 */
export class VHostLimitOperations {
  constructor(
    private readonly parameters: RuntimeParameters,
    private readonly vhosts: ReadonlyMap<string, VHost>,
  ) {}

  /**
   * GET /api/vhost-limits: every vhost that has a `limits` parameter, with its value — also when
   * that value is empty (`[]`), as RabbitMQ lists it — ordered by vhost. `visible` filters the
   * vhosts (the management API shows a user the vhosts they may see).
   * GET /api/vhost-limits/{vhost}: [] without limits (or with an empty value), else one record;
   * undefined when the vhost does not exist (404 Object Not Found).
   */
  list(vhost?: string, visible: (vhost: string) => boolean = () => true): VHostLimitsRecord[] | undefined {
    if (vhost === undefined) {
      return this.parameters
        .allLimits()
        .filter((r) => visible(r.vhost))
        .sort((a, b) => compareUtf8(a.vhost, b.vhost))
        .map((r) => ({ vhost: r.vhost, value: r.value }));
    }
    if (!this.vhosts.has(vhost)) return undefined;
    const value = this.parameters.limitsValue(vhost);
    return value === undefined || isEmpty(value) ? [] : [{ vhost, value }];
  }

  /**
   * PUT /api/vhost-limits/{vhost}/{name} with the request body already JSON-parsed: the vhost
   * must exist (VHostNotFoundError, 404 vhost_not_found, before the body is looked at), the
   * body must hold "value" (400 "[{key_missing,value}]"), then put().
   */
  putBody(vhost: string, name: string, body: Record<string, unknown>): void {
    if (!this.vhosts.has(vhost)) throw new VHostNotFoundError(vhost);
    if (!('value' in body) || body['value'] === undefined) throw keyMissing('value');
    this.put(vhost, name, body['value']);
  }

  /**
   * Sets one limit (rabbit_vhost_limit:update_limit): the value becomes the `limits` parameter's
   * first entry, the others follow in their order. Always HTTP 204. Throws VHostNotFoundError
   * (404) or ParameterValidationError (400, its reason not HTML-escaped here): "Unrecognised
   * terms [{<<\"max-bogus\">>,1}] in limits" for a name other than max-connections and
   * max-queues, "max-queues should be a number, actually was …" for a value that is not an
   * integer. A negative limit is accepted and means no limit.
   */
  put(vhost: string, name: string, value: unknown): void {
    if (!this.vhosts.has(vhost)) throw new VHostNotFoundError(vhost);
    const limit = JSON.parse(JSON.stringify(value ?? null)) as JsonValue;
    const old = this.entries(vhost);
    this.set(vhost, [[name, limit], ...old.filter(([k]) => k !== name)]);
  }

  /**
   * DELETE /api/vhost-limits/{vhost}/{name} (rabbit_vhost_limit:clear_limit): the limit leaves
   * the value; the parameter stays, empty (`[]`) when it was the last one, and is created empty
   * when there was none. Always HTTP 204 — also for a limit that was not set — except for a vhost
   * that does not exist, where RabbitMQ's handler crashes: ParameterInternalError (500).
   */
  delete(vhost: string, name: string): void {
    if (!this.vhosts.has(vhost)) throw new ParameterInternalError(`no vhost '${vhost}'`);
    this.set(vhost, this.entries(vhost).filter(([k]) => k !== name));
  }

  /**
   * RabbitMQ's definitions import refuses queues that would take a vhost over its max-queues
   * (rabbit_definitions:validate_limits): its text when addCount new queues would, else undefined.
   */
  importQueueLimitError(vhost: string, addCount: number): string | undefined {
    const v = this.vhosts.get(vhost);
    const limit = v?.limits.maxQueues;
    if (!v || addCount === 0 || limit === undefined) return undefined;
    const count = v.queues.size;
    if (limit > 0 && count + addCount <= limit) return undefined;
    const queueCount = limit === 0 ? 0 : count;
    return `Adding ${addCount} queue(s) to virtual host "${vhost}" would exceed the limit of ${limit} queue(s).\n\nThis virtual host currently has ${queueCount} queue(s) defined.\n\nImport aborted!`;
  }

  /** The entries of the vhost's `limits` value, in order ([] without one). */
  private entries(vhost: string): Array<[string, JsonValue]> {
    const value = this.parameters.limitsValue(vhost);
    return value !== undefined && isJsonObject(value) ? Object.entries(value) : [];
  }

  private set(vhost: string, entries: Array<[string, JsonValue]>): void {
    const value: JsonValue = entries.length === 0 ? [] : objectOf(entries);
    const errors = validateVhostLimits(LIMITS_NAME, value);
    if (errors.length > 0) throw new ParameterValidationError(validationFailedText(errors), false);
    this.parameters.setVhostLimits(vhost, value);
  }
}

function isEmpty(value: JsonValue): boolean {
  return Array.isArray(value) ? value.length === 0 : isJsonObject(value) && Object.keys(value).length === 0;
}
