/**
 * /api/users: the internal users database (broker.access) as rabbit_mgmt_wm_users, _user,
 * _users_bulk_delete, _permissions_user and _topic_permissions_user answer it. Administrators
 * only. PUT follows rabbit_auth_backend_internal:put_user: a password, a password_hash (with an
 * optional hashing_algorithm), or neither (a new user gets no usable password, an existing one
 * loses its password); tags are required (or the older "administrator" flag).
 */
import type { AccessControl, UserSpec } from '../../access/access-control.js';
import { checkUserLimits, permissionJson, topicPermissionJson, userJson, type User, type UserLimits } from '../../access/records.js';
import type { HashingAlgorithm } from '../../access/password.js';
import { accessFailure } from '../access-errors.js';
import { badRequest, handlerCrashed, noContent, objectNotFound, ok, parseBodyBool, requireKeys, type Reply } from '../http.js';
import type { Json, JsonObject } from '../json.js';
import { asMap, listReply, objectReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

/** reply_list as the users and permissions resources call it: columns first, no pagination. */
export function accessList(ctx: RequestContext, items: Json[], defaultSort: readonly string[]): Reply {
  return ok(listReply(items, ctx.query, defaultSort, { columnsFirst: true, paginate: false }));
}

/** rabbit_mgmt_format:internal_user. Its limits are an Erlang map: keys in sorted order. */
function formatUser(u: User): JsonObject {
  const json = userJson(u);
  const limits = Object.fromEntries(Object.entries(json.limits).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as JsonObject;
  return { ...json, limits: asMap(limits) };
}

function list(ctx: RequestContext): Reply {
  return accessList(ctx, ctx.broker.access.users().map(formatUser), ['vhost', 'name']);
}

/** Users holding no permission in any vhost (topic permissions do not count). */
function withoutPermissions(ctx: RequestContext): Reply {
  const access = ctx.broker.access;
  const users = access.users().filter((u) => access.permissions({ user: u.name }).length === 0);
  return accessList(ctx, users.map(formatUser), ['vhost', 'name']);
}

/** POST {"users": [...]}: deletes them in order; the first that does not exist stops it (400). */
async function bulkDelete(ctx: RequestContext): Promise<Reply> {
  const [users] = requireKeys(await ctx.body(), ['users'], false);
  if (!Array.isArray(users)) throw handlerCrashed();
  for (const name of users) {
    if (typeof name !== 'string' || !ctx.broker.access.deleteUser(name)) throw badRequest(['no_such_user', name as Json]);
  }
  return noContent();
}

function show(ctx: RequestContext): Reply {
  const user = ctx.broker.access.user(ctx.params['user']!);
  if (!user) throw objectNotFound();
  return ok(objectReply(formatUser(user), ctx.query));
}

/** string:strip/1: spaces (only) off both ends. */
const stripSpaces = (s: string): string => s.replace(/^ +| +$/g, '');

/**
 * put_user's tags: a comma-separated string (empty items dropped, as string:tokens drops them)
 * or a list; without tags, the older "administrator" flag; with neither, 400 tags_not_present.
 */
function userTags(body: Record<string, unknown>): string[] {
  const tags = body['tags'];
  if (tags === undefined) {
    const admin = body['administrator'];
    if (admin === undefined) throw badRequest('tags_not_present');
    return parseBodyBool(admin) ? ['administrator'] : [];
  }
  if (typeof tags === 'string') return tags.split(',').filter((t) => t !== '').map(stripSpaces);
  if (!Array.isArray(tags)) throw handlerCrashed();
  return tags.map((t) => {
    if (typeof t === 'string') return stripSpaces(t);
    if (typeof t === 'number') return String(t);
    throw handlerCrashed();
  });
}

/** The body's limits, validated as put_user validates them (before anything else is done). */
function userLimits(body: Record<string, unknown>): UserLimits | undefined {
  if (body['limits'] === undefined) return undefined;
  const limits = checkUserLimits(body['limits']);
  // validate_user_limits fails with {errors, ...}, which nothing catches: a 500.
  if (!limits) throw handlerCrashed();
  return limits;
}

async function put(ctx: RequestContext): Promise<Reply> {
  const result = putUserFromBody(ctx.broker.access, ctx.params['user']!, await ctx.body());
  return { status: result === 'created' ? 201 : 204 };
}

/**
 * rabbit_auth_backend_internal:put_user/3 from a JSON body, as PUT /api/users/{name} and a
 * definitions import call it: tags (or the old administrator flag) required, then a password,
 * a hash (with its algorithm; definitions of RabbitMQ 3.0–3.5, `version`, mean MD5 without one)
 * or neither (a new user gets no password, an existing one loses it). Throws RabbitMQ's 400s.
 */
export function putUserFromBody(access: AccessControl, name: string, body: Record<string, unknown>, version?: string): 'created' | 'updated' {
  const tags = userTags(body);
  const limits = userLimits(body);
  const hasPassword = Object.hasOwn(body, 'password');
  const hasHash = Object.hasOwn(body, 'password_hash');
  if (hasPassword && hasHash) throw badRequest('both_password_and_password_hash_are_provided');
  const existing = access.user(name);
  // An existing user's limits are merged with the body's (internal_user:update_limits(add, ...)).
  const merged = limits && existing ? { ...existing.limits, ...limits } : limits;
  let spec: UserSpec;
  if (hasPassword) {
    const password = body['password'];
    if (typeof password !== 'string') throw handlerCrashed();
    spec = { password, tags, limits: merged };
  } else if (hasHash) {
    const hash = body['password_hash'];
    if (typeof hash !== 'string') throw badRequest(['not_base64', hash as Json]);
    const given = body['hashing_algorithm'];
    if (given !== undefined && typeof given !== 'string') throw handlerCrashed();
    const algorithm = given ?? (version !== undefined && /^3\.[0-5](\.|$)/.test(version) ? 'rabbit_password_hashing_md5' : undefined);
    spec = { passwordHash: hash, hashingAlgorithm: algorithm as HashingAlgorithm | undefined, tags, limits: merged };
  } else if (existing) {
    // set_tags and clear_password: the password goes, the limits stay as they were.
    spec = { tags };
  } else {
    // A user without a password (x509 or another backend): put_user hashes an empty one.
    spec = { password: '', tags, limits };
  }
  try {
    access.putUser(name, spec);
  } catch (err) {
    accessFailure(err, { subjects: { not_base64: spec.passwordHash ?? null, invalid_hashing_algorithm: spec.hashingAlgorithm ?? null } });
  }
  return existing ? 'updated' : 'created';
}

/** DELETE: the user, its permissions and topic permissions; its connections are closed (320). */
function remove(ctx: RequestContext): Reply {
  if (!ctx.broker.access.deleteUser(ctx.params['user']!)) throw objectNotFound();
  return noContent();
}

function userPermissions(ctx: RequestContext): Reply {
  const user = ctx.params['user']!;
  if (!ctx.broker.access.hasUser(user)) throw objectNotFound();
  return accessList(ctx, ctx.broker.access.permissions({ user }).map(permissionJson), ['vhost', 'user']);
}

function userTopicPermissions(ctx: RequestContext): Reply {
  const user = ctx.params['user']!;
  if (!ctx.broker.access.hasUser(user)) throw objectNotFound();
  return accessList(ctx, ctx.broker.access.topicPermissions({ user }).map(topicPermissionJson), ['vhost', 'user']);
}

// rabbit_mgmt_dispatcher's order: the literal paths before /api/users/:user.
export const userRoutes: Route[] = [
  { path: '/api/users/bulk-delete', access: 'admin', POST: bulkDelete },
  { path: '/api/users/without-permissions', access: 'admin', GET: withoutPermissions },
  { path: '/api/users', access: 'admin', GET: list },
  { path: '/api/users/:user', access: 'admin', GET: show, PUT: put, DELETE: remove },
  { path: '/api/users/:user/permissions', access: 'admin', GET: userPermissions },
  { path: '/api/users/:user/topic-permissions', access: 'admin', varyOnAccept: false, GET: userTopicPermissions },
];
