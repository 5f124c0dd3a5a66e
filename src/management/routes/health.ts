/**
 * /api/aliveness-test/{vhost} and /api/health/checks/*: the probes Spring's
 * @RabbitAvailable, rabbitmqadmin v2 and container health checks call. A failing check answers
 * 503 with RabbitMQ's body.
 */
import { encodeContentHeaderPayload } from '../../frame/generated/properties.js';
import { Message } from '../../queue/message.js';
import { objectNotFound, badRequest, ok, type Reply } from '../http.js';
import type { Json } from '../json.js';
import { NODE } from '../format.js';
import { checkAccess, run } from '../ops.js';
import { certificateExpiries } from '../../tls/certificate-validity.js';
import type { RequestContext, Route } from '../router.js';

const ALIVENESS_QUEUE = 'aliveness-test';

/**
 * As rabbit_mgmt_wm_aliveness_test: declare the queue aliveness-test (kept afterwards, as
 * RabbitMQ keeps it), publish "test_message" to it through the default exchange and get it
 * back. {"status":"ok"} exactly (Spring compares the string).
 */
function aliveness(ctx: RequestContext): Reply {
  const vhost = ctx.broker.vhosts.get(ctx.params['vhost']!);
  if (!vhost) throw objectNotFound();
  checkAccess(ctx, 'channel', vhost.name, [
    { kind: 'queue', name: ALIVENESS_QUEUE, permission: 'configure' },
    { kind: 'exchange', name: '', permission: 'write' },
    { kind: 'queue', name: ALIVENESS_QUEUE, permission: 'read' },
  ]);
  const got = run('channel', () => {
    const queue = vhost.declareQueue({
      name: ALIVENESS_QUEUE, passive: false, durable: false, exclusive: false, autoDelete: false, arguments: {}, owner: {},
    });
    const body = Buffer.from('test_message');
    const message = new Message(ctx.broker.nextMessageId(), '', ALIVENESS_QUEUE, encodeContentHeaderPayload(60, body.length, {}), body, {});
    vhost.publish(vhost.defaultExchange, message, undefined);
    const entry = vhost.getQueue(queue.name, {}).take();
    if (entry) queue.settle(entry);
    return entry !== undefined;
  });
  if (got) return ok({ status: 'ok' });
  return { status: 503, body: { status: 'failed', reason: 'aliveness-test queue is empty' } };
}

/** rabbit_alarm:format_as_map. */
function alarmMaps(ctx: RequestContext): Json[] {
  return ctx.broker.alarms.map((a) => ({ node: NODE, resource: a === 'disk' ? 'disk space' : 'memory' }));
}

function alarmsCheck(reason: string) {
  return (ctx: RequestContext): Reply => {
    const alarms = alarmMaps(ctx);
    if (alarms.length === 0) return ok({ status: 'ok' });
    return { status: 503, body: { status: 'failed', reason, alarms } };
  };
}

function portListener(ctx: RequestContext): Reply {
  const raw = ctx.params['port']!;
  if (!/^[+-]?[0-9]+$/.test(raw)) throw badRequest('Invalid port');
  const port = Number(raw);
  const ports = ctx.broker.listeners.map((l) => l.port);
  if (ports.includes(port)) return ok({ status: 'ok', port });
  return { status: 503, body: { status: 'failed', reason: 'No active listener', missing: port, ports } };
}

/** rabbit_mgmt_wm_health_check_protocol_listener:normalize_protocol, for the protocols Warren has. */
const PROTOCOL_ALIASES: Record<string, string> = {
  amqp091: 'amqp', 'amqp0.9.1': 'amqp', 'amqp0-9-1': 'amqp', amqp0_9_1: 'amqp', amqp10: 'amqp', 'amqp1.0': 'amqp', 'amqp1-0': 'amqp', amqp1_0: 'amqp',
  amqps: 'amqp/ssl', http1: 'http', 'http1.1': 'http', http_api: 'http', management: 'http', management_ui: 'http', ui: 'http',
  cli: 'clustering', distribution: 'clustering',
};

function protocolListener(ctx: RequestContext): Reply {
  const lower = ctx.params['protocol']!.toLowerCase();
  const protocol = PROTOCOL_ALIASES[lower] ?? lower;
  const protocols = ctx.broker.listeners.map((l) => l.protocol);
  if (protocols.includes(protocol)) return ok({ status: 'ok', protocol });
  return { status: 503, body: { status: 'failed', reason: 'No active listener', missing: protocol, protocols } };
}

/** rabbit_mgmt_wm_health_check_certificate_expiration's units, in seconds. */
const UNIT_SECONDS: Record<string, number> = { days: 86400, weeks: 7 * 86400, months: (86400 * 365) / 12, years: 365 * 86400 };

/** A time as seconds_to_bin prints it: 2026-12-01 9:05:00 (the hour not padded). */
function expiryText(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${d.getUTCHours()}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
}

/**
 * GET /api/health/checks/certificate-expiration/{within}/{unit}: 503 listing the TLS listeners
 * whose certificate file or CA bundle holds a certificate that expires within that time.
 */
function certificateExpiration(ctx: RequestContext): Reply {
  const within = ctx.params['within']!;
  if (!/^[+-]?[0-9]+$/.test(within)) throw badRequest('Invalid expiration value.');
  const unit = UNIT_SECONDS[ctx.params['unit']!.toLowerCase()];
  if (unit === undefined) throw badRequest('Time unit not recognised. Supported units: days, weeks, months, years.');
  const deadline = Date.now() + Number(within) * unit * 1000;
  const expiring = (file: string | undefined): Json => {
    if (file === undefined) return [];
    const expiries = certificateExpiries(file);
    if (!Array.isArray(expiries)) return { error: expiries.error };
    return expiries.filter((ms) => ms < deadline).map(expiryText);
  };
  const expired: Json[] = [];
  for (const l of ctx.broker.listeners) {
    if (l.certfile === undefined) continue;
    const cert = expiring(l.certfile);
    const ca = expiring(l.cacertfile);
    if (Array.isArray(cert) && cert.length === 0 && Array.isArray(ca) && ca.length === 0) continue;
    expired.unshift({
      node: NODE, protocol: l.protocol, interface: l.ip, port: l.port,
      certfile: l.certfile, cacertfile: l.cacertfile ?? null, certfile_expires_on: cert, cacertfile_expires_on: ca,
    });
  }
  if (expired.length === 0) return ok({ status: 'ok' });
  return { status: 503, body: { status: 'failed', reason: 'Certificates expiring', expired } };
}

/** A single node holds no quorum or mirror another needs: these checks pass, saying why. */
const singleNode = (): Reply => ok({ status: 'ok', reason: 'single node cluster' });

export const healthRoutes: Route[] = [
  { path: '/api/aliveness-test/:vhost', access: 'vhost', GET: aliveness },
  { path: '/api/health/checks/alarms', access: 'management', GET: alarmsCheck('There are alarms in effect in the cluster') },
  { path: '/api/health/checks/local-alarms', access: 'management', GET: alarmsCheck('There are alarms in effect on the node') },
  { path: '/api/health/checks/port-listener/:port', access: 'management', GET: portListener },
  { path: '/api/health/checks/protocol-listener/:protocol', access: 'management', GET: protocolListener },
  // Every vhost of a running Warren is up.
  { path: '/api/health/checks/virtual-hosts', access: 'management', GET: () => ok({ status: 'ok' }) },
  { path: '/api/health/checks/node-is-quorum-critical', access: 'management', GET: singleNode },
  { path: '/api/health/checks/node-is-mirror-sync-critical', access: 'management', GET: singleNode },
  { path: '/api/health/checks/certificate-expiration/:within/:unit', access: 'management', GET: certificateExpiration },
];
