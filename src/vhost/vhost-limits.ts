/**
 * A vhost's limits in force (RabbitMQ's vhost-limits runtime parameter, as rabbit_vhost_limit
 * reads it): at most maxConnections open connections and maxQueues queues. Absent = no limit;
 * a negative limit in the parameter is no limit and is absent here; 0 refuses every new one.
 * src/parameters sets them (VHost.limits) from the stored parameter; the vhost and the
 * connection handshake check them.
 */
import { preconditionFailed, type ChannelError } from '../errors.js';

export interface VHostLimits {
  readonly maxConnections?: number;
  readonly maxQueues?: number;
}

export const NO_LIMITS: VHostLimits = Object.freeze({});

/**
 * rabbit_vhost_limit:is_over_queue_limit before a new queue (rabbit_channel:check_vhost_queue_limit):
 * the 406 to throw when one more queue would exceed the limit, or undefined.
 */
export function queueLimitError(vhost: string, queueName: string, limits: VHostLimits, queueCount: number): ChannelError | undefined {
  const limit = limits.maxQueues;
  if (limit === undefined || queueCount + 1 <= limit) return undefined;
  return preconditionFailed(`cannot declare queue '${queueName}': queue limit in vhost '${vhost}' (${limit}) is reached`);
}
