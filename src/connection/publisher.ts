import { accessRefused, notFound, preconditionFailed, ReplyCode, resourceName } from '../errors.js';
import { delayOf, DelayedMessageExchange } from '../exchange/delayed-message-exchange.js';
import { encodeMethodFrame, type BasicPublishArgs } from '../frame/generated/methods.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';
import { Message, senderSelectedRoutingKeys } from '../queue/message.js';
import { parseExpiration } from '../queue/queue-arguments.js';
import { fieldTypeName } from '../frame/field-table.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { Connection } from './connection.js';
import { deliverReply, isReplyAddress, rewriteReplyTo, type ReplyConsumer } from './direct-reply-to.js';
import { PublisherConfirms } from './publisher-confirms.js';

/** What publishing reads from its channel: the channel's direct reply-to consumer, if any. */
export interface ReplySource {
  readonly replyConsumer: ReplyConsumer | undefined;
}

/** A publish inside a transaction, checked and routed at basic.publish, enqueued at tx.commit. */
interface HeldPublish {
  args: BasicPublishArgs;
  /** The message as it will be queued (and returned to a mandatory publisher): without BCC. */
  message: Message;
  /** The queues it was routed to, by name: they are looked up again at commit. */
  queues: string[];
  /** A store commit already holds it (a persistent message on a durable delayed exchange). */
  durable: boolean;
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

  constructor(
    private readonly channelId: number,
    private readonly conn: Connection,
    private readonly replies: ReplySource,
  ) {}

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
    this.confirms ??= new PublisherConfirms(this.channelId, conn.broker.commits, conn.writer, held);
  }

  /**
   * Routes and enqueues a complete basic.publish and answers the publisher with basic.return
   * (mandatory, unroutable) and, in confirm mode, a confirm once the message is safe — in the
   * store for persistent messages on durable queues. Returns true when a store commit holds it.
   */
  publish(args: BasicPublishArgs, header: Buffer, body: Buffer): boolean {
    const { exchange, message: published, cc } = this.accept(args, header, body, false);
    const confirms = this.confirms;
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
    const aside = this.routeAside(args, exchange, published, cc);
    if (aside) {
      if (args.mandatory) this.sendReturn(args, aside.message);
      confirms?.confirmWhenSafe(seq, aside.durable);
      return aside.durable;
    }
    const { message, queues, durable, rejected } = this.conn.vhost!.publish(exchange, published, cc);
    if (queues.size === 0 && args.mandatory) this.sendReturn(args, message);
    // x-overflow=reject-publish: RabbitMQ nacks a message any of its queues refused.
    if (rejected) confirms?.nack(seq);
    else confirms?.confirmWhenSafe(seq, durable);
    return durable;
  }

  /**
   * Direct reply-to and the delayed-message exchange take a message aside while routing it
   * (rabbit_exchange:route delivers a reply, the plugin's route stores a delayed message) and
   * route it to no queue, so a mandatory publish of either is returned. Returns the message to
   * return and whether a store commit holds it, or undefined for an ordinary publish.
   */
  private routeAside(args: BasicPublishArgs, exchange: Exchange, published: Message, cc: string[] | undefined): { message: Message; durable: boolean } | undefined {
    if (args.exchange === '' && isReplyAddress(args.routingKey)) {
      // The reply goes straight to the waiting channel, if any.
      deliverReply(this.conn.broker.replyTo, args.routingKey, published);
      return { message: published, durable: false };
    }
    const delay = exchange.type instanceof DelayedMessageExchange ? delayOf(published.properties.headers) : undefined;
    if (delay === undefined) return undefined;
    // Held as published (BCC included), so a restart can still route to the BCC keys.
    const durable = this.conn.vhost!.delay(exchange, published, cc, delay);
    return { message: published.withoutBcc(), durable };
  }

  /**
   * The checks of rabbit_channel's basic.publish, in its order; the message as published. A
   * message that is kept (queued, or held by a transaction) gets its own compact memory.
   */
  private accept(args: BasicPublishArgs, header: Buffer, body: Buffer, held: boolean): Accepted {
    const exchange = this.publishable(args.exchange);
    let properties = decodeContentHeader(header).properties;
    const username = this.conn.username;
    if (properties.userId !== undefined && properties.userId !== username) {
      throw preconditionFailed(`user_id property set to '${properties.userId}' but authenticated user was '${username}'`);
    }
    const withReplyAddress = rewriteReplyTo(this.replies.replyConsumer, properties);
    if (withReplyAddress) {
      properties = withReplyAddress;
      header = encodeContentHeaderPayload(60, body.length, properties);
    }
    const ttl = parseExpiration(properties.expiration);
    checkMessage(properties);
    const cc = senderSelectedRoutingKeys(properties.headers);
    if (!held && args.exchange === '' && isReplyAddress(args.routingKey)) {
      // A reply is written out at once, never queued: no id, no compaction.
      return { exchange, message: new Message(0, '', args.routingKey, header, body, properties), cc };
    }
    const message = new Message(this.conn.broker.nextMessageId(), args.exchange, args.routingKey, Message.compact(header), Message.compact(body), properties);
    message.ttl = ttl;
    return { exchange, message, cc };
  }

  // ---- transactions -------------------------------------------------------------------------

  /**
   * A publish inside a transaction: checked and routed now (a reply is delivered, a delayed
   * message stored), enqueued at commit in the queues routed to that still exist then.
   */
  hold(args: BasicPublishArgs, header: Buffer, body: Buffer): void {
    const { exchange, message, cc } = this.accept(args, header, body, true);
    const aside = this.routeAside(args, exchange, message, cc);
    if (aside) this.held.push({ args, message: aside.message, queues: [], durable: aside.durable });
    else this.held.push({ args, message: message.withoutBcc(), queues: this.conn.vhost!.routeNames(exchange, message, cc), durable: false });
  }

  /** tx.commit: enqueues the held publishes in order; returns go out now. */
  commit(): Committed {
    const vhost = this.conn.vhost!;
    const held = this.held;
    this.held = [];
    const committed: Committed = { durable: false, rejected: false };
    for (const h of held) {
      const queues = new Set<Queue>();
      for (const name of h.queues) {
        const q = vhost.queues.get(name);
        if (q) queues.add(q);
      }
      const { durable, rejected } = vhost.offer(h.message, queues);
      if (queues.size === 0 && h.args.mandatory) this.sendReturn(h.args, h.message);
      if (durable || h.durable) committed.durable = true;
      if (rejected) committed.rejected = true;
    }
    return committed;
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

  /** The exchange a basic.publish names, if it exists and may be published to (404 / 403). */
  private publishable(name: string): Exchange {
    const vhost = this.conn.vhost!;
    const exchange = vhost.exchanges.get(name);
    if (!exchange) throw notFound(`no ${resourceName('exchange', name, vhost.name)}`);
    if (exchange.internal) throw accessRefused(`cannot publish to internal ${resourceName('exchange', name, vhost.name)}`);
    return exchange;
  }

  /** basic.return 312 NO_ROUTE with the message's properties and body. */
  private sendReturn(args: BasicPublishArgs, msg: Message): void {
    this.conn.writer.writeContent(
      this.channelId,
      encodeMethodFrame(this.channelId, 'basic.return', { replyCode: ReplyCode.NO_ROUTE, replyText: 'NO_ROUTE', exchange: args.exchange, routingKey: args.routingKey }),
      msg.header,
      msg.body,
    );
  }
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
