/**
 * /api/overview, /api/whoami, /api/auth, /api/extensions and
 * /api/feature-flags: who the node is and what the calling user may see of it.
 */
import { arch } from 'node:os';
import { isMonitor } from '../auth.js';
import { NODE } from '../format.js';
import { ok, type Reply } from '../http.js';
import { exchangeTypes, SAMPLE_RETENTION, WARREN_VERSION, webContext } from '../identity.js';
import { noRate, type Json, type JsonObject } from '../json.js';
import { asMap, objectReply, sortItems } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import type { ChurnCounts } from '../stats.js';

const NO_CHURN: ChurnCounts = {
  connection_created: 0, connection_closed: 0, channel_created: 0, channel_closed: 0,
  queue_declared: 0, queue_created: 0, queue_deleted: 0,
};

/** Churn counters with their `_details` (overview churn_rates, the node's counters). */
export function churnWithDetails(ctx: RequestContext): Record<string, Json> {
  const churn = ctx.stats.churn?.() ?? NO_CHURN;
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(churn)) {
    out[k] = v;
    out[`${k}_details`] = noRate();
  }
  return out;
}

/** The listeners as rabbit_mgmt_format:listener shows them, sorted by protocol, port, node. */
export function listeners(ctx: RequestContext): Json[] {
  const items = ctx.broker.listeners.map((l): JsonObject => ({
    node: NODE,
    protocol: l.protocol,
    ip_address: l.ip,
    port: l.port,
    socket_opts: l.protocol === 'amqp' ? { nodelay: true } : { ip: l.ip, port: l.port },
  }));
  return sortItems(items, ['protocol', 'port', 'node'], new URLSearchParams());
}

/**
 * GET /api/overview. Monitors and administrators see every vhost's totals and the node's
 * listeners; other users the totals of the vhosts they may open (and their own connections).
 */
function overview(ctx: RequestContext): Reply {
  const { broker, user } = ctx;
  const monitor = isMonitor(user);
  const vhosts = monitor ? new Set(broker.vhosts.keys()) : ctx.visibleVhosts();
  const visible = [...vhosts].map((name) => broker.vhosts.get(name)!);
  let queues = 0;
  let exchanges = 0;
  let consumers = 0;
  for (const vhost of visible) {
    exchanges += vhost.exchanges.size;
    queues += vhost.queues.size;
    if (monitor) for (const q of vhost.queues.values()) consumers += q.consumerCount;
  }
  // RabbitMQ sums its statistics of the vhosts' queues: nothing before any queue has been
  // there (a new node), zeros once the last one is gone.
  const totals = visible.some((v) => v.hadQueues) ? broker.metrics.queueTotals(visible) : undefined;
  let connections = 0;
  let channels = 0;
  for (const conn of broker.connections) {
    if (!conn.vhost || (!monitor && conn.username !== user.name)) continue;
    connections++;
    channels += conn.channels.size;
  }
  const version = broker.config.version;
  const body: Record<string, Json> = {
    management_version: version,
    rates_mode: 'basic',
    sample_retention_policies: SAMPLE_RETENTION(),
    exchange_types: sortItems(exchangeTypes(broker), ['name'], new URLSearchParams()),
    product_version: version,
    product_name: broker.config.product,
    rabbitmq_version: version,
    warren_version: WARREN_VERSION,
    cluster_name: ctx.broker.identity.cluster,
    erlang_version: process.versions.node,
    erlang_full_version: `Node.js ${process.version} [${arch()}]`,
    release_series_support_status: 'supported',
    disable_stats: false,
    enable_queue_totals: false,
    message_stats: asMap({ ...(ctx.stats.overview?.(vhosts) ?? {}) }),
    churn_rates: asMap(churnWithDetails(ctx)),
    queue_totals: asMap(totals === undefined ? {} : {
      messages: totals.messages, messages_details: noRate(),
      messages_ready: totals.messages_ready, messages_ready_details: noRate(),
      messages_unacknowledged: totals.messages_unacknowledged, messages_unacknowledged_details: noRate(),
    }),
    object_totals: asMap(monitor ? { channels, connections, consumers, exchanges, queues } : { channels, connections, exchanges, queues }),
    statistics_db_event_queue: 0,
  };
  if (monitor) {
    body['node'] = NODE;
    body['listeners'] = listeners(ctx);
    const context = webContext(broker, true);
    body['contexts'] = context ? [context] : [];
  }
  return ok(objectReply(body, ctx.query));
}

/** RabbitMQ 3.10.8's feature flags, all enabled: Warren behaves as a node with every one of them on. */
const FEATURE_FLAGS: Array<[string, string, string, string]> = [
  ['classic_mirrored_queue_version', 'Support setting version for classic mirrored queues', '', 'rabbit'],
  ['drop_unroutable_metric', 'Count unroutable publishes to be dropped in stats', '', 'rabbitmq_management_agent'],
  ['empty_basic_get_metric', 'Count AMQP `basic.get` on empty queues in stats', '', 'rabbitmq_management_agent'],
  ['implicit_default_bindings', 'Default bindings are now implicit, instead of being stored in the database', '', 'rabbit'],
  ['maintenance_mode_status', 'Maintenance mode status', '', 'rabbit'],
  ['quorum_queue', 'Support queues of type `quorum`', 'https://www.rabbitmq.com/quorum-queues.html', 'rabbit'],
  ['stream_queue', 'Support queues of type `stream`', 'https://www.rabbitmq.com/stream.html', 'rabbit'],
  ['user_limits', 'Configure connection and channel limits for a user', '', 'rabbit'],
  ['virtual_host_metadata', 'Virtual host metadata (description, tags, etc)', '', 'rabbit'],
];

export const overviewRoutes: Route[] = [
  { path: '/api/overview', access: 'management', GET: overview },
  { path: '/api/extensions', access: 'management', GET: () => ok([]) },
];

export const identityRoutes: Route[] = [
  {
    path: '/api/feature-flags',
    access: 'admin',
    GET: (ctx) => ok(objectReply(FEATURE_FLAGS.map(([name, desc, doc_url, provided_by]) => ({ name, desc, doc_url, state: 'enabled', stability: 'stable', provided_by })), ctx.query)),
  },
  { path: '/api/whoami', access: 'management', GET: (ctx) => ok(objectReply({ name: ctx.user.name, tags: [...ctx.user.tags] }, ctx.query)) },
  { path: '/api/auth', access: 'none', GET: () => ok({ enable_uaa: false, uaa_client_id: '', uaa_location: '' }) },
];


