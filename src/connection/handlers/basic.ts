import { accessRefused, ConnectionError, notFound, preconditionFailed, ReplyCode, resourceName } from '../../errors.js';
import type { BasicPublishArgs } from '../../frame/generated/methods.js';
import { encodeMethodFrame } from '../../frame/generated/methods.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../../frame/generated/properties.js';
import { fieldTypeName } from '../../vhost/equivalence.js';
import { Consumer } from '../../queue/consumer.js';
import { Message, senderSelectedRoutingKeys } from '../../queue/message.js';
import { parseConsumerPriority, parseExpiration } from '../../queue/queue-arguments.js';
import { delayOf, DelayedMessageExchange } from '../../exchange/delayed-message-exchange.js';
import type { Exchange } from '../../vhost/exchange.js';
import type { Channel } from '../channel.js';
import { cancelReplyTo, consumeReplyTo, deliverReply, isReplyAddress, REPLY_TO, rewriteReplyTo } from '../direct-reply-to.js';
import type { ChannelHandlers } from './types.js';

export const basicHandlers: ChannelHandlers = {
  'basic.publish': (ch, args) => {
    if (args.immediate) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, 'immediate=true');
    ch.conn.markPublisher();
    ch.startContent(args);
  },

  'basic.consume': (ch, args) => {
    if (ch.consumers.has(args.consumerTag) || (args.consumerTag !== '' && ch.replyConsumer?.tag === args.consumerTag)) {
      throw new ConnectionError(ReplyCode.NOT_ALLOWED, `attempt to reuse consumer tag '${args.consumerTag}'`);
    }
    if (args.queue === REPLY_TO) {
      const replyTag = consumeReplyTo(ch, args.consumerTag, args.noAck);
      if (!args.noWait) ch.send('basic.consume-ok', { consumerTag: replyTag });
      return;
    }
    const vhost = ch.vhost;
    const queue = vhost.getQueue(ch.queueName(args.queue), ch.conn);
    const rs = resourceName('queue', queue.name, vhost.name);
    // Single-active-consumer queues refuse exclusive consumers outright.
    if (queue.hasExclusiveConsumer() || (args.exclusive && (queue.consumerCount > 0 || queue.settings.singleActiveConsumer))) {
      throw accessRefused(`${rs} in exclusive use`);
    }
    const tag = args.consumerTag === '' ? ch.generateConsumerTag() : args.consumerTag;
    const priority = parseConsumerPriority(args.arguments, rs);
    const consumer = new Consumer(tag, ch, queue, args.noAck, args.exclusive, ch.consumerPrefetch, priority, args.arguments);
    ch.consumers.set(tag, consumer);
    if (!args.noWait) ch.send('basic.consume-ok', { consumerTag: tag });
    queue.addConsumer(consumer);
  },

  'basic.cancel': (ch, args) => {
    if (ch.replyConsumer?.tag === args.consumerTag) cancelReplyTo(ch);
    const consumer = ch.consumers.get(args.consumerTag);
    if (consumer) {
      ch.consumers.delete(args.consumerTag);
      consumer.queue.removeConsumer(consumer);
    }
    // The spec asks us to answer a cancel of an unknown tag as if it had worked.
    if (!args.noWait) ch.send('basic.cancel-ok', { consumerTag: args.consumerTag });
  },

  'basic.get': (ch, args) => {
    const queue = ch.vhost.getQueue(ch.queueName(args.queue), ch.conn);
    const entry = queue.take();
    if (!entry) ch.send('basic.get-empty', { reserved1: '' });
    else ch.deliverGet(queue, entry, args.noAck);
  },

  'basic.ack': (ch, args) => ch.ack(ch.takeDeliveries(args.deliveryTag, args.multiple)),
  'basic.reject': (ch, args) => ch.reject(ch.takeDeliveries(args.deliveryTag, false), args.requeue),
  'basic.nack': (ch, args) => ch.reject(ch.takeDeliveries(args.deliveryTag, args.multiple), args.requeue),

  'basic.qos': (ch, args) => {
    if (args.prefetchSize !== 0) {
      throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, `prefetch_size!=0 (${args.prefetchSize})`);
    }
    // RabbitMQ's meaning (consumer-prefetch doc): global=false applies to each new consumer,
    // global=true is shared by all consumers on the channel. As in rabbit_channel, a
    // per-consumer qos also lifts the channel-wide limit.
    if (args.global) ch.globalPrefetch = args.prefetchCount;
    else {
      ch.consumerPrefetch = args.prefetchCount;
      ch.globalPrefetch = 0;
    }
    ch.send('basic.qos-ok', {});
    ch.resumeDelivery();
  },

  'basic.recover': (ch, args) => {
    recover(ch, args.requeue);
    ch.send('basic.recover-ok', {});
  },
  'basic.recover-async': (ch, args) => recover(ch, args.requeue),
};

function recover(ch: Channel, requeue: boolean): void {
  if (!requeue) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, 'requeue=false');
  ch.recoverAll();
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

/** The exchange a basic.publish names, if it exists and may be published to (404 / 403). */
export function checkPublishable(ch: Channel, name: string): Exchange {
  const vhost = ch.vhost;
  const exchange = vhost.exchanges.get(name);
  if (!exchange) throw notFound(`no ${resourceName('exchange', name, vhost.name)}`);
  if (exchange.internal) throw accessRefused(`cannot publish to internal ${resourceName('exchange', name, vhost.name)}`);
  return exchange;
}

/**
 * A complete basic.publish (method, header, body): route it, enqueue it, and answer the
 * publisher with basic.return (mandatory, unroutable) and, in confirm mode, basic.ack once the
 * message is safe — in the store for persistent messages on durable queues. Returns true when
 * a store commit holds the message.
 */
export function publishContent(ch: Channel, args: BasicPublishArgs, header: Buffer, body: Buffer): boolean {
  const vhost = ch.vhost;
  const exchange = checkPublishable(ch, args.exchange);
  let properties = decodeContentHeader(header).properties;
  if (properties.userId !== undefined && properties.userId !== ch.conn.username) {
    throw preconditionFailed(`user_id property set to '${properties.userId}' but authenticated user was '${ch.conn.username}'`);
  }
  const withReplyAddress = rewriteReplyTo(ch, properties);
  if (withReplyAddress) {
    properties = withReplyAddress;
    header = encodeContentHeaderPayload(60, body.length, properties);
  }
  const headers = properties.headers;
  const ttl = parseExpiration(properties.expiration);
  checkMessage(properties);
  const cc = senderSelectedRoutingKeys(headers);
  if (args.exchange === '' && isReplyAddress(args.routingKey)) {
    // Direct reply-to: the reply goes straight to the waiting channel, or is unroutable.
    const reply = new Message(0, '', args.routingKey, header, body, properties);
    const seqNo = ch.confirmMode ? ch.nextPublishSeq() : 0;
    if (!deliverReply(ch, args.routingKey, reply) && args.mandatory) sendReturn(ch, args, reply);
    if (seqNo) ch.confirmWhenSafe(seqNo, false);
    return false;
  }

  const published = new Message(ch.conn.broker.nextMessageId(), args.exchange, args.routingKey, Message.compact(header), Message.compact(body), properties);
  published.ttl = ttl;
  const seq = ch.confirmMode ? ch.nextPublishSeq() : 0;

  const delay = exchange.type instanceof DelayedMessageExchange ? delayOf(headers) : undefined;
  if (delay !== undefined) {
    // Held back by the delayed-message exchange; like the plugin, a mandatory publish is returned
    // because nothing is routed now.
    // It is held as published (BCC included), so a restart can still route to the BCC keys.
    const durable = vhost.delay(exchange, published, cc, delay);
    if (args.mandatory) sendReturn(ch, args, published.withoutBcc());
    if (seq) ch.confirmWhenSafe(seq, durable);
    return durable;
  }

  const { message, queues, durable, rejected } = vhost.publish(exchange, published, cc);
  if (queues.size === 0 && args.mandatory) sendReturn(ch, args, message);
  // x-overflow=reject-publish: RabbitMQ nacks a message any of its queues refused.
  if (seq && rejected) ch.nackPublish(seq);
  else if (seq) ch.confirmWhenSafe(seq, durable);
  return durable;
}

/** basic.return 312 NO_ROUTE with the message's properties and body. */
function sendReturn(ch: Channel, args: BasicPublishArgs, msg: Message): void {
  ch.conn.writer.writeContent(
    ch.id,
    encodeMethodFrame(ch.id, 'basic.return', { replyCode: ReplyCode.NO_ROUTE, replyText: 'NO_ROUTE', exchange: args.exchange, routingKey: args.routingKey }),
    msg.header,
    msg.body,
  );
}
