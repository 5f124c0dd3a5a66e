/**
 * /api/warren/until and /api/warren/faults/*: the test toolkit's waits and faults
 * (src/testing/until.ts, faults.ts) over HTTP, for test suites in other languages
 * (docs/testing.md "Over HTTP"). Warren's own paths; administrators only. They use the broker's
 * own toolkit (Broker.toolkit), so a fault armed over HTTP is the one startBroker()'s object
 * sees, and reset takes it back.
 *
 * until is a long poll: the request is answered when the broker event makes the condition true
 * (200, the state that satisfied it), or after "timeout" real ms with 408 and the toolkit's
 * message saying what was still awaited. A wait that must start before the client acts
 * (`routed`: the next message routed to a queue) is started by POST /api/warren/waits, which
 * answers as soon as the wait is registered, and read by GET /api/warren/waits/{id} (the long
 * poll); an HTTP request alone cannot be ordered before a publish on another socket.
 */
import type { Broker } from '../../broker.js';
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
 * Starts the wait a body describes: queue_length {queue, length}, queue_drained {queue},
 * consumer_count {queue, count}, connection {connection_name}, and with `routed` allowed
 * (POST /api/warren/waits) routed {queue}; each with optional "vhost" (queues; default "/") and
 * "timeout" (real ms; default until.defaultTimeout). Bad input throws before anything waits.
 */
function startWait(ctx: RequestContext, body: Record<string, unknown>, routed: boolean): Promise<unknown> {
  const condition = body['condition'];
  const options = waitOptions(ctx, body);
  const until = ctx.broker.toolkit.until;
  switch (condition) {
    case 'queue_length':
      return until.queueLength(stringField(body, 'queue', true), countField(body, 'length', true)!, options);
    case 'queue_drained':
      return until.queueDrained(stringField(body, 'queue', true), options);
    case 'consumer_count':
      return until.consumerCount(stringField(body, 'queue', true), countField(body, 'count', true)!, options);
    case 'connection':
      return until.connection(stringField(body, 'connection_name', true), options);
    case 'routed':
      if (routed) return until.routed(stringField(body, 'queue', true), options);
      throw badRequest('"routed" waits for a message routed from now on: start it with POST /api/warren/waits before publishing, then GET /api/warren/waits/{id}');
    default: {
      const known = routed ? [...CONDITIONS, 'routed'] : CONDITIONS;
      throw badRequest(`"condition" must be one of ${known.map((c) => `"${c}"`).join(', ')} (got ${JSON.stringify(condition) ?? 'nothing'})`);
    }
  }
}

/** How a wait ended, as the reply to send. */
async function outcome(wait: Promise<unknown>): Promise<Reply> {
  try {
    return ok(plainToJson(await wait));
  } catch (err) {
    // The timeout's message says what was awaited and what the broker had instead.
    return { status: 408, body: { error: 'timeout', reason: (err as Error).message } };
  }
}

/** POST /api/warren/until: one request, answered when the wait ends. */
async function until(ctx: RequestContext): Promise<Reply> {
  return outcome(startWait(ctx, await ctx.body(), false));
}

/** Waits started by POST /api/warren/waits and not yet read, at most this many per broker. */
export const MAX_PENDING_WAITS = 1000;
/** How long a finished wait's outcome is kept for its GET, in real ms. */
const KEEP_OUTCOME_MS = 60_000;

/**
 * The waits of one broker started over HTTP, by id, until their outcome is read (once) or kept
 * KEEP_OUTCOME_MS after they ended: bounded in number and in time.
 */
export class HttpWaits {
  private readonly waits = new Map<string, Promise<Reply>>();
  private next = 0;

  constructor(private readonly limit = MAX_PENDING_WAITS) {}

  /** Unread waits (pending or ended less than KEEP_OUTCOME_MS ago). */
  get size(): number {
    return this.waits.size;
  }

  start(wait: Promise<unknown>): string {
    if (this.waits.size >= this.limit) {
      wait.catch(() => undefined);
      throw badRequest(`too many waits not yet read (${this.limit}): GET /api/warren/waits/{id} reads one`);
    }
    const id = `w${++this.next}`;
    const result = outcome(wait);
    this.waits.set(id, result);
    void result.then(() => setTimeout(() => this.waits.delete(id), KEEP_OUTCOME_MS).unref());
    return id;
  }

  take(id: string): Promise<Reply> | undefined {
    const result = this.waits.get(id);
    this.waits.delete(id);
    return result;
  }
}

const httpWaits = new WeakMap<Broker, HttpWaits>();

function waitsOf(broker: Broker): HttpWaits {
  let waits = httpWaits.get(broker);
  if (!waits) httpWaits.set(broker, (waits = new HttpWaits()));
  return waits;
}

/** POST /api/warren/waits: registers the wait, answers 201 {"id"} at once. */
async function startHttpWait(ctx: RequestContext): Promise<Reply> {
  const wait = startWait(ctx, await ctx.body(), true);
  return { status: 201, body: { id: waitsOf(ctx.broker).start(wait) } };
}

/** GET /api/warren/waits/{id}: the long poll; 404 for an id unknown, already read or expired. */
async function readHttpWait(ctx: RequestContext): Promise<Reply> {
  const id = ctx.params['id']!;
  const result = waitsOf(ctx.broker).take(id);
  if (!result) throw notFound(`no wait '${id}' (unknown, already read, or ended more than ${KEEP_OUTCOME_MS / 1000} s ago)`);
  return result;
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
  { path: '/api/warren/waits', access: 'admin', POST: startHttpWait },
  { path: '/api/warren/waits/:id', access: 'admin', GET: readHttpWait },
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
