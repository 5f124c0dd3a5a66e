/**
 * /api/connections, /api/channels and /api/consumers. Monitors and administrators see every
 * user's; other users their own (rabbit_mgmt_util:filter_user). DELETE /api/connections/{name}
 * closes a connection with 320 CONNECTION_FORCED and the X-Reason header's text.
 */
import type { Channel } from '../../connection/channel.js';
import type { Connection } from '../../connection/connection.js';
import { isAdmin, isMonitor } from '../auth.js';
import { channelName, formatChannel, formatConnection, formatConsumer, NODE } from '../format.js';
import { noContent, notAuthorised, objectNotFound, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import { requestVhost } from './queues.js';

/** Connections past the handshake (RabbitMQ lists a connection once it is open). */
function openConnections(ctx: RequestContext): Connection[] {
  return [...ctx.broker.connections].filter((c) => c.vhost !== undefined);
}

/** rabbit_mgmt_util:filter_conn_ch_list: the path's (or X-Vhost's) vhost, and the user's own unless a monitor. */
function visibleConnections(ctx: RequestContext): Connection[] {
  const vhost = requestVhost(ctx);
  const monitor = isMonitor(ctx.user);
  return openConnections(ctx).filter((c) => (!vhost || c.vhost === vhost) && (monitor || c.username === ctx.user.name));
}

/** is_authorized_user: GET needs a monitor or the owner, DELETE an administrator or the owner. */
function checkOwner(ctx: RequestContext, owner: string): void {
  const privileged = ctx.method === 'DELETE' ? isAdmin(ctx.user) : isMonitor(ctx.user);
  if (!privileged && owner !== ctx.user.name) throw notAuthorised('User not authorised to access object');
}

function namedConnection(ctx: RequestContext): Connection {
  const name = ctx.params['connection']!;
  const conn = openConnections(ctx).find((c) => c.name === name);
  if (!conn) throw objectNotFound();
  checkOwner(ctx, conn.username);
  return conn;
}

const connectionsList = (paginate: boolean) => (ctx: RequestContext): Reply =>
  ok(listReply(visibleConnections(ctx).map((c) => formatConnection(c)), ctx.query, ['vhost', 'name'], { columnsFirst: true, paginate }));

function channelsOf(conns: Connection[]): Channel[] {
  return conns.flatMap((c) => [...c.channels.values()].filter((ch) => ch.opened));
}

const channelsList = (paginate: boolean) => (ctx: RequestContext): Reply =>
  ok(listReply(channelsOf(visibleConnections(ctx)).map((ch) => formatChannel(ch, ctx.stats)), ctx.query, ['vhost', 'name'], { columnsFirst: true, paginate }));

function closeConnection(ctx: RequestContext): Reply {
  const conn = namedConnection(ctx);
  const reason = ctx.headers['x-reason'];
  conn.forceClose(typeof reason === 'string' ? reason : 'Closed via management plugin');
  return noContent();
}

/**
 * /api/connections/username/{username} (rabbit_mgmt_wm_connection_user_name): the user's
 * connections as connection tracking lists them (name, vhost, user, node); DELETE closes them
 * all (X-Reason as for one). Monitors (administrators to close) or the user itself; a user
 * without connections is an empty list to anyone.
 */
function userConnections(ctx: RequestContext): Connection[] {
  const user = ctx.params['username']!;
  const conns = openConnections(ctx).filter((c) => c.username === user);
  if (conns.length > 0) checkOwner(ctx, user);
  return conns;
}

function listUserConnections(ctx: RequestContext): Reply {
  const items = userConnections(ctx).map((c) => ({ name: c.name, vhost: c.vhost!.name, user: c.username, node: NODE }));
  return ok(listReply(items, ctx.query, [], { paginate: true }));
}

function closeUserConnections(ctx: RequestContext): Reply {
  const reason = ctx.headers['x-reason'];
  for (const conn of userConnections(ctx)) conn.forceClose(typeof reason === 'string' ? reason : 'Closed via management plugin');
  return noContent();
}

function connectionChannels(ctx: RequestContext): Reply {
  const conn = namedConnection(ctx);
  return ok(listReply(channelsOf([conn]).map((ch) => formatChannel(ch, ctx.stats)), ctx.query, ['vhost', 'name'], { columnsFirst: true, paginate: false }));
}

function showChannel(ctx: RequestContext): Reply {
  const name = ctx.params['channel']!;
  const ch = channelsOf(openConnections(ctx)).find((c) => channelName(c) === name);
  if (!ch) throw objectNotFound();
  checkOwner(ctx, ch.conn.username);
  return ok(objectReply(formatChannel(ch, ctx.stats, true), ctx.query));
}

/** /api/consumers[/{vhost}]: every user's consumers for monitors, the user's own for others. */
function consumers(ctx: RequestContext): Reply {
  const vhost = requestVhost(ctx);
  const monitor = isMonitor(ctx.user);
  const items: Json[] = [];
  for (const conn of openConnections(ctx)) {
    if ((vhost && conn.vhost !== vhost) || (!monitor && conn.username !== ctx.user.name)) continue;
    for (const ch of conn.channels.values()) for (const c of ch.consumers.values()) items.push(formatConsumer(c));
  }
  return ok(listReply(items, ctx.query, ['vhost', 'name'], { columnsFirst: true, paginate: false }));
}

export const connectionRoutes: Route[] = [
  { path: '/api/connections', access: 'management', GET: connectionsList(true) },
  { path: '/api/connections/:connection', access: 'management', GET: (ctx) => ok(objectReply(formatConnection(namedConnection(ctx), true), ctx.query)), DELETE: closeConnection },
  { path: '/api/connections/username/:username', access: 'management', GET: listUserConnections, DELETE: closeUserConnections },
  { path: '/api/connections/:connection/channels', access: 'management', GET: connectionChannels },
  { path: '/api/channels', access: 'management', GET: channelsList(true) },
  { path: '/api/channels/:channel', access: 'management', GET: showChannel },
  { path: '/api/consumers', access: 'management', GET: consumers },
  { path: '/api/consumers/:vhost', access: 'management', GET: consumers },
];

export const vhostConnectionRoutes: Route[] = [
  { path: '/api/vhosts/:vhost/connections', access: 'vhost', GET: connectionsList(false) },
  { path: '/api/vhosts/:vhost/channels', access: 'vhost', GET: channelsList(false) },
];
