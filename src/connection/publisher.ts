import { accessRefused, notFound, preconditionFailed, ReplyCode, resourceName } from '../errors.js';
import { delayOf, DelayedMessageExchange } from '../exchange/delayed-message-exchange.js';
import { encodeMethodFrame, type BasicPublishArgs } from '../frame/generated/methods.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';
import { Message, senderSelectedRoutingKeys } from '../queue/message.js';
import { parseExpiration } from '../queue/queue-arguments.js';
import { fieldTypeName } from '../frame/field-table.js';
import type { Exchange } from '../vhost/exchange.js';
import type { Connection } from './connection.js';
import { deliverReply, isReplyAddress, rewriteReplyTo, type ReplyConsumer } from './direct-reply-to.js';
import { PublisherConfirms } from './publisher-confirms.js';

/** What publishing reads from its channel: the channel's direct reply-to consumer, if any. */
export interface ReplySource {
  readonly replyConsumer: ReplyConsumer | undefined;
}

interface HeldPublish {
  args: BasicPublishArgs;
  header: Buffer;
  body: Buffer;
}

/**
 * Publishing on one channel. A complete basic.publish (method, header, body) is checked as
 * RabbitMQ checks it, routed and enqueued; the publisher gets basic.return when a mandatory
 * message is unroutable and, in confirm mode, basic.ack / basic.nack from PublisherConfirms.
 * Inside a transaction publishes are held until tx.commit.
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
    this.confirms ??= new PublisherConfirms(this.channelId, this.conn.broker.commits, this.conn.writer);
  }

  /**
   * Routes and enqueues a complete basic.publish and answers the publisher with basic.return
   * (mandatory, unroutable) and, in confirm mode, a confirm once the message is safe — in the
   * store for persistent messages on durable queues. Returns true when a store commit holds it.
   */
  publish(args: BasicPublishArgs, header: Buffer, body: Buffer): boolean {
    const vhost = this.conn.vhost!;
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
    const headers = properties.headers;
    const ttl = parseExpiration(properties.expiration);
    checkMessage(properties);
    const cc = senderSelectedRoutingKeys(headers);
    const confirms = this.confirms;
    if (args.exchange === '' && isReplyAddress(args.routingKey)) {
      // Direct reply-to: the reply goes straight to the waiting channel, or is unroutable.
      const reply = new Message(0, '', args.routingKey, header, body, properties);
      const seq = confirms?.next() ?? 0;
      if (!deliverReply(this.conn.broker.replyTo, args.routingKey, reply) && args.mandatory) this.sendReturn(args, reply);
      confirms?.confirmWhenSafe(seq, false);
      return false;
    }

    const published = new Message(this.conn.broker.nextMessageId(), args.exchange, args.routingKey, Message.compact(header), Message.compact(body), properties);
    published.ttl = ttl;
    const seq = confirms?.next() ?? 0;

    const delay = exchange.type instanceof DelayedMessageExchange ? delayOf(headers) : undefined;
    if (delay !== undefined) {
      // Held back by the delayed-message exchange; like the plugin, a mandatory publish is returned
      // because nothing is routed now.
      // It is held as published (BCC included), so a restart can still route to the BCC keys.
      const durable = vhost.delay(exchange, published, cc, delay);
      if (args.mandatory) this.sendReturn(args, published.withoutBcc());
      confirms?.confirmWhenSafe(seq, durable);
      return durable;
    }

    const { message, queues, durable, rejected } = vhost.publish(exchange, published, cc);
    if (queues.size === 0 && args.mandatory) this.sendReturn(args, message);
    // x-overflow=reject-publish: RabbitMQ nacks a message any of its queues refused.
    if (rejected) confirms?.nack(seq);
    else confirms?.confirmWhenSafe(seq, durable);
    return durable;
  }

  // ---- transactions -------------------------------------------------------------------------

  /** A publish inside a transaction: the exchange is checked now, routing waits for commit. */
  hold(args: BasicPublishArgs, header: Buffer, body: Buffer): void {
    this.publishable(args.exchange);
    this.held.push({ args, header: Buffer.from(header), body: Buffer.from(body) });
  }

  /** tx.commit: publishes the held messages (returns go out now); true when a store commit holds one. */
  commit(): boolean {
    const held = this.held;
    this.held = [];
    let durable = false;
    for (const p of held) if (this.publish(p.args, p.header, p.body)) durable = true;
    return durable;
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
