/**
 * /api/vhosts: the vhosts the user may see, with live message counts and traffic; PUT creates
 * one or updates its description and tags, DELETE deletes it with everything in it
 * (rabbit_mgmt_wm_vhost(s)). Both go through the broker's putVhost and deleteVhost.
 */
import type { Broker } from '../../broker.js';
import type { VHost } from '../../vhost/vhost.js';
import { accessFailure } from '../access-errors.js';
import { NODE } from '../format.js';
import { badRequest, handlerCrashed, noContent, objectNotFound, ok, parseBodyBool, type Reply } from '../http.js';
import { noRate, type Json, type JsonObject } from '../json.js';
import { asMap, listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import type { MessageStatsSource } from '../stats.js';

/** A vhost as rabbit_vhost:info plus the management database's counts shows it. */
export function formatVhost(broker: Broker, vhost: VHost, stats: MessageStatsSource): JsonObject {
  const totals = broker.metrics.queueTotals([vhost]);
  let recv = 0;
  let send = 0;
  for (const conn of broker.connections) {
    if (conn.vhost !== vhost) continue;
    recv += conn.socket.bytesRead;
    send += conn.socket.bytesWritten;
  }
  const { description, tags, defaultQueueType } = vhost.metadata;
  // vhost:get_metadata: a map (keys sorted), with default_queue_type only when one was given.
  const metadata: JsonObject = defaultQueueType === undefined ? { description, tags: [...tags] } : { default_queue_type: defaultQueueType, description, tags: [...tags] };
  return {
    cluster_state: { [NODE]: 'running' },
    default_queue_type: defaultQueueType ?? 'undefined',
    description,
    message_stats: stats.vhost?.(vhost.name),
    messages: totals.messages,
    messages_details: noRate(),
    messages_ready: totals.messages_ready,
    messages_ready_details: noRate(),
    messages_unacknowledged: totals.messages_unacknowledged,
    messages_unacknowledged_details: noRate(),
    metadata: asMap(metadata),
    name: vhost.name,
    recv_oct: recv,
    recv_oct_details: noRate(),
    send_oct: send,
    send_oct_details: noRate(),
    tags: [...tags],
    // rabbit_trace:enabled (src/trace).
    tracing: broker.tracing.enabled(vhost.name),
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

/**
 * rabbit_vhost:parse_tags: a comma-separated string (empty items kept) or a list, each item
 * trimmed; absent, null, "undefined" and "null" mean none. Anything else crashes it (500).
 */
function vhostTags(value: unknown): string[] {
  if (value === undefined || value === null || value === 'undefined' || value === 'null' || value === '') return [];
  if (typeof value === 'string') return value.split(',').map((t) => t.trim());
  if (!Array.isArray(value)) throw handlerCrashed();
  return value.map((t) => {
    if (typeof t === 'string') return t.trim();
    if (typeof t === 'number') return String(t);
    throw handlerCrashed();
  });
}

/**
 * PUT {description, tags, defaultqueuetype, tracing}: rabbit_vhost:put_vhost ("tracing" turns
 * the firehose on or off, Broker.tracing; absent leaves it as it is). A new vhost gets
 * the standard exchanges and its creator full permissions (201); an existing one gets the
 * body's description and tags, missing ones meaning none (204); its default queue type stays.
 * 3.10.8 reads the default queue type from "defaultqueuetype" (its web UI's field name), not
 * "default_queue_type".
 */
async function put(ctx: RequestContext): Promise<Reply> {
  const name = ctx.params['vhost']!;
  const body = await ctx.body();
  const tracing = parseBodyBool(body['tracing']);
  const description = body['description'] ?? '';
  if (typeof description !== 'string') throw badRequest('description must be a string');
  const tags = vhostTags(body['tags']);
  const exists = ctx.broker.vhosts.has(name);
  // Any value but a known type's name (null and numbers included) is refused as invalid_queue_type.
  const dqt = body['defaultqueuetype'];
  const defaultQueueType = dqt === undefined ? undefined : String(dqt);
  try {
    ctx.broker.putVhost(name, exists ? { description, tags } : { description, tags, defaultQueueType }, ctx.user.name);
  } catch (err) {
    accessFailure(err);
  }
  // rabbit_vhost:put_vhost: true starts the firehose, false stops it, absent leaves it.
  if (tracing !== undefined) ctx.broker.tracing.set(name, tracing);
  return { status: exists ? 204 : 201 };
}

/** DELETE: the vhost, its queues, exchanges, permissions and policies; its connections are closed. */
function remove(ctx: RequestContext): Reply {
  if (!ctx.broker.deleteVhost(ctx.params['vhost']!)) throw objectNotFound();
  return noContent();
}

export const vhostRoutes: Route[] = [
  { path: '/api/vhosts', access: 'management', GET: list },
  // RabbitMQ 3.10 lets only administrators read one vhost (rabbit_mgmt_wm_vhost).
  { path: '/api/vhosts/:vhost', access: 'admin', GET: show, PUT: put, DELETE: remove },
];
