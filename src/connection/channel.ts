import { randomBytes } from 'node:crypto';
import type { Timer } from '../clock.js';
import { ChannelError, notFound, preconditionFailed, ReplyCode, type AmqpError } from '../errors.js';
import { encodeMethodFrame, type MethodArgsInput, type MethodName } from '../frame/generated/methods.js';
import { basicDeliverPrefix } from '../frame/fast.js';
import { copyTable, F } from '../frame/field-table.js';
import { encodeContentHeaderPayload } from '../frame/generated/properties.js';
import { takeParts, type TakenInParts } from '../later-turns.js';
import { ChannelCounters, type ChannelQueueCounters } from '../metrics/counters.js';
import { isStream, refuseOnStream, streamRefusal } from '../stream/stream-refusals.js';
import type { Consumer, ConsumerHost } from '../queue/consumer.js';
import { REMOVE_CHUNK, type Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import type { VHost } from '../vhost/vhost.js';
import type { Authorizer } from '../access/authorizer.js';
import type { Connection } from './connection.js';
import { ContentAssembler } from './content-assembler.js';
import { cancelReplyTo, type ReplyConsumer } from './direct-reply-to.js';
import { Publisher } from './publisher.js';
import { UnackedDeliveries, type Delivery } from './unacked-deliveries.js';

export type { Delivery } from './unacked-deliveries.js';

/** Deliveries one basic.ack settles in a turn; a larger ack goes on in later turns (Channel.ackTag; a drop: rejectTag). */
export const ACK_CHUNK = 1024;

/** Publishes and acknowledgements a tx.commit applies in a turn; a larger one goes on in later turns (Channel.commitTx). */
export const TX_CHUNK = 1024;

/** The slots, from..to, of the unacknowledged deliveries an ack or nack names (Channel.slotsNamed). */
interface Slots {
  from: number;
  to: number;
}

/** Acknowledgements (ack, or nack/reject with or without requeue) a transaction holds. */
interface TxAck {
  requeue: boolean | 'ack';
  deliveries: Delivery[];
}

/** A tx.commit being applied: its publishes (Publisher.commitNext) until `published`, then its acknowledgements, a part at a time. */
interface TxCommit {
  acks: Array<TakenInParts<Delivery> & { requeue: TxAck['requeue'] }>;
  published: boolean;
  /** A held nack or reject named a stream's delivery: the commit ends with this instead of commit-ok. */
  refusal: AmqpError | undefined;
}

/**
 * One AMQP channel: consumers and their unacked deliveries, prefetch limits, acknowledgements
 * (held in a transaction until tx.commit), the delivery-acknowledgement timeout and closing.
 * Its input is dispatched by dispatch.ts; content assembly and publishing are the channel's
 * ContentAssembler and Publisher.
 */
export class Channel implements ConsumerHost {
  /** channel.open has been handled. */
  opened = false;
  /** tx.select was seen: publishes and acknowledgements wait for tx.commit. */
  txMode = false;
  private txAcks: TxAck[] = [];
  /** Set once the server sent channel.close; everything but close/close-ok is ignored. */
  closing = false;
  private released = false;
  /** Method → header → body of the publish in progress. */
  readonly assembler: ContentAssembler;
  readonly publisher: Publisher;

  readonly consumers = new Map<string, Consumer>();
  /** Unacked deliveries, in tag order. */
  readonly unacked = new UnackedDeliveries();
  private nextTag = 1;
  /** Unacked deliveries made to consumers (basic.get ones do not count against prefetch). */
  private consumerUnacked = 0;
  /** basic.qos global=false: the prefetch each new consumer gets. */
  consumerPrefetch = 0;
  /** basic.qos global=true: a limit shared by all consumers of the channel. */
  globalPrefetch = 0;
  /** The channel's consumer on amq.rabbitmq.reply-to (direct reply-to), if any. */
  replyConsumer: ReplyConsumer | undefined;
  /** The last queue this channel declared; '' in later methods means this one. */
  lastQueueName: string | null = null;
  /** What it published and was given, per exchange and per queue (src/metrics). */
  readonly counters: ChannelCounters;

  /** When the channel was opened (wall clock ms). */
  readonly createdAt: number;

  constructor(
    readonly id: number,
    readonly conn: Connection,
  ) {
    this.createdAt = conn.broker.clock.now();
    this.assembler = new ContentAssembler(conn.broker.config.maxMessageSize);
    this.counters = new ChannelCounters(conn.broker.metrics.nextPid());
    this.publisher = new Publisher(id, conn, this, this.counters);
  }

  /** Opened and not closed (nor being closed by the server). */
  get isOpen(): boolean {
    return this.opened && !this.closing && !this.released;
  }

  /** Acknowledgements (ack, nack, reject) held by the transaction until tx.commit. */
  get acksUncommitted(): number {
    let n = 0;
    for (const a of this.txAcks) n += a.deliveries.length;
    return n;
  }

  /** A channel exists only on an open connection, which has its vhost from connection.open. */
  get vhost(): VHost {
    return this.conn.vhost!;
  }

  /** The permission checks of the connection's user in its vhost (set at connection.open, like the vhost). */
  get access(): Authorizer {
    return this.conn.access!;
  }

  send<N extends MethodName>(name: N, args: MethodArgsInput<N>): void {
    this.conn.send(this.id, name, args);
  }

  // ---- consumers and deliveries (ConsumerHost) ----------------------------------------------

  canDeliver(consumer: Consumer): boolean {
    if (this.closing || this.released || !this.conn.writable) return false;
    // A full channel-wide prefetch holds every consumer back, no-ack ones too, though what those
    // are sent does not count towards it (rabbit_limiter: can_send refuses once the limit is reached).
    const globalRoom = this.globalPrefetch === 0 || this.consumerUnacked < this.globalPrefetch;
    return consumer.noAck ? globalRoom : consumer.hasCredit && globalRoom;
  }

  deliver(consumer: Consumer, queue: Queue, entry: QueuedMessage): void {
    const tag = this.nextTag++;
    const counters = this.counters.queue(queue);
    if (consumer.noAck) {
      queue.settle(entry);
      queue.counters.deliverNoAck++;
      counters.deliverNoAck++;
    } else {
      this.track(tag, queue, entry, consumer, counters);
      consumer.unacked++;
      this.consumerUnacked++;
      queue.counters.deliver++;
      counters.deliver++;
    }
    if (entry.redelivered) {
      queue.counters.redeliver++;
      counters.redeliver++;
    }
    const msg = entry.msg;
    // A quorum queue tells a consumer how often the message came back (not on the first try).
    const header = queue.isQuorum && entry.deliveryCount > 0 ? withDeliveryCount(entry) : msg.header;
    const prefix = consumer.deliverPrefix ?? (consumer.deliverPrefix = basicDeliverPrefix(this.id, consumer.tag));
    this.conn.writer.writeDeliver(this.id, prefix, tag, entry.redelivered, msg.exchange, msg.routingKey, header,
      msg.bodyMemory, msg.bodyOffset, msg.bodyOffset + msg.bodySize, header === msg.header ? msg : undefined);
    // RabbitMQ's firehose (src/trace): a null check while tracing is off.
    const tracer = this.conn.vhost!.tracer;
    if (tracer !== undefined) tracer.delivered({ connection: this.conn.name, channel: this.id, user: this.conn.username }, queue.name, msg, entry.redelivered, header);
  }

  /** A delivery that waits for its ack (consumer null: basic.get). */
  private track(tag: number, queue: Queue, entry: QueuedMessage, consumer: Consumer | null, counters: ChannelQueueCounters): void {
    this.unacked.add(tag, entry, counters, consumer, this.conn.broker.clock.monotonicOncePerTask());
    this.armAckTimeout();
    queue.delivered(entry);
  }

  /** Takes the next delivery tag (for deliveries outside queues: direct reply-to). */
  nextDeliveryTag(): number {
    return this.nextTag++;
  }

  /** basic.get-ok: delivers entry (taken from queue) outside any consumer. */
  deliverGet(queue: Queue, entry: QueuedMessage, noAck: boolean): void {
    const tag = this.nextTag++;
    const counters = this.counters.queue(queue);
    if (noAck) {
      queue.settle(entry);
      queue.counters.getNoAck++;
      counters.getNoAck++;
    } else {
      this.track(tag, queue, entry, null, counters);
      queue.counters.get++;
      counters.get++;
    }
    if (entry.redelivered) {
      queue.counters.redeliver++;
      counters.redeliver++;
    }
    const msg = entry.msg;
    const header = queue.isQuorum ? withDeliveryCount(entry) : msg.header;
    this.conn.writer.writeContent(
      this.id,
      encodeMethodFrame(this.id, 'basic.get-ok', {
        deliveryTag: tag, redelivered: entry.redelivered, exchange: msg.exchange, routingKey: msg.routingKey,
        messageCount: queue.messageCount,
      }),
      header,
      msg.body,
    );
    const tracer = this.conn.vhost!.tracer;
    if (tracer !== undefined) tracer.delivered({ connection: this.conn.name, channel: this.id, user: this.conn.username }, queue.name, msg, entry.redelivered, header);
  }

  /** basic.get-empty: counted for the queue and this channel. */
  getEmpty(queue: Queue): void {
    queue.counters.getEmpty++;
    this.counters.queue(queue).getEmpty++;
    this.send('basic.get-empty', { reserved1: '' });
  }

  cancelledByServer(consumer: Consumer): void {
    if (!this.consumers.delete(consumer.tag)) return;
    const notify = this.conn.capabilities['consumer_cancel_notify'];
    if (notify && notify.type === 't' && notify.value && !this.closing) {
      if (this.heldCancels !== undefined) this.heldCancels.push(consumer.tag);
      else this.send('basic.cancel', { consumerTag: consumer.tag, noWait: true });
    }
  }

  /** basic.cancel notices held back while a method of this channel is answered (cancelsAfter). */
  private heldCancels: string[] | undefined;

  /**
   * Runs fn (a method that may cancel this channel's own consumers: queue.delete), and sends
   * the server's basic.cancel notices to them after its reply: RabbitMQ's queue process sends
   * them, so they reach the client after the channel's answer (delete-ok, then basic.cancel).
   */
  cancelsAfter<T>(fn: () => T): T {
    this.heldCancels = [];
    try {
      return fn();
    } finally {
      const tags = this.heldCancels;
      this.heldCancels = undefined;
      for (const consumerTag of tags) this.send('basic.cancel', { consumerTag, noWait: true });
    }
  }

  /** Socket drained or capacity freed: let every queue this channel consumes from dispatch. */
  resumeDelivery(): void {
    for (const c of this.consumers.values()) c.queue.maybeDispatch();
  }

  // ---- acknowledgements ---------------------------------------------------------------------

  /** Removes and returns the deliveries an ack/nack with (tag, multiple) names (collect_acks). */
  takeDeliveries(tag: number, multiple: boolean): Delivery[] {
    this.finishSettling();
    const slots = this.slotsNamed(tag, multiple);
    return slots === undefined ? [] : this.unacked.take(slots.from, slots.to);
  }

  /**
   * basic.ack: outside a transaction the deliveries are settled straight from their slots (no
   * Delivery objects), as applyAck() settles them; in one, they are held until tx.commit. An
   * ack of more than ACK_CHUNK deliveries settles that many now and the rest in later turns
   * (settleOn), a chunk a turn, while its connection reads nothing more: a consumer that acks a
   * hundred thousand persistent messages at once does not hold every other client for half a
   * second.
   */
  ackTag(tag: number, multiple: boolean): void {
    if (this.txMode) {
      this.ack(this.takeDeliveries(tag, multiple));
      return;
    }
    // (Its connection reads nothing while an ack is being settled; anything else first finishes it.)
    this.finishSettling();
    const slots = this.slotsNamed(tag, multiple);
    if (slots !== undefined) this.settleInTurns(slots, false);
  }

  /**
   * basic.nack and basic.reject. Requeued, they go back to their queues straight from their
   * slots (requeueSlots: each queue puts them back at their original positions, more than
   * RETURN_CHUNK over turns: Queue.requeue); inside a transaction they are taken as objects,
   * held until tx.commit. Dropped (requeue=false) they are settled as an ack is (ackTag),
   * REMOVE_CHUNK a turn, each chunk discarded as it is settled (dead-lettered where the queue
   * says: Queue.discard). Either way a nack of a hundred thousand deliveries does not hold
   * every other client while they are all taken and grouped.
   *
   * A stream's delivery among them is refused with 540 on the connection. RabbitMQ 3.10 settles
   * the deliveries of the other queues first, as asked (observed: a classic queue's delivery
   * named with a stream's is requeued, or dropped, before the connection closes). Inside a
   * transaction the nack is held as any other, and refused at tx.commit (commitTx); a
   * rollback undoes it.
   */
  rejectTag(tag: number, multiple: boolean, requeue: boolean): void {
    this.finishSettling();
    const slots = this.slotsNamed(tag, multiple);
    if (slots === undefined) return;
    if (this.txMode) {
      this.reject(this.unacked.take(slots.from, slots.to), requeue);
      return;
    }
    const stream = this.streamAmong(slots);
    if (stream !== undefined) {
      this.reject(this.unacked.take(slots.from, slots.to).filter((d) => !isStream(d.queue)), requeue);
      refuseOnStream(stream, this.vhost.name, 'basic.nack and basic.reject');
    }
    if (requeue) this.requeueSlots(slots);
    else this.settleInTurns(slots, true);
  }

  /** Gives the live deliveries in slots back to their queues, and their consumers the credit. */
  private requeueSlots({ from, to }: Slots): void {
    const unacked = this.unacked;
    for (let i = from; i <= to; i++) if (unacked.entryAt(i) !== undefined) this.releaseCredit(unacked.consumerAt(i));
    for (const [queue, entries] of unacked.takeByQueue(from, to)) queue.requeue(entries);
    this.afterCreditReleased();
  }

  /** The deliveries an ack or a drop names, settled from their slots, in later turns beyond a chunk. */
  private settleInTurns(slots: Slots, discard: boolean): void {
    this.settlingDiscards = discard;
    if (this.settleSlots(slots.from, this.unacked.tagAt(slots.to))) return;
    this.conn.settlingStarted();
    this.conn.broker.later.schedule(this.settleOn);
  }

  /**
   * The slots, from..to, of the deliveries an ack or nack with (tag, multiple) names
   * (collect_acks); undefined when it names none (tag 0, multiple, nothing unacknowledged).
   */
  private slotsNamed(tag: number, multiple: boolean): Slots | undefined {
    const unacked = this.unacked;
    if (multiple && tag === 0) return unacked.size === 0 ? undefined : { from: unacked.first, to: unacked.last - 1 };
    const to = unacked.indexOf(tag);
    if (to < 0) throw preconditionFailed(`unknown delivery tag ${tag}`);
    return { from: multiple ? unacked.first : to, to };
  }

  /** The first stream among the queues of the deliveries in slots, if any; nothing is taken. */
  private streamAmong({ from, to }: Slots): Queue | undefined {
    const unacked = this.unacked;
    for (let i = from; i <= to; i++) {
      if (unacked.entryAt(i) === undefined) continue;
      const q = unacked.counterAt(i).queue;
      if (isStream(q)) return q;
    }
    return undefined;
  }

  /**
   * Settles the live deliveries from slot `from` on with tags up to upTo, at most ACK_CHUNK of
   * them as acks, or REMOVE_CHUNK as drops (settlingDiscards); then each queue concerned
   * dispatches once (for drops: discards its share), in first-settled order. Returns true when
   * none is left; otherwise upTo is kept in settlingTo for settleOn.
   */
  private settleSlots(from: number, upTo: number): boolean {
    const unacked = this.unacked;
    const queues = this.ackedQueues;
    const discard = this.settlingDiscards;
    const dropped = discard ? new Map<Queue, QueuedMessage[]>() : undefined;
    // A drop is dead-lettered as it is settled: as many a turn as a queue removes (REMOVE_CHUNK).
    const chunk = discard ? REMOVE_CHUNK : ACK_CHUNK;
    const end = unacked.last;
    let n = 0;
    let settled = 0;
    let seen: Set<Queue> | undefined;
    let last: Queue | undefined;
    let i = from;
    for (; i < end && unacked.tagAt(i) <= upTo; i++) {
      const entry = unacked.entryAt(i);
      if (entry === undefined) continue;
      if (settled === chunk && !this.finishingSettling) break;
      settled++;
      this.releaseCredit(unacked.consumerAt(i));
      const counters = unacked.counterAt(i);
      const q = counters.queue;
      unacked.clear(i);
      if (dropped !== undefined) {
        const list = dropped.get(q);
        if (list === undefined) dropped.set(q, [entry]);
        else list.push(entry);
        continue;
      }
      q.ack(entry, false);
      q.counters.ack++;
      counters.ack++;
      if (q !== last) {
        last = q;
        if (seen !== undefined) {
          if (!seen.has(q)) {
            seen.add(q);
            queues[n++] = q;
          }
        } else if (!isAmong(queues, n, q)) {
          queues[n++] = q;
          // Many queues in one ack: a set keeps the check constant.
          if (n > 16) seen = new Set(queues.slice(0, n) as Queue[]);
        }
      }
    }
    const done = i === end || unacked.tagAt(i) > upTo;
    this.settlingTo = done ? -1 : upTo;
    unacked.removed();
    if (dropped !== undefined) for (const [q, entries] of dropped) q.discard(entries);
    for (let k = 0; k < n; k++) {
      const q = queues[k]!;
      queues[k] = undefined;
      q.maybeDispatch();
    }
    this.afterCreditReleased();
    return done;
  }

  /** The next chunk of an ack spread over turns (ackTag); reading goes on once it is settled. */
  private readonly settleOn = (): void => {
    if (this.settlingTo < 0) return; // finished at once (finishSettling)
    if (!this.settleSlots(this.unacked.first, this.settlingTo)) {
      this.conn.broker.later.schedule(this.settleOn);
      return;
    }
    this.conn.settlingDone();
  };

  /**
   * An ack spread over turns is settled now, before anything else looks at the unacked
   * deliveries (the channel closing, which requeues them; the acknowledgement timeout).
   */
  private finishSettling(): void {
    if (this.settlingTo < 0) return;
    this.finishingSettling = true;
    try {
      this.settleSlots(this.unacked.first, this.settlingTo);
    } finally {
      this.finishingSettling = false;
    }
    this.conn.settlingDone();
  }

  /** The highest tag of an ack still being settled in later turns, or -1. */
  private settlingTo = -1;
  /** What is being settled is dropped (rejectTag), not acknowledged. */
  private settlingDiscards = false;
  /** finishSettling is running: the whole ack is settled at once. */
  private finishingSettling = false;

  /** The queues of the ack being settled (ackTag), reused from ack to ack. */
  private readonly ackedQueues: Array<Queue | undefined> = [];

  ack(deliveries: Delivery[]): void {
    if (this.txMode) {
      this.txAcks.push({ requeue: 'ack', deliveries });
      return;
    }
    this.applyAck(deliveries);
  }

  /**
   * Settles every message of one ack first, then lets each queue concerned dispatch once (as
   * rabbit_amqqueue_process settles an ack's tags, then runs its delivery loop), not once per
   * message.
   */
  private applyAck(deliveries: Delivery[]): void {
    if (deliveries.length === 1) {
      const d = deliveries[0]!;
      this.releaseCredit(d.consumer);
      d.queue.ack(d.entry);
      d.queue.counters.ack++;
      d.counters.ack++;
    } else {
      // In first-acked order; consecutive deliveries of one queue skip the set.
      const queues = new Set<Queue>();
      let last: Queue | undefined;
      for (const d of deliveries) {
        this.releaseCredit(d.consumer);
        const q = d.queue;
        q.ack(d.entry, false);
        q.counters.ack++;
        d.counters.ack++;
        if (q !== last) {
          last = q;
          queues.add(q);
        }
      }
      for (const q of queues) q.maybeDispatch();
    }
    this.afterCreditReleased();
  }

  /** nack/reject: requeue (to the original positions) or drop. */
  reject(deliveries: Delivery[], requeue: boolean): void {
    if (this.txMode) {
      this.txAcks.push({ requeue, deliveries });
      return;
    }
    this.applyReject(deliveries, requeue);
  }

  /** basic.recover: every unacked delivery goes back to its queue now, transaction or not. */
  recoverAll(): void {
    this.finishSettling();
    const slots = this.slotsNamed(0, true);
    if (slots !== undefined) this.requeueSlots(slots);
  }

  private applyReject(deliveries: Delivery[], requeue: boolean): void {
    for (const d of deliveries) this.releaseCredit(d.consumer);
    for (const [queue, entries] of groupByQueue(deliveries)) {
      if (requeue) queue.requeue(entries);
      else queue.discard(entries);
    }
    this.afterCreditReleased();
  }

  /** A delivery of consumer (null: of basic.get) is no longer unacknowledged: the consumer's credit back. */
  private releaseCredit(consumer: Consumer | null): void {
    if (consumer !== null) {
      consumer.unacked--;
      this.consumerUnacked--;
    }
  }

  private afterCreditReleased(): void {
    if (this.globalPrefetch > 0) this.resumeDelivery();
  }

  // ---- delivery acknowledgement timeout (RabbitMQ's consumer_timeout) ------------------------

  private ackTimer: Timer | undefined;

  /** Arms one timer for the oldest unacked delivery; re-armed lazily as acks arrive. */
  private armAckTimeout(): void {
    const timeout = this.conn.broker.config.consumerTimeout;
    if (this.ackTimer || timeout <= 0) return;
    const oldest = this.unacked.oldestAt();
    if (oldest < 0) return;
    const clock = this.conn.broker.clock;
    this.ackTimer = clock.setTimeout(() => {
      this.ackTimer = undefined;
      if (this.closing || this.released) return;
      // An acknowledged delivery is not one that timed out.
      this.finishSettling();
      const head = this.unacked.oldestAt();
      if (head < 0) return;
      if (clock.monotonic() - head >= timeout) {
        // The channel is closed with 406 and its unacked messages are requeued.
        this.conn.closeChannel(this, new ChannelError(
          ReplyCode.PRECONDITION_FAILED,
          `delivery acknowledgement on channel ${this.id} timed out. Timeout value used: ${timeout} ms. This timeout value can be configured, see consumers doc guide to learn more`,
        ));
        return;
      }
      this.armAckTimeout();
    }, oldest + timeout - clock.monotonic());
  }

  // ---- transactions -------------------------------------------------------------------------


  /**
   * tx.commit: the publishes first (checked and routed at basic.publish; returns go out now),
   * then the acknowledgements, in order. commit-ok goes out once the publishes are enqueued
   * (when the store has them, if it holds any), before the queues redeliver what the
   * acknowledgements make room for, as RabbitMQ's does. A publish a queue refused fails the
   * commit with 406 "partial tx completion", the acknowledgements applied all the same.
   *
   * TX_CHUNK publishes and acknowledgements are applied a turn, the rest in later turns
   * (commitOn) while the connection reads nothing more, so a transaction of a hundred thousand
   * does not hold every other client; the client's next frames find the commit done. Throws the
   * 406 when the commit is done in the frame's own turn.
   *
   * A held nack or reject that names a stream's delivery ends the commit as RabbitMQ's ends it:
   * the acknowledgements before it are applied, and the other queues' deliveries in it; then
   * 540 on the connection, named by tx.commit, instead of commit-ok.
   */
  commitTx(): void {
    this.publisher.startCommit();
    const commit: TxCommit = { acks: [], published: false, refusal: undefined };
    const held = this.txAcks;
    this.txAcks = [];
    for (let i = 0; i < held.length; i++) {
      const a = held[i]!;
      const streams = a.requeue === 'ack' ? [] : a.deliveries.filter((d) => isStream(d.queue));
      if (streams.length === 0) {
        commit.acks.push({ entries: a.deliveries, at: 0, requeue: a.requeue });
        continue;
      }
      // rabbit_channel folds over the held acknowledgements and crashes at this one, once the
      // other queues' deliveries in it are settled: what comes after is never applied, and the
      // connection's close gives it back with the stream's deliveries.
      commit.acks.push({ entries: a.deliveries.filter((d) => !isStream(d.queue)), at: 0, requeue: a.requeue });
      this.unacked.restore([...streams, ...held.slice(i + 1).flatMap((later) => later.deliveries)]);
      commit.refusal = streamRefusal(streams[0]!.queue, this.vhost.name).at(90, 20);
      break;
    }
    if (!this.applyCommit(commit, TX_CHUNK)) {
      this.txCommit = commit;
      this.conn.settlingStarted();
      this.conn.broker.later.schedule(this.commitOn);
      return;
    }
    if (commit.refusal) throw commit.refusal;
    if (this.publisher.commitOutcome.rejected) throw preconditionFailed('partial tx completion');
  }

  /** The next part of a tx.commit spread over turns; reading goes on once it is all applied. */
  private readonly commitOn = (): void => {
    const commit = this.txCommit;
    if (commit === undefined) return; // finished at once (finishCommit)
    if (!this.applyCommit(commit, TX_CHUNK)) {
      this.conn.broker.later.schedule(this.commitOn);
      return;
    }
    this.txCommit = undefined;
    this.conn.settlingDone();
    if (this.released) return;
    if (commit.refusal) this.conn.fail(commit.refusal);
    else if (this.publisher.commitOutcome.rejected) this.conn.closeChannel(this, preconditionFailed('partial tx completion').at(90, 20));
  };

  /** A tx.commit spread over turns is applied now (the channel closing: nothing of it is lost). */
  private finishCommit(): void {
    const commit = this.txCommit;
    if (commit === undefined) return;
    this.txCommit = undefined;
    this.applyCommit(commit, Number.POSITIVE_INFINITY);
    this.conn.settlingDone();
  }

  /**
   * Applies up to `budget` more publishes and acknowledgements of the commit, answering
   * commit-ok once the publishes are in (unless one was refused); true once all is applied.
   */
  private applyCommit(commit: TxCommit, budget: number): boolean {
    if (!commit.published) {
      budget = this.publisher.commitNext(budget);
      if (!this.publisher.commitDone) return false;
      commit.published = true;
      const { durable, rejected } = this.publisher.commitOutcome;
      if (!rejected && commit.refusal === undefined) {
        // Once on disk, and after what the commit's store write lets readers deliver (a
        // stream's chunk: RabbitMQ delivers it to the channel's consumers before commit-ok).
        if (durable) this.conn.broker.commits.whenDurable(() => this.conn.broker.later.schedule(() => this.send('tx.commit-ok', {})));
        else this.send('tx.commit-ok', {});
      }
    }
    takeParts(commit.acks, budget, (part, a) => {
      if (a.requeue === 'ack') this.applyAck(part);
      else this.applyReject(part, a.requeue);
    });
    return commit.acks.length === 0;
  }

  /** The tx.commit being applied over turns (commitTx). */
  private txCommit: TxCommit | undefined;

  /** tx.rollback: the held acknowledgements are undone (the deliveries stay unacked). */
  rollbackAcks(): void {
    const restored = this.txAcks.flatMap((a) => a.deliveries);
    this.txAcks = [];
    this.unacked.restore(restored);
  }

  /** A server-generated consumer tag, shaped like RabbitMQ's (amq.ctag- and 22 characters). */
  generateConsumerTag(): string {
    return `amq.ctag-${randomBytes(16).toString('base64url')}`;
  }

  // ---- closing ------------------------------------------------------------------------------

  /** Cancels consumers and requeues unacked messages, in order (channel or connection closed). */
  release(): void {
    if (this.released) return;
    // What the client acknowledged, or committed, is not requeued.
    this.finishSettling();
    this.finishCommit();
    this.released = true;
    if (this.opened) this.conn.broker.metrics.churn.channelsClosed++;
    this.assembler.reset();
    this.ackTimer?.cancel();
    // Uncommitted publishes are dropped (and confirms stop); uncommitted acks never happened.
    this.publisher.release();
    this.rollbackAcks();
    cancelReplyTo(this);
    // Requeue before the consumers go, so the next (single active) consumer sees the returned
    // messages first, in their original order.
    this.consumerUnacked = 0;
    for (const [queue, entries] of this.unacked.takeAllByQueue()) queue.requeue(entries);
    for (const c of this.consumers.values()) c.queue.removeConsumer(c);
    this.consumers.clear();
  }

  /** Soft error: tell the client with channel.close and wait for its close-ok. */
  closeByServer(err: AmqpError): void {
    this.closing = true;
    this.release();
    this.send('channel.close', { replyCode: err.replyCode, replyText: err.replyText, classId: err.classId, methodId: err.methodId });
  }

  /** The client's channel.close. */
  closeByClient(): void {
    this.release();
    this.send('channel.close-ok', {});
    this.conn.channelClosed(this);
  }

  /** Resolves '' to the channel's last declared queue, as RabbitMQ does. */
  queueName(name: string): string {
    if (name !== '') return name;
    if (this.lastQueueName === null) throw notFound('no previously declared queue');
    return this.lastQueueName;
  }
}

function isAmong(queues: Array<Queue | undefined>, n: number, q: Queue): boolean {
  for (let k = 0; k < n; k++) if (queues[k] === q) return true;
  return false;
}

/** Deliveries grouped by queue, each group in delivery-tag order. */
function groupByQueue(deliveries: Delivery[]): Map<Queue, QueuedMessage[]> {
  const byQueue = new Map<Queue, QueuedMessage[]>();
  for (const d of deliveries) {
    let list = byQueue.get(d.queue);
    if (!list) byQueue.set(d.queue, (list = []));
    list.push(d.entry);
  }
  return byQueue;
}

/** A quorum queue tells every delivery how often the message was returned (x-delivery-count). */
export function withDeliveryCount(entry: QueuedMessage): Buffer {
  const props = entry.msg.properties;
  const headers = copyTable(props.headers);
  headers['x-delivery-count'] = F.int64(entry.deliveryCount);
  return encodeContentHeaderPayload(60, entry.msg.body.length, { ...props, headers });
}
