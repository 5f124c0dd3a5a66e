/**
 * /api/parameters, /api/vhost-limits, /api/global-parameters and /api/cluster-name
 * (rabbit_mgmt_wm_parameter(s), _limit(s), _global_parameter(s), _cluster_name) over the
 * broker's runtime parameters, vhost limits and global parameters (src/parameters).
 */
import { ParameterInternalError, ParameterValidationError } from '../../parameters/errors.js';
import type { ActingUser } from '../../parameters/runtime-parameters.js';
import { VHostNotFoundError } from '../../policy/policy-operations.js';
import { PolicyInternalError, PolicyValidationError } from '../../policy/validation.js';
import { badRequest, HttpError, noContent, notFound, objectNotFound, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

/** Runs a parameter operation, turning its refusals into RabbitMQ's answers. */
function run<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ParameterValidationError || err instanceof PolicyValidationError) throw badRequest(err.httpReason);
    if (err instanceof ParameterInternalError || err instanceof PolicyInternalError) throw new HttpError(500, null);
    if (err instanceof VHostNotFoundError) throw notFound('vhost_not_found');
    throw err;
  }
}

const done = (result: 'created' | 'updated' | void): Reply => ({ status: result === 'created' ? 201 : 204 });
const found = (ctx: RequestContext, v: unknown): Reply => {
  if (v === undefined) throw objectNotFound();
  return ok(objectReply(v as Json, ctx.query));
};
const list = (ctx: RequestContext, items: unknown[] | undefined, visible = true): Reply => {
  if (items === undefined) throw objectNotFound();
  const vhosts = ctx.objectVhosts();
  const shown = visible ? items : items.filter((i) => vhosts.has((i as { vhost: string }).vhost));
  return ok(listReply(shown as Json[], ctx.query, []));
};
const p = (ctx: RequestContext, name: string): string => ctx.params[name]!;

export const parameterRoutes: Route[] = [
  { path: '/api/parameters', access: 'policymaker', GET: (ctx) => list(ctx, ctx.broker.parameters.list(), false) },
  { path: '/api/parameters/:component', access: 'policymaker', GET: (ctx) => list(ctx, ctx.broker.parameters.list(p(ctx, 'component')), false) },
  { path: '/api/parameters/:component/:vhost', access: 'policymaker', GET: (ctx) => list(ctx, ctx.broker.parameters.list(p(ctx, 'component'), p(ctx, 'vhost')), false) },
  {
    path: '/api/parameters/:component/:vhost/:name',
    access: 'policymaker',
    GET: (ctx) => found(ctx, run(() => ctx.broker.parameters.get(p(ctx, 'component'), p(ctx, 'vhost'), p(ctx, 'name')))),
    PUT: async (ctx) => {
      const body = await ctx.body();
      const user: ActingUser = { name: ctx.user.name, mayAccessVhost: (vhost) => ctx.broker.access.mayAccessVhost(ctx.user.name, vhost) };
      return done(run(() => ctx.broker.parameters.putBody(p(ctx, 'component'), p(ctx, 'vhost'), p(ctx, 'name'), body, user)));
    },
    DELETE: (ctx) => {
      if (!run(() => ctx.broker.parameters.delete(p(ctx, 'component'), p(ctx, 'vhost'), p(ctx, 'name')))) throw objectNotFound();
      return noContent();
    },
  },
  { path: '/api/vhost-limits', access: 'management', varyOnAccept: false, GET: (ctx) => list(ctx, ctx.broker.vhostLimits.list(undefined, (v) => ctx.visibleVhosts().has(v))) },
  { path: '/api/vhost-limits/:vhost', access: 'vhost', varyOnAccept: false, GET: (ctx) => list(ctx, ctx.broker.vhostLimits.list(p(ctx, 'vhost'))) },
  {
    path: '/api/vhost-limits/:vhost/:name',
    varyOnAccept: false,
    access: 'admin',
    PUT: async (ctx) => {
      const body = await ctx.body();
      run(() => ctx.broker.vhostLimits.putBody(p(ctx, 'vhost'), p(ctx, 'name'), body));
      return noContent();
    },
    DELETE: (ctx) => {
      run(() => ctx.broker.vhostLimits.delete(p(ctx, 'vhost'), p(ctx, 'name')));
      return noContent();
    },
  },
  { path: '/api/global-parameters', access: 'policymaker', GET: (ctx) => list(ctx, ctx.broker.globalParameters.list()) },
  {
    path: '/api/global-parameters/:name',
    access: 'policymaker',
    GET: (ctx) => found(ctx, ctx.broker.globalParameters.get(p(ctx, 'name'))),
    PUT: async (ctx) => {
      const body = await ctx.body();
      return done(run(() => ctx.broker.globalParameters.putBody(p(ctx, 'name'), body)));
    },
    DELETE: (ctx) => {
      if (!ctx.broker.globalParameters.delete(p(ctx, 'name'))) throw objectNotFound();
      return noContent();
    },
  },
  {
    path: '/api/cluster-name',
    access: { GET: 'management', PUT: 'admin' },
    GET: (ctx) => ok(objectReply({ name: ctx.broker.globalParameters.clusterName() as Json }, ctx.query)),
    PUT: async (ctx) => {
      const body = await ctx.body();
      run(() => ctx.broker.globalParameters.setClusterNameBody(body));
      return noContent();
    },
  },
];
