/**
 * /api/permissions and /api/topic-permissions (and a vhost's, under /api/vhosts/{vhost}/...):
 * broker.access's permissions as rabbit_mgmt_wm_permission(s), _topic_permission(s) and
 * _permissions_vhost answer them. Administrators only.
 *
 * A (vhost, user) pair "exists" when both do and the user holds an entry there; a PUT for a
 * missing user or vhost is 400 vhost_or_user_not_found, before the body is read. Topic
 * permissions are one resource per (vhost, user): GET lists every exchange's entry, PUT adds
 * or replaces the body's exchange, DELETE clears them all, or the path's exchange only
 * (/api/topic-permissions/{vhost}/{user}/{exchange}; a query's ?exchange= is not read).
 */
import { permissionJson, topicPermissionJson, type PermissionEntry, type TopicPermissionEntry } from '../../access/records.js';
import { accessFailure } from '../access-errors.js';
import { badRequest, handlerCrashed, noContent, objectNotFound, ok, requireKeys, type Reply } from '../http.js';
import type { JsonObject } from '../json.js';
import { objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';
import { accessList } from './users.js';

/** rabbit_mgmt_wm_permission's listings are sorted by vhost, then user. */
const SORT = ['vhost', 'user'];

function userAndVhostExist(ctx: RequestContext): boolean {
  return ctx.broker.access.hasUser(ctx.params['user']!) && ctx.broker.vhosts.has(ctx.params['vhost']!);
}

// A vhost's listings name the vhost first (rabbit_mgmt_wm_permissions_vhost: [{vhost, V} | Rest]).
const vhostPermissionJson = (p: PermissionEntry): JsonObject => ({ vhost: p.vhost, user: p.user, configure: p.configure, write: p.write, read: p.read });
const vhostTopicPermissionJson = (p: TopicPermissionEntry): JsonObject => ({ vhost: p.vhost, user: p.user, exchange: p.exchange, write: p.write, read: p.read });

/** The body's string values of keys: 400 naming the missing ones; 500 for a non-string (RabbitMQ crashes). */
function patterns(body: Record<string, unknown>, keys: readonly string[]): string[] {
  const values = requireKeys(body, keys, false);
  if (!values.every((v) => typeof v === 'string')) throw handlerCrashed();
  return values as string[];
}

// ---- permissions ----------------------------------------------------------------------------

function listPermissions(ctx: RequestContext): Reply {
  return accessList(ctx, ctx.broker.access.permissions().map(permissionJson), SORT);
}

function existingPermission(ctx: RequestContext): PermissionEntry {
  const entry = userAndVhostExist(ctx) ? ctx.broker.access.permission(ctx.params['user']!, ctx.params['vhost']!) : undefined;
  if (!entry) throw objectNotFound();
  return entry;
}

function showPermission(ctx: RequestContext): Reply {
  return ok(objectReply(permissionJson(existingPermission(ctx)), ctx.query));
}

async function putPermission(ctx: RequestContext): Promise<Reply> {
  if (!userAndVhostExist(ctx)) throw badRequest('vhost_or_user_not_found');
  const user = ctx.params['user']!;
  const vhost = ctx.params['vhost']!;
  const existed = ctx.broker.access.permission(user, vhost) !== undefined;
  const [configure, write, read] = patterns(await ctx.body(), ['configure', 'write', 'read']) as [string, string, string];
  try {
    ctx.broker.access.setPermission(user, vhost, { configure, write, read });
  } catch (err) {
    accessFailure(err, { patternAsCharlist: true });
  }
  return { status: existed ? 204 : 201 };
}

function deletePermission(ctx: RequestContext): Reply {
  const entry = existingPermission(ctx);
  ctx.broker.access.clearPermission(entry.user, entry.vhost);
  return noContent();
}

function vhostPermissions(ctx: RequestContext): Reply {
  const vhost = ctx.params['vhost']!;
  if (!ctx.broker.vhosts.has(vhost)) throw objectNotFound();
  return accessList(ctx, ctx.broker.access.permissions({ vhost }).map(vhostPermissionJson), SORT);
}

// ---- topic permissions ----------------------------------------------------------------------

function listTopicPermissions(ctx: RequestContext): Reply {
  return accessList(ctx, ctx.broker.access.topicPermissions().map(topicPermissionJson), SORT);
}

/** The user's topic permissions in the vhost; none (or no such user or vhost) is 404. */
function existingTopicPermissions(ctx: RequestContext): TopicPermissionEntry[] {
  const entries = userAndVhostExist(ctx) ? ctx.broker.access.topicPermissions({ user: ctx.params['user']!, vhost: ctx.params['vhost']! }) : [];
  if (entries.length === 0) throw objectNotFound();
  return entries;
}

function showTopicPermissions(ctx: RequestContext): Reply {
  return ok(objectReply(existingTopicPermissions(ctx).map(topicPermissionJson), ctx.query));
}

async function putTopicPermission(ctx: RequestContext): Promise<Reply> {
  if (!userAndVhostExist(ctx)) throw badRequest('vhost_or_user_not_found');
  const user = ctx.params['user']!;
  const vhost = ctx.params['vhost']!;
  const existed = ctx.broker.access.topicPermissions({ user, vhost }).length > 0;
  const [exchange, write, read] = patterns(await ctx.body(), ['exchange', 'write', 'read']) as [string, string, string];
  try {
    ctx.broker.access.setTopicPermission(user, vhost, exchange, { write, read });
  } catch (err) {
    accessFailure(err);
  }
  return { status: existed ? 204 : 201 };
}

function deleteTopicPermissions(ctx: RequestContext): Reply {
  existingTopicPermissions(ctx);
  // rabbit_mgmt_util:id(exchange, ...): the default exchange is named amq.default in paths.
  const exchange = ctx.params['exchange'] === 'amq.default' ? '' : ctx.params['exchange'];
  ctx.broker.access.clearTopicPermissions(ctx.params['user']!, ctx.params['vhost']!, exchange);
  return noContent();
}

function vhostTopicPermissions(ctx: RequestContext): Reply {
  const vhost = ctx.params['vhost']!;
  if (!ctx.broker.vhosts.has(vhost)) throw objectNotFound();
  return accessList(ctx, ctx.broker.access.topicPermissions({ vhost }).map(vhostTopicPermissionJson), SORT);
}

export const vhostPermissionRoutes: Route[] = [
  { path: '/api/vhosts/:vhost/permissions', access: 'admin', GET: vhostPermissions },
  { path: '/api/vhosts/:vhost/topic-permissions', access: 'admin', varyOnAccept: false, GET: vhostTopicPermissions },
];

const topicPermission = { access: 'admin', GET: showTopicPermissions, PUT: putTopicPermission, DELETE: deleteTopicPermissions } as const;

export const permissionRoutes: Route[] = [
  { path: '/api/permissions', access: 'admin', GET: listPermissions },
  { path: '/api/permissions/:vhost/:user', access: 'admin', GET: showPermission, PUT: putPermission, DELETE: deletePermission },
  { path: '/api/topic-permissions', access: 'admin', varyOnAccept: false, GET: listTopicPermissions },
  { path: '/api/topic-permissions/:vhost/:user', varyOnAccept: false, ...topicPermission },
  { path: '/api/topic-permissions/:vhost/:user/:exchange', varyOnAccept: false, ...topicPermission },
];
