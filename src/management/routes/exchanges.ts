/**
 * /api/exchanges: list, show, declare (PUT), delete, publish (POST …/publish) and an
 * exchange's bindings as source or destination. amq.default in a path is the default exchange.
 * Declaring, deleting and publishing go through the VHost operations AMQP uses.
 */
import { checkUserIdHeader } from '../../access/authorizer.js';
import { checkPublished, countRouting, routeAside } from '../../connection/publisher.js';
import { routedQueueNames } from '../../trace/tracer.js';
import { preconditionFailed } from '../../errors.js';
import { encodeContentHeaderPayload } from '../../frame/generated/properties.js';
import { Message } from '../../queue/message.js';
import type { Queue } from '../../queue/queue.js';
import type { Exchange } from '../../vhost/exchange.js';
import type { VHost } from '../../vhost/vhost.js';
import { jsonToProperties, jsonToTable } from '../amqp-json.js';
import { bindingFacts, formatBinding, formatExchange, implicitBinding } from '../format.js';
import { HttpError, badRequest, noContent, notAuthorised, objectNotFound, ok, parseBodyBool, parseBool, requireKeys, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { checkAccess, run } from '../ops.js';
import { listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import { BINDING_SORT, listedVhosts, targetVhost } from './queues.js';

/** rabbit_mgmt_util:id: a path's exchange name, amq.default standing for the default exchange. */
export function exchangeName(segment: string): string {
  return segment === 'amq.default' ? '' : segment;
}

function existingExchange(ctx: RequestContext): { vhost: VHost; exchange: Exchange } {
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  const exchange = vhost?.exchanges.get(exchangeName(ctx.params['exchange']!));
  if (!vhost || !exchange) throw objectNotFound();
  return { vhost, exchange };
}

function list(ctx: RequestContext): Reply {
  const items: Json[] = [];
  for (const vhost of listedVhosts(ctx)) for (const x of vhost.exchanges.values()) items.push(formatExchange(vhost.name, x, ctx.stats, ctx.broker.policies.infoOf(vhost.name, x)));
  return ok(listReply(items, ctx.query, ['vhost', 'name']));
}

function show(ctx: RequestContext): Reply {
  const { vhost, exchange } = existingExchange(ctx);
  return ok(objectReply(formatExchange(vhost.name, exchange, ctx.stats, ctx.broker.policies.infoOf(vhost.name, exchange), true), ctx.query));
}

/** PUT: exchange.declare with the body's type (direct by default), durable, auto_delete, internal and arguments. */
async function declare(ctx: RequestContext): Promise<Reply> {
  const vhost = targetVhost(ctx);
  const name = exchangeName(ctx.params['exchange']!);
  const body = await ctx.body();
  const type = body['type'] === undefined ? 'direct' : String(body['type']);
  const durable = parseBodyBool(body['durable']) ?? false;
  const autoDelete = parseBodyBool(body['auto_delete']) ?? false;
  const internal = parseBodyBool(body['internal']) ?? false;
  const passive = parseBool(body['passive']) ?? false;
  const args = body['arguments'] === undefined ? {} : jsonToTable(body['arguments']);
  checkAccess(ctx, 'direct', vhost.name, [{ kind: 'exchange', name, permission: 'configure' }]);
  const existed = vhost.exchanges.has(name);
  run('direct', () => vhost.declareExchange({
    name, type, passive, durable, autoDelete, internal, arguments: args, actingUser: ctx.user.name,
  }));
  return { status: existed ? 204 : 201 };
}

/** DELETE: exchange.delete, with if-unused=true in the query. */
function remove(ctx: RequestContext): Reply {
  const { vhost, exchange } = existingExchange(ctx);
  checkAccess(ctx, 'direct', vhost.name, [{ kind: 'exchange', name: exchange.name, permission: 'configure' }]);
  run('direct', () => vhost.deleteExchange(exchange.name, { ifUnused: ctx.query.get('if-unused') === 'true' }));
  return noContent();
}

/**
 * POST …/publish: basic.publish with mandatory set, in confirm mode, as
 * rabbit_mgmt_wm_exchange_publish does it; answers {"routed": bool} once the message is
 * confirmed (after the store commit for a persistent message on a durable queue).
 */
async function publish(ctx: RequestContext): Promise<Reply> {
  const body = await ctx.body();
  const [routingKeyValue, propertiesValue, payload, encoding] = requireKeys(body, ['routing_key', 'properties', 'payload', 'payload_encoding']);
  if (typeof payload !== 'string') throw badRequest('payload_not_string');
  const vhostName = ctx.params['vhost']!;
  const vhost = ctx.broker.vhosts.get(vhostName);
  // Its channel's connection to a vhost that does not exist is refused (not_allowed).
  if (!vhost) throw notAuthorised('Access refused.');
  checkAccess(ctx, 'publish', vhostName, []);
  if (propertiesValue === null || typeof propertiesValue !== 'object' || Array.isArray(propertiesValue)) throw new HttpError(500, null);
  const properties = jsonToProperties(propertiesValue as Record<string, unknown>);
  const content = decodePayload(payload, encoding);
  const name = exchangeName(ctx.params['exchange']!);
  const routingKey = typeof routingKeyValue === 'string' ? routingKeyValue : String(routingKeyValue);
  const { maxMessageSize } = ctx.broker.config;
  const published = run('publish', () => {
    if (content.length > maxMessageSize) throw preconditionFailed(`message size ${content.length} is larger than configured max size ${maxMessageSize}`);
    checkAccess(ctx, 'publish', vhostName, [{ kind: 'exchange', name, permission: 'write' }]);
    const exchange = vhost.publishableExchange(name);
    const checked = checkPublished(properties, { checkUserId: (claimed) => checkUserIdHeader(ctx.user.name, ctx.user.tags.includes('impersonator'), claimed) }, undefined);
    const header = encodeContentHeaderPayload(60, content.length, checked.properties);
    const message = new Message(ctx.broker.nextMessageId(), name, routingKey, header, content, checked.properties);
    message.ttl = checked.ttl;
    const aside = routeAside(vhost, ctx.broker.replyTo, exchange, routingKey, message, checked.cc);
    // Traced as the management plugin's direct connection publishes (src/trace).
    if (aside) {
      vhost.tracer?.published(ctx.broker.tracing.directOrigin(ctx.user.name), aside.message.withoutBcc(), checked.cc, routedQueueNames(exchange, routingKey, checked.cc, undefined));
      return { routed: false, durable: aside.durable, rejected: false };
    }
    const { message: queued, queues, durable, rejected } = vhost.publish(exchange, message, checked.cc);
    vhost.tracer?.published(ctx.broker.tracing.directOrigin(ctx.user.name), queued, checked.cc, routedQueueNames(exchange, routingKey, checked.cc, queues));
    countPublished(vhost, exchange, queues, rejected);
    return { routed: queues.size > 0, durable, rejected };
  });
  if (published.rejected) throw badRequest('rejected Unable to publish message. Check queue limits.');
  if (published.durable) {
    const err = await new Promise<Error | undefined>((resolve) => ctx.broker.commits.whenDurable(resolve));
    if (err) throw badRequest('rejected Unable to publish message. Check queue limits.');
  }
  return ok({ routed: published.routed });
}

/**
 * The counters a publish from the management API moves, as its channel counts it in RabbitMQ
 * (rabbit_mgmt_wm_exchange_publish publishes mandatory on a confirm channel): a publish, to
 * the exchange and each queue reached, returned when unroutable, confirmed unless a queue
 * refused it.
 */
function countPublished(vhost: VHost, exchange: Exchange, queues: ReadonlySet<Queue>, rejected: boolean): void {
  vhost.counters.received++;
  vhost.counters.receivedConfirm++;
  countRouting(vhost, exchange, queues, true);
  if (!rejected) vhost.counters.confirmed++;
}

/** payload_encoding "string" (the UTF-8 bytes) or "base64" (strict, as Erlang's base64:decode). */
function decodePayload(payload: string, encoding: unknown): Buffer {
  if (encoding === 'string') return Buffer.from(payload, 'utf8');
  if (encoding === 'base64') {
    // Whitespace is skipped; the rest must be whole, padded groups of four.
    const clean = payload.replace(/[\r\n\t ]/g, '');
    if (clean.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(clean)) {
      throw badRequest(['not_base64', payload]);
    }
    return Buffer.from(clean, 'base64');
  }
  throw badRequest(['unsupported_encoding', encoding as Json]);
}

/** GET …/bindings/source and …/bindings/destination. */
function bindings(direction: 'source' | 'destination') {
  return (ctx: RequestContext): Reply => {
    // RabbitMQ lists nothing for a vhost that does not exist (no 404).
    const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
    if (!vhost) return ok([]);
    const name = exchangeName(ctx.params['exchange']!);
    const x = vhost.exchanges.get(name);
    let facts: ReturnType<typeof bindingFacts>[] = [];
    if (direction === 'source' && name === '') facts = [...vhost.queues.keys()].map(implicitBinding);
    else if (x) facts = (direction === 'source' ? vhost.bindingsFrom(x) : vhost.bindingsTo(x)).map(bindingFacts);
    const items = ctx.objectVhosts().has(vhost.name) ? facts.map((b) => formatBinding(vhost.name, b)) : [];
    return ok(listReply(items, ctx.query, BINDING_SORT, { columnsFirst: true, paginate: false }));
  };
}

export const exchangeRoutes: Route[] = [
  { path: '/api/exchanges', access: 'vhost', GET: list },
  { path: '/api/exchanges/:vhost', access: 'vhost', GET: list },
  { path: '/api/exchanges/:vhost/:exchange', access: 'vhost', GET: show, PUT: declare, DELETE: remove },
  { path: '/api/exchanges/:vhost/:exchange/publish', access: 'vhost', POST: publish },
  { path: '/api/exchanges/:vhost/:exchange/bindings/source', access: 'vhost', GET: bindings('source') },
  { path: '/api/exchanges/:vhost/:exchange/bindings/destination', access: 'vhost', GET: bindings('destination') },
];
