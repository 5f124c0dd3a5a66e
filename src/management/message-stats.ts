/**
 * The management API's message_stats and churn counts, read from the broker's counters
 * (src/metrics, `broker.metrics`): each counted key `k` with `k_details: {rate}` (messages per
 * second over the last few seconds). As in RabbitMQ, a key nothing was counted in is left out,
 * and an object with no counts at all has no message_stats.
 */
import type { Channel } from '../connection/channel.js';
import type { BrokerMetrics } from '../metrics/broker-metrics.js';
import type { Snapshot } from '../metrics/rate-sampler.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import { float, type Json, type JsonObject } from './json.js';
import type { ChurnCounts, MessageStatsSource } from './stats.js';

export function metricsStats(metrics: BrokerMetrics, vhosts: ReadonlyMap<string, VHost>): MessageStatsSource {
  /** Each counted key k with k_details {rate}; undefined when nothing was counted. */
  const detailed = (stats: Snapshot, rates: Snapshot): JsonObject | undefined => {
    const counted = Object.entries(stats).filter(([, v]) => v !== 0);
    if (counted.length === 0) return undefined;
    const out: Record<string, Json> = {};
    for (const [k, v] of counted) {
      out[k] = v;
      out[`${k}_details`] = { rate: float(rates[k] ?? 0) };
    }
    return out;
  };
  const shape = (stats: object, key: object): JsonObject | undefined => detailed(stats as Snapshot, metrics.rates(key));
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
      return vhost ? shape(metrics.vhost(vhost), vhost) : undefined;
    },
    queue: (_vhost: string, queue: Queue) => shape(metrics.queue(queue), queue),
    exchange: (_vhost: string, exchange: Exchange) => shape(metrics.exchange(exchange), exchange),
    channel: (channel: Channel) => shape(metrics.channel(channel), channel),
    churn: (): ChurnCounts => metrics.churnStats(),
  };
}
