import { accessRefused, ConnectionError, internalError, ReplyCode, resourceName } from '../../errors.js';
import { Consumer } from '../../queue/consumer.js';
import { parseConsumeArguments } from '../../queue/queue-arguments.js';
import type { Channel } from '../channel.js';
import type { MethodArgsByName } from '../../frame/generated/methods.js';
import { checkReadable, parseStreamConsumeArguments } from '../../stream/stream-arguments.js';
import type { StreamQueue } from '../../stream/stream-queue.js';
import { checkStreamConsumer, isStream, refuseOnStream } from '../../stream/stream-refusals.js';
import { cancelReplyTo, consumeReplyTo, REPLY_TO } from '../direct-reply-to.js';
import { startPublish } from '../dispatch.js';
import type { ChannelHandlers } from './types.js';

export const basicHandlers: ChannelHandlers = {
  'basic.publish': (ch, args) => {
    if (args.immediate) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, 'immediate=true');
    startPublish(ch, args.exchange, args.routingKey, args.mandatory);
  },

  'basic.consume': (ch, args) => {
    const max = ch.conn.broker.config.consumerMaxPerChannel;
    if (max > 0 && ch.consumers.size >= max && !ch.consumers.has(args.consumerTag)) {
      throw new ConnectionError(ReplyCode.NOT_ALLOWED, `reached maximum (${max}) of consumers per channel`);
    }
    if (ch.consumers.has(args.consumerTag) || (args.consumerTag !== '' && ch.replyConsumer?.tag === args.consumerTag)) {
      throw new ConnectionError(ReplyCode.NOT_ALLOWED, `attempt to reuse consumer tag '${args.consumerTag}'`);
    }
    if (args.queue === REPLY_TO) {
      const replyTag = consumeReplyTo(ch, args.consumerTag, args.noAck);
      if (!args.noWait) ch.send('basic.consume-ok', { consumerTag: replyTag });
      return;
    }
    const vhost = ch.vhost;
    const name = ch.queueName(args.queue);
    ch.access.read('queue', name);
    const queue = vhost.getQueue(name, ch.conn);
    const rs = resourceName('queue', queue.name, vhost.name);
    if (isStream(queue)) return consumeStream(ch, queue, args, rs);
    const priority = parseConsumeArguments(queue.isQuorum ? 'quorum' : 'classic', args.arguments, rs);
    // rabbit_quorum_queue:consume refuses a channel-wide prefetch (rabbit_fifo has no shared limit).
    if (queue.isQuorum && ch.globalPrefetch > 0) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, `${rs} does not support global qos`);
    // Single-active-consumer queues refuse exclusive consumers outright.
    if (queue.hasExclusiveConsumer() || (args.exclusive && (queue.consumerCount > 0 || queue.settings.singleActiveConsumer))) {
      throw accessRefused(`${rs} in exclusive use`);
    }
    const tag = args.consumerTag === '' ? ch.generateConsumerTag() : args.consumerTag;
    const consumer = new Consumer(tag, ch, queue, { noAck: args.noAck, exclusive: args.exclusive, prefetch: ch.consumerPrefetch, priority, arguments: args.arguments });
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
    const name = ch.queueName(args.queue);
    ch.access.read('queue', name);
    const queue = ch.vhost.getQueue(name, ch.conn);
    refuseOnStream(queue, ch.vhost.name, 'basic.get');
    const entry = queue.take();
    if (!entry) ch.getEmpty(queue);
    else ch.deliverGet(queue, entry, args.noAck);
  },

  'basic.ack': (ch, args) => ch.ackTag(args.deliveryTag, args.multiple),
  'basic.reject': (ch, args) => ch.rejectTag(args.deliveryTag, false, args.requeue),
  'basic.nack': (ch, args) => ch.rejectTag(args.deliveryTag, args.multiple, args.requeue),

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
    checkRecover(ch, args.requeue);
    // RabbitMQ answers before the queues deliver what went back to them.
    ch.send('basic.recover-ok', {});
    ch.recoverAll();
  },
  'basic.recover-async': (ch, args) => {
    checkRecover(ch, args.requeue);
    ch.recoverAll();
  },
};

/** basic.consume on a stream: offset, then prefetch and no-ack checks; the consumer reads from its offset. */
function consumeStream(ch: Channel, queue: StreamQueue, args: MethodArgsByName['basic.consume'], rs: string): void {
  const spec = parseStreamConsumeArguments(args.arguments, rs, ch.conn.broker.clock.now());
  checkStreamConsumer(rs, ch.consumerPrefetch, args.noAck);
  checkReadable(spec);
  const tag = args.consumerTag === '' ? ch.generateConsumerTag() : args.consumerTag;
  const consumer = new Consumer(tag, ch, queue, { noAck: false, exclusive: args.exclusive, prefetch: ch.consumerPrefetch, priority: 0, arguments: args.arguments });
  ch.consumers.set(tag, consumer);
  if (!args.noWait) ch.send('basic.consume-ok', { consumerTag: tag });
  queue.addStreamConsumer(consumer, spec);
}

/** What basic.recover refuses: requeue=false, and stream deliveries. */
function checkRecover(ch: Channel, requeue: boolean): void {
  if (!requeue) throw new ConnectionError(ReplyCode.NOT_IMPLEMENTED, 'requeue=false');
  // Requeueing a stream's deliveries crashes RabbitMQ 3.10's channel (541 INTERNAL_ERROR).
  for (const d of ch.unacked.values()) if (isStream(d.queue)) throw internalError('').withoutMethod();
}
