/**
 * How an HTTP layer maps RabbitMQ's management endpoints for runtime parameters, vhost limits,
 * global parameters and the cluster name onto the broker's public operations, one call each.
 * http-replay.test.ts plays requests recorded from RabbitMQ through it; src/management can map
 * the same way (bodies arrive JSON-parsed; body decoding errors are that layer's).
 */
import type { Broker } from '../../src/broker.js';
import { ParameterInternalError, ParameterValidationError } from '../../src/parameters/errors.js';
import { PolicyInternalError, PolicyValidationError } from '../../src/policy/validation.js';
import { VHostNotFoundError } from '../../src/policy/policy-operations.js';

export interface Reply {
  status: number;
  response: unknown;
}

const NOT_FOUND: Reply = { status: 404, response: { error: 'Object Not Found', reason: 'Not Found' } };
const ok = (response: unknown): Reply => ({ status: 200, response });
const done = (r: 'created' | 'updated' | void): Reply => ({ status: r === 'created' ? 201 : 204, response: null });
const found = (v: unknown): Reply => (v === undefined ? NOT_FOUND : ok(v));
const deleted = (v: boolean): Reply => (v ? done() : NOT_FOUND);

export function handle(broker: Broker, method: string, path: string, body: unknown): Reply {
  const seg = path.split('/').slice(2).map(decodeURIComponent);
  const b = (body ?? {}) as Record<string, unknown>;
  try {
    return route(broker, method, seg, b);
  } catch (e) {
    if (e instanceof ParameterValidationError || e instanceof PolicyValidationError) {
      return { status: 400, response: { error: 'bad_request', reason: e.httpReason } };
    }
    if (e instanceof ParameterInternalError || e instanceof PolicyInternalError) return { status: 500, response: null };
    if (e instanceof VHostNotFoundError) return { status: 404, response: { error: 'not_found', reason: 'vhost_not_found' } };
    throw e;
  }
}

function route(broker: Broker, method: string, seg: string[], body: Record<string, unknown>): Reply {
  const { parameters, vhostLimits, globalParameters, policies } = broker;
  const [resource, a, c, d] = seg as [string, string?, string?, string?];
  const key = `${method} ${resource}/${seg.length - 1}`;
  switch (key) {
    case 'GET parameters/0':
      return ok(parameters.list());
    case 'GET parameters/1':
      return ok(parameters.list(a));
    case 'GET parameters/2':
      return found(parameters.list(a, c));
    case 'GET parameters/3':
      return found(parameters.get(a!, c!, d!));
    case 'PUT parameters/3':
      return done(parameters.putBody(a!, c!, d!, body));
    case 'DELETE parameters/3':
      return deleted(parameters.delete(a!, c!, d!));
    case 'GET vhost-limits/0':
      return ok(vhostLimits.list());
    case 'GET vhost-limits/1':
      return found(vhostLimits.list(a));
    case 'PUT vhost-limits/2':
      return done(vhostLimits.putBody(a!, c!, body));
    case 'DELETE vhost-limits/2':
      return done(vhostLimits.delete(a!, c!));
    case 'GET global-parameters/0':
      return ok(globalParameters.list());
    case 'GET global-parameters/1':
      return found(globalParameters.get(a!));
    case 'PUT global-parameters/1':
      return done(globalParameters.putBody(a!, body));
    case 'DELETE global-parameters/1':
      return deleted(globalParameters.delete(a!));
    case 'GET cluster-name/0':
      return ok({ name: globalParameters.clusterName() });
    case 'PUT cluster-name/0':
      return done(globalParameters.setClusterNameBody(body));
    case 'PUT vhosts/1':
      return done(broker.putVhost(a!, {}, 'guest'));
    case 'DELETE vhosts/1':
      return deleted(broker.deleteVhost(a!));
    case 'PUT policies/2':
    case 'PUT operator-policies/2':
      return done(policies.putBody(resource === 'policies' ? 'policy' : 'operator-policy', a!, c!, body));
    case 'GET policies/2':
    case 'GET operator-policies/2':
      return found(policies.get(resource === 'policies' ? 'policy' : 'operator-policy', a!, c!));
    case 'DELETE policies/2':
    case 'DELETE operator-policies/2':
      return deleted(policies.delete(resource === 'policies' ? 'policy' : 'operator-policy', a!, c!));
    case 'GET queues/1':
      return ok([...broker.vhosts.get(a!)!.queues.keys()]);
    case 'POST definitions/0':
      return importDefinitions(broker, body);
    default:
      throw new Error(`no mapping for ${method} /api/${seg.join('/')}`);
  }
}

/**
 * POST /api/definitions for the categories this folder owns, in rabbit_definitions:apply_defs's
 * order: the queue limit check, global parameters, parameters, then the queues. Errors as the
 * import reports them: a reason text, ["no_such_vhost", V], ["vhost_limit_exceeded", chars].
 */
function importDefinitions(broker: Broker, body: Record<string, unknown>): Reply {
  const queues = (body['queues'] ?? []) as Array<{ name: string; vhost: string; durable: boolean; auto_delete: boolean }>;
  const byVhost = new Map<string, number>();
  for (const q of queues) if (!broker.vhosts.get(q.vhost)?.queues.has(q.name)) byVhost.set(q.vhost, (byVhost.get(q.vhost) ?? 0) + 1);
  for (const [vhost, count] of byVhost) {
    const text = broker.vhostLimits.importQueueLimitError(vhost, count);
    if (text !== undefined) return { status: 400, response: { error: 'bad_request', reason: ['vhost_limit_exceeded', [...Buffer.from(text, 'utf8')]] } };
  }
  try {
    broker.globalParameters.apply((body['global_parameters'] ?? []) as Array<{ name: string; value: unknown }>);
    broker.parameters.apply((body['parameters'] ?? []) as Array<{ vhost: string; component: string; name: string; value: unknown }>);
  } catch (e) {
    if (e instanceof VHostNotFoundError) return { status: 400, response: { error: 'bad_request', reason: ['no_such_vhost', e.vhost] } };
    throw e;
  }
  for (const q of queues) {
    broker.vhosts.get(q.vhost)!.declareQueue({
      name: q.name, passive: false, durable: q.durable, exclusive: false, autoDelete: q.auto_delete, arguments: {}, owner: broker,
    });
  }
  return done();
}
