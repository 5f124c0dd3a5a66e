/**
 * Definitions against a running broker: the DefinitionsTarget that imports into it (through its
 * public operations, with the rules of a client declaring the same things) and the export of
 * its state in RabbitMQ 3.10's shape (rabbit_mgmt_wm_definitions: only the keys of rw_state,
 * exclusive queues, the default and `amq.*` exchanges and implicit bindings left out).
 */
import { permissionJson, topicPermissionJson, userJson } from '../../access/records.js';
import type { Broker } from '../../broker.js';
import { Exchange } from '../../vhost/exchange.js';
import type { Binding } from '../../vhost/binding-table.js';
import type { Queue } from '../../queue/queue.js';
import { ParameterValidationError } from '../../parameters/errors.js';
import { VHostNotFoundError } from '../../policy/policy-operations.js';
import { accessFailure } from '../access-errors.js';
import { jsonToTable, tableToJson } from '../amqp-json.js';
import { JsonDocument, JsonItems, type Json } from '../json.js';
import { putUserFromBody } from '../routes/users.js';
import { DefinitionsError, tagList, type Definitions } from './format.js';
import type { DefinitionsTarget } from './import.js';

/** Imports into broker as `actingUser` (who gets full permissions on the vhosts it creates). */
export function brokerTarget(broker: Broker, actingUser?: string): DefinitionsTarget {
  const access = broker.access;
  const vhostOf = (name: string) => broker.vhosts.get(name)!;
  return {
    hasVhost: (name) => broker.vhosts.has(name),
    hasUser: (name) => access.hasUser(name),
    hasQueue: (vhost, name) => broker.vhosts.get(vhost)?.queues.has(name) ?? false,
    hasExchange: (vhost, name) => broker.vhosts.get(vhost)?.exchanges.has(name) ?? false,
    checkQueueLimits(newQueues) {
      for (const [vhost, count] of newQueues) {
        const text = broker.vhostLimits.importQueueLimitError(vhost, count);
        if (text !== undefined) throw new DefinitionsError(['vhost_limit_exceeded', [...Buffer.from(text, 'utf8')]]);
      }
    },
    putUser(u, version) {
      if (typeof u.name !== 'string') throw new DefinitionsError('user without a name');
      // put_user hashes a password with a BIF (badarg) and reads tags with tag_list_from/1 (function_clause).
      if (u.password !== undefined && typeof u.password !== 'string') throw DefinitionsError.erlang('badarg');
      if (u.tags !== undefined && typeof u.tags !== 'string' && !Array.isArray(u.tags)) throw DefinitionsError.erlang('function_clause');
      putUserFromBody(access, u.name, u as unknown as Record<string, unknown>, version);
    },
    putVhost(v) {
      const metadata = typeof v.metadata === 'object' && v.metadata !== null ? v.metadata : {};
      const description = v.description ?? metadata.description;
      const tags = v.tags ?? metadata.tags;
      const defaultQueueType = v.default_queue_type ?? metadata.default_queue_type;
      broker.putVhost(v.name, {
        ...(description !== undefined ? { description: String(description) } : {}),
        ...(tags !== undefined ? { tags: tagList(tags) } : {}),
        ...(defaultQueueType !== undefined && defaultQueueType !== 'undefined' ? { defaultQueueType: String(defaultQueueType) } : {}),
      }, actingUser);
      // rabbit_definitions:add_vhost passes "tracing" to put_vhost (the export never has it).
      if (v.tracing === true || v.tracing === false) broker.tracing.set(v.name, v.tracing);
    },
    setPermission(p) {
      try {
        access.setPermission(p.user, p.vhost, { configure: p.configure, write: p.write, read: p.read });
      } catch (err) {
        // An invalid pattern names it as the Erlang string set_permissions compiled.
        accessFailure(err, { patternAsCharlist: true });
      }
    },
    setTopicPermission(p) {
      try {
        access.setTopicPermission(p.user, p.vhost, String(p.exchange), { write: p.write, read: p.read });
      } catch (err) {
        accessFailure(err);
      }
    },
    setGlobalParameter(name, value) {
      broker.globalParameters.apply([{ name, value }]);
    },
    setPolicy(vhost, p) {
      // rabbit_definitions:add_policy passes what the entry has, the definition as any term.
      broker.policies.put('policy', vhost, p.name, { pattern: p.pattern, definition: p.definition, priority: p.priority, applyTo: p['apply-to'], definitionTerm: true });
    },
    setParameter(vhost, p) {
      try {
        broker.parameters.apply([{ vhost, component: p.component, name: p.name, value: p.value }]);
      } catch (err) {
        if (err instanceof ParameterValidationError) throw new DefinitionsError(err.httpReason);
        if (err instanceof VHostNotFoundError) throw new DefinitionsError(['no_such_vhost', err.vhost ?? 'undefined']); // an entry without one: the atom undefined
        throw err;
      }
    },
    declareExchange(vhost, e) {
      vhostOf(vhost).declareExchange({
        name: e.name,
        type: e.type,
        passive: false,
        durable: e.durable,
        autoDelete: e.auto_delete,
        internal: e.internal,
        arguments: jsonToTable(e.arguments),
        actingUser,
      });
    },
    declareQueue(vhost, q) {
      const args = jsonToTable(q.arguments);
      // RabbitMQ 4.x exports carry `type`; it means x-queue-type.
      if (typeof q.type === 'string' && args['x-queue-type'] === undefined && q.type !== 'classic') args['x-queue-type'] = { type: 'S', value: Buffer.from(q.type) };
      vhostOf(vhost).declareQueue({ name: q.name, passive: false, durable: q.durable, exclusive: false, autoDelete: q.auto_delete, arguments: args, owner: {} });
    },
    bind(vhost, b) {
      const v = vhostOf(vhost);
      const source = v.exchanges.get(b.source);
      const destination = b.destination_type === 'exchange' ? v.exchanges.get(b.destination) : v.queues.get(b.destination);
      if (!source || !destination) return;
      v.bind(source, destination, String(b.routing_key ?? ''), jsonToTable(b.arguments));
    },
    warn: (message) => broker.log.warn(message),
  };
}

/**
 * GET /api/definitions: the broker's definitions in RabbitMQ 3.10.8's export shape, as a
 * document whose queues, exchanges and bindings the server writes a chunk per turn (100,000
 * queues are tens of MB of JSON).
 */
export function definitionsDocument(broker: Broker): JsonDocument {
  const version = broker.config.version;
  const vhosts = [...broker.vhosts.keys()];
  return new JsonDocument([
    ['rabbit_version', version],
    ['rabbitmq_version', version],
    ['product_name', broker.config.product],
    ['product_version', version],
    ['users', broker.access.users().map(userJson) as unknown as Json[]],
    ['vhosts', vhosts.map((name) => ({ name }))],
    ['permissions', broker.access.permissions().map(permissionJson) as unknown as Json[]],
    ['topic_permissions', broker.access.topicPermissions().map(topicPermissionJson) as unknown as Json[]],
    ['parameters', parameters(broker)],
    ['global_parameters', broker.globalParameters.list() as unknown as Json[]],
    ['policies', broker.policies.list('policy') as unknown as Json[]],
    ...topology(broker, vhosts, true),
  ]);
}

/** The whole export at once (`warren export-definitions`). */
export function exportDefinitions(broker: Broker): Record<string, Json> {
  return definitionsDocument(broker).toJson();
}

/**
 * GET /api/definitions/{vhost}: one vhost's parameters, policies and topology; the queues,
 * exchanges and bindings without `vhost` keys (the parameters and policies keep theirs).
 */
export function vhostDefinitionsDocument(broker: Broker, vhost: string): JsonDocument {
  return new JsonDocument([
    ['rabbit_version', broker.config.version],
    ['parameters', parameters(broker, vhost)],
    ['policies', broker.policies.list('policy', vhost) as unknown as Json[]],
    ...topology(broker, [vhost], false),
  ]);
}

/** Runtime parameters, operator policies (component operator_policy) and vhost limits among them. */
function parameters(broker: Broker, vhost?: string): Json[] {
  return (broker.parameters.list(undefined, vhost) ?? []) as unknown as Json[];
}

/** What a list holds now, its JSON made only when the server writes that part of it. */
function lazyItems<T>(sources: T[], json: (source: T) => Json): JsonItems {
  return new JsonItems(sources.length, (from, to) => sources.slice(from, to).map(json));
}

/** The queues, exchanges and bindings of vhosts, each list taken now and written later. */
function topology(broker: Broker, vhosts: string[], withVhost: boolean): Array<[string, JsonItems]> {
  const queues: Array<[string, Queue]> = [];
  const exchanges: Array<[string, Exchange]> = [];
  const bindings: Array<[string, Binding]> = [];
  for (const name of vhosts) {
    const v = broker.vhosts.get(name);
    if (!v) continue;
    const exported = new Set<string>();
    for (const q of v.queues.values()) {
      if (q.exclusiveOwner !== null) continue;
      exported.add(q.name);
      queues.push([name, q]);
    }
    for (const x of v.exchanges.values()) {
      if (x.name === '' || x.name.startsWith('amq.')) continue;
      exchanges.push([name, x]);
    }
    for (const b of v.listBindings()) {
      const toQueue = !(b.destination instanceof Exchange);
      if (b.source.name === '' || (toQueue ? !exported.has(b.destination.name) : b.destination.name === '')) continue;
      bindings.push([name, b]);
    }
  }
  const vh = (name: string) => (withVhost ? { vhost: name } : {});
  return [
    ['queues', lazyItems(queues, ([name, q]) => ({ name: q.name, ...vh(name), durable: q.durable, auto_delete: q.autoDelete, arguments: tableToJson(q.arguments) }))],
    ['exchanges', lazyItems(exchanges, ([name, x]) => ({ name: x.name, ...vh(name), type: x.type.name, durable: x.durable, auto_delete: x.autoDelete, internal: x.internal, arguments: tableToJson(x.args) }))],
    [
      'bindings',
      lazyItems(bindings, ([name, b]) => ({
        source: b.source.name,
        ...vh(name),
        destination: b.destination.name,
        destination_type: b.destination instanceof Exchange ? 'exchange' : 'queue',
        routing_key: b.routingKey,
        arguments: tableToJson(b.args),
      })),
    ],
  ];
}

export type { Definitions };
