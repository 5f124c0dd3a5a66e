import { preconditionFailed, ReplyCode } from '../errors.js';
import { delayOf, DelayedMessageExchange } from '../exchange/delayed-message-exchange.js';
import { encodeMethodFrame } from '../frame/generated/methods.js';
import type { Content, PublishMethod } from './content-assembler.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';
import { takeParts, type TakenInParts } from '../later-turns.js';
import { keptBuffer } from '../queue/kept-body.js';
import { Message, senderSelectedRoutingKeys } from '../queue/message.js';
import { parseExpiration } from '../queue/queue-arguments.js';
import { fieldTypeName } from '../frame/field-table.js';
import type { ChannelCounters, ChannelExchangeCounters } from '../metrics/counters.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { Connection } from './connection.js';
import { deliverReply, isReplyAddress, rewriteReplyTo, type ReplyConsumer, type ReplyToRegistry } from './direct-reply-to.js';
import type { VHost } from '../vhost/vhost.js';
import { PublisherConfirms } from './publisher-confirms.js';
import { routedQueueNames, type TraceOrigin } from '../trace/tracer.js';

/** What publishing reads from its channel: the channel's direct reply-to consumer, if any. */
export interface ReplySource {
  readonly replyConsumer: ReplyConsumer | undefined;
}

/** A publish inside a transaction, checked and routed at basic.publish, enqueued at tx.commit. */
interface HeldPublish {
  args: PublishMethod;
  exchange: Exchange;
  /** The message as it will be queued (and returned to a mandatory publisher): without BCC. */
  message: Message;
  /** The queues it was routed to, by name: they are looked up again at commit. */
  queues: string[];
  /** A store commit already holds it (a message on a durable delayed exchange). */
  durable: boolean;
  /** Held back as a duplicate by a deduplication exchange: not returned. */
  duplicate?: boolean;
}

/** A basic.publish that passed RabbitMQ's checks: its exchange, message (BCC included) and CC/BCC keys. */
interface Accepted {
  exchange: Exchange;
  message: Message;
  cc: string[] | undefined;
}

/** What tx.commit did with the held publishes. */
export interface Committed {
  /** A store commit holds some publish: commit-ok waits for it. */
  durable: boolean;
  /** Some queue refused a publish (x-overflow=reject-publish): "partial tx completion". */
  rejected: boolean;
}

/**
 * Publishing on one channel. A complete basic.publish (method, header, body) is checked as
 * RabbitMQ checks it, routed and enqueued; the publisher gets basic.return when a mandatory
 * message is unroutable and, in confirm mode, basic.ack / basic.nack from PublisherConfirms.
 * Inside a transaction a publish is checked and routed at once, as rabbit_channel does, and
 * enqueued (or returned) at tx.commit.
 */
export class Publisher {
  /** Set by confirm.select. */
  private confirms: PublisherConfirms | undefined;
  private held: HeldPublish[] = [];
  /** The publishes of the tx.commit being applied, still to enqueue (startCommit, commitNext), and how it goes. */
  private committing: Array<TakenInParts<HeldPublish>> = [];
  private committed: Committed = { durable: false, rejected: false };
  /** The header and routing key of the last message kept (keptHeader, keptRoutingKey). */
  private lastHeader: Buffer | undefined;
  /** lastHeader decoded. */
  private lastProperties: BasicProperties = {};
  private lastRoutingKey = '';

  constructor(
    private readonly channelId: number,
    private readonly conn: Connection,
    private readonly replies: ReplySource,
    private readonly counters: ChannelCounters,
  ) {}

  /** Publishes in confirm mode not yet confirmed (RabbitMQ's messages_unconfirmed). */
  get unconfirmed(): number {
    return this.confirms?.unconfirmed ?? 0;
  }

  /** Publishes held by the open transaction (RabbitMQ's messages_uncommitted). */
  get uncommitted(): number {
    return this.held.length;
  }

  /** The channel is in confirm mode. */
  get confirming(): boolean {
    return this.confirms !== undefined;
  }

  /** confirm.select: every later publish gets a sequence number and a confirm. */
  selectConfirms(): void {
    const conn = this.conn;
    // The toolkit's faults.holdConfirms (src/hooks.ts): consulted once per flush of this channel.
    const held = (resume: () => void): boolean => {
      const hold = conn.broker.hooks.holdConfirms;
      return hold !== undefined && hold(conn, resume);
    };
    this.confirms ??= new PublisherConfirms(this.channelId, conn.broker.commits, conn.writer, conn.vhost!.counters, held);
  }

  /**
   * Routes and enqueues a complete basic.publish and answers the publisher with basic.return
   * (mandatory, unroutable) and, in confirm mode, a confirm once the message is safe — in the
   * store for persistent messages on durable queues. Returns true when a store commit holds it.
   */
  publish(args: PublishMethod, content: Content): boolean {
    const vhost = this.conn.vhost!;
    // rabbit_channel counts a publish as received before checking it.
    vhost.counters.received++;
    const { exchange, message: published, cc } = this.accept(args, content, false);
    const confirms = this.confirms;
    if (confirms) vhost.counters.receivedConfirm++;
    const seq = confirms?.next() ?? 0;
    if (confirms !== undefined) {
      // The toolkit's faults.nackPublishes (src/hooks.ts): dropped and nacked, as a queue that
      // refuses a message (x-overflow=reject-publish) is seen by the publisher.
      const nack = this.conn.broker.hooks.nackPublish;
      if (nack !== undefined && nack(this.conn)) {
        confirms.nack(seq);
        return false;
      }
    }
    const counters = this.counters.exchange(exchange);
    const aside = this.routeAside(args, exchange, published, cc);
    if (aside) {
      vhost.tracer?.published(this.traceOrigin(), aside.message.withoutBcc(), cc, routedQueueNames(exchange, args.routingKey, cc, undefined));
      this.countRouted(exchange, counters, undefined, args.mandatory);
      if (args.mandatory) this.sendReturn(args, aside.message);
      confirms?.confirmWhenSafe(seq, aside.durable, counters);
      return aside.durable;
    }
    const { message, queues, durable, rejected, duplicate } = vhost.publish(exchange, published, cc);
    // RabbitMQ's firehose (src/trace): a null check while tracing is off.
    if (vhost.tracer !== undefined) vhost.tracer.published(this.traceOrigin(), message, cc, routedQueueNames(exchange, args.routingKey, cc, queues));
    // A duplicate held back by a deduplication exchange is not unroutable: no basic.return.
    const returns = args.mandatory && duplicate !== true;
    this.countRouted(exchange, counters, queues, returns);
    if (queues.size === 0 && returns) this.sendReturn(args, message);
    // x-overflow=reject-publish: RabbitMQ nacks a message any of its queues refused.
    if (rejected) confirms?.nack(seq);
    else confirms?.confirmWhenSafe(seq, durable, counters);
    return durable;
  }

  /**
   * Counts a publish routed to queues (none: unroutable, returned if mandatory, else dropped)
   * as rabbit_channel's deliver_to_queues does: for the channel and exchange, the exchange, each
   * queue reached and the vhost.
   */
  private countRouted(exchange: Exchange, counters: ChannelExchangeCounters, queues: ReadonlySet<Queue> | undefined, mandatory: boolean): void {
    counters.published++;
    countRouting(this.conn.vhost!, exchange, queues, mandatory);
    if (queues === undefined || queues.size === 0) {
      if (mandatory) counters.unroutableReturned++;
      else counters.unroutableDropped++;
      return;
    }
    for (const q of queues) counters.queue(q).published++;
  }

  /** A reply or a delayed message taken aside while routing (the function routeAside). */
  private routeAside(args: PublishMethod, exchange: Exchange, published: Message, cc: string[] | undefined): { message: Message; durable: boolean } | undefined {
    return routeAside(this.conn.vhost!, this.conn.broker.replyTo, exchange, args.routingKey, published, cc);
  }

  /**
   * The checks of rabbit_channel's basic.publish, in its order; the message as published. A
   * message that is kept (queued, or held by a transaction) gets its own compact memory.
   */
  private accept(args: PublishMethod, content: Content, held: boolean): Accepted {
    let header = content.header;
    const exchange = this.publishable(args.exchange, args.routingKey);
    // A publisher usually sends the same properties again: the same bytes as the last kept
    // header are not decoded again (decoding is a pure function of the bytes; nobody modifies
    // decoded properties).
    const last = this.lastHeader;
    const same = last !== undefined && sameBytes(last, header);
    const decoded = same ? this.lastProperties : decodeContentHeader(header).properties;
    const { properties, ttl, cc } = checkPublished(decoded, this.conn.access!, this.replies.replyConsumer);
    const { bodyMemory, bodyOffset, bodySize } = content;
    if (properties !== decoded) header = encodeContentHeaderPayload(60, bodySize, properties);
    if (!held && args.exchange === '' && isReplyAddress(args.routingKey)) {
      // A reply is written out at once, never queued: no id.
      return { exchange, message: new Message(0, '', args.routingKey, header, bodyMemory, properties, bodyOffset, bodySize), cc };
    }
    const kept = properties === decoded && same ? (last as Buffer) : this.keptHeader(header, properties);
    // The assembler's bodies are kept already (ContentAssembler, keepBody).
    const message = new Message(this.conn.broker.nextMessageId(), args.exchange, this.keptRoutingKey(args.routingKey), kept,
      bodyMemory, properties, bodyOffset, bodySize);
    if (ttl !== undefined) message.ttl = ttl;
    return { exchange, message, cc };
  }

  /**
   * The last kept header when buf[start, end) holds its bytes (the connection's fast path hands
   * a content header over as that Buffer), else undefined.
   */
  sameHeader(buf: Buffer, start: number, end: number): Buffer | undefined {
    const last = this.lastHeader;
    if (last === undefined) return undefined;
    const n = last.length;
    if (end - start !== n) return undefined;
    for (let i = 0; i < n; i++) if (last[i] !== buf[start + i]) return undefined;
    return last;
  }

  /**
   * The header a kept message holds: the previous one's when the bytes are the same (a
   * publisher usually sends the same properties again), else a compact copy. Messages never
   * modify their header, so sharing it saves a copy per publish and an object per queued message.
   */
  private keptHeader(header: Buffer, properties: BasicProperties): Buffer {
    const last = this.lastHeader;
    if (last !== undefined && sameBytes(last, header)) return last;
    const kept = keptBuffer(header);
    this.lastHeader = kept;
    this.lastProperties = properties;
    return kept;
  }

  /** The routing key a kept message holds: the previous one's string when equal (one string, not one per message). */
  private keptRoutingKey(key: string): string {
    if (key === this.lastRoutingKey) return this.lastRoutingKey;
    this.lastRoutingKey = key;
    return key;
  }

  // ---- transactions -------------------------------------------------------------------------

  /**
   * A publish inside a transaction: checked and routed now (a reply is delivered, a delayed
   * message stored), enqueued at commit in the queues routed to that still exist then.
   */
  hold(method: PublishMethod, content: Content): void {
    // The assembler reuses its method object: the held publish keeps a copy.
    const args: PublishMethod = { exchange: method.exchange, routingKey: method.routingKey, mandatory: method.mandatory };
    const counters = this.conn.vhost!.counters;
    counters.received++;
    const { exchange, message, cc } = this.accept(args, content, true);
    // RabbitMQ counts a transactional publish as one that expects a confirm.
    counters.receivedConfirm++;
    const aside = this.routeAside(args, exchange, message, cc);
    let h: HeldPublish;
    if (aside) h = { args, exchange, message: aside.message, queues: [], durable: aside.durable };
    else {
      const routed: { duplicate?: boolean } = {};
      const queues = this.conn.vhost!.routeNames(exchange, message, cc, routed);
      h = { args, exchange, message: message.withoutBcc(), queues, durable: false, duplicate: routed.duplicate };
    }
    this.held.push(h);
    // Traced at basic.publish, as rabbit_channel does (before tx.commit).
    const tracer = this.conn.vhost!.tracer;
    if (tracer !== undefined) tracer.published(this.traceOrigin(), h.message.withoutBcc(), cc, routedQueueNames(exchange, args.routingKey, cc, aside ? undefined : h.queues));
  }

  /** Who publishes here, as the firehose tracer names it (rabbit_channel's conn_name, channel, user). */
  private traceOrigin(): TraceOrigin {
    return { connection: this.conn.name, channel: this.channelId, user: this.conn.username };
  }

  /**
   * tx.commit: takes the held publishes, for commitNext to enqueue in order (a publish the
   * transaction holds from now on is the next commit's).
   */
  startCommit(): void {
    this.committing = this.held.length === 0 ? [] : [{ entries: this.held, at: 0 }];
    this.committed = { durable: false, rejected: false };
    this.held = [];
  }

  /**
   * Enqueues up to `budget` of the publishes startCommit took, in order (returns go out now),
   * and returns the budget left. Once all are (commitDone), commitOutcome says how it went.
   */
  commitNext(budget: number): number {
    return takeParts(this.committing, budget, (part) => {
      for (const h of part) this.enqueueHeld(h);
    });
  }

  /** commitNext enqueued every publish startCommit took. */
  get commitDone(): boolean {
    return this.committing.length === 0;
  }

  /** How the commit startCommit began went, once commitNext enqueued everything. */
  get commitOutcome(): Committed {
    return this.committed;
  }

  /** Enqueues a held publish (tx.commit) to the queues it was routed to that still exist, noting how it went in `committed`. */
  private enqueueHeld(h: HeldPublish): void {
    const committed = this.committed;
    const vhost = this.conn.vhost!;
    const queues = new Set<Queue>();
    for (const name of h.queues) {
      const q = vhost.queues.get(name);
      if (q) queues.add(q);
    }
    const { durable, rejected } = vhost.offer(h.message, queues);
    // A duplicate held back by a deduplication exchange is not unroutable: no basic.return.
    const returns = h.args.mandatory && h.duplicate !== true;
    this.countRouted(h.exchange, this.counters.exchange(h.exchange), queues, returns);
    if (queues.size === 0 && returns) this.sendReturn(h.args, h.message);
    if (durable || h.durable) committed.durable = true;
    if (rejected) committed.rejected = true;
  }

  /** tx.rollback: the held publishes are dropped. */
  rollback(): void {
    this.held = [];
  }

  /** The channel closed: uncommitted publishes are dropped and no confirm goes out any more. */
  release(): void {
    this.held = [];
    this.confirms?.stop();
  }

  // ---- checks and answers -------------------------------------------------------------------

  /**
   * The exchange a basic.publish names, in rabbit_channel's order: write permission on it
   * (403), it exists (404), it is not internal (403), topic write permission on the routing key.
   */
  private publishable(name: string, routingKey: string): Exchange {
    const access = this.conn.access!;
    access.write('exchange', name);
    const exchange = this.conn.vhost!.publishableExchange(name);
    access.topicWrite(exchange, routingKey);
    return exchange;
  }

  /** basic.return 312 NO_ROUTE with the message's properties and body. */
  private sendReturn(args: PublishMethod, msg: Message): void {
    this.conn.writer.writeContent(
      this.channelId,
      encodeMethodFrame(this.channelId, 'basic.return', { replyCode: ReplyCode.NO_ROUTE, replyText: 'NO_ROUTE', exchange: args.exchange, routingKey: args.routingKey }),
      msg.header,
      msg.body,
    );
  }
}

/** Who may claim which user_id (the connection's Authorizer; the management API's user). */
export interface UserIdCheck {
  checkUserId(claimed: string | undefined): void;
}

/**
 * rabbit_channel's checks of a published message's properties, in its order (after the
 * exchange's): the user_id property, a reply_to of amq.rabbitmq.reply-to (rewritten to the
 * channel's reply address), the expiration, CC/BCC and delivery-mode. Returns the properties
 * (rewritten, or the same object), the per-message TTL and the CC/BCC routing keys.
 */
export function checkPublished(
  properties: BasicProperties, users: UserIdCheck, replyConsumer: ReplyConsumer | undefined,
): { properties: BasicProperties; ttl: number | undefined; cc: string[] | undefined } {
  users.checkUserId(properties.userId);
  const withReplyAddress = rewriteReplyTo(replyConsumer, properties);
  if (withReplyAddress) properties = withReplyAddress;
  const ttl = parseExpiration(properties.expiration);
  checkMessage(properties);
  return { properties, ttl, cc: senderSelectedRoutingKeys(properties.headers) };
}

/**
 * Direct reply-to and the delayed-message exchange take a message aside while routing it
 * (rabbit_exchange:route delivers a reply, the plugin's route stores a delayed message) and
 * route it to no queue, so a mandatory publish of either is returned. Returns the message to
 * return and whether a store commit holds it, or undefined for an ordinary publish.
 */
export function routeAside(
  vhost: VHost, replyTo: ReplyToRegistry, exchange: Exchange, routingKey: string, published: Message, cc: string[] | undefined,
): { message: Message; durable: boolean } | undefined {
  if (exchange.name === '') {
    if (isReplyAddress(routingKey)) {
      // The reply goes straight to the waiting channel, if any.
      deliverReply(replyTo, routingKey, published.withoutBcc());
      return { message: published, durable: false };
    }
    // A reply address among the CC and BCC keys gets the message too; the other keys route.
    if (cc !== undefined) {
      const addresses = new Set(cc.filter(isReplyAddress)); // routed once each, as every key is
      for (const address of addresses) deliverReply(replyTo, address, published.withoutBcc());
    }
  }
  const delay = exchange.type instanceof DelayedMessageExchange ? delayOf(published.properties.headers) : undefined;
  if (delay === undefined) return undefined;
  // Held as published (BCC included), so a restart can still route to the BCC keys.
  const durable = vhost.delay(exchange, published, cc, delay);
  return { message: published.withoutBcc(), durable };
}

/**
 * The broker's counts of a publish routed to queues, as rabbit_channel's deliver_to_queues makes
 * them: the exchange's in and out, each queue reached, and the vhost's unroutable ones (returned
 * if mandatory, else dropped). The publishing channel keeps its own besides (Publisher).
 */
export function countRouting(vhost: VHost, exchange: Exchange, queues: ReadonlySet<Queue> | undefined, mandatory: boolean): void {
  exchange.counters.publishIn++;
  if (queues === undefined || queues.size === 0) {
    if (mandatory) vhost.counters.unroutableReturned++;
    else vhost.counters.unroutableDropped++;
    return;
  }
  exchange.counters.publishOut += queues.size;
  for (const q of queues) q.counters.published++;
}

/** rabbit_basic:message's checks: CC/BCC must be arrays, delivery-mode 1 or 2 (or absent). */
function checkMessage(properties: BasicProperties): void {
  const headers = properties.headers;
  for (const key of ['CC', 'BCC']) {
    const v = headers?.[key];
    if (v && v.type !== 'A') throw preconditionFailed(`invalid message: {unacceptable_type_in_header,"${key}",${fieldTypeName(v.type)}}`);
  }
  const mode = properties.deliveryMode;
  if (mode !== undefined && mode !== 1 && mode !== 2) throw preconditionFailed(`invalid message: {delivery_mode_unknown,${mode}}`);
}

/** a and b hold the same bytes (a loop for the short buffers headers are, equals() above that). */
function sameBytes(a: Buffer, b: Buffer): boolean {
  if (a === b) return true;
  const n = a.length;
  if (n !== b.length) return false;
  if (n > 64) return a.equals(b);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}
