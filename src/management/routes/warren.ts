/**
 * /api/warren/: the test toolkit (src/testing, docs/testing.md) over HTTP, for test suites in
 * other languages: reset, inspect and, on a broker that runs on a FakeClock (`--fake-clock`),
 * time. Warren's own; RabbitMQ has no such paths. Administrators only. The toolkit is the
 * broker's own (Broker.toolkit), the one startBroker() returns.
 *
 * The listings are the inspect objects as JSON (their camelCase keys, an absent value as null);
 * messages are shown as POST /api/queues/{vhost}/{queue}/get shows them (payload in base64,
 * properties as rabbit_mgmt_format:basic_properties), without being taken.
 */
import { FakeClock } from '../../clock.js';
import type { QueuedMessage } from '../../queue/queued-message.js';
import type { InspectedMessage } from '../../testing/inspect.js';
import { propertiesToJson } from '../amqp-json.js';
import { badRequest, noContent, notFound, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import type { RequestContext, Route } from '../router.js';

/** A plain value of the toolkit as JSON: undefined as null, bytes in base64, dates as ms. */
export function plainToJson(v: unknown): Json {
  if (v === undefined || v === null) return null;
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return v;
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (v instanceof Date) return v.getTime();
  if (Array.isArray(v)) return v.map(plainToJson);
  if (typeof v === 'object') {
    const out: Record<string, Json> = {};
    for (const [k, item] of Object.entries(v)) out[k] = plainToJson(item);
    return out;
  }
  return String(v);
}

/** The vhost named by `?vhost=` (every vhost without it); 404 for one that does not exist. */
function vhostFilter(ctx: RequestContext): { vhost?: string } {
  const vhost = ctx.query.get('vhost');
  if (vhost === null) return {};
  if (!ctx.broker.vhosts.has(vhost)) throw notFound(`no vhost '${vhost}'`);
  return { vhost };
}

function pathQueue(ctx: RequestContext): { name: string; vhost: string } {
  const vhost = ctx.params['vhost']!;
  const name = ctx.params['queue']!;
  if (!ctx.broker.vhosts.has(vhost)) throw notFound(`no vhost '${vhost}'`);
  if (!ctx.broker.vhosts.get(vhost)!.queues.has(name)) throw notFound(`no queue '${name}' in vhost '${vhost}'`);
  return { name, vhost };
}

/** A message as POST …/get shows it, with what the toolkit knows besides (not taken). */
function messageJson(entry: QueuedMessage, delivery?: InspectedMessage['delivery']): Json {
  const msg = entry.msg;
  return {
    payload_bytes: msg.body.length,
    redelivered: entry.redelivered,
    exchange: msg.exchange,
    routing_key: msg.routingKey,
    properties: propertiesToJson(msg.properties),
    payload: msg.body.toString('base64'),
    payload_encoding: 'base64',
    delivery_count: entry.deliveryCount,
    expires_at: entry.expiresAt === 0 ? null : entry.expiresAt,
    persistent: entry.persisted,
    delivery: delivery === undefined ? undefined : {
      connection: delivery.connection, connection_name: delivery.connectionName ?? null, channel: delivery.channel,
      delivery_tag: delivery.deliveryTag, consumer_tag: delivery.consumerTag ?? null,
    },
  };
}

const NOT_FAKE = 'the broker was not started with --fake-clock (time moves only on a broker whose clock is a FakeClock)';

async function advance(ctx: RequestContext): Promise<Reply> {
  const clock = ctx.broker.clock;
  if (!(clock instanceof FakeClock)) throw badRequest(NOT_FAKE);
  const { ms } = await ctx.body();
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
    throw badRequest(`"ms" must be a number of milliseconds, 0 or more (got ${JSON.stringify(ms) ?? 'nothing'})`);
  }
  await clock.advance(ms);
  return ok({ now: clock.now() });
}

export const warrenRoutes: Route[] = [
  {
    path: '/api/warren/reset', access: 'admin',
    POST: async (ctx) => {
      await ctx.broker.toolkit.reset();
      return noContent();
    },
  },
  { path: '/api/warren/queues', access: 'admin', GET: (ctx) => ok(plainToJson(ctx.broker.toolkit.inspect.queues(vhostFilter(ctx)))) },
  {
    path: '/api/warren/queues/:vhost/:queue', access: 'admin',
    GET: (ctx) => {
      const { name, vhost } = pathQueue(ctx);
      return ok(plainToJson(ctx.broker.toolkit.inspect.queue(name, { vhost })));
    },
  },
  {
    path: '/api/warren/queues/:vhost/:queue/messages', access: 'admin',
    GET: (ctx) => {
      const { name, vhost } = pathQueue(ctx);
      const { ready, unacked } = ctx.broker.toolkit.inspect.messageEntries(name, { vhost });
      return ok({ ready: ready.map((e) => messageJson(e)), unacked: unacked.map((u) => messageJson(u.entry, u.delivery)) });
    },
  },
  { path: '/api/warren/exchanges', access: 'admin', GET: (ctx) => ok(plainToJson(ctx.broker.toolkit.inspect.exchanges(vhostFilter(ctx)))) },
  { path: '/api/warren/bindings', access: 'admin', GET: (ctx) => ok(plainToJson(ctx.broker.toolkit.inspect.bindings(vhostFilter(ctx)))) },
  { path: '/api/warren/consumers', access: 'admin', GET: (ctx) => ok(plainToJson(ctx.broker.toolkit.inspect.consumers(vhostFilter(ctx)))) },
  { path: '/api/warren/connections', access: 'admin', GET: (ctx) => ok(plainToJson(ctx.broker.toolkit.inspect.connections())) },
  {
    path: '/api/warren/clock', access: 'admin',
    GET: (ctx) => ok({ now: ctx.broker.clock.now(), fake: ctx.broker.clock instanceof FakeClock }),
  },
  { path: '/api/warren/clock/advance', access: 'admin', POST: advance },
];
