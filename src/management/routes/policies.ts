/**
 * /api/policies and /api/operator-policies (rabbit_mgmt_wm_policies, _policy, _operator_policies,
 * _operator_policy): the broker's policy operations (src/policy, Broker.policies) over HTTP.
 * Reading lists needs a management user (vhost-filtered); setting or deleting a policy needs
 * a policymaker with access to its vhost, an operator policy an administrator.
 */
import { PolicyInternalError, PolicyValidationError } from '../../policy/validation.js';
import { VHostNotFoundError } from '../../policy/policy-operations.js';
import type { PolicyKind } from '../../policy/policy.js';
import { badRequest, HttpError, noContent, notFound, objectNotFound, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

function list(kind: PolicyKind) {
  return (ctx: RequestContext): Reply => {
    const vhost = ctx.params['vhost'];
    if (vhost !== undefined && !ctx.broker.vhosts.has(vhost)) throw objectNotFound();
    const visible = ctx.objectVhosts();
    const items = ctx.broker.policies.list(kind, vhost).filter((p) => visible.has(p.vhost));
    return ok(listReply(items as unknown as Json[], ctx.query, ['priority']));
  };
}

function show(kind: PolicyKind) {
  return (ctx: RequestContext): Reply => {
    const p = lookup(ctx, kind);
    if (!p) throw objectNotFound();
    return ok(objectReply(p as unknown as Json, ctx.query));
  };
}

function put(kind: PolicyKind) {
  return async (ctx: RequestContext): Promise<Reply> => {
    const body = await ctx.body();
    try {
      const result = ctx.broker.policies.putBody(kind, ctx.params['vhost']!, ctx.params['name']!, body);
      return { status: result === 'created' ? 201 : 204 };
    } catch (err) {
      throw policyError(err);
    }
  };
}

function remove(kind: PolicyKind) {
  return (ctx: RequestContext): Reply => {
    if (!lookup(ctx, kind)) throw objectNotFound();
    ctx.broker.policies.delete(kind, ctx.params['vhost']!, ctx.params['name']!);
    return noContent();
  };
}

/** The policy the path names; undefined when it or its vhost does not exist. */
function lookup(ctx: RequestContext, kind: PolicyKind) {
  const vhost = ctx.params['vhost']!;
  if (!ctx.broker.vhosts.has(vhost)) return undefined;
  return ctx.broker.policies.get(kind, vhost, ctx.params['name']!);
}

/** A refused policy as rabbit_mgmt_wm_policy answers it. */
function policyError(err: unknown): unknown {
  if (err instanceof VHostNotFoundError) return notFound('vhost_not_found');
  if (err instanceof PolicyValidationError) return badRequest(err.httpReason);
  if (err instanceof PolicyInternalError) return new HttpError(500, null);
  return err;
}

export const policyRoutes: Route[] = [
  { path: '/api/policies', access: 'vhost', GET: list('policy') },
  { path: '/api/policies/:vhost', access: 'vhost', GET: list('policy') },
  { path: '/api/policies/:vhost/:name', access: 'policymaker', GET: show('policy'), PUT: put('policy'), DELETE: remove('policy') },
  { path: '/api/operator-policies', access: 'vhost', varyOnAccept: false, GET: list('operator-policy') },
  { path: '/api/operator-policies/:vhost', access: 'vhost', varyOnAccept: false, GET: list('operator-policy') },
  { path: '/api/operator-policies/:vhost/:name', access: 'admin', varyOnAccept: false, GET: show('operator-policy'), PUT: put('operator-policy'), DELETE: remove('operator-policy') },
];
