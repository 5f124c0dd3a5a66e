import type { Clock } from '../clock.js';
import type { LaterTurns } from '../later-turns.js';
import type { Channel } from '../connection/channel.js';
import type { Connection } from '../connection/connection.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import { ChurnCounters, DeadLetterCounters, DeliveryCounters, QueueCounters, VHostCounters } from './counters.js';
import { RateSampler, type Snapshot } from './rate-sampler.js';

/** What the metrics read of the broker. */
export interface MetricsHost {
  readonly clock: Clock;
  /** Where a rate sample of many objects goes on (RateSampler). */
  readonly later: LaterTurns;
  readonly vhosts: ReadonlyMap<string, VHost>;
  readonly connections: ReadonlySet<Connection>;
}

/**
 * Message counters in the management API's names (overview, vhost and channel message_stats).
 * RabbitMQ's Prometheus names: publish = received, confirm = confirmed, deliver =
 * delivered_consume_manual_ack, deliver_no_ack = delivered_consume_auto_ack, get =
 * delivered_get_manual_ack, get_no_ack = delivered_get_auto_ack, deliver_get = delivered,
 * redeliver = redelivered, ack = acknowledged, get_empty = get_empty, drop_unroutable =
 * unroutable_dropped, return_unroutable = unroutable_returned.
 */
export type MessageStats = {
  publish: number;
  confirm: number;
  return_unroutable: number;
  drop_unroutable: number;
  deliver: number;
  deliver_no_ack: number;
  get: number;
  get_no_ack: number;
  get_empty: number;
  deliver_get: number;
  redeliver: number;
  ack: number;
};

/** A queue's message_stats: messages published to it and what it handed out. */
export type QueueMessageStats = {
  publish: number;
  deliver: number;
  deliver_no_ack: number;
  get: number;
  get_no_ack: number;
  get_empty: number;
  deliver_get: number;
  redeliver: number;
  ack: number;
};

/** An exchange's message_stats. */
export type ExchangeMessageStats = {
  publish_in: number;
  publish_out: number;
};

/** The management overview's churn_rates counts. */
export type ChurnStats = {
  connection_created: number;
  connection_closed: number;
  channel_created: number;
  channel_closed: number;
  queue_declared: number;
  queue_created: number;
  queue_deleted: number;
};

/** Ready and unacknowledged messages (the management API's queue_totals). */
export interface QueueTotals {
  messages: number;
  messages_ready: number;
  messages_unacknowledged: number;
}

/** The broker-wide counters behind rabbitmq_global_* (protocol amqp091). */
export interface GlobalTotals {
  received: number;
  receivedConfirm: number;
  /** Messages routed to queues, counted once per queue reached. */
  routed: number;
  confirmed: number;
  unroutableDropped: number;
  unroutableReturned: number;
  /** Deliveries, gets, acknowledgements of classic queues. */
  classic: DeliveryCounters;
  quorum: DeliveryCounters;
  stream: DeliveryCounters;
  deadLettered: DeadLetterCounters;
}

/**
 * The broker's metrics: churn and authentication counters, the counters of deleted vhosts, the
 * identifiers per-object metrics label connections and channels with, and the read API the
 * management API and the Prometheus endpoint share (sums are taken when read). See
 * src/metrics/README.md.
 */
export class BrokerMetrics {
  readonly churn = new ChurnCounters();
  /** Login attempts by protocol (amqp091, http), in the order protocols were first seen. */
  readonly authAttempts = new Map<string, { succeeded: number; failed: number }>();
  /** The counters of vhosts deleted since the broker started. */
  private readonly retired = new VHostCounters();
  private pids = 1000;
  /** Rates for `*_details`; started by the first rates() call (or start()). */
  readonly sampler: RateSampler;
  /** When the broker started (clock.monotonic()). */
  readonly startedAt: number;

  constructor(private readonly host: MetricsHost) {
    this.startedAt = host.clock.monotonic();
    this.sampler = new RateSampler(host.clock, () => this.snapshot(), undefined, (fn) => host.later.schedule(fn));
  }

  /** A new pid-shaped identifier (`<0.N.0>`) for a connection or channel in per-object metrics. */
  nextPid(): string {
    return `<0.${this.pids++}.0>`;
  }

  /** Forgets the login attempts counted so far (DELETE /api/auth/attempts/{node}). */
  resetAuthAttempts(): void {
    this.authAttempts.clear();
  }

  /** A login attempt over protocol (amqp091 for AMQP, http for the management API). */
  authAttempt(protocol: string, succeeded: boolean): void {
    let c = this.authAttempts.get(protocol);
    if (!c) this.authAttempts.set(protocol, (c = { succeeded: 0, failed: 0 }));
    if (succeeded) c.succeeded++;
    else c.failed++;
  }

  /**
   * A vhost is being deleted: its counters, and those of its queues not deleted one by one
   * before, stay in the broker's totals. Call it once, when the vhost goes.
   */
  vhostDeleted(vhost: VHost): void {
    this.retired.add(vhost.counters);
    for (const q of vhost.queues.values()) {
      if (!q.deleted) this.retired.retiredOf(q).add(q.counters);
    }
  }

  /** Seconds since the broker started (RabbitMQ's uptime), on the broker's clock. */
  get uptimeSeconds(): number {
    return (this.host.clock.monotonic() - this.startedAt) / 1000;
  }

  // ---- totals -------------------------------------------------------------------------------

  /** Broker-wide message counters (rabbitmq_global_messages_*). */
  global(): GlobalTotals {
    const v = new VHostCounters();
    v.add(this.retired);
    const classic = new QueueCounters();
    const quorum = new QueueCounters();
    const stream = new QueueCounters();
    classic.add(this.retired.retiredClassic);
    quorum.add(this.retired.retiredQuorum);
    stream.add(this.retired.retiredStream);
    for (const vhost of this.host.vhosts.values()) {
      v.add(vhost.counters);
      classic.add(vhost.counters.retiredClassic);
      quorum.add(vhost.counters.retiredQuorum);
      stream.add(vhost.counters.retiredStream);
      for (const q of vhost.queues.values()) {
        const type = q.settings.queueType;
        (type === 'quorum' ? quorum : type === 'stream' ? stream : classic).add(q.counters);
      }
    }
    return {
      received: v.received,
      receivedConfirm: v.receivedConfirm,
      routed: classic.published + quorum.published + stream.published,
      confirmed: v.confirmed,
      unroutableDropped: v.unroutableDropped,
      unroutableReturned: v.unroutableReturned,
      classic,
      quorum,
      stream,
      deadLettered: v.deadLettered,
    };
  }

  // ---- the management API's message_stats ---------------------------------------------------

  /**
   * overview.message_stats: the sum of the vhosts' message_stats (deleted queues' counts stay in
   * their vhost's; a deleted vhost's leave the overview, as in RabbitMQ 3.10.8, though they stay
   * in global()).
   */
  overview(): MessageStats {
    const v = new VHostCounters();
    const d = new DeliveryCounters();
    for (const vhost of this.host.vhosts.values()) {
      v.add(vhost.counters);
      d.add(this.deliveries(vhost));
    }
    return vhostMessageStats(v, d);
  }

  /** A vhost's message_stats. */
  vhost(vhost: VHost): MessageStats {
    return vhostMessageStats(vhost.counters, this.deliveries(vhost));
  }

  /** What a vhost's queues handed out, its deleted queues' included. */
  private deliveries(vhost: VHost): DeliveryCounters {
    const d = retiredDeliveries(vhost.counters);
    for (const q of vhost.queues.values()) d.add(q.counters);
    return d;
  }

  /** A queue's message_stats. */
  queue(queue: Queue): QueueMessageStats {
    const c = queue.counters;
    return {
      publish: c.published,
      deliver: c.deliver,
      deliver_no_ack: c.deliverNoAck,
      get: c.get,
      get_no_ack: c.getNoAck,
      get_empty: c.getEmpty,
      deliver_get: c.deliver + c.deliverNoAck + c.get + c.getNoAck,
      redeliver: c.redeliver,
      ack: c.ack,
    };
  }

  /** An exchange's message_stats. */
  exchange(exchange: Exchange): ExchangeMessageStats {
    return { publish_in: exchange.counters.publishIn, publish_out: exchange.counters.publishOut };
  }

  /**
   * A channel's message_stats: what it published, and what it was given, over all exchanges
   * and queues (deleted ones included, as RabbitMQ keeps a channel's totals).
   */
  channel(channel: Channel): MessageStats {
    const p = channel.counters.publishTotals();
    return messageStats(p.published, p.confirmed, p.unroutableReturned, p.unroutableDropped, channel.counters.deliveryTotals());
  }

  /** overview.churn_rates counts. */
  churnStats(): ChurnStats {
    const c = this.churn;
    return {
      connection_created: c.connectionsOpened,
      connection_closed: c.connectionsClosed,
      channel_created: c.channelsOpened,
      channel_closed: c.channelsClosed,
      queue_declared: c.queuesDeclared,
      queue_created: c.queuesCreated,
      queue_deleted: c.queuesDeleted,
    };
  }

  /** Messages ready and unacknowledged in the vhosts given (one, the overview's visible ones), or in all. */
  queueTotals(vhosts: Iterable<VHost> = this.host.vhosts.values()): QueueTotals {
    let ready = 0;
    let unacked = 0;
    let messages = 0;
    for (const v of vhosts) {
      for (const q of v.queues.values()) {
        ready += q.messageCount;
        unacked += q.unackedCount;
        messages += q.totalCount;
      }
    }
    return { messages, messages_ready: ready, messages_unacknowledged: unacked };
  }

  // ---- rates ---------------------------------------------------------------------------------

  /**
   * Per-second rates over the last 5 s of the numbers of one object, keyed by the names above:
   * key is this BrokerMetrics (overview message_stats and queue_totals), this.churn
   * (churn_rates), a VHost (message_stats and its queue totals), a Queue (message_stats,
   * messages, messages_ready, messages_unacknowledged), an Exchange, a Channel, or a Connection
   * (recv_oct, send_oct, recv_cnt). The first call starts sampling: rates are 0 until two
   * samples have been taken.
   */
  rates(key: object): Snapshot {
    this.sampler.start();
    return this.sampler.rates(key);
  }

  /**
   * Every number the sampler tracks, by object (made as the sampler takes them, SAMPLE_CHUNK a
   * turn). A vhost's totals (as vhost() and queueTotals([vhost]) give them) are summed as its
   * queues go by and yielded after them, and the overview's (overview(), queueTotals()) after
   * every vhost: summed up front, four passes over every queue made the first chunk of each
   * sample hold the event loop for about 50 ms every 5 s at 100,000 queues. The objects the
   * stats methods make are yielded as they are (their types are aliases, not interfaces, so
   * they are Snapshots): copying each into a new object with a spread made a sample of 100,000
   * queues cost 0.7 s of CPU.
   */
  private *snapshot(): Generator<[object, Snapshot]> {
    yield [this.churn, this.churnStats()];
    const all = new VHostCounters();
    const allDelivered = new DeliveryCounters();
    let allReady = 0;
    let allUnacked = 0;
    for (const vhost of this.host.vhosts.values()) {
      const c = vhost.counters;
      const delivered = retiredDeliveries(c);
      let ready = 0;
      let unacked = 0;
      let messages = 0;
      for (const q of vhost.queues.values()) {
        delivered.add(q.counters);
        const r = q.messageCount;
        const u = q.unackedCount;
        const m = q.totalCount;
        ready += r;
        unacked += u;
        messages += m;
        // The queue's own object with its depth added (a spread into a new one was 20 times slower).
        const numbers: Snapshot = this.queue(q);
        numbers['messages'] = m;
        numbers['messages_ready'] = r;
        numbers['messages_unacknowledged'] = u;
        yield [q, numbers];
      }
      for (const x of vhost.exchanges.values()) yield [x, this.exchange(x)];
      yield [vhost, { ...vhostMessageStats(c, delivered), messages, messages_ready: ready, messages_unacknowledged: unacked }];
      all.add(c);
      allDelivered.add(delivered);
      allReady += ready;
      allUnacked += unacked;
    }
    yield [this, { ...vhostMessageStats(all, allDelivered), messages: allReady + allUnacked, messages_ready: allReady, messages_unacknowledged: allUnacked }];
    for (const conn of this.host.connections) {
      yield [conn, { recv_oct: conn.counters.recvOct, send_oct: conn.writer.bytesWritten, recv_cnt: conn.counters.recvCnt }];
      for (const ch of conn.channels.values()) yield [ch, this.channel(ch)];
    }
  }
}

/** What a vhost's deleted queues handed out (kept in its counters). */
function retiredDeliveries(c: VHostCounters): DeliveryCounters {
  const d = new DeliveryCounters();
  d.add(c.retiredClassic);
  d.add(c.retiredQuorum);
  d.add(c.retiredStream);
  return d;
}

/** message_stats of a vhost (or of several, summed): what it took in, and what its queues handed out. */
function vhostMessageStats(c: VHostCounters, delivered: DeliveryCounters): MessageStats {
  return messageStats(c.received, c.confirmed, c.unroutableReturned, c.unroutableDropped, delivered);
}

function messageStats(publish: number, confirm: number, returned: number, dropped: number, d: DeliveryCounters): MessageStats {
  return {
    publish,
    confirm,
    return_unroutable: returned,
    drop_unroutable: dropped,
    deliver: d.deliver,
    deliver_no_ack: d.deliverNoAck,
    get: d.get,
    get_no_ack: d.getNoAck,
    get_empty: d.getEmpty,
    deliver_get: d.deliver + d.deliverNoAck + d.get + d.getNoAck,
    redeliver: d.redeliver,
    ack: d.ack,
  };
}
