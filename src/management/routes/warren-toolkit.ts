/**
 * /api/warren/until and /api/warren/faults/*: the test toolkit's waits and faults
 * (src/testing/until.ts, faults.ts) over HTTP, for test suites in other languages
 * (docs/testing.md "Over HTTP"). Warren's own paths; administrators only. They use the broker's
 * own toolkit (Broker.toolkit), so a fault armed over HTTP is the one startBroker()'s object
 * sees, and reset takes it back.
 *
 * until is a long poll: the request is answered when the broker event makes the condition true
 * (200, the state that satisfied it), or after "timeout" real ms with 408 and the toolkit's
 * message saying what was still awaited. `routed` is not served: an HTTP request cannot be
 * ordered before a publish on another socket, so a wait "from now on" would race it.
 */
import type { CloseOptions } from '../../testing/faults.js';
import type { WaitOptions } from '../../testing/until.js';
import { badRequest, HttpError, noContent, notFound, ok, type Reply } from '../http.js';
import type { RequestContext, Route } from '../router.js';
import { plainToJson } from './warren.js';

/** The longest wait a request may ask for, in real ms (Node's http server ends requests at 300 s). */
export const MAX_WAIT_MS = 120_000;

function stringField(body: Record<string, unknown>, key: string, required: true): string;
function stringField(body: Record<string, unknown>, key: string, required: false): string | undefined;
function stringField(body: Record<string, unknown>, key: string, required: boolean): string | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`"${key}" is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw badRequest(`"${key}" must be a string (got ${JSON.stringify(v)})`);
  return v;
}

function countField(body: Record<string, unknown>, key: string, required: boolean): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) {
    if (required) throw badRequest(`"${key}" is required`);
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw badRequest(`"${key}" must be a whole number, 0 or more (got ${JSON.stringify(v)})`);
  return v;
}

function waitOptions(ctx: RequestContext, body: Record<string, unknown>): WaitOptions {
  const vhost = stringField(body, 'vhost', false);
  if (vhost !== undefined && !ctx.broker.vhosts.has(vhost)) throw notFound(`no vhost '${vhost}'`);
  const timeout = countField(body, 'timeout', false);
  if (timeout !== undefined && timeout > MAX_WAIT_MS) throw badRequest(`"timeout" must be at most ${MAX_WAIT_MS} ms (got ${timeout})`);
  return { ...(vhost !== undefined ? { vhost } : {}), ...(timeout !== undefined ? { timeout } : {}) };
}

const CONDITIONS = ['queue_length', 'queue_drained', 'consumer_count', 'connection'] as const;

/**
 * POST /api/warren/until {"condition", ...}: queue_length {queue, length}, queue_drained
 * {queue}, consumer_count {queue, count}, connection {connection_name}; each with optional
 * "vhost" (queues; default "/") and "timeout" (real ms; default until.defaultTimeout).
 */
async function until(ctx: RequestContext): Promise<Reply> {
  const body = await ctx.body();
  const condition = body['condition'];
  const options = waitOptions(ctx, body);
  const until = ctx.broker.toolkit.until;
  let wait: Promise<unknown>;
  switch (condition) {
    case 'queue_length':
      wait = until.queueLength(stringField(body, 'queue', true), countField(body, 'length', true)!, options);
      break;
    case 'queue_drained':
      wait = until.queueDrained(stringField(body, 'queue', true), options);
      break;
    case 'consumer_count':
      wait = until.consumerCount(stringField(body, 'queue', true), countField(body, 'count', true)!, options);
      break;
    case 'connection':
      wait = until.connection(stringField(body, 'connection_name', true), options);
      break;
    default:
      throw badRequest(`"condition" must be one of ${CONDITIONS.map((c) => `"${c}"`).join(', ')} (got ${JSON.stringify(condition) ?? 'nothing'})`);
  }
  try {
    return ok(plainToJson(await wait));
  } catch (err) {
    // The timeout's message says what was awaited and what the broker had instead.
    throw new HttpError(408, 'timeout', (err as Error).message);
  }
}

function closeOptions(body: Record<string, unknown>): CloseOptions {
  const code = countField(body, 'code', false);
  const reason = stringField(body, 'reason', false);
  return { ...(code !== undefined ? { code } : {}), ...(reason !== undefined ? { reason } : {}) };
}

/** A fault call that throws on bad input (RangeError: 400) or no connection to apply to (404). */
async function fault<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof HttpError) throw err;
    if (err instanceof RangeError) throw badRequest(err.message);
    throw notFound((err as Error).message);
  }
}

function scope(body: Record<string, unknown>): { connection?: string } {
  const connection = stringField(body, 'connection', false);
  return connection === undefined ? {} : { connection };
}

function alarm(body: Record<string, unknown>): 'memory' | 'disk' {
  const resource = stringField(body, 'resource', true);
  if (resource !== 'memory' && resource !== 'disk') throw badRequest(`"resource" must be "memory" or "disk" (got ${JSON.stringify(resource)})`);
  return resource;
}

/** One POST /api/warren/faults/<name> route. */
function faultRoute(name: string, handler: (ctx: RequestContext, body: Record<string, unknown>) => Promise<Reply>): Route {
  return { path: `/api/warren/faults/${name}`, access: 'admin', POST: async (ctx) => handler(ctx, await ctx.body()) };
}

export const warrenToolkitRoutes: Route[] = [
  { path: '/api/warren/until', access: 'admin', POST: until },
  faultRoute('close-connection', async (ctx, body) => {
    const connection = stringField(body, 'connection', true);
    const options = closeOptions(body);
    return ok({ connections: await fault(() => ctx.broker.toolkit.faults.closeConnection(connection, options)) });
  }),
  faultRoute('close-all-connections', async (ctx, body) => {
    const options = closeOptions(body);
    return ok({ connections: await fault(() => ctx.broker.toolkit.faults.closeAllConnections(options)) });
  }),
  faultRoute('drop-connection', async (ctx, body) => {
    const connection = stringField(body, 'connection', true);
    const afterFrames = countField(body, 'after_frames', false);
    return ok({ connections: await fault(() => ctx.broker.toolkit.faults.dropConnection(connection, afterFrames === undefined ? {} : { afterFrames })) });
  }),
  faultRoute('nack-publishes', async (ctx, body) => {
    const n = countField(body, 'count', true)!;
    await fault(() => ctx.broker.toolkit.faults.nackPublishes(n, scope(body)));
    return ok({ pending: ctx.broker.toolkit.faults.pendingNacks });
  }),
  faultRoute('hold-confirms', async (ctx, body) => {
    ctx.broker.toolkit.faults.holdConfirms(scope(body));
    return noContent();
  }),
  faultRoute('release-confirms', async (ctx) => {
    ctx.broker.toolkit.faults.releaseConfirms();
    return noContent();
  }),
  faultRoute('raise-alarm', async (ctx, body) => {
    ctx.broker.toolkit.faults.raiseAlarm(alarm(body));
    return noContent();
  }),
  faultRoute('clear-alarm', async (ctx, body) => {
    ctx.broker.toolkit.faults.clearAlarm(alarm(body));
    return noContent();
  }),
  faultRoute('fail-next-commit', async (ctx) => {
    ctx.broker.toolkit.faults.failNextCommit();
    return noContent();
  }),
  faultRoute('resume-store', async (ctx) => {
    try {
      await ctx.broker.toolkit.faults.resumeStore();
    } catch (err) {
      // The store still cannot write (a real full disk, say).
      throw new HttpError(503, 'store_failed', (err as Error).message);
    }
    return noContent();
  }),
  faultRoute('clear', async (ctx) => {
    await ctx.broker.toolkit.faults.clear();
    return noContent();
  }),
];
