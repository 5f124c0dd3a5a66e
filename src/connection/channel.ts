import { randomBytes } from 'node:crypto';
import type { Timer } from '../clock.js';
import { AmqpError, ChannelError, ConnectionError, notFound, preconditionFailed, ReplyCode } from '../errors.js';
import { encodeBasicDeliver, encodeBasicAck, encodeBasicNack } from '../frame/fast.js';
import {
  encodeMethodFrame, METHODS, type BasicPublishArgs, type Method, type MethodArgsInput, type MethodName,
} from '../frame/generated/methods.js';
import { F } from '../frame/field-table.js';
import { encodeContentHeaderPayload, readBodySize } from '../frame/generated/properties.js';
import type { Consumer, ConsumerHost } from '../queue/consumer.js';
import type { Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import type { Connection } from './connection.js';
import { cancelReplyTo, type ReplyConsumer } from './direct-reply-to.js';
import { checkPublishable, publishContent } from './handlers/basic.js';
import { channelHandlers } from './handlers/index.js';

/** A message delivered on this channel and not yet acknowledged. */
export interface Delivery {
  tag: number;
  queue: Queue;
  entry: QueuedMessage;
  /** null for basic.get deliveries. */
  consumer: Consumer | null;
  /** When it was delivered (monotonic clock ms), for the consumer delivery-acknowledgement timeout. */
  at: number;
}

interface PendingContent {
  /** The content-bearing method the header and body belong to. */
  classId: number;
  methodId: number;
  /** basic.publish's arguments; undefined for a content method clients may not send. */
  args: BasicPublishArgs | undefined;
  header: Buffer | null;
  bodySize: number;
  received: number;
  chunks: Buffer[];
}

/**
 * One AMQP channel: content assembly (method → header → body), consumers and their unacked
 * deliveries, prefetch limits, and publisher-confirm bookkeeping.
 */
export class Channel implements ConsumerHost {
  /** channel.open has been handled. */
  opened = false;
  /** tx.select was seen: publishes and acknowledgements wait for tx.commit. */
  txMode = false;
  private txPublishes: Array<{ args: BasicPublishArgs; header: Buffer; body: Buffer }> = [];
  private txAcks: Array<{ requeue: boolean | 'ack'; deliveries: Delivery[] }> = [];
  /** Set once the server sent channel.close; everything but close/close-ok is ignored. */
  closing = false;
  private released = false;
  private content: PendingContent | null = null;

  readonly consumers = new Map<string, Consumer>();
  /** Unacked deliveries by tag; Map order is tag order. */
  readonly unacked = new Map<number, Delivery>();
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

  // publisher confirms
  confirmMode = false;
  private publishSeq = 0;
  /** Seqs waiting for a store commit, in order. */
  private awaitingDisk: number[] = [];
  private awaitingDiskHead = 0;
  private readyAcks: number[] = [];
  private readyNacks: number[] = [];
  private confirmFlushScheduled = false;
  private diskBatch: { generation: number; upTo: number } | null = null;

  constructor(
    readonly id: number,
    readonly conn: Connection,
  ) {}

  get vhost() {
    return this.conn.vhost!;
  }

  send<N extends MethodName>(name: N, args: MethodArgsInput<N>): void {
    this.conn.send(this.id, name, args);
  }

  // ---- input --------------------------------------------------------------------------------

  onMethod(method: Method): void {
    if (this.closing) {
      // After our channel.close only close-ok (or a crossing close) matters (rabbit_channel).
      if (method.name === 'channel.close-ok') this.finishClose();
      else if (method.name === 'channel.close') this.send('channel.close-ok', {});
      return;
    }
    if (this.content) throw this.unexpectedDuringContent();
    const handler = channelHandlers[method.name] as ((ch: Channel, args: unknown) => void) | undefined;
    if (!handler) {
      if (METHODS[method.name].hasContent) {
        // rabbit_command_assembler collects the content of any content method before the
        // channel finds it has no use for it.
        this.content = { classId: method.classId, methodId: method.methodId, args: undefined, header: null, bodySize: 0, received: 0, chunks: [] };
        return;
      }
      throw new ConnectionError(ReplyCode.COMMAND_INVALID, 'unimplemented method').at(method.classId, method.methodId);
    }
    try {
      handler(this, method.args);
    } catch (err) {
      if (err instanceof AmqpError) err.at(method.classId, method.methodId);
      throw err;
    }
  }

  /** basic.publish arrived: its content header and body frames follow. */
  startContent(args: BasicPublishArgs): void {
    this.content = { classId: 60, methodId: 40, args, header: null, bodySize: 0, received: 0, chunks: [] };
  }

  /** rabbit_command_assembler's 505 for a frame that does not continue the pending content. */
  private unexpectedDuringContent(): ConnectionError {
    const c = this.content as PendingContent;
    const text = c.header
      ? 'expected content body, got non content body frame instead'
      : `expected content header for class ${c.classId}, got non content header frame instead`;
    return new ConnectionError(ReplyCode.UNEXPECTED_FRAME, text).at(c.classId, c.methodId);
  }

  onHeader(payload: Buffer): void {
    if (this.closing) return;
    const c = this.content;
    if (!c) throw new ConnectionError(ReplyCode.UNEXPECTED_FRAME, 'expected method frame, got non method frame instead');
    if (c.header) throw this.unexpectedDuringContent();
    const classId = payload.readUInt16BE(0);
    const weight = payload.readUInt16BE(2);
    // rabbit_command_assembler: a non-zero weight is not a content header at all.
    if (weight !== 0) throw this.unexpectedDuringContent();
    if (classId !== c.classId) {
      throw new ConnectionError(ReplyCode.UNEXPECTED_FRAME, `expected content header for class ${c.classId}, got one for class ${classId} instead`).at(c.classId, c.methodId);
    }
    c.header = payload;
    c.bodySize = readBodySize(payload);
    const max = this.conn.broker.config.maxMessageSize;
    if (c.bodySize > max) {
      // rabbit_channel:check_msg_size, checked as soon as the size is known so an oversized
      // body is never buffered; its frames then arrive on a closing channel and are dropped.
      this.content = null;
      throw preconditionFailed(`message size ${c.bodySize} is larger than configured max size ${max}`).at(c.classId, c.methodId);
    }
    if (c.bodySize === 0) this.completeContent(Buffer.alloc(0));
  }

  onBody(payload: Buffer): void {
    if (this.closing) return;
    const c = this.content;
    if (!c) throw new ConnectionError(ReplyCode.UNEXPECTED_FRAME, 'expected method frame, got non method frame instead');
    if (!c.header) throw this.unexpectedDuringContent();
    c.received += payload.length;
    // More body than the header announced: RabbitMQ 3.10 answers as for any stray frame.
    if (c.received > c.bodySize) throw this.unexpectedDuringContent();
    if (c.received === c.bodySize && c.chunks.length === 0) {
      this.completeContent(payload);
      return;
    }
    c.chunks.push(payload);
    if (c.received === c.bodySize) this.completeContent(Buffer.concat(c.chunks, c.bodySize));
  }

  private completeContent(body: Buffer): void {
    const c = this.content as PendingContent;
    this.content = null;
    if (!c.args) throw new ConnectionError(ReplyCode.COMMAND_INVALID, 'unimplemented method').at(c.classId, c.methodId);
    try {
      if (this.txMode) {
        // The exchange is checked at publish time; routing waits for tx.commit.
        checkPublishable(this, c.args.exchange);
        this.txPublishes.push({ args: c.args, header: Buffer.from(c.header as Buffer), body: Buffer.from(body) });
        return;
      }
      publishContent(this, c.args, c.header as Buffer, body);
    } catch (err) {
      // A channel error names basic.publish; a crash decoding the properties names nothing.
      if (err instanceof ChannelError) err.at(60, 40);
      throw err;
    }
  }

  // ---- publisher confirms -------------------------------------------------------------------

  /** Assigns the next publish sequence number (confirm mode). */
  nextPublishSeq(): number {
    return ++this.publishSeq;
  }

  /** The message with seq is routed and enqueued; durable is true when a store commit holds it. */
  confirmWhenSafe(seq: number, durable: boolean): void {
    if (!durable) {
      this.readyAcks.push(seq);
      this.scheduleConfirmFlush();
      return;
    }
    this.awaitingDisk.push(seq);
    const commits = this.conn.broker.commits;
    // One callback per channel per commit batch, not one per message.
    if (this.diskBatch && this.diskBatch.generation === commits.generation) {
      this.diskBatch.upTo = seq;
      return;
    }
    const batch = { generation: commits.generation, upTo: seq };
    this.diskBatch = batch;
    commits.whenDurable((err) => this.diskCommitted(batch.upTo, err));
  }

  /** basic.nack to a confirming publisher (reject-publish overflow, store failure). */
  nackPublish(seq: number): void {
    this.readyNacks.push(seq);
    this.scheduleConfirmFlush();
  }

  private diskCommitted(upTo: number, err?: Error): void {
    const out = err ? this.readyNacks : this.readyAcks;
    while (this.awaitingDiskHead < this.awaitingDisk.length && (this.awaitingDisk[this.awaitingDiskHead] as number) <= upTo) {
      out.push(this.awaitingDisk[this.awaitingDiskHead++] as number);
    }
    if (this.awaitingDiskHead === this.awaitingDisk.length) {
      this.awaitingDisk = [];
      this.awaitingDiskHead = 0;
    }
    this.scheduleConfirmFlush();
  }

  private scheduleConfirmFlush(): void {
    if (this.confirmFlushScheduled) return;
    this.confirmFlushScheduled = true;
    queueMicrotask(() => this.flushConfirms());
  }

  /**
   * Sends the confirms gathered this tick in seq order: runs of acks below the oldest
   * still-unconfirmed seq collapse into one basic.ack with multiple=true (rabbit_channel's
   * coalesce_and_send); nacks and later acks go one by one.
   */
  private flushConfirms(): void {
    this.confirmFlushScheduled = false;
    if (this.closing || this.released) return;
    const writer = this.conn.writer;
    const cutoff = this.awaitingDiskHead < this.awaitingDisk.length ? (this.awaitingDisk[this.awaitingDiskHead] as number) : Infinity;
    const acks = sortedSeqs(this.readyAcks);
    const nacks = sortedSeqs(this.readyNacks);
    this.readyAcks = [];
    this.readyNacks = [];
    let a = 0;
    let n = 0;
    while (a < acks.length || n < nacks.length) {
      if (n < nacks.length && (a >= acks.length || (nacks[n] as number) < (acks[a] as number))) {
        // requeue=true: the field's default in RabbitMQ's basic.nack record, which it sends as is.
        writer.write(encodeBasicNack(this.id, nacks[n++] as number, false, true));
        continue;
      }
      // A run of acks up to the next nack (and below the cutoff) is one multiple ack.
      const limit = Math.min(cutoff, n < nacks.length ? (nacks[n] as number) : Infinity);
      const start = a;
      while (a < acks.length && (acks[a] as number) < limit) a++;
      if (a > start) {
        writer.write(encodeBasicAck(this.id, acks[a - 1] as number, a - start > 1));
      } else {
        writer.write(encodeBasicAck(this.id, acks[a++] as number, false));
      }
    }
  }

  // ---- consumers and deliveries (ConsumerHost) ----------------------------------------------

  canDeliver(consumer: Consumer): boolean {
    if (this.closing || this.released || !this.conn.writable) return false;
    if (consumer.noAck) return true;
    return consumer.hasCredit && (this.globalPrefetch === 0 || this.consumerUnacked < this.globalPrefetch);
  }

  deliver(consumer: Consumer, queue: Queue, entry: QueuedMessage): void {
    const tag = this.nextTag++;
    if (consumer.noAck) {
      queue.settle(entry, false);
    } else {
      this.unacked.set(tag, { tag, queue, entry, consumer, at: this.conn.broker.clock.monotonic() });
      this.armAckTimeout();
      consumer.unacked++;
      this.consumerUnacked++;
      queue.delivered();
    }
    const msg = entry.msg;
    this.conn.writer.writeContent(
      this.id,
      encodeBasicDeliver(this.id, consumer.tag, tag, entry.redelivered, msg.exchange, msg.routingKey),
      // A quorum queue tells a consumer how often the message came back (not on the first try).
      queue.isQuorum && entry.deliveryCount > 0 ? withDeliveryCount(entry) : msg.header,
      msg.body,
    );
  }

  /** Takes the next delivery tag (for deliveries outside queues: direct reply-to). */
  nextDeliveryTag(): number {
    return this.nextTag++;
  }

  /** basic.get-ok: delivers entry (taken from queue) outside any consumer. */
  deliverGet(queue: Queue, entry: QueuedMessage, noAck: boolean): void {
    const tag = this.nextTag++;
    if (noAck) queue.settle(entry, false);
    else {
      this.unacked.set(tag, { tag, queue, entry, consumer: null, at: this.conn.broker.clock.monotonic() });
      this.armAckTimeout();
      queue.delivered();
    }
    const msg = entry.msg;
    this.conn.writer.writeContent(
      this.id,
      encodeMethodFrame(this.id, 'basic.get-ok', {
        deliveryTag: tag, redelivered: entry.redelivered, exchange: msg.exchange, routingKey: msg.routingKey,
        messageCount: queue.messageCount,
      }),
      queue.isQuorum ? withDeliveryCount(entry) : msg.header,
      msg.body,
    );
  }

  cancelledByServer(consumer: Consumer): void {
    if (!this.consumers.delete(consumer.tag)) return;
    const notify = this.conn.capabilities['consumer_cancel_notify'];
    if (notify && notify.type === 't' && notify.value && !this.closing) {
      this.send('basic.cancel', { consumerTag: consumer.tag, noWait: true });
    }
  }

  /** Socket drained or capacity freed: let every queue this channel consumes from dispatch. */
  resumeDelivery(): void {
    for (const c of this.consumers.values()) c.queue.maybeDispatch();
  }

  // ---- acknowledgements ---------------------------------------------------------------------

  /** Removes and returns the deliveries an ack/nack with (tag, multiple) names (collect_acks). */
  takeDeliveries(tag: number, multiple: boolean): Delivery[] {
    if (multiple && tag === 0) {
      const all = [...this.unacked.values()];
      this.unacked.clear();
      return all;
    }
    if (!this.unacked.has(tag)) throw preconditionFailed(`unknown delivery tag ${tag}`);
    if (!multiple) {
      const d = this.unacked.get(tag) as Delivery;
      this.unacked.delete(tag);
      return [d];
    }
    const taken: Delivery[] = [];
    for (const [t, d] of this.unacked) {
      if (t > tag) break;
      taken.push(d);
      this.unacked.delete(t);
    }
    return taken;
  }

  ack(deliveries: Delivery[]): void {
    if (this.txMode) {
      this.txAcks.push({ requeue: 'ack', deliveries });
      return;
    }
    this.applyAck(deliveries);
  }

  private applyAck(deliveries: Delivery[]): void {
    for (const d of deliveries) {
      this.releaseCredit(d);
      d.queue.settle(d.entry, true);
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
    this.applyReject(this.takeDeliveries(0, true), true);
  }

  private applyReject(deliveries: Delivery[], requeue: boolean): void {
    for (const d of deliveries) this.releaseCredit(d);
    for (const [queue, entries] of groupByQueue(deliveries)) {
      if (requeue) queue.requeue(entries);
      else queue.discard(entries);
    }
    this.afterCreditReleased();
  }

  private releaseCredit(d: Delivery): void {
    if (d.consumer) {
      d.consumer.unacked--;
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
    const oldest = this.unacked.values().next().value as Delivery | undefined;
    if (!oldest) return;
    const clock = this.conn.broker.clock;
    this.ackTimer = clock.setTimeout(() => {
      this.ackTimer = undefined;
      if (this.closing || this.released) return;
      const head = this.unacked.values().next().value as Delivery | undefined;
      if (!head) return;
      if (clock.monotonic() - head.at >= timeout) {
        // The channel is closed with 406 and its unacked messages are requeued.
        this.conn.closeChannel(this, new ChannelError(
          ReplyCode.PRECONDITION_FAILED,
          `delivery acknowledgement on channel ${this.id} timed out. Timeout value used: ${timeout} ms. This timeout value can be configured, see consumers doc guide to learn more`,
        ));
        return;
      }
      this.armAckTimeout();
    }, oldest.at + timeout - clock.monotonic());
  }

  // ---- transactions -------------------------------------------------------------------------

  /**
   * tx.commit: routes the buffered publishes (returns go out now), applies the buffered acks,
   * and calls done once persistent messages of the transaction are on disk.
   */
  commitTx(done: () => void): void {
    const publishes = this.txPublishes;
    const acks = this.txAcks;
    this.txPublishes = [];
    this.txAcks = [];
    let durable = false;
    for (const p of publishes) if (publishContent(this, p.args, p.header, p.body)) durable = true;
    for (const a of acks) {
      if (a.requeue === 'ack') this.applyAck(a.deliveries);
      else this.applyReject(a.deliveries, a.requeue);
    }
    if (durable) this.conn.broker.commits.whenDurable(() => done());
    else done();
  }

  /** tx.rollback: drops buffered publishes; buffered acks are undone (the deliveries stay unacked). */
  rollbackTx(): void {
    const restored = this.txAcks.flatMap((a) => a.deliveries);
    this.txPublishes = [];
    this.txAcks = [];
    if (restored.length === 0) return;
    const all = [...this.unacked.values(), ...restored].sort((a, b) => a.tag - b.tag);
    this.unacked.clear();
    for (const d of all) this.unacked.set(d.tag, d);
  }

  /** A server-generated consumer tag, shaped like RabbitMQ's (amq.ctag- and 22 characters). */
  generateConsumerTag(): string {
    return `amq.ctag-${randomBytes(16).toString('base64url')}`;
  }

  // ---- closing ------------------------------------------------------------------------------

  /** Cancels consumers and requeues unacked messages, in order (channel or connection closed). */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.content = null;
    this.ackTimer?.cancel();
    // Uncommitted publishes are dropped; uncommitted acks never happened.
    this.rollbackTx();
    cancelReplyTo(this);
    // Requeue before the consumers go, so the next (single active) consumer sees the returned
    // messages first, in their original order.
    const all = [...this.unacked.values()];
    this.unacked.clear();
    this.consumerUnacked = 0;
    for (const [queue, entries] of groupByQueue(all)) queue.requeue(entries);
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

  private finishClose(): void {
    this.conn.channelClosed(this);
  }

  /** Resolves '' to the channel's last declared queue, as RabbitMQ does. */
  queueName(name: string): string {
    if (name !== '') return name;
    if (this.lastQueueName === null) throw notFound('no previously declared queue');
    return this.lastQueueName;
  }
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
function withDeliveryCount(entry: QueuedMessage): Buffer {
  const props = entry.msg.properties;
  const headers = { ...(props.headers ?? {}), 'x-delivery-count': F.int64(entry.deliveryCount) };
  return encodeContentHeaderPayload(60, entry.msg.body.length, { ...props, headers });
}

function sortedSeqs(seqs: number[]): number[] {
  for (let i = 1; i < seqs.length; i++) {
    if ((seqs[i] as number) < (seqs[i - 1] as number)) return seqs.sort((x, y) => x - y);
  }
  return seqs;
}
