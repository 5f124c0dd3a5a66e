import type { Channel } from '../connection/channel.js';
import type { Connection } from '../connection/connection.js';
import type { ChannelExchangeCounters, ChannelQueueCounters, DeadLetterReasonName, DeadLetterStrategyName } from '../metrics/counters.js';
import type { BrokerMetrics } from '../metrics/broker-metrics.js';
import type { NodeIdentity } from '../node-name.js';
import type { Queue } from '../queue/queue.js';
import { HeadTimestamps } from '../metrics/head-timestamps.js';
import type { VHost } from '../vhost/vhost.js';
import { Exposition, labels, type MetricType, type Sample } from './text-format.js';

/**
 * rabbitmq_prometheus's three registries: `/metrics` (aggregated: one sample per metric,
 * summed over objects), `/metrics/per-object` (one sample per queue, channel, connection...)
 * and `/metrics/detailed` (per object, only the metric groups asked for with `?family=`,
 * names prefixed `rabbitmq_detailed_`).
 */
export type Registry = 'default' | 'per-object' | 'detailed';

/** What the collector reads of the broker (Broker implements it). */
export interface PrometheusSource {
  readonly vhosts: ReadonlyMap<string, VHost>;
  readonly connections: ReadonlySet<Connection>;
  readonly metrics: BrokerMetrics;
  readonly identity: NodeIdentity;
  /** RabbitMQ's version as advertised (config.version). */
  readonly version: string;
  /** Node-wide readings (memory, descriptors, disk, alarms). */
  nodeStats(): NodeStats;
}

/** Readings of the process and its limits; undefined where unknown (no sample is written). */
export interface NodeStats {
  openFds: number | undefined;
  maxFds: number | undefined;
  /** Client sockets open (AMQP and AMQPS). */
  openSockets: number;
  maxSockets: number | undefined;
  /** The memory the memory alarm counts (heap and Buffers). */
  memoryUsed: number;
  memoryLimit: number;
  diskFree: number | undefined;
  diskFreeLimit: number;
  memoryAlarm: boolean;
  diskAlarm: boolean;
}

export interface CollectOptions {
  /** detailed: the metric groups asked for (`family=` values, RabbitMQ's table names). */
  families?: ReadonlySet<string>;
  /** detailed: only the queues of these vhosts (`vhost=` values); unknown vhosts select nothing. */
  vhosts?: ReadonlySet<string>;
}

/** One metric of a group: its name without prefix, type, help text and value for an item. */
interface Metric<T> {
  name: string;
  type: MetricType;
  help: string;
  /** ctx: the scrape's (head_message_timestamp reads every channel once a scrape). */
  value: (item: T, ctx: Context) => number | undefined;
  /** Not summed into the aggregated registry (RabbitMQ's /metrics has no such family). */
  perObjectOnly?: true;
}

/** An item of a per-object group and its label set. */
interface Row<T> {
  labels: string;
  item: T;
}

/**
 * One of RabbitMQ's metric groups (an ETS table of rabbit_core_metrics; `family=` takes its
 * name). `node` groups have one unlabelled row in every registry; `objects` groups have a row
 * per object, summed into one unlabelled sample by the aggregated registry; `keyed` groups
 * keep their labelled rows in every registry.
 */
interface Group<T> {
  table: string;
  kind: 'node' | 'objects' | 'keyed';
  rows: (ctx: Context) => Iterable<Row<T>>;
  /**
   * The rows' items alone, where there may be many (queues): summed without a label set made
   * for each (the default registry's aggregated metrics).
   */
  items?: (ctx: Context) => Iterable<T>;
  metrics: Array<Metric<T>>;
}

interface Context {
  source: PrometheusSource;
  node: NodeStats;
  /** detailed: the vhosts whose queues are listed; undefined = all. */
  vhosts: ReadonlySet<string> | undefined;
  /** The classic queues' head_message_timestamp for this scrape. */
  heads: HeadTimestamps;
}

const one = <T>(item: T): Array<Row<T>> => [{ labels: '', item }];

function* queues(ctx: Context): Iterable<Row<Queue>> {
  for (const vhost of ctx.source.vhosts.values()) {
    if (ctx.vhosts && !ctx.vhosts.has(vhost.name)) continue;
    for (const q of vhost.queues.values()) yield { labels: labels(['vhost', vhost.name], ['queue', q.name]), item: q };
  }
}

function* queueItems(ctx: Context): Iterable<Queue> {
  for (const vhost of ctx.source.vhosts.values()) {
    if (ctx.vhosts && !ctx.vhosts.has(vhost.name)) continue;
    yield* vhost.queues.values();
  }
}

/** Connections past the handshake (RabbitMQ registers a connection at connection.open). */
function* openConnections(source: PrometheusSource): Iterable<Connection> {
  for (const conn of source.connections) if (conn.vhost !== undefined && conn.state !== 'closed') yield conn;
}

function* openChannels(source: PrometheusSource): Iterable<Channel> {
  for (const conn of openConnections(source)) for (const ch of conn.channels.values()) if (ch.isOpen) yield ch;
}

const churn: Group<BrokerMetrics['churn']> = {
  table: 'connection_churn_metrics',
  kind: 'node',
  rows: (ctx) => one(ctx.source.metrics.churn),
  metrics: [
    { name: 'connections_opened_total', type: 'counter', help: 'Total number of connections opened', value: (c) => c.connectionsOpened },
    { name: 'connections_closed_total', type: 'counter', help: 'Total number of connections closed or terminated', value: (c) => c.connectionsClosed },
    { name: 'channels_opened_total', type: 'counter', help: 'Total number of channels opened', value: (c) => c.channelsOpened },
    { name: 'channels_closed_total', type: 'counter', help: 'Total number of channels closed', value: (c) => c.channelsClosed },
    { name: 'queues_declared_total', type: 'counter', help: 'Total number of queues declared', value: (c) => c.queuesDeclared },
    { name: 'queues_created_total', type: 'counter', help: 'Total number of queues created', value: (c) => c.queuesCreated },
    { name: 'queues_deleted_total', type: 'counter', help: 'Total number of queues deleted', value: (c) => c.queuesDeleted },
  ],
};

const nodeCoarse: Group<NodeStats> = {
  table: 'node_coarse_metrics',
  kind: 'node',
  rows: (ctx) => one(ctx.node),
  metrics: [
    { name: 'process_open_fds', type: 'gauge', help: 'Open file descriptors', value: (n) => n.openFds },
    { name: 'process_open_tcp_sockets', type: 'gauge', help: 'Open TCP sockets', value: (n) => n.openSockets },
    { name: 'process_resident_memory_bytes', type: 'gauge', help: 'Memory used in bytes', value: (n) => n.memoryUsed },
    { name: 'disk_space_available_bytes', type: 'gauge', help: 'Disk space available in bytes', value: (n) => n.diskFree },
  ],
};

const nodeMetrics: Group<Context> = {
  table: 'node_metrics',
  kind: 'node',
  rows: (ctx) => one(ctx),
  metrics: [
    { name: 'process_max_fds', type: 'gauge', help: 'Open file descriptors limit', value: (c) => c.node.maxFds },
    { name: 'process_max_tcp_sockets', type: 'gauge', help: 'Open TCP sockets limit', value: (c) => c.node.maxSockets },
    { name: 'resident_memory_limit_bytes', type: 'gauge', help: 'Memory high watermark in bytes', value: (c) => c.node.memoryLimit },
    { name: 'disk_space_available_limit_bytes', type: 'gauge', help: 'Free disk space low watermark in bytes', value: (c) => c.node.diskFreeLimit },
    { name: 'erlang_uptime_seconds', type: 'gauge', help: 'Node uptime', value: (c) => c.source.metrics.uptimeSeconds },
  ],
};

interface AuthRow {
  succeeded: number;
  failed: number;
}

const authAttempts: Group<AuthRow> = {
  table: 'auth_attempt_metrics',
  kind: 'keyed',
  rows: function* (ctx) {
    for (const [protocol, c] of ctx.source.metrics.authAttempts) yield { labels: labels(['protocol', protocol]), item: c };
  },
  metrics: [
    { name: 'auth_attempts_total', type: 'counter', help: 'Total number of authorization attempts', value: (c) => c.succeeded + c.failed },
    { name: 'auth_attempts_succeeded_total', type: 'counter', help: 'Total number of successful authentication attempts', value: (c) => c.succeeded },
    { name: 'auth_attempts_failed_total', type: 'counter', help: 'Total number of failed authentication attempts', value: (c) => c.failed },
  ],
};

/** Logins by source address are not tracked (RabbitMQ's default too): the families stay empty. */
const authAttemptsDetailed: Group<never> = {
  table: 'auth_attempt_detailed_metrics',
  kind: 'keyed',
  rows: () => [],
  metrics: [
    { name: 'auth_attempts_detailed_total', type: 'counter', help: 'Total number of authorization attempts with source info', value: () => 0 },
    { name: 'auth_attempts_detailed_succeeded_total', type: 'counter', help: 'Total number of successful authorization attempts with source info', value: () => 0 },
    { name: 'auth_attempts_detailed_failed_total', type: 'counter', help: 'Total number of failed authorization attempts with source info', value: () => 0 },
  ],
};

const queueCoarse: Group<Queue> = {
  table: 'queue_coarse_metrics',
  kind: 'objects',
  rows: queues,
  items: queueItems,
  metrics: [
    { name: 'queue_messages_ready', type: 'gauge', help: 'Messages ready to be delivered to consumers', value: (q) => q.messageCount },
    { name: 'queue_messages_unacked', type: 'gauge', help: 'Messages delivered to consumers but not yet acknowledged', value: (q) => q.unackedCount },
    { name: 'queue_messages', type: 'gauge', help: 'Sum of ready and unacknowledged messages - total queue depth', value: (q) => q.totalCount },
  ],
};

const QUEUE_CONSUMERS: Metric<Queue> = { name: 'queue_consumers', type: 'gauge', help: 'Consumers on a queue', value: (q) => q.consumerCount };

const queueConsumerCount: Group<Queue> = {
  table: 'queue_consumer_count',
  kind: 'objects',
  rows: queues,
  items: queueItems,
  metrics: [QUEUE_CONSUMERS],
};

/** A classic queue's value; no sample for the other types. */
const classic = (f: (q: Queue) => number) => (q: Queue): number | undefined => (q.settings.queueType === 'classic' ? f(q) : undefined);
/** A classic queue's value, 0 for a quorum queue, no sample for a stream. */
const classicOrZero = (f: (q: Queue) => number) => (q: Queue): number | undefined =>
  q.settings.queueType === 'classic' ? f(q) : q.settings.queueType === 'quorum' ? 0 : undefined;
/** A classic or quorum queue's value; no sample for a stream. */
const notStream = (f: (q: Queue) => number) => (q: Queue): number | undefined => (q.settings.queueType === 'stream' ? undefined : f(q));

/**
 * As 3.10.8 writes them (recorded with a classic, a quorum queue and a stream holding ready and
 * unacknowledged messages, persistent and not): unacknowledged messages are always in memory;
 * ready ones beyond a classic queue's window may be paged out; a quorum queue counts none in
 * memory and every one persistent (it keeps them all: Queue.keeps), and has no ready/unacked
 * RAM split nor paging; a stream has consumers only. Bytes are of bodies, as the management API
 * counts them (format.ts). Consumer capacity is Queue.consumerCapacity (0 without consumers).
 */
const queueMetrics: Group<Queue> = {
  table: 'queue_metrics',
  kind: 'objects',
  rows: queues,
  items: queueItems,
  metrics: [
    QUEUE_CONSUMERS,
    { name: 'queue_consumer_capacity', type: 'gauge', help: 'Consumer capacity', value: notStream((q) => q.consumerCapacity), perObjectOnly: true },
    { name: 'queue_consumer_utilisation', type: 'gauge', help: 'Same as consumer capacity', value: notStream((q) => q.consumerCapacity) },
    { name: 'queue_messages_ram', type: 'gauge', help: 'Ready and unacknowledged messages stored in memory', value: classicOrZero((q) => q.readyInMemory + q.unackedCount) },
    { name: 'queue_messages_ram_bytes', type: 'gauge', help: 'Size of ready and unacknowledged messages stored in memory', value: classicOrZero((q) => q.readyBytesInMemory + q.unackedBytes) },
    { name: 'queue_messages_ready_ram', type: 'gauge', help: 'Ready messages stored in memory', value: classic((q) => q.readyInMemory) },
    { name: 'queue_messages_unacked_ram', type: 'gauge', help: 'Unacknowledged messages stored in memory', value: classic((q) => q.unackedCount) },
    { name: 'queue_messages_persistent', type: 'gauge', help: 'Persistent messages', value: notStream((q) => q.persistentCount) },
    { name: 'queue_messages_persistent_bytes', type: 'gauge', help: 'Size in bytes of persistent messages', value: notStream((q) => q.persistentBytes), perObjectOnly: true },
    { name: 'queue_messages_bytes', type: 'gauge', help: 'Size in bytes of ready and unacknowledged messages', value: notStream((q) => q.totalBytes) },
    { name: 'queue_messages_ready_bytes', type: 'gauge', help: 'Size in bytes of ready messages', value: notStream((q) => q.readyBytes) },
    { name: 'queue_messages_unacked_bytes', type: 'gauge', help: 'Size in bytes of all unacknowledged messages', value: notStream((q) => q.unackedBytes) },
    { name: 'queue_messages_paged_out', type: 'gauge', help: 'Messages paged out to disk', value: classic((q) => q.messageCount - q.readyInMemory) },
    { name: 'queue_messages_paged_out_bytes', type: 'gauge', help: 'Size in bytes of messages paged out to disk', value: classic((q) => q.readyBytes - q.readyBytesInMemory) },
    // NaN without one, as 3.10.8 writes a classic queue's '' (no sample for the other types).
    {
      name: 'queue_head_message_timestamp', type: 'gauge', help: 'Timestamp of the first message in the queue, if any',
      value: (q, ctx) => (q.settings.queueType === 'classic' ? (ctx.heads.of(q) ?? Number.NaN) : undefined), perObjectOnly: true,
    },
  ],
};

function* channels(ctx: Context): Iterable<Row<Channel>> {
  for (const ch of openChannels(ctx.source)) yield { labels: labels(['channel', ch.counters.pid]), item: ch };
}

const channelMetrics: Group<Channel> = {
  table: 'channel_metrics',
  kind: 'objects',
  rows: channels,
  metrics: [
    { name: 'channel_consumers', type: 'gauge', help: 'Consumers on a channel', value: (ch) => ch.consumers.size },
    { name: 'channel_messages_unacked', type: 'gauge', help: 'Delivered but not yet acknowledged messages', value: (ch) => ch.unacked.size },
    { name: 'channel_messages_unconfirmed', type: 'gauge', help: 'Published but not yet confirmed messages', value: (ch) => ch.publisher.unconfirmed },
    { name: 'channel_messages_uncommitted', type: 'gauge', help: 'Messages received in a transaction but not yet committed', value: (ch) => ch.publisher.uncommitted },
    { name: 'channel_acks_uncommitted', type: 'gauge', help: 'Message acknowledgements in a transaction not yet committed', value: (ch) => ch.acksUncommitted },
    { name: 'consumer_prefetch', type: 'gauge', help: 'Limit of unacknowledged messages for each consumer', value: (ch) => ch.consumerPrefetch },
    { name: 'channel_prefetch', type: 'gauge', help: 'Total limit of unacknowledged messages for all consumers on a channel', value: (ch) => ch.globalPrefetch },
  ],
};

const channelExchange: Group<ChannelExchangeCounters> = {
  table: 'channel_exchange_metrics',
  kind: 'objects',
  rows: function* (ctx) {
    for (const ch of openChannels(ctx.source)) {
      for (const c of ch.counters.exchanges()) {
        yield { labels: labels(['channel', ch.counters.pid], ['vhost', c.exchange.vhost], ['exchange', c.exchange.name]), item: c };
      }
    }
  },
  metrics: [
    { name: 'channel_messages_published_total', type: 'counter', help: 'Total number of messages published into an exchange on a channel', value: (c) => c.published },
    { name: 'channel_messages_confirmed_total', type: 'counter', help: 'Total number of messages published into an exchange and confirmed on the channel', value: (c) => c.confirmed },
    {
      name: 'channel_messages_unroutable_returned_total', type: 'counter',
      help: 'Total number of messages published as mandatory into an exchange and returned to the publisher as unroutable', value: (c) => c.unroutableReturned,
    },
    {
      name: 'channel_messages_unroutable_dropped_total', type: 'counter',
      help: 'Total number of messages published as non-mandatory into an exchange and dropped as unroutable', value: (c) => c.unroutableDropped,
    },
  ],
};

const channelQueue: Group<ChannelQueueCounters> = {
  table: 'channel_queue_metrics',
  kind: 'objects',
  rows: function* (ctx) {
    for (const ch of openChannels(ctx.source)) {
      for (const c of ch.counters.queues()) {
        yield { labels: labels(['channel', ch.counters.pid], ['vhost', ch.conn.vhost!.name], ['queue', c.queue.name]), item: c };
      }
    }
  },
  metrics: [
    { name: 'channel_get_ack_total', type: 'counter', help: 'Total number of messages fetched with basic.get in manual acknowledgement mode', value: (c) => c.get },
    { name: 'channel_get_total', type: 'counter', help: 'Total number of messages fetched with basic.get in automatic acknowledgement mode', value: (c) => c.getNoAck },
    { name: 'channel_messages_delivered_ack_total', type: 'counter', help: 'Total number of messages delivered to consumers in manual acknowledgement mode', value: (c) => c.deliver },
    { name: 'channel_messages_delivered_total', type: 'counter', help: 'Total number of messages delivered to consumers in automatic acknowledgement mode', value: (c) => c.deliverNoAck },
    { name: 'channel_messages_redelivered_total', type: 'counter', help: 'Total number of messages redelivered to consumers', value: (c) => c.redeliver },
    { name: 'channel_messages_acked_total', type: 'counter', help: 'Total number of messages acknowledged by consumers', value: (c) => c.ack },
    { name: 'channel_get_empty_total', type: 'counter', help: 'Total number of times basic.get operations fetched no message', value: (c) => c.getEmpty },
  ],
};

/**
 * RabbitMQ labels connection rows with `channel` (the connection process's pid). A direct
 * connection (a shovel's `amqp://`) has no reader process and so no rows (recorded from 3.10.8);
 * it counts in rabbitmq_connections and its channels have theirs.
 */
function* connections(ctx: Context): Iterable<Row<Connection>> {
  for (const conn of openConnections(ctx.source)) if (!conn.direct) yield { labels: labels(['channel', conn.counters.pid]), item: conn };
}

const connectionCoarse: Group<Connection> = {
  table: 'connection_coarse_metrics',
  kind: 'objects',
  rows: connections,
  metrics: [
    { name: 'connection_incoming_bytes_total', type: 'counter', help: 'Total number of bytes received on a connection', value: (c) => c.counters.recvOct },
    { name: 'connection_outgoing_bytes_total', type: 'counter', help: 'Total number of bytes sent on a connection', value: (c) => c.writer.bytesWritten },
  ],
};

const connectionMetrics: Group<Connection> = {
  table: 'connection_metrics',
  kind: 'objects',
  rows: connections,
  metrics: [
    { name: 'connection_incoming_packets_total', type: 'counter', help: 'Total number of packets received on a connection', value: (c) => c.counters.recvCnt },
    { name: 'connection_channels', type: 'gauge', help: 'Channels on a connection', value: (c) => c.channels.size },
  ],
};

interface PublishedRow {
  published: number;
}

const channelQueueExchange: Group<PublishedRow> = {
  table: 'channel_queue_exchange_metrics',
  kind: 'objects',
  rows: function* (ctx) {
    for (const ch of openChannels(ctx.source)) {
      for (const c of ch.counters.exchanges()) {
        for (const [q, published] of c.queues()) {
          yield {
            labels: labels(['channel', ch.counters.pid], ['queue_vhost', c.exchange.vhost], ['queue', q.name], ['exchange_vhost', c.exchange.vhost], ['exchange', c.exchange.name]),
            item: { published },
          };
        }
      }
    }
  },
  metrics: [{ name: 'queue_messages_published_total', type: 'counter', help: 'Total number of messages published to queues', value: (r) => r.published }],
};

/** The core groups in rabbitmq_prometheus's order. */
const CORE_GROUPS: Array<Group<never>> = [
  churn, nodeCoarse, nodeMetrics, authAttempts, authAttemptsDetailed, queueCoarse, queueConsumerCount, queueMetrics,
  channelMetrics, channelExchange, channelQueue, connectionCoarse, connectionMetrics, channelQueueExchange,
] as unknown as Array<Group<never>>;

/** Metric groups `/metrics/detailed?family=` takes (cluster-wide ones included). */
export const DETAILED_FAMILIES: readonly string[] = [...CORE_GROUPS.map((g) => g.table), 'vhost_status', 'exchange_bindings', 'exchange_names'];

/**
 * About how many samples (or objects summed) are written between two pauses of collectParts:
 * a few milliseconds, so that a scrape of a broker with 100,000 queues (two million samples
 * per object) does not hold the event loop for seconds.
 */
export const SAMPLES_PER_PART = 10_000;

/**
 * Writes a group into out, and yields (a pause: the caller may take the text and go on in a
 * later turn) every SAMPLES_PER_PART samples or objects.
 */
function* writeGroup<T>(out: Exposition, group: Group<T>, ctx: Context, prefix: string, perObject: boolean): Generator<void> {
  const items = group.items;
  if (!perObject && group.kind === 'objects' && items !== undefined) {
    // One pass over the items for all the group's sums.
    const metrics = group.metrics.filter((m) => !m.perObjectOnly);
    const sums = metrics.map(() => 0);
    let n = 0;
    for (const item of items(ctx)) {
      for (let i = 0; i < metrics.length; i++) sums[i]! += metrics[i]!.value(item, ctx) ?? 0;
      if (++n % SAMPLES_PER_PART === 0) yield;
    }
    metrics.forEach((m, i) => out.family(prefix + m.name, m.type, m.help, [['', sums[i]!]]));
    return;
  }
  const rows: Array<Row<T>> = [];
  for (const row of group.rows(ctx)) if (rows.push(row) % SAMPLES_PER_PART === 0) yield;
  for (const m of group.metrics) {
    const name = prefix + m.name;
    if (perObject || group.kind !== 'objects') {
      out.head(name, m.type, m.help);
      for (const row of rows) {
        const v = m.value(row.item, ctx);
        if (v !== undefined) out.sample(name, row.labels, v);
        if (out.pending >= SAMPLES_PER_PART) yield;
      }
    } else {
      let sum = 0;
      for (const row of rows) sum += m.value(row.item, ctx) ?? 0;
      out.family(name, m.type, m.help, [['', sum]]);
    }
  }
}

/**
 * The metrics of registry as Prometheus text, in parts: the text written between two pauses
 * (writeGroup; perhaps none, while objects are summed), so that the caller can go on with the
 * next part in a later turn. A broker of a few thousand objects gives one part.
 */
export function* collectParts(source: PrometheusSource, registry: Registry, options: CollectOptions = {}): Generator<string> {
  const out = new Exposition();
  for (const _ of write(out, source, registry, options)) yield out.take();
  yield out.take();
}

function* write(out: Exposition, source: PrometheusSource, registry: Registry, options: CollectOptions): Generator<void> {
  const node = source.nodeStats();
  if (registry === 'detailed') {
    const families = options.families ?? new Set<string>();
    const ctx: Context = { source, node, vhosts: options.vhosts, heads: new HeadTimestamps(source.connections) };
    for (const group of CORE_GROUPS) {
      if (!families.has(group.table)) continue;
      // queue_metrics includes the consumer count: asked for both, it is written once.
      if (group.table === 'queue_consumer_count' && families.has('queue_metrics')) continue;
      yield* writeGroup(out, group, ctx, 'rabbitmq_detailed_', true);
    }
    writeClusterFamilies(out, source, families);
    writeIdentity(out, source);
    return;
  }
  const perObject = registry === 'per-object';
  const ctx: Context = { source, node, vhosts: undefined, heads: new HeadTimestamps(source.connections) };
  if (!perObject) {
    out.family('process_start_time_seconds', 'gauge', 'Start time of the process since unix epoch in seconds.', [['', PROCESS_START_SECONDS]]);
    writeAlarms(out, node);
  }
  for (const group of CORE_GROUPS) {
    if (group.table === 'queue_consumer_count') continue; // queue_metrics has it
    if (group.table === 'auth_attempt_detailed_metrics' && !perObject) continue;
    yield* writeGroup(out, group, ctx, 'rabbitmq_', perObject);
  }
  writeTotals(out, source);
  writeIdentity(out, source);
  writeGlobal(out, source);
}

/** When this process started, in seconds since the epoch (whole seconds, as RabbitMQ's). */
const PROCESS_START_SECONDS = Math.round(Date.now() / 1000 - process.uptime());

function writeAlarms(out: Exposition, node: NodeStats): void {
  // Warren has no file descriptor alarm: sockets over the limit are refused instead.
  out.family('rabbitmq_alarms_file_descriptor_limit', 'untyped', 'is 1 if file descriptor limit alarm is in effect', [['', 0]]);
  out.family('rabbitmq_alarms_free_disk_space_watermark', 'untyped', 'is 1 if free disk space watermark alarm is in effect', [['', node.diskAlarm ? 1 : 0]]);
  out.family('rabbitmq_alarms_memory_used_watermark', 'untyped', 'is 1 if VM memory watermark alarm is in effect', [['', node.memoryAlarm ? 1 : 0]]);
}

function writeTotals(out: Exposition, source: PrometheusSource): void {
  let connectionCount = 0;
  for (const _ of openConnections(source)) connectionCount++;
  let channelCount = 0;
  let consumers = 0;
  for (const ch of openChannels(source)) {
    channelCount++;
    consumers += ch.consumers.size;
  }
  let queueCount = 0;
  for (const v of source.vhosts.values()) queueCount += v.queues.size;
  out.family('rabbitmq_connections', 'gauge', 'Connections currently open', [['', connectionCount]]);
  out.family('rabbitmq_channels', 'gauge', 'Channels currently open', [['', channelCount]]);
  out.family('rabbitmq_consumers', 'gauge', 'Consumers currently connected', [['', consumers]]);
  out.family('rabbitmq_queues', 'gauge', 'Queues available', [['', queueCount]]);
}

function writeIdentity(out: Exposition, source: PrometheusSource): void {
  const { node, cluster, clusterPermanentId } = source.identity;
  out.family('rabbitmq_build_info', 'untyped', 'RabbitMQ & Erlang/OTP version info', [[
    labels(
      ['rabbitmq_version', source.version],
      ['prometheus_plugin_version', source.version],
      // No Erlang client library: the text is written by Warren; no Erlang either: Node's version.
      ['prometheus_client_version', 'warren'],
      ['erlang_version', `Node.js ${process.version}`],
    ),
    1,
  ]]);
  out.family('rabbitmq_identity_info', 'untyped', 'RabbitMQ node & cluster identity info', [[
    labels(['rabbitmq_node', node], ['rabbitmq_cluster', cluster], ['rabbitmq_cluster_permanent_id', clusterPermanentId]),
    1,
  ]]);
}

const PROTOCOL = labels(['protocol', 'amqp091']);
const CLASSIC = 'rabbit_classic_queue';
const QUORUM = 'rabbit_quorum_queue';

/** rabbit_global_counters: protocol amqp091, by queue type where RabbitMQ splits them. */
function writeGlobal(out: Exposition, source: PrometheusSource): void {
  const g = source.metrics.global();
  let consumers = 0;
  let publishers = 0;
  for (const ch of openChannels(source)) {
    consumers += ch.consumers.size;
    if (ch.counters.publisher) publishers++;
  }
  const byType = (value: (d: typeof g.classic) => number): Sample[] => [
    [labels(['protocol', 'amqp091'], ['queue_type', CLASSIC]), value(g.classic)],
    [labels(['protocol', 'amqp091'], ['queue_type', QUORUM]), value(g.quorum)],
    [labels(['protocol', 'amqp091'], ['queue_type', 'rabbit_stream_queue']), value(g.stream)],
  ];
  // RabbitMQ's rows of each dead-letter counter: the strategies each queue type can have.
  const deadLettered = (reason: DeadLetterReasonName, rows: Array<[string, DeadLetterStrategyName]>): Sample[] =>
    rows.map(([type, strategy]) => [
      labels(['queue_type', type], ['dead_letter_strategy', strategy]),
      g.deadLettered.get(type === QUORUM, strategy, reason),
    ]);
  const classicRows: Array<[string, DeadLetterStrategyName]> = [[CLASSIC, 'at_most_once'], [CLASSIC, 'disabled']];
  const quorumRows: Array<[string, DeadLetterStrategyName]> = [[QUORUM, 'at_least_once'], [QUORUM, 'at_most_once'], [QUORUM, 'disabled']];
  const f = (name: string, type: MetricType, help: string, samples: Sample[]) => out.family(`rabbitmq_global_${name}`, type, help, samples);
  f('consumers', 'gauge', 'Current number of consumers', [[PROTOCOL, consumers]]);
  f('messages_acknowledged_total', 'counter', 'Total number of messages acknowledged by consumers', byType((d) => d.ack));
  f('messages_confirmed_total', 'counter', 'Total number of messages confirmed to publishers', [[PROTOCOL, g.confirmed]]);
  f('messages_dead_lettered_confirmed_total', 'counter', 'Total number of messages dead-lettered and confirmed by target queues',
    [[labels(['queue_type', QUORUM], ['dead_letter_strategy', 'at_least_once']), g.deadLettered.confirmed]]);
  f('messages_dead_lettered_delivery_limit_total', 'counter', 'Total number of messages dead-lettered due to delivery-limit exceeded',
    deadLettered('delivery_limit', quorumRows));
  f('messages_dead_lettered_expired_total', 'counter', 'Total number of messages dead-lettered due to message TTL exceeded',
    deadLettered('expired', [...classicRows, ...quorumRows]));
  f('messages_dead_lettered_maxlen_total', 'counter', 'Total number of messages dead-lettered due to overflow drop-head or reject-publish-dlx',
    deadLettered('maxlen', [...classicRows, [QUORUM, 'at_most_once'], [QUORUM, 'disabled']]));
  f('messages_dead_lettered_rejected_total', 'counter', 'Total number of messages dead-lettered due to basic.reject or basic.nack',
    deadLettered('rejected', [...classicRows, ...quorumRows]));
  f('messages_delivered_consume_auto_ack_total', 'counter', 'Total number of messages delivered to consumers using basic.consume with automatic acknowledgment',
    byType((d) => d.deliverNoAck));
  f('messages_delivered_consume_manual_ack_total', 'counter', 'Total number of messages delivered to consumers using basic.consume with manual acknowledgment',
    byType((d) => d.deliver));
  f('messages_delivered_get_auto_ack_total', 'counter', 'Total number of messages delivered to consumers using basic.get with automatic acknowledgment',
    byType((d) => d.getNoAck));
  f('messages_delivered_get_manual_ack_total', 'counter', 'Total number of messages delivered to consumers using basic.get with manual acknowledgment',
    byType((d) => d.get));
  f('messages_delivered_total', 'counter', 'Total number of messages delivered to consumers', byType((d) => d.deliver + d.deliverNoAck + d.get + d.getNoAck));
  f('messages_get_empty_total', 'counter', 'Total number of times basic.get operations fetched no message', byType((d) => d.getEmpty));
  f('messages_received_confirm_total', 'counter', 'Total number of messages received from publishers expecting confirmations', [[PROTOCOL, g.receivedConfirm]]);
  f('messages_received_total', 'counter', 'Total number of messages received from publishers', [[PROTOCOL, g.received]]);
  f('messages_redelivered_total', 'counter', 'Total number of messages redelivered to consumers', byType((d) => d.redeliver));
  f('messages_routed_total', 'counter', 'Total number of messages routed to queues or streams', [[PROTOCOL, g.routed]]);
  f('messages_unroutable_dropped_total', 'counter', 'Total number of messages published as non-mandatory into an exchange and dropped as unroutable',
    [[PROTOCOL, g.unroutableDropped]]);
  f('messages_unroutable_returned_total', 'counter', 'Total number of messages published as mandatory into an exchange and returned to the publisher as unroutable',
    [[PROTOCOL, g.unroutableReturned]]);
  // Channels open that have published: RabbitMQ 3.10 means the same but never counts a
  // publishing channel's close (maybe_decrease_global_publishers tests the wrong mode).
  f('publishers', 'gauge', 'Current number of publishers', [[PROTOCOL, publishers]]);
}

/** The cluster-wide groups of /metrics/detailed (prefix rabbitmq_cluster_). */
function writeClusterFamilies(out: Exposition, source: PrometheusSource, families: ReadonlySet<string>): void {
  if (families.has('vhost_status')) {
    const samples: Sample[] = [...source.vhosts.keys()].map((name) => [labels(['vhost', name]), 1]);
    out.family('rabbitmq_cluster_vhost_status', 'gauge', 'Whether a given vhost is running', samples);
  }
  // The default exchange and internal ones (amq.rabbitmq.trace) are not listed.
  const listed = () => [...source.vhosts.values()].flatMap((v) => [...v.exchanges.values()].filter((x) => x.name !== '' && !x.internal).map((x) => ({ v, x })));
  if (families.has('exchange_bindings')) {
    out.family('rabbitmq_cluster_exchange_bindings', 'gauge', 'Number of bindings for an exchange. This value is cluster-wide.',
      listed().map(({ v, x }) => [labels(['vhost', v.name], ['exchange', x.name], ['type', x.type.name]), v.bindingsFrom(x).length]));
  }
  if (families.has('exchange_names')) {
    out.family('rabbitmq_cluster_exchange_name', 'gauge',
      'Enumerates exchanges without any additional info. This value is cluster-wide. A cheaper alternative to `exchange_bindings`',
      listed().map(({ v, x }) => [labels(['vhost', v.name], ['exchange', x.name], ['type', x.type.name]), 1]));
  }
}
