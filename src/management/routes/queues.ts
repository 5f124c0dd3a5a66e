/**
 * /api/queues: list, show, declare (PUT), delete, purge (DELETE …/contents), get (POST …/get),
 * and a queue's bindings. Declaring, deleting and purging go through the same VHost and Queue
 * operations as queue.declare, queue.delete and queue.purge, so the same rules, reply texts and
 * persistence apply.
 */
import { withDeliveryCount } from '../../connection/channel.js';
import { decodeContentHeader } from '../../frame/generated/properties.js';
import type { Queue } from '../../queue/queue.js';
import type { QueuedMessage } from '../../queue/queued-message.js';
import type { VHost } from '../../vhost/vhost.js';
import { isStream, refuseOnStream } from '../../stream/stream-refusals.js';
import { resourceName } from '../../errors.js';
import { jsonToTable, propertiesToJson } from '../amqp-json.js';
import { bindingFacts, formatBinding, formatQueue, implicitBinding } from '../format.js';
import { HeadTimestamps } from '../../metrics/head-timestamps.js';
import { HttpError, badRequest, noContent, notAuthorised, notFound, objectNotFound, ok, parseBodyBool, parseBool, parseInt, requireKeys, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { checkAccess, run } from '../ops.js';
import { listReply, objectReply, sortedListReply } from '../query.js';
import { compareUtf8 } from '../../sorted.js';
import type { RequestContext, Route } from '../router.js';

export const BINDING_SORT = ['vhost', 'source', 'type', 'destination', 'routing_key', 'properties_key'];

/** The vhost a request names (path, or the X-Vhost header on lists); 404 when it does not exist. */
export function requestVhost(ctx: RequestContext): VHost | undefined {
  const name = ctx.params['vhost'] ?? headerVhost(ctx);
  if (name === undefined) return undefined;
  const vhost = ctx.broker.vhosts.get(name);
  if (!vhost) throw objectNotFound();
  return vhost;
}

function headerVhost(ctx: RequestContext): string | undefined {
  const v = ctx.headers['x-vhost'];
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The vhosts a list covers: the one named, or every one the user may list objects of. */
export function listedVhosts(ctx: RequestContext): VHost[] {
  const named = requestVhost(ctx);
  const allowed = ctx.objectVhosts();
  return (named ? [named] : [...ctx.broker.vhosts.values()]).filter((v) => allowed.has(v.name));
}

/** The path's vhost, which must exist (a direct request into a missing vhost is 404 vhost_not_found). */
export function targetVhost(ctx: RequestContext): VHost {
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) throw notFound('vhost_not_found');
  return vhost;
}

function existingQueue(ctx: RequestContext): { vhost: VHost; queue: Queue } {
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  const queue = vhost?.queues.get(ctx.params['queue']!);
  if (!vhost || !queue) throw objectNotFound();
  return { vhost, queue };
}

/**
 * The queues in their default order (vhost, then name), each formatted only when written or on
 * the page asked for (sortedListReply): a broker of 100,000 queues is listed a chunk per turn.
 */
function list(ctx: RequestContext): Reply {
  const sources: Array<{ vhost: VHost; queue: Queue }> = [];
  const vhosts = listedVhosts(ctx).sort((a, b) => compareUtf8(a.name, b.name));
  for (const vhost of vhosts) {
    const queues = [...vhost.queues.values()].sort((a, b) => compareUtf8(a.name, b.name));
    for (const queue of queues) sources.push({ vhost, queue });
  }
  const heads = new HeadTimestamps(ctx.broker.connections);
  return ok(sortedListReply({
    sources,
    name: (s) => s.queue.name,
    item: ({ vhost, queue }) => formatQueue(vhost.name, queue, ctx.stats, ctx.broker.policies.infoOf(vhost.name, queue), heads),
  }, ctx.query, ['vhost', 'name']));
}

function show(ctx: RequestContext): Reply {
  const { vhost, queue } = existingQueue(ctx);
  return ok(objectReply(formatQueue(vhost.name, queue, ctx.stats, ctx.broker.policies.infoOf(vhost.name, queue), new HeadTimestamps(ctx.broker.connections), true), ctx.query));
}

/**
 * PUT: queue.declare with the body's durable, auto_delete and arguments. The management API's
 * declaring "connection" owns nothing: exclusive makes the queue transient, not exclusive.
 */
async function declare(ctx: RequestContext): Promise<Reply> {
  const name = ctx.params['queue']!;
  const size = Buffer.byteLength(name, 'utf8');
  if (size > 255) throw badRequest(`queue should be less than 255 bytes, actually was ${size}\n`);
  const vhost = targetVhost(ctx);
  const body = await ctx.body();
  const durable = parseBodyBool(body['durable']) ?? false;
  const autoDelete = parseBodyBool(body['auto_delete']) ?? false;
  const exclusive = parseBool(body['exclusive']) ?? false;
  const passive = parseBool(body['passive']) ?? false;
  const args = body['arguments'] === undefined ? {} : jsonToTable(body['arguments']);
  checkAccess(ctx, 'direct', vhost.name, [{ kind: 'queue', name, permission: 'configure' }]);
  const existed = vhost.queues.has(name);
  run('direct', () => vhost.declareQueue({
    name, passive, durable: durable && !exclusive, exclusive: false, autoDelete, arguments: args, owner: {},
  }));
  return { status: existed ? 204 : 201 };
}

/** DELETE: queue.delete, with if-unused=true / if-empty=true in the query. */
function remove(ctx: RequestContext): Reply {
  const { vhost, queue } = existingQueue(ctx);
  checkAccess(ctx, 'direct', vhost.name, [{ kind: 'queue', name: queue.name, permission: 'configure' }]);
  const ifUnused = ctx.query.get('if-unused') === 'true';
  const ifEmpty = ctx.query.get('if-empty') === 'true';
  run('direct', () => vhost.deleteQueue(queue.name, {}, { ifUnused, ifEmpty }));
  return noContent();
}

/** DELETE …/contents: queue.purge. */
function purge(ctx: RequestContext): Reply {
  const { vhost, queue } = existingQueue(ctx);
  checkAccess(ctx, 'direct', vhost.name, [{ kind: 'queue', name: queue.name, permission: 'read' }]);
  run('direct', () => {
    const q = vhost.getQueue(queue.name, {});
    refuseOnStream(q, vhost.name, 'queue.purge');
    q.purge();
  });
  return noContent();
}

const ACKMODES = ['ack_requeue_true', 'ack_requeue_false', 'reject_requeue_true', 'reject_requeue_false'];

/**
 * POST …/get, as rabbit_mgmt_wm_queue_get does it: up to `count` basic.gets (no_ack only for
 * ack_requeue_false), then each message rejected in order (reject_requeue_*) or left unacked
 * until its channel closes (ack_requeue_true), so a requeued message comes back redelivered.
 */
async function get(ctx: RequestContext): Promise<Reply> {
  const body = await ctx.body();
  // JSON null is a value here (get_or_missing), which the checks below refuse.
  const [ackmode, countValue, encoding] = requireKeys(body, ['ackmode', 'count', 'encoding'], false);
  const vhostName = ctx.params['vhost']!;
  // Its channel's connection to a vhost that does not exist is refused (not_allowed).
  if (!ctx.broker.vhosts.has(vhostName)) throw notAuthorised('Access refused.');
  checkAccess(ctx, 'channel', vhostName, []);
  // Once the channel is open, in RabbitMQ's order: an ackmode that is not a string crashes the
  // handler (binary_to_list), then the count, the encoding and truncate are checked, and an
  // ackmode it does not know crashes it as the first get is made.
  if (typeof ackmode !== 'string') throw new HttpError(500, null);
  const count = parseInt(countValue);
  if (encoding !== 'auto' && encoding !== 'base64') throw badRequest('Unsupported encoding. Please use auto or base64.');
  const truncate = body['truncate'] === undefined ? undefined : parseInt(body['truncate']);
  if (!ACKMODES.includes(ackmode)) throw new HttpError(500, null);
  const vhost = ctx.broker.vhosts.get(vhostName)!;
  const name = ctx.params['queue']!;
  checkAccess(ctx, 'channel', vhostName, [{ kind: 'queue', name, permission: 'read' }]);
  const queue = run('channel', () => vhost.getQueue(name, {}));
  // rabbit_mgmt_wm_queue_get reports the channel's 540 with its code and explanation.
  if (isStream(queue)) throw badRequest(`540 basic.get not supported by stream queues ${resourceName('queue', name, vhostName)}`);
  const noAck = ackmode === 'ack_requeue_false';
  const taken: QueuedMessage[] = [];
  const out: Json[] = [];
  // Traced as the management plugin's direct connection gets (src/trace): one per request.
  const origin = vhost.tracer !== undefined ? ctx.broker.tracing.directOrigin(ctx.user.name) : undefined;
  // A negative count, as in RabbitMQ, takes until the queue is empty.
  // Each basic.get is counted as its channel counts it (get, get_no_ack, get_empty, redeliver).
  const counters = queue.counters;
  for (let n = count; n !== 0; n--) {
    const entry = queue.take();
    if (!entry) {
      counters.getEmpty++;
      break;
    }
    const redelivered = entry.redelivered;
    if (redelivered) counters.redeliver++;
    if (noAck) {
      queue.settle(entry);
      counters.getNoAck++;
    } else {
      queue.delivered(entry);
      taken.push(entry);
      counters.get++;
    }
    out.push(getResult(queue, entry, encoding, truncate));
    if (origin !== undefined) vhost.tracer?.delivered(origin, queue.name, entry.msg, redelivered, queue.isQuorum ? withDeliveryCount(entry) : entry.msg.header);
  }
  if (taken.length > 0) {
    if (ackmode === 'reject_requeue_false') queue.discard(taken);
    else queue.requeue(taken);
  }
  return ok(out);
}

function getResult(queue: Queue, entry: QueuedMessage, encoding: string, truncate: number | undefined): Json {
  const msg = entry.msg;
  // A quorum queue's x-delivery-count header, as basic.get-ok carries it.
  const properties = queue.isQuorum ? decodeContentHeader(withDeliveryCount(entry)).properties : msg.properties;
  const body = truncate !== undefined && truncate >= 0 && msg.body.length >= truncate ? msg.body.subarray(0, truncate) : msg.body;
  const asText = encoding === 'auto' ? utf8(body) : undefined;
  return {
    payload_bytes: msg.body.length,
    redelivered: entry.redelivered,
    exchange: msg.exchange,
    routing_key: msg.routingKey,
    message_count: queue.messageCount,
    properties: propertiesToJson(properties),
    payload: asText ?? body.toString('base64'),
    payload_encoding: asText === undefined ? 'base64' : 'string',
  };
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function utf8(b: Buffer): string | undefined {
  try {
    return STRICT_UTF8.decode(b);
  } catch {
    return undefined;
  }
}

/** GET /api/queues/{vhost}/{queue}/bindings: the default exchange's implicit binding, then the rest. */
function queueBindings(ctx: RequestContext): Reply {
  // RabbitMQ lists nothing for a vhost that does not exist (no 404).
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) return ok([]);
  const name = ctx.params['destination']!;
  const queue = vhost.queues.get(name);
  const facts = [implicitBinding(name), ...(queue ? vhost.bindingsTo(queue).map(bindingFacts) : [])];
  const items = ctx.objectVhosts().has(vhost.name) ? facts.map((b) => formatBinding(vhost.name, b)) : [];
  return ok(listReply(items, ctx.query, BINDING_SORT, { columnsFirst: true, paginate: false }));
}

export const queueRoutes: Route[] = [
  { path: '/api/queues', access: 'vhost', GET: list },
  { path: '/api/queues/:vhost', access: 'vhost', GET: list },
  { path: '/api/queues/:vhost/:queue', access: 'vhost', GET: show, PUT: declare, DELETE: remove },
  { path: '/api/queues/:vhost/:destination/bindings', access: 'vhost', GET: queueBindings },
  { path: '/api/queues/:vhost/:queue/contents', access: 'vhost', varyOnAccept: false, DELETE: purge },
  { path: '/api/queues/:vhost/:queue/get', access: 'vhost', POST: get },
];
