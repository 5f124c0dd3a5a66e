/**
 * The seam for message counters. RabbitMQ's objects carry `message_stats` (publish, deliver_get,
 * ack, ...) and the node its churn counters (connection_created, queue_declared, ...); Warren's
 * counters live elsewhere (src/metrics) and reach the management API through this interface.
 * Without a source, `message_stats` is left out where RabbitMQ leaves it out when nothing
 * happened (queues, exchanges, vhosts, channels), the overview's is {}, and churn counts are 0.
 */
import type { ChurnStats } from '../metrics/broker-metrics.js';
import type { JsonObject } from './json.js';
import type { Channel } from '../connection/channel.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';

/** RabbitMQ's churn counters of a node (overview churn_rates, /api/nodes): the metrics' own. */
export type ChurnCounts = ChurnStats;

export interface MessageStatsSource {
  /** The overview's message_stats (publish, confirm, deliver_get, ... with their _details). */
  overview?(vhosts: ReadonlySet<string>): JsonObject;
  /** A vhost's message_stats, or undefined when nothing was counted. */
  vhost?(name: string): JsonObject | undefined;
  queue?(vhost: string, queue: Queue): JsonObject | undefined;
  exchange?(vhost: string, exchange: Exchange): JsonObject | undefined;
  channel?(channel: Channel): JsonObject | undefined;
  churn?(): ChurnCounts;
}

export const NO_STATS: MessageStatsSource = {};
