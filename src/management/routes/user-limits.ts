/**
 * /api/user-limits (rabbit_mgmt_wm_user_limits, _user_limit): users' max-connections and
 * max-channels, one limit a request, over the broker's users (src/access). PUT takes only
 * application/json bodies (415 otherwise), {"value": N}; a negative limit means none.
 */
import type { UserLimits } from '../../access/records.js';
import { USER_LIMIT_NAMES } from '../../access/records.js';
import { latin1ToText } from '../../erlang/format.js';
import { formatParts } from '../../erlang/pretty.js';
import { integer, proplistErrors, type Constraint } from '../../parameters/parameter-validation.js';
import type { JsonValue } from '../../parameters/value.js';
import { badRequest, handlerCrashed, HttpError, noContent, objectNotFound, ok, requireKeys, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { listReply } from '../query.js';
import type { RequestContext, Route } from '../router.js';

/** rabbit_auth_backend_internal:user_limit_validation/0. */
const CONSTRAINTS: readonly Constraint[] = USER_LIMIT_NAMES.map((key) => ({ key, validate: integer }));

/** What GET shows of a user with limits: {user, value}; none for a user without. */
function limitsOf(user: string, limits: UserLimits): Json[] {
  return Object.keys(limits).length === 0 ? [] : [{ user, value: { ...limits } as Json }];
}

function list(ctx: RequestContext): Reply {
  const user = ctx.params['user'];
  const access = ctx.broker.access;
  if (user === undefined) return ok(listReply(access.users().flatMap((u) => limitsOf(u.name, u.limits)), ctx.query, []));
  const u = access.user(user);
  if (!u) throw objectNotFound();
  return ok(listReply(limitsOf(u.name, u.limits), ctx.query, []));
}

async function put(ctx: RequestContext): Promise<Reply> {
  if (!/^application\/json\b/i.test(ctx.headers['content-type'] ?? '')) throw new HttpError(415, null, '', { vary: 'accept-encoding, origin' });
  const [value] = requireKeys(await ctx.body(), ['value'], false); // null is a value, refused below
  const name = ctx.params['name']!;
  const user = ctx.params['user']!;
  // set_user_limits validates the one limit first, then finds the user.
  const errors = proplistErrors('user-limits', CONSTRAINTS, { [name]: value as JsonValue });
  if (errors.length > 0) throw badRequest(latin1ToText(formatParts(errors[0]!)));
  if (!ctx.broker.access.user(user)) throw badRequest(['no_such_user', user]);
  ctx.broker.access.setUserLimit(user, name as keyof UserLimits, value as number);
  return noContent();
}

function remove(ctx: RequestContext): Reply {
  const user = ctx.params['user']!;
  // clear_user_limits crashes on a user that does not exist (500); a limit not set is fine.
  if (!ctx.broker.access.user(user)) throw handlerCrashed();
  const name = ctx.params['name']!;
  if ((USER_LIMIT_NAMES as readonly string[]).includes(name)) ctx.broker.access.clearUserLimits(user, name as keyof UserLimits);
  return noContent();
}

export const userLimitRoutes: Route[] = [
  { path: '/api/user-limits', access: 'management', varyOnAccept: false, GET: list },
  { path: '/api/user-limits/:user', access: 'management', varyOnAccept: false, GET: list },
  { path: '/api/user-limits/:user/:name', access: 'admin', varyOnAccept: false, PUT: put, DELETE: remove },
];
