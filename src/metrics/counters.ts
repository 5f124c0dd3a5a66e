import type { Exchange } from '../vhost/exchange.js';
import type { Queue } from '../queue/queue.js';

/**
 * The message counters RabbitMQ keeps, as plain number fields on objects the hot path already
 * holds (a queue, an exchange, a channel, a vhost): counting a publish or a delivery is a few
 * increments, never a lookup in a table keyed by name, never an allocation. Sums (a vhost's,
 * the whole broker's) are taken when they are read (BrokerMetrics), not kept up to date.
 *
 * Field names say what is counted; README.md maps them to RabbitMQ's Prometheus and management
 * names.
 */

/**
 * What queues hand out: deliveries to consumers and basic.get, with and without manual
 * acknowledgement, redeliveries, acknowledgements and empty gets. Kept per queue (the
 * management API's queue message_stats) and per channel and queue (channel_queue_metrics).
 */
export class DeliveryCounters {
  /** basic.deliver to a consumer that acknowledges (management: deliver). */
  deliver = 0;
  /** basic.deliver to a no-ack consumer (deliver_no_ack). */
  deliverNoAck = 0;
  /** basic.get-ok, manual acknowledgement (get). */
  get = 0;
  /** basic.get-ok, no-ack (get_no_ack). */
  getNoAck = 0;
  /** basic.get-empty (get_empty). */
  getEmpty = 0;
  /** Deliveries and get-oks with redelivered=true (redeliver). */
  redeliver = 0;
  /** Messages acknowledged by basic.ack, at tx.commit inside a transaction (ack). */
  ack = 0;

  /** Adds other's counts to these (a deleted queue's counts stay in its vhost's totals). */
  add(other: DeliveryCounters): void {
    this.deliver += other.deliver;
    this.deliverNoAck += other.deliverNoAck;
    this.get += other.get;
    this.getNoAck += other.getNoAck;
    this.getEmpty += other.getEmpty;
    this.redeliver += other.redeliver;
    this.ack += other.ack;
  }
}

/** One queue's counters (the management API's queue message_stats). */
export class QueueCounters extends DeliveryCounters {
  /**
   * Messages published by clients and routed to this queue (publish), counted once per queue
   * a message reaches, as RabbitMQ's channel counts them: dead-lettered and delayed messages,
   * which no channel publishes, are not.
   */
  published = 0;

  override add(other: QueueCounters): void {
    super.add(other);
    this.published += other.published;
  }
}

/** One exchange's counters (the management API's exchange message_stats). */
export class ExchangeCounters {
  /** Messages clients published to this exchange, routable or not (publish_in). */
  publishIn = 0;
  /** Copies routed from it to queues: a message reaching two queues counts 2 (publish_out). */
  publishOut = 0;
}

/** A channel's publishes to one exchange (RabbitMQ's channel_exchange_metrics). */
export class ChannelExchangeCounters {
  published = 0;
  /** Publishes confirmed with basic.ack (confirm mode). */
  confirmed = 0;
  /** Mandatory publishes returned as unroutable. */
  unroutableReturned = 0;
  /** Other unroutable publishes, dropped. */
  unroutableDropped = 0;
  /** Per destination queue: publishes routed to it (channel_queue_exchange_metrics). */
  private readonly perQueue = new Map<Queue, { published: number }>();
  private lastQueue: Queue | undefined = undefined;
  private lastCell: { published: number } = { published: 0 };

  constructor(readonly exchange: Exchange) {}

  /** The count of this channel's publishes from this exchange routed to q. */
  queue(q: Queue): { published: number } {
    if (q === this.lastQueue) return this.lastCell;
    let cell = this.perQueue.get(q);
    if (!cell) {
      pruneDeleted(this.perQueue);
      cell = { published: 0 };
      this.perQueue.set(q, cell);
    }
    this.lastQueue = q;
    this.lastCell = cell;
    return cell;
  }

  /** The (queue, count) pairs of queues that still exist. */
  *queues(): IterableIterator<[Queue, number]> {
    for (const [q, cell] of this.perQueue) if (!q.deleted) yield [q, cell.published];
  }
}

/** A channel's deliveries from one queue (RabbitMQ's channel_queue_metrics). */
export class ChannelQueueCounters extends DeliveryCounters {
  constructor(readonly queue: Queue) {
    super();
  }
}

/** What a channel published, over exchanges (its management message_stats). */
export class PublishTotals {
  published = 0;
  confirmed = 0;
  unroutableReturned = 0;
  unroutableDropped = 0;

  add(c: PublishTotals | ChannelExchangeCounters): void {
    this.published += c.published;
    this.confirmed += c.confirmed;
    this.unroutableReturned += c.unroutableReturned;
    this.unroutableDropped += c.unroutableDropped;
  }
}

/**
 * One channel's counters: per exchange it publishes to and per queue it consumes or gets from.
 * The last exchange and queue used are cached, so a channel that publishes to one exchange and
 * consumes from one queue never looks anything up. The counts of deleted queues and exchanges
 * leave the per-object maps (in sweeps) but stay in the channel's totals.
 */
export class ChannelCounters {
  /** Has published (RabbitMQ's publishing mode: the channel counts as a publisher). */
  publisher = false;
  private readonly perExchange = new Map<Exchange, ChannelExchangeCounters>();
  private readonly perQueue = new Map<Queue, ChannelQueueCounters>();
  private lastExchange: ChannelExchangeCounters | undefined = undefined;
  private lastQueue: ChannelQueueCounters | undefined = undefined;
  /** Counts of exchanges and queues swept out of the maps after they were deleted. */
  private readonly retiredPublishes = new PublishTotals();
  private readonly retiredDeliveries = new DeliveryCounters();

  /** pid: the channel's label in per-object metrics (an Erlang pid in RabbitMQ). */
  constructor(readonly pid: string) {}

  exchange(x: Exchange): ChannelExchangeCounters {
    const last = this.lastExchange;
    if (last !== undefined && last.exchange === x) return last;
    let c = this.perExchange.get(x);
    if (!c) {
      pruneDeleted(this.perExchange, (gone) => this.retiredPublishes.add(gone));
      c = new ChannelExchangeCounters(x);
      this.perExchange.set(x, c);
    }
    this.lastExchange = c;
    return c;
  }

  queue(q: Queue): ChannelQueueCounters {
    const last = this.lastQueue;
    if (last !== undefined && last.queue === q) return last;
    let c = this.perQueue.get(q);
    if (!c) {
      pruneDeleted(this.perQueue, (gone) => this.retiredDeliveries.add(gone));
      c = new ChannelQueueCounters(q);
      this.perQueue.set(q, c);
    }
    this.lastQueue = c;
    return c;
  }

  /** Per-exchange counters of exchanges that still exist. */
  *exchanges(): IterableIterator<ChannelExchangeCounters> {
    for (const c of this.perExchange.values()) if (!c.exchange.deleted) yield c;
  }

  /** Per-queue counters of queues that still exist. */
  *queues(): IterableIterator<ChannelQueueCounters> {
    for (const c of this.perQueue.values()) if (!c.queue.deleted) yield c;
  }

  /** Everything published on the channel, to exchanges deleted since included. */
  publishTotals(): PublishTotals {
    const t = new PublishTotals();
    t.add(this.retiredPublishes);
    for (const c of this.perExchange.values()) t.add(c);
    return t;
  }

  /** Everything delivered on the channel, from queues deleted since included. */
  deliveryTotals(): DeliveryCounters {
    const t = new DeliveryCounters();
    t.add(this.retiredDeliveries);
    for (const c of this.perQueue.values()) t.add(c);
    return t;
  }
}

/**
 * A map keyed by queues or exchanges drops the entries of deleted ones when it has doubled in
 * size since the last sweep, so a long-lived channel that publishes to many short-lived queues
 * (RPC reply queues) does not keep a counter for each forever; amortised O(1) per insertion.
 */
function pruneDeleted<K extends { deleted: boolean }, V>(map: Map<K, V>, retire?: (gone: V) => void): void {
  const size = map.size;
  if (size < 64 || (size & (size - 1)) !== 0) return;
  for (const [k, v] of map) {
    if (!k.deleted) continue;
    retire?.(v);
    map.delete(k);
  }
}

/** One connection's traffic counters (bytes sent are the FrameWriter's bytesWritten). */
export class ConnectionCounters {
  /** Bytes read from the socket (recv_oct). */
  recvOct = 0;
  /** Socket reads (recv_cnt: RabbitMQ counts packets received). */
  recvCnt = 0;

  /** pid: the connection's label in per-object metrics. */
  constructor(readonly pid: string) {}
}

/** Why a message was dead-lettered (the x-death reason), as RabbitMQ's counters name it. */
export const DEAD_LETTER_REASONS = ['expired', 'maxlen', 'rejected', 'delivery_limit'] as const;
export type DeadLetterReasonName = (typeof DEAD_LETTER_REASONS)[number];

/** A dead-lettering queue's strategy, as RabbitMQ's counters label it. */
export const DEAD_LETTER_STRATEGIES = ['at_most_once', 'disabled', 'at_least_once'] as const;
export type DeadLetterStrategyName = (typeof DEAD_LETTER_STRATEGIES)[number];

/**
 * Messages that left queues for a dead-letter exchange, by queue type, strategy and reason.
 * RabbitMQ's strategy is `at_least_once` for a quorum queue that holds its dead-letters until
 * their targets take them; otherwise `at_most_once` when the queue's dead-letter exchange exists
 * at that moment and `disabled` when it does not (no DLX, or a DLX that does not exist): the
 * message is then dropped, and still counted. `confirmed` counts the at-least-once ones every
 * target took (messages_dead_lettered_confirmed).
 */
export class DeadLetterCounters {
  /** [quorum ? 1 : 0][strategy index][reason index] */
  private readonly counts = new Float64Array(2 * DEAD_LETTER_STRATEGIES.length * DEAD_LETTER_REASONS.length);
  confirmed = 0;

  count(quorum: boolean, strategy: DeadLetterStrategyName, reason: DeadLetterReasonName, n: number): void {
    this.counts[index(quorum, strategy, reason)]! += n;
  }

  get(quorum: boolean, strategy: DeadLetterStrategyName, reason: DeadLetterReasonName): number {
    return this.counts[index(quorum, strategy, reason)]!;
  }

  add(other: DeadLetterCounters): void {
    for (let i = 0; i < this.counts.length; i++) this.counts[i]! += other.counts[i]!;
    this.confirmed += other.confirmed;
  }
}

function index(quorum: boolean, strategy: DeadLetterStrategyName, reason: DeadLetterReasonName): number {
  return ((quorum ? 1 : 0) * DEAD_LETTER_STRATEGIES.length + DEAD_LETTER_STRATEGIES.indexOf(strategy)) * DEAD_LETTER_REASONS.length
    + DEAD_LETTER_REASONS.indexOf(reason);
}

/**
 * One vhost's counters of what clients publish into it and of messages dead-lettered in it.
 * Deliveries are counted per queue; the counts of queues deleted since are kept here (retire),
 * so a vhost's and the broker's totals never go down.
 */
export class VHostCounters {
  /** basic.publish received (management: publish; Prometheus: received). */
  received = 0;
  /** ... on channels in confirm mode (received_confirm). */
  receivedConfirm = 0;
  /** Publishes confirmed with basic.ack (confirm). */
  confirmed = 0;
  /** Unroutable publishes dropped (drop_unroutable). */
  unroutableDropped = 0;
  /** Unroutable mandatory publishes returned (return_unroutable). */
  unroutableReturned = 0;
  readonly deadLettered = new DeadLetterCounters();
  /** The counters of deleted classic queues. */
  readonly retiredClassic = new QueueCounters();
  /** The counters of deleted quorum queues. */
  readonly retiredQuorum = new QueueCounters();
  /** The counters of deleted streams. */
  readonly retiredStream = new QueueCounters();

  /** The retired counters of a queue's type. */
  retiredOf(queue: Queue): QueueCounters {
    if (queue.isQuorum) return this.retiredQuorum;
    return queue.settings?.queueType === 'stream' ? this.retiredStream : this.retiredClassic;
  }

  /** A queue of this vhost is deleted: its counts stay in the totals. */
  retire(queue: Queue): void {
    this.retiredOf(queue).add(queue.counters);
  }

  /** Adds a deleted vhost's counters to these (the broker's retired totals). */
  add(other: VHostCounters): void {
    this.received += other.received;
    this.receivedConfirm += other.receivedConfirm;
    this.confirmed += other.confirmed;
    this.unroutableDropped += other.unroutableDropped;
    this.unroutableReturned += other.unroutableReturned;
    this.deadLettered.add(other.deadLettered);
    this.retiredClassic.add(other.retiredClassic);
    this.retiredQuorum.add(other.retiredQuorum);
    this.retiredStream.add(other.retiredStream);
  }
}

/** Connection, channel and queue churn (RabbitMQ's connection_churn_metrics). */
export class ChurnCounters {
  /** Connections that completed the handshake (connection.open-ok sent). */
  connectionsOpened = 0;
  /** Connections closed, counting every accepted socket, as RabbitMQ does (handshake or not). */
  connectionsClosed = 0;
  /** channel.open handled. */
  channelsOpened = 0;
  /** Channels closed: by the client, by an error, or with their connection. */
  channelsClosed = 0;
  /** Non-passive queue.declare past the name check, created or not (and inequivalent ones). */
  queuesDeclared = 0;
  /** Queues created by queue.declare (recovery at boot does not count). */
  queuesCreated = 0;
  /** Queues deleted: queue.delete, auto-delete, x-expires, exclusive owner gone. */
  queuesDeleted = 0;
}
