/**
 * The management API's message_stats and churn counts, read from the broker's counters
 * (src/metrics, `broker.metrics`): each key `k` with `k_details: {rate}` (messages per second
 * over the last few seconds). RabbitMQ keeps its counts in records, one per group: a group
 * appears whole, zeros included, once anything in it was counted, and not at all before; an
 * object with no counts at all has no message_stats. Keys come sorted, except a vhost's, which
 * keep their groups' order (recorded from 3.10.8).
 */
import type { Channel } from '../connection/channel.js';
import type { BrokerMetrics } from '../metrics/broker-metrics.js';
import type { Snapshot } from '../metrics/rate-sampler.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import { float, type Json, type JsonObject } from './json.js';
import type { ChurnCounts, MessageStatsSource } from './stats.js';

/** RabbitMQ's records of message counts: what a channel published, what queues handed out, an exchange's traffic. */
const GROUPS: readonly (readonly string[])[] = [
  ['publish', 'confirm', 'return_unroutable', 'drop_unroutable'],
  ['get', 'get_no_ack', 'deliver', 'deliver_no_ack', 'redeliver', 'ack', 'deliver_get', 'get_empty'],
  ['publish_in', 'publish_out'],
];

/** The keys of stats to show: every key of each group something in was counted, in the groups' order. */
function shownKeys(stats: Snapshot): string[] {
  const keys: string[] = [];
  for (const group of GROUPS) {
    const present = group.filter((k) => k in stats);
    if (present.some((k) => stats[k] !== 0)) keys.push(...present);
  }
  return keys;
}

export function metricsStats(metrics: BrokerMetrics, vhosts: ReadonlyMap<string, VHost>): MessageStatsSource {
  /** Each shown key k with k_details {rate}, sorted unless `grouped`; undefined when nothing was counted. */
  const detailed = (stats: Snapshot, rates: Snapshot, grouped = false): JsonObject | undefined => {
    const keys = shownKeys(stats);
    if (keys.length === 0) return undefined;
    if (!grouped) keys.sort();
    const out: Record<string, Json> = {};
    for (const k of keys) {
      out[k] = stats[k]!;
      out[`${k}_details`] = { rate: float(rates[k] ?? 0) };
    }
    return out;
  };
  const shape = (stats: object, key: object, grouped = false): JsonObject | undefined => detailed(stats as Snapshot, metrics.rates(key), grouped);
  return {
    overview(visible: ReadonlySet<string>): JsonObject {
      // A user who sees every vhost gets the node's counts (deleted vhosts' included).
      if ([...vhosts.keys()].every((v) => visible.has(v))) return shape(metrics.overview(), metrics) ?? {};
      const sum: Snapshot = {};
      const rates: Snapshot = {};
      for (const name of visible) {
        const vhost = vhosts.get(name);
        if (!vhost) continue;
        for (const [k, v] of Object.entries(metrics.vhost(vhost) as unknown as Snapshot)) sum[k] = (sum[k] ?? 0) + v;
        for (const [k, v] of Object.entries(metrics.rates(vhost))) rates[k] = (rates[k] ?? 0) + v;
      }
      return detailed(sum, rates) ?? {};
    },
    vhost: (name: string) => {
      const vhost = vhosts.get(name);
      return vhost ? shape(metrics.vhost(vhost), vhost, true) : undefined;
    },
    queue: (_vhost: string, queue: Queue) => shape(metrics.queue(queue), queue),
    exchange: (_vhost: string, exchange: Exchange) => shape(metrics.exchange(exchange), exchange),
    channel: (channel: Channel) => shape(metrics.channel(channel), channel),
    churn: (): ChurnCounts => metrics.churnStats(),
  };
}
