/**
 * /api/bindings: every binding (the default exchange's implicit ones included), per vhost, per
 * source and destination; POST creates one (201, Location naming it by properties_key), GET and
 * DELETE …/{props} find one by its properties_key. Binding and unbinding go through
 * VHost.bind/unbind, as queue.bind and exchange.bind do.
 */
import type { FieldTable } from '../../frame/field-table.js';
import type { Destination, Exchange } from '../../vhost/exchange.js';
import type { VHost } from '../../vhost/vhost.js';
import { jsonToTable } from '../amqp-json.js';
import { argsHash, packBindingProps, quotePlus, relativise, unpackBindingProps } from '../binding-key.js';
import { bindingFacts, formatBinding, implicitBinding } from '../format.js';
import { HttpError, noContent, objectNotFound, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { checkAccess, run } from '../ops.js';
import { compareTerms, listReply, objectReply, sortedListReply } from '../query.js';
import { compareUtf8 } from '../../sorted.js';
import type { RequestContext, Route } from '../router.js';
import { exchangeName } from './exchanges.js';
import { BINDING_SORT, listedVhosts, targetVhost } from './queues.js';

type Facts = ReturnType<typeof bindingFacts>;

/** A binding to list: its vhost, its facts, and its properties_key once a sort needed it. */
interface Listed {
  vhost: string;
  facts: Facts;
  props?: string;
}

const listedItem = (l: Listed): Json => formatBinding(l.vhost, l.facts);
const propsOf = (l: Listed): string => (l.props ??= packBindingProps(l.facts.routingKey, l.facts.args));

/**
 * BINDING_SORT's order (vhost, source, destination, routing_key, properties_key; no binding
 * has a `type`, so it ties) on the facts, without making the items; a full tie (a queue and an
 * exchange of one name) is settled on the whole items, as sortItems settles it.
 */
function compareListed(a: Listed, b: Listed): number {
  return (
    compareUtf8(a.vhost, b.vhost) ||
    compareUtf8(a.facts.source, b.facts.source) ||
    compareUtf8(a.facts.destination, b.facts.destination) ||
    compareUtf8(a.facts.routingKey, b.facts.routingKey) ||
    compareUtf8(propsOf(a), propsOf(b)) ||
    compareTerms(listedItem(a), listedItem(b))
  );
}

/**
 * Every binding, in the default order, each item made only as it is written (sortedListReply:
 * a chunk per turn), so that 100,000 bindings do not hold the event loop while formatted.
 * Bindings are never paginated (RabbitMQ's are not).
 */
function list(ctx: RequestContext): Reply {
  const listed: Listed[] = [];
  for (const vhost of listedVhosts(ctx)) {
    for (const name of vhost.queues.keys()) listed.push({ vhost: vhost.name, facts: implicitBinding(name) });
    for (const b of vhost.listBindings()) listed.push({ vhost: vhost.name, facts: bindingFacts(b) });
  }
  listed.sort(compareListed);
  return ok(sortedListReply({ sources: listed, item: listedItem }, ctx.query, BINDING_SORT, { columnsFirst: true, paginate: false }));
}

/** The path's destination type: 'q' or 'e' (anything else crashes RabbitMQ's handler: 500). */
function destinationType(ctx: RequestContext): 'queue' | 'exchange' {
  const t = ctx.params['dtype'];
  if (t === 'q') return 'queue';
  if (t === 'e') return 'exchange';
  throw new HttpError(500, null);
}

/** rabbit_binding:list_for_source_and_destination: the bindings from source to destination. */
function between(vhost: VHost, source: string, type: 'queue' | 'exchange', destination: string): Facts[] {
  // The default exchange's binding to a queue is listed whether or not the queue exists.
  if (source === '' && type === 'queue') return [implicitBinding(destination)];
  const x = vhost.exchanges.get(source);
  const d: Destination | undefined = type === 'queue' ? vhost.queues.get(destination) : vhost.exchanges.get(destination);
  if (!x || !d) return [];
  return vhost.bindingsFrom(x).filter((b) => b.destination === d).map(bindingFacts);
}

function listBetween(ctx: RequestContext): Reply {
  const type = destinationType(ctx);
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) return ok([]); // RabbitMQ lists nothing for a vhost that does not exist
  const facts = between(vhost, exchangeName(ctx.params['source']!), type, exchangeName(ctx.params['destination']!));
  const items = ctx.objectVhosts().has(vhost.name) ? facts.map((b) => formatBinding(vhost.name, b)) : [];
  return ok(listReply(items, ctx.query, BINDING_SORT, { columnsFirst: true, paginate: false }));
}

/** POST: queue.bind / exchange.bind with the body's routing_key and arguments; 201 with its Location. */
async function create(ctx: RequestContext): Promise<Reply> {
  const type = destinationType(ctx);
  // RabbitMQ matches the decoded body against {ok, Props}: a body that is not JSON crashes it (500).
  const body = await ctx.body().catch(() => {
    throw new HttpError(500, null);
  });
  const vhost = targetVhost(ctx);
  const routingKey = body['routing_key'] === undefined || body['routing_key'] === null ? '' : String(body['routing_key']);
  const args: FieldTable = body['arguments'] === undefined ? {} : jsonToTable(body['arguments']);
  const source = exchangeName(ctx.params['source']!);
  const destination = exchangeName(ctx.params['destination']!);
  checkAccess(ctx, 'direct', vhost.name, [
    { kind: type, name: destination, permission: 'write' },
    { kind: 'exchange', name: source, permission: 'read' },
  ]);
  run('direct', () => {
    // rabbit_binding reports a missing source before a missing destination.
    const x = vhost.getExchange(source);
    const d = type === 'queue' ? vhost.getQueue(destination, {}) : vhost.getExchange(destination);
    vhost.bind(x, d, routingKey, args);
  });
  const to = ['api', 'bindings', vhost.name, 'e', source, type === 'queue' ? 'q' : 'e', destination, packBindingProps(routingKey, args)]
    .map((s, i) => (i < 2 ? s : quotePlus(s)))
    .join('/');
  return { status: 201, headers: { location: relativise(ctx.rawPath, `/${to}`) } };
}

/** The binding a …/{props} path names, if it exists (rabbit_mgmt_wm_binding:binding). */
function named(ctx: RequestContext): { vhost: VHost; source: Exchange; destination: Destination; routingKey: string; args: FieldTable } {
  const type = destinationType(ctx);
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) throw objectNotFound();
  const sourceName = exchangeName(ctx.params['source']!);
  const destName = exchangeName(ctx.params['destination']!);
  const props = unpackBindingProps(ctx.params['props']!);
  if (props === 'too-many') throw objectNotFound();
  const candidates = between(vhost, sourceName, type, destName);
  const found = candidates.find((b) => b.routingKey === props.routingKey && (props.hash === undefined
    ? Object.keys(b.args).length === 0
    : Object.keys(b.args).length > 0 && argsHash(b.args) === props.hash));
  const source = vhost.exchanges.get(sourceName);
  const destination = type === 'queue' ? vhost.queues.get(destName) : vhost.exchanges.get(destName);
  if (!found || !source || !destination) throw objectNotFound();
  return { vhost, source, destination, routingKey: found.routingKey, args: found.args };
}

function show(ctx: RequestContext): Reply {
  const b = named(ctx);
  return ok(objectReply(formatBinding(b.vhost.name, {
    source: b.source.name, destination: b.destination.name, destinationType: destinationType(ctx), routingKey: b.routingKey, args: b.args,
  }), ctx.query));
}

/** DELETE …/{props}: queue.unbind / exchange.unbind. */
function remove(ctx: RequestContext): Reply {
  const type = destinationType(ctx);
  const b = named(ctx);
  checkAccess(ctx, 'direct', b.vhost.name, [
    { kind: type, name: b.destination.name, permission: 'write' },
    { kind: 'exchange', name: b.source.name, permission: 'read' },
  ]);
  run('direct', () => b.vhost.unbind(b.source, b.destination, b.routingKey, b.args));
  return noContent();
}

export const bindingRoutes: Route[] = [
  { path: '/api/bindings', access: 'vhost', GET: list },
  { path: '/api/bindings/:vhost', access: 'vhost', GET: list },
  { path: '/api/bindings/:vhost/e/:source/:dtype/:destination', access: 'vhost', GET: listBetween, POST: create },
  { path: '/api/bindings/:vhost/e/:source/:dtype/:destination/:props', access: 'vhost', GET: show, DELETE: remove },
];
