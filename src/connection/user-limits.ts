import { ConnectionError, ReplyCode } from '../errors.js';
import type { Connection } from './connection.js';

/**
 * RabbitMQ's per-user limits (rabbitmqctl set_user_limits; the `limits` of a user): at most
 * max-connections open connections and max-channels open channels, across the node. A negative
 * limit is no limit; 0 refuses every one.
 */
function limitOf(conn: Connection, name: 'max-connections' | 'max-channels'): number | undefined {
  if (conn.unrestricted) return undefined; // DIRECT_USER is no user of the database
  const limit = conn.broker.access.user(conn.username)?.limits[name];
  return limit === undefined || limit < 0 ? undefined : limit;
}

/** At connection.open (rabbit_reader:is_over_user_connection_limit). */
export function checkUserConnectionLimit(conn: Connection): void {
  const limit = limitOf(conn, 'max-connections');
  if (limit === undefined) return;
  let open = 0;
  for (const c of conn.broker.connections) if (c !== conn && c.state === 'open' && c.username === conn.username) open++;
  if (open >= limit) {
    throw new ConnectionError(ReplyCode.NOT_ALLOWED, `connection refused for user '${conn.username}': user connection limit (${limit}) is reached`);
  }
}

/** Before a new channel (rabbit_reader:create_channel). */
export function checkUserChannelLimit(conn: Connection): void {
  const limit = limitOf(conn, 'max-channels');
  if (limit === undefined) return;
  let open = 0;
  for (const c of conn.broker.connections) if (c.username === conn.username) open += c.channels.size;
  if (open >= limit) {
    throw new ConnectionError(ReplyCode.NOT_ALLOWED, `number of channels opened for user '${conn.username}' has reached the maximum allowed user limit of (${limit})`);
  }
}
