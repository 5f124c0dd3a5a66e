/**
 * How an AMQP operation run for an HTTP request reports its errors. RabbitMQ runs them two
 * ways, and each words failures its own way:
 *
 * - as a "direct request" (declare, delete, purge, bind, unbind: rabbit_mgmt_util:direct_request):
 *   404 not_found with the reason's detail, 401 "Access refused." for access_refused and
 *   not_allowed, else 400 with the detail ("inequivalent arg 'durable' for queue ...");
 * - over an AMQP channel of its own (get, the aliveness test: rabbit_mgmt_util:with_channel):
 *   404 or 401 with the whole reply text ("NOT_FOUND - no queue ..."), else 400 "<code> <text>";
 * - publishing (rabbit_mgmt_wm_exchange_publish): always 400 "<code> <text>".
 *
 * Permission checks go through the ManagementAuth seam and fail as the operation would.
 */
import { AmqpError, ReplyCode, replyText, resourceName } from '../errors.js';
import type { Permission } from './auth.js';
import { badRequest, notAuthorised, notFound } from './http.js';
import type { RequestContext } from './router.js';

export type OperationStyle = 'direct' | 'channel' | 'publish';

/** The detail of a reply text: "NOT_FOUND - no queue 'q'" → "no queue 'q'". */
function detail(err: AmqpError): string {
  const i = err.replyText.indexOf(' - ');
  return i < 0 ? err.replyText : err.replyText.slice(i + 3);
}

/** The HTTP error RabbitMQ answers an AMQP error of an operation run in style with. */
export function httpErrorOf(err: AmqpError, style: OperationStyle): Error {
  const code = err.replyCode;
  if (style === 'direct') {
    if (code === ReplyCode.NOT_FOUND) return notFound(detail(err));
    if (code === ReplyCode.ACCESS_REFUSED || code === ReplyCode.NOT_ALLOWED) return notAuthorised('Access refused.');
    return badRequest(detail(err));
  }
  if (style === 'channel') {
    if (code === ReplyCode.NOT_FOUND) return notFound(err.replyText);
    if (code === ReplyCode.ACCESS_REFUSED) return notAuthorised(err.replyText);
  }
  return badRequest(`${code} ${err.replyText}`);
}

/** Runs an AMQP operation, turning its protocol errors into RabbitMQ's HTTP errors. */
export function run<T>(style: OperationStyle, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AmqpError) throw httpErrorOf(err, style);
    throw err;
  }
}

/**
 * The vhost and resource permission checks the operation makes: a user who may not open the
 * vhost is refused as the AMQP connection would be (401 "Access refused."), one without the
 * permission on the resource as rabbit_access_control refuses it (403 ACCESS_REFUSED "access to
 * queue 'q' in vhost '/' refused for user 'u'").
 */
export function checkAccess(
  ctx: RequestContext, style: OperationStyle, vhost: string, resources: Array<{ kind: 'queue' | 'exchange'; name: string; permission: Permission }>,
): void {
  const { auth, user } = ctx;
  if (!auth.mayAccessVhost(user, vhost)) throw notAuthorised('Access refused.');
  for (const r of resources) {
    if (auth.mayUseResource(user, vhost, { kind: r.kind, name: r.name }, r.permission)) continue;
    const text = `access to ${resourceName(r.kind, r.name, vhost)} refused for user '${user.name}'`;
    throw httpErrorOf(new AccessRefused(text), style);
  }
}

class AccessRefused extends AmqpError {
  constructor(text: string) {
    super(ReplyCode.ACCESS_REFUSED, text);
  }
}

export { replyText };
