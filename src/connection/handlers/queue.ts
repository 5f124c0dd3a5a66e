import { declareReplyAddress, REPLY_TO } from '../direct-reply-to.js';
import { checkBindingAccess } from './binding-access.js';
import { refuseOnStream } from '../../stream/stream-refusals.js';
import type { ChannelHandlers } from './types.js';

export const queueHandlers: ChannelHandlers = {
  'queue.declare': (ch, args) => {
    if (args.queue.startsWith(REPLY_TO)) {
      // Declares of the direct reply-to pseudo-queue are passive in effect (rabbit_channel).
      const ok = declareReplyAddress(ch, args.queue, ch.vhost.name);
      if (!args.noWait) ch.send('queue.declare-ok', ok);
      return;
    }
    // Passive declares check no permission; the rest check configure on the (generated) name,
    // and read on the queue and write on its dead-letter exchange when it is new.
    const q = ch.vhost.declareQueue({
      name: args.queue, passive: args.passive, durable: args.durable, exclusive: args.exclusive,
      autoDelete: args.autoDelete, arguments: args.arguments, owner: ch.conn, guard: ch.access,
    });
    ch.lastQueueName = q.name;
    if (!args.noWait) ch.send('queue.declare-ok', { queue: q.name, messageCount: q.messageCount, consumerCount: q.consumerCount });
  },
  'queue.bind': (ch, args) => {
    const vhost = ch.vhost;
    const queueName = ch.queueName(args.queue);
    // RabbitMQ: an empty queue name and routing key both mean the last declared queue.
    const routingKey = args.queue === '' && args.routingKey === '' ? queueName : args.routingKey;
    checkBindingAccess(ch, args.exchange, 'queue', queueName, routingKey);
    // rabbit_binding reports a missing source before a missing destination.
    const exchange = vhost.getExchange(args.exchange);
    const queue = vhost.getQueue(queueName, ch.conn);
    vhost.bind(exchange, queue, routingKey, args.arguments);
    if (!args.noWait) ch.send('queue.bind-ok', {});
  },
  'queue.unbind': (ch, args) => {
    const vhost = ch.vhost;
    const queueName = ch.queueName(args.queue);
    // The same shortcut as queue.bind (rabbit_channel:expand_shortcuts).
    const routingKey = args.queue === '' && args.routingKey === '' ? queueName : args.routingKey;
    checkBindingAccess(ch, args.exchange, 'queue', queueName, routingKey);
    // RabbitMQ 3.10 answers unbind-ok when the exchange or the queue does not exist.
    const exchange = vhost.exchanges.get(args.exchange);
    const queue = vhost.queues.get(queueName);
    // rabbit_binding:remove checks an exclusive queue's owner only for a binding it removes.
    if (exchange && queue) vhost.unbind(exchange, queue, routingKey, args.arguments, () => vhost.getQueue(queue.name, ch.conn));
    ch.send('queue.unbind-ok', {});
  },
  'queue.purge': (ch, args) => {
    const name = ch.queueName(args.queue);
    ch.access.read('queue', name);
    const queue = ch.vhost.getQueue(name, ch.conn);
    refuseOnStream(queue, ch.vhost.name, 'queue.purge');
    const messageCount = queue.purge();
    if (!args.noWait) ch.send('queue.purge-ok', { messageCount });
  },
  'queue.delete': (ch, args) => {
    const name = ch.queueName(args.queue);
    ch.access.configure('queue', name);
    ch.cancelsAfter(() => {
      const messageCount = ch.vhost.deleteQueue(name, ch.conn, { ifUnused: args.ifUnused, ifEmpty: args.ifEmpty });
      if (!args.noWait) ch.send('queue.delete-ok', { messageCount });
    });
  },
};
