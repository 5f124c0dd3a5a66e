/**
 * /api/nodes: the one node, with real figures from the process: memory as the memory alarm
 * measures it and its watermark, free disk space and its limit, file descriptors, uptime, pid.
 * Figures of the Erlang VM that Warren does not count (run queue, garbage collections, Mnesia,
 * message store and queue index counters, I/O bytes and timings) are 0; context switches and
 * file system reads and writes come from process.resourceUsage().
 */
import { availableParallelism } from 'node:os';
import type { Broker } from '../../broker.js';
import { FD_RESERVE } from '../../connection-limits.js';
import { statfsFreeSpace } from '../../disk-monitor.js';
import { sampleProcessMemory } from '../../memory-monitor.js';
import { NODE } from '../format.js';
import { HttpError, noContent, objectNotFound, ok, type Reply } from '../http.js';
import { AUTH_MECHANISMS, exchangeTypes, webContext } from '../identity.js';
import { float, noRate, type Json } from '../json.js';
import { asMap, listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import { churnWithDetails } from './overview.js';

/** RabbitMQ's default Erlang process limit: Warren has none of its own. */
const PROC_TOTAL = 1048576;

function diskFree(broker: Broker): number {
  const known = broker.disk?.freeBytes;
  if (known !== undefined) return known;
  try {
    return statfsFreeSpace(broker.config.dataDir ?? process.cwd());
  } catch {
    return 0;
  }
}

/** A counter and its `_details`. */
function counter(out: Record<string, Json>, name: string, value: number): void {
  out[name] = value;
  out[`${name}_details`] = noRate();
}

export function formatNode(ctx: RequestContext): Record<string, Json> {
  const { broker } = ctx;
  const usage = process.resourceUsage();
  const fdTotal = broker.limits.fdTotal ?? 0;
  const connectionMax = broker.config.connectionMax;
  const socketsTotal = Math.max(0, fdTotal - FD_RESERVE);
  const context = webContext(broker, false);
  const alarms = broker.alarms;
  const out: Record<string, Json> = {
    partitions: [],
    os_pid: String(process.pid),
    fd_total: fdTotal,
    sockets_total: connectionMax > 0 ? Math.min(connectionMax, socketsTotal) : socketsTotal,
    mem_limit: broker.memory.limitBytes,
    mem_alarm: alarms.includes('memory'),
    disk_free_limit: broker.config.diskFreeLimit,
    disk_free_alarm: alarms.includes('disk'),
    proc_total: PROC_TOTAL,
    rates_mode: 'basic',
    uptime: Math.round(process.uptime() * 1000),
    run_queue: 0,
    processors: availableParallelism(),
    exchange_types: exchangeTypes(broker),
    auth_mechanisms: AUTH_MECHANISMS,
    applications: [
      { name: 'rabbit', description: 'RabbitMQ', version: broker.config.version },
      { name: 'rabbitmq_management', description: 'RabbitMQ Management Console', version: broker.config.version },
    ],
    contexts: context ? [context] : [],
    log_files: ['<stdout>'],
    db_dir: broker.config.dataDir ?? '',
    config_files: [],
    net_ticktime: 60,
    enabled_plugins: ['rabbitmq_management', 'rabbitmq_consistent_hash_exchange', 'rabbitmq_delayed_message_exchange'],
    mem_calculation_strategy: 'allocated',
    ra_open_file_metrics: asMap({}),
    name: NODE,
    type: 'disc',
    running: true,
  };
  counter(out, 'mem_used', broker.memory.usedBytes || sampleProcessMemory());
  counter(out, 'fd_used', broker.limits.fdsUsed() ?? 0);
  counter(out, 'sockets_used', broker.limits.open);
  counter(out, 'proc_used', process.getActiveResourcesInfo().length);
  counter(out, 'disk_free', diskFree(broker));
  counter(out, 'gc_num', 0);
  counter(out, 'gc_bytes_reclaimed', 0);
  counter(out, 'context_switches', usage.voluntaryContextSwitches + usage.involuntaryContextSwitches);
  counter(out, 'io_read_count', usage.fsRead);
  counter(out, 'io_read_bytes', 0);
  out['io_read_avg_time'] = float(0);
  out['io_read_avg_time_details'] = noRate();
  counter(out, 'io_write_count', usage.fsWrite);
  counter(out, 'io_write_bytes', 0);
  out['io_write_avg_time'] = float(0);
  out['io_write_avg_time_details'] = noRate();
  counter(out, 'io_sync_count', 0);
  out['io_sync_avg_time'] = float(0);
  out['io_sync_avg_time_details'] = noRate();
  counter(out, 'io_seek_count', 0);
  out['io_seek_avg_time'] = float(0);
  out['io_seek_avg_time_details'] = noRate();
  counter(out, 'io_reopen_count', 0);
  counter(out, 'mnesia_ram_tx_count', 0);
  counter(out, 'mnesia_disk_tx_count', 0);
  counter(out, 'msg_store_read_count', 0);
  counter(out, 'msg_store_write_count', 0);
  counter(out, 'queue_index_write_count', 0);
  counter(out, 'queue_index_read_count', 0);
  Object.assign(out, churnWithDetails(ctx));
  out['cluster_links'] = [];
  out['metrics_gc_queue_length'] = {
    connection_closed: 0, channel_closed: 0, consumer_deleted: 0, exchange_deleted: 0,
    queue_deleted: 0, vhost_deleted: 0, node_node_deleted: 0, channel_consumer_deleted: 0,
  };
  return out;
}

function list(ctx: RequestContext): Reply {
  return ok(listReply([formatNode(ctx)], ctx.query, ['vhost', 'name'], { paginate: false }));
}

function show(ctx: RequestContext): Reply {
  // RabbitMQ's handler crashes on a node it does not know.
  if (ctx.params['node'] !== NODE) throw new HttpError(500, null);
  return ok(objectReply(formatNode(ctx), ctx.query));
}

/** The login-attempt routes know only this node: another name is 404. */
function requireThisNode(ctx: RequestContext): void {
  if (ctx.params['node'] !== NODE) throw objectNotFound();
}

/** GET /api/auth/attempts/{node}: login attempts by protocol (rabbit_core_metrics:get_auth_attempts). */
function authAttempts(ctx: RequestContext): Reply {
  requireThisNode(ctx);
  const rows = [...ctx.broker.metrics.authAttempts].map(([protocol, c]) => ({
    protocol, auth_attempts: c.succeeded + c.failed, auth_attempts_failed: c.failed, auth_attempts_succeeded: c.succeeded,
  }));
  return ok(rows);
}

/** DELETE /api/auth/attempts/{node}: the counts start again. */
function resetAuthAttempts(ctx: RequestContext): Reply {
  requireThisNode(ctx);
  ctx.broker.metrics.resetAuthAttempts();
  return noContent();
}

export const nodeRoutes: Route[] = [
  { path: '/api/nodes', access: 'monitor', GET: list },
  { path: '/api/nodes/:node', access: 'monitor', GET: show },
  { path: '/api/auth/attempts/:node', access: 'monitor', GET: authAttempts, DELETE: resetAuthAttempts },
  // Attempts by source are tracked only with rabbit.track_auth_attempt_source, off by default: none.
  {
    path: '/api/auth/attempts/:node/source',
    access: 'monitor',
    GET: (ctx) => {
      requireThisNode(ctx);
      return ok([]);
    },
  },
  // A single node has nothing to rebalance; RabbitMQ answers 204 all the same (POST only).
  { path: '/api/rebalance/queues', access: 'admin', varyOnAccept: false, POST: () => noContent() },
];
