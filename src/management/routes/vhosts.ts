/** /api/vhosts: the vhosts the user may see, with live message counts and traffic. */
import type { Broker } from '../../broker.js';
import type { VHost } from '../../vhost/vhost.js';
import { NODE } from '../format.js';
import { objectNotFound, ok, type Reply } from '../http.js';
import { noRate, type Json, type JsonObject } from '../json.js';
import { asMap, listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import type { MessageStatsSource } from '../stats.js';

/** RabbitMQ creates "/" with this description; other vhosts have none until one is given. */
export function vhostDescription(name: string): string {
  return name === '/' ? 'Default virtual host' : '';
}

/** A vhost as rabbit_vhost:info plus the management database's counts shows it. */
export function formatVhost(broker: Broker, vhost: VHost, stats: MessageStatsSource): JsonObject {
  let ready = 0;
  let unacked = 0;
  for (const q of vhost.queues.values()) {
    ready += q.messageCount;
    unacked += q.unackedCount;
  }
  let recv = 0;
  let send = 0;
  for (const conn of broker.connections) {
    if (conn.vhost !== vhost) continue;
    recv += conn.socket.bytesRead;
    send += conn.socket.bytesWritten;
  }
  const description = vhostDescription(vhost.name);
  return {
    cluster_state: { [NODE]: 'running' },
    default_queue_type: 'undefined',
    description,
    message_stats: stats.vhost?.(vhost.name),
    messages: ready + unacked,
    messages_details: noRate(),
    messages_ready: ready,
    messages_ready_details: noRate(),
    messages_unacknowledged: unacked,
    messages_unacknowledged_details: noRate(),
    metadata: asMap({ description, tags: [] }),
    name: vhost.name,
    recv_oct: recv,
    recv_oct_details: noRate(),
    send_oct: send,
    send_oct_details: noRate(),
    tags: [],
    tracing: false,
  };
}

function list(ctx: RequestContext): Reply {
  const visible = ctx.visibleVhosts();
  const items: Json[] = [...ctx.broker.vhosts.values()].filter((v) => visible.has(v.name)).map((v) => formatVhost(ctx.broker, v, ctx.stats));
  return ok(listReply(items, ctx.query, ['vhost', 'name']));
}

function show(ctx: RequestContext): Reply {
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) throw objectNotFound();
  return ok(objectReply(formatVhost(ctx.broker, vhost, ctx.stats), ctx.query));
}

export const vhostRoutes: Route[] = [
  { path: '/api/vhosts', access: 'management', GET: list },
  // RabbitMQ 3.10 lets only administrators read one vhost (rabbit_mgmt_wm_vhost).
  { path: '/api/vhosts/:vhost', access: 'admin', GET: show },
];
