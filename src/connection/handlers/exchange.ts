import { checkBindingAccess } from './binding-access.js';
import type { ChannelHandlers } from './types.js';

export const exchangeHandlers: ChannelHandlers = {
  'exchange.declare': (ch, args) => {
    // Passive declares check no permission (rabbit_channel); the rest check configure (and read
    // and write for an alternate exchange) inside the declare, in RabbitMQ's order.
    ch.vhost.declareExchange({
      name: args.exchange, type: args.type, passive: args.passive, durable: args.durable,
      autoDelete: args.autoDelete, internal: args.internal, arguments: args.arguments, guard: ch.access, actingUser: ch.conn.username,
    });
    if (!args.noWait) ch.send('exchange.declare-ok', {});
  },
  'exchange.delete': (ch, args) => {
    ch.vhost.deleteExchange(args.exchange, { ifUnused: args.ifUnused, guard: ch.access });
    if (!args.noWait) ch.send('exchange.delete-ok', {});
  },
  'exchange.bind': (ch, args) => {
    checkBindingAccess(ch, args.source, 'exchange', args.destination, args.routingKey);
    const vhost = ch.vhost;
    const source = vhost.getExchange(args.source);
    const destination = vhost.getExchange(args.destination);
    vhost.bind(source, destination, args.routingKey, args.arguments);
    if (!args.noWait) ch.send('exchange.bind-ok', {});
  },
  'exchange.unbind': (ch, args) => {
    checkBindingAccess(ch, args.source, 'exchange', args.destination, args.routingKey);
    const vhost = ch.vhost;
    // As for queue.unbind, a missing exchange on either side is not an error in RabbitMQ 3.10.
    const source = vhost.exchanges.get(args.source);
    const destination = vhost.exchanges.get(args.destination);
    if (source && destination) vhost.unbind(source, destination, args.routingKey, args.arguments);
    if (!args.noWait) ch.send('exchange.unbind-ok', {});
  },
};
