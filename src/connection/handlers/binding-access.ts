import { accessRefused } from '../../errors.js';
import type { Channel } from '../channel.js';

/**
 * rabbit_channel:binding_action's checks before a bind or unbind touches anything: write on
 * the destination, neither end the default exchange, read on the source, and, when the source
 * is a topic exchange that exists, topic read permission on the binding key.
 */
export function checkBindingAccess(ch: Channel, source: string, destinationKind: 'queue' | 'exchange', destination: string, routingKey: string): void {
  const access = ch.access;
  access.write(destinationKind, destination);
  if (source === '' || (destinationKind === 'exchange' && destination === '')) {
    throw accessRefused('operation not permitted on the default exchange');
  }
  access.read('exchange', source);
  const exchange = ch.vhost.exchanges.get(source);
  if (exchange) access.topicRead(exchange, routingKey);
}
