import { randomBytes } from 'node:crypto';
import { notFound, preconditionFailed, resourceName } from '../errors.js';
import type { BasicProperties } from '../frame/generated/properties.js';
import { encodeMethodFrame } from '../frame/generated/methods.js';
import type { Message } from '../queue/message.js';
import type { Channel } from './channel.js';

/** RabbitMQ's direct reply-to pseudo-queue (RabbitMQ direct-reply-to guide). */
export const REPLY_TO = 'amq.rabbitmq.reply-to';
const PREFIX = `${REPLY_TO}.`;

/** The consumer a channel registered on amq.rabbitmq.reply-to. */
export interface ReplyConsumer {
  tag: string;
  /** The unique part of the reply address, "amq.rabbitmq.reply-to.<suffix>". */
  suffix: string;
}

/** Broker-wide table of channels that consume from amq.rabbitmq.reply-to, by address suffix. */
export class ReplyToRegistry {
  private readonly channels = new Map<string, Channel>();

  register(ch: Channel): string {
    const suffix = `${randomBytes(12).toString('base64url')}.${randomBytes(16).toString('base64url')}`;
    this.channels.set(suffix, ch);
    return suffix;
  }

  unregister(suffix: string): void {
    this.channels.delete(suffix);
  }

  /** The channel behind a full reply address, if it is still there. */
  lookup(address: string): Channel | undefined {
    return address.startsWith(PREFIX) ? this.channels.get(address.slice(PREFIX.length)) : undefined;
  }
}

export function isReplyAddress(name: string): boolean {
  return name.startsWith(PREFIX);
}

/** basic.consume on amq.rabbitmq.reply-to: no-ack only, one per channel. */
export function consumeReplyTo(ch: Channel, consumerTag: string, noAck: boolean): string {
  if (ch.replyConsumer) throw preconditionFailed('reply consumer already set');
  if (!noAck) throw preconditionFailed('reply consumer cannot acknowledge');
  const tag = consumerTag === '' ? ch.generateConsumerTag() : consumerTag;
  const suffix = ch.conn.broker.replyTo.register(ch);
  ch.replyConsumer = { tag, suffix };
  return tag;
}

export function cancelReplyTo(ch: Channel): void {
  if (!ch.replyConsumer) return;
  ch.conn.broker.replyTo.unregister(ch.replyConsumer.suffix);
  ch.replyConsumer = undefined;
}

/**
 * A request published with reply_to=amq.rabbitmq.reply-to gets the address of the
 * publishing channel's reply consumer instead (rabbit_channel:maybe_set_fast_reply_to); without
 * a reply consumer it is 406.
 */
export function rewriteReplyTo(replyConsumer: ReplyConsumer | undefined, props: BasicProperties): BasicProperties | undefined {
  if (props.replyTo !== REPLY_TO) return undefined;
  if (!replyConsumer) throw preconditionFailed('fast reply consumer does not exist');
  return { ...props, replyTo: PREFIX + replyConsumer.suffix };
}

/**
 * A reply published to the default exchange with a reply address (its routing key, or one of
 * its CC or BCC keys) goes straight to the waiting channel (no queue), as published: its routing
 * key, its headers without BCC. Returns false when nobody waits there any more.
 */
export function deliverReply(registry: ReplyToRegistry, address: string, msg: Message): boolean {
  const target = registry.lookup(address);
  const consumer = target?.replyConsumer;
  if (!target || !consumer) return false;
  target.conn.writer.writeContent(
    target.id,
    encodeMethodFrame(target.id, 'basic.deliver', {
      consumerTag: consumer.tag, deliveryTag: target.nextDeliveryTag(), redelivered: false, exchange: '', routingKey: msg.routingKey,
    }),
    msg.header,
    msg.body,
  );
  return true;
}

/** queue.declare (always passive in effect) of a reply address: 0 messages, 1 consumer, or 404. */
export function declareReplyAddress(ch: Channel, name: string, vhost: string): { queue: string; messageCount: number; consumerCount: number } {
  if (name === REPLY_TO || ch.conn.broker.replyTo.lookup(name)) return { queue: name, messageCount: 0, consumerCount: 1 };
  throw notFound(`no ${resourceName('queue', name, vhost)}`);
}

