import { ConnectionError, ReplyCode } from '../errors.js';
import type { VHost } from '../vhost/vhost.js';
import type { Connection } from './connection.js';

/**
 * At connection.open, before the user's connection limit and the permission check
 * (rabbit_reader:is_over_vhost_connection_limit): the vhost's max-connections counts the
 * connections open in it; 0 refuses every one, no limit when absent (src/vhost/vhost-limits.ts).
 */
export function checkVhostConnectionLimit(conn: Connection, vhost: VHost): void {
  const limit = vhost.limits.maxConnections;
  if (limit === undefined) return;
  let open = 0;
  if (limit > 0) for (const c of conn.broker.connections) if (c !== conn && c.state === 'open' && c.vhost === vhost) open++;
  if (open >= limit) {
    throw new ConnectionError(
      ReplyCode.NOT_ALLOWED,
      `access to vhost '${vhost.name}' refused for user '${conn.username}': connection limit (${limit}) is reached`,
    );
  }
}
