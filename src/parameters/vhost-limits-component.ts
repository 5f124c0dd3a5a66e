/**
 * The `vhost-limits` runtime parameter component (rabbit_vhost_limit): one parameter per vhost,
 * named `limits`, whose value holds max-connections and max-queues as integers.
 */
import { NO_LIMITS, type VHostLimits } from '../vhost/vhost-limits.js';
import { integer, proplistErrors, type Constraint, type ErrorParts } from './parameter-validation.js';
import { isJsonObject, type JsonValue } from './value.js';

export const VHOST_LIMITS = 'vhost-limits';
/** The one parameter name rabbit_vhost_limit acts on (notify/5 has no clause for another). */
export const LIMITS_NAME = 'limits';
export const LIMIT_KEYS = ['max-connections', 'max-queues'] as const;
export type LimitKey = (typeof LIMIT_KEYS)[number];

/** rabbit_vhost_limit:vhost_limit_validation/0. */
const CONSTRAINTS: readonly Constraint[] = [
  { key: 'max-connections', validate: integer },
  { key: 'max-queues', validate: integer },
];

/** rabbit_vhost_limit:validate/5: the errors, in the order RabbitMQ prints them. */
export function validateVhostLimits(name: string, value: JsonValue | undefined): ErrorParts[] {
  return proplistErrors(name, CONSTRAINTS, value);
}

/**
 * The limits in force under a valid value (rabbit_vhost_limit:get_limit): a negative limit is
 * no limit.
 */
export function limitsOf(value: JsonValue): VHostLimits {
  if (!isJsonObject(value)) return NO_LIMITS;
  const get = (key: LimitKey): number | undefined => {
    const v = value[key];
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
  };
  const maxConnections = get('max-connections');
  const maxQueues = get('max-queues');
  if (maxConnections === undefined && maxQueues === undefined) return NO_LIMITS;
  return Object.freeze({ ...(maxConnections !== undefined && { maxConnections }), ...(maxQueues !== undefined && { maxQueues }) });
}
