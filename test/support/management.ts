/**
 * Helpers for the management API tests: a broker with its management API on a free port,
 * HTTP calls with basic auth, the state the golden samples were recorded in (shared with
 * test/fixtures/management/record.ts, which records them from a reference RabbitMQ), the format
 * of recorded request conversations, and a JSON reader that keeps integers and floats apart.
 */
import amqp, { type ChannelModel } from 'amqplib';
import { readFileSync } from 'node:fs';
import type { RunningBroker } from '../../src/broker.js';
import type { BrokerOptions } from '../../src/config.js';
import { connect, connectNamed } from './amqp.js';
import { useBroker } from './broker.js';

/** One request of a conversation recorded from a reference RabbitMQ, with its answer. */
export interface RecordedRequest {
  method: string;
  path: string;
  body?: unknown;
  /** Made as this user, whose password is its name (default guest). */
  user?: string;
  status: number;
  response: unknown;
}

/** A recorded conversation: its requests, with notes naming the sections between them. */
export type RecordedStep = RecordedRequest | { note: string };

/** Reads a recorded conversation (a JSON file of `{ steps }`, url relative to the caller's module). */
export function loadRecording(url: URL): { steps: RecordedStep[] } {
  return JSON.parse(readFileSync(url, 'utf8')) as { steps: RecordedStep[] };
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON (undefined when empty). */
  json: any;
}

export interface CallOptions {
  user?: string;
  password?: string;
  /** false: send no Authorization header. */
  auth?: boolean;
  body?: unknown;
  headers?: Record<string, string>;
}

/** One HTTP call to the management API at base. */
export async function call(base: string, method: string, path: string, opts: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.auth !== false) headers['authorization'] = `Basic ${Buffer.from(`${opts.user ?? 'guest'}:${opts.password ?? 'guest'}`).toString('base64')}`;
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(base + path, { method, headers, body, redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text === '' ? undefined : JSON.parse(text) };
}

/**
 * A broker with the management API on a free port for the enclosing describe block.
 * `api(method, path, opts)` calls it.
 */
export function useManagedBroker(options: BrokerOptions = {}) {
  const b = useBroker({ managementPort: 0, ...options });
  return {
    get running(): RunningBroker {
      return b.running;
    },
    get url(): string {
      return b.url;
    },
    get base(): string {
      return b.running.managementUrl!;
    },
    api(method: string, path: string, opts?: CallOptions): Promise<ApiResponse> {
      return call(b.running.managementUrl!, method, path, opts);
    },
  };
}

/**
 * A broker for the tests of /api/warren/: the management API on a free port, an administrator
 * (guest/guest) and a user tagged management only (app/p); `open(name?)` connects over AMQP
 * (with a connection name when given), and after each test those connections are closed and
 * the broker is reset.
 */
export function useToolkitBroker(options: BrokerOptions = {}) {
  const m = useManagedBroker({
    users: [
      { username: 'guest', password: 'guest', tags: ['administrator'] },
      { username: 'app', password: 'p', tags: ['management'] },
    ],
    ...options,
  });
  const opened: ChannelModel[] = [];
  afterEach(async () => {
    for (const c of opened.splice(0)) await c.close().catch(() => {});
    await m.running.reset();
  });
  return {
    get running(): RunningBroker {
      return m.running;
    },
    api: m.api,
    async open(name?: string): Promise<ChannelModel> {
      const conn = name === undefined ? await connect(m.url) : await connectNamed(m.url, name);
      opened.push(conn);
      return conn;
    },
  };
}

/**
 * The state the golden samples were recorded in: a topic exchange "orders" binding
 * orders.created (x-message-ttl) and ttl.jobs (with arguments), a quorum queue, one
 * connection "sample-app" with two channels (one in confirm mode), a consumer with prefetch 2
 * holding 2 of 3 messages, the aliveness test run, and two messages got over HTTP.
 */
export async function sampleScenario(amqpUrl: string, base: string): Promise<{ conn: ChannelModel; connectionName: string }> {
  const conn = await amqp.connect(amqpUrl, { clientProperties: { connection_name: 'sample-app' } });
  const ch = await conn.createChannel();
  await ch.assertExchange('orders', 'topic', { durable: true });
  await ch.assertQueue('orders.created', { durable: true, arguments: { 'x-message-ttl': 60000 } });
  await ch.assertQueue('ttl.jobs', { durable: true });
  await ch.assertQueue('jobs.dlq', { durable: true });
  await ch.assertQueue('q.quorum', { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 5 } });
  await ch.bindQueue('orders.created', 'orders', 'order.created');
  await ch.bindQueue('ttl.jobs', 'orders', 'job.#', { 'x-foo': 'bar' });
  const confirm = await conn.createConfirmChannel();
  for (let i = 0; i < 3; i++) confirm.publish('orders', 'order.created', Buffer.from(`order ${i}`), { persistent: true, contentType: 'text/plain' });
  for (let i = 0; i < 2; i++) confirm.publish('orders', 'job.1', Buffer.from(`job ${i}`), { headers: { n: i } });
  await confirm.waitForConfirms();
  await ch.prefetch(2);
  let delivered = 0;
  const held = new Promise<void>((resolve) => {
    void ch.consume('orders.created', () => {
      if (++delivered === 2) resolve();
    }, { consumerTag: 'sample-consumer' });
  });
  await held;
  await call(base, 'GET', '/api/aliveness-test/%2F');
  await call(base, 'POST', '/api/exchanges/%2F/amq.default/publish', { body: { routing_key: 'jobs.dlq', payload: 'dead', payload_encoding: 'string', properties: {} } });
  await call(base, 'POST', '/api/queues/%2F/ttl.jobs/get', { body: { count: 2, ackmode: 'ack_requeue_true', encoding: 'auto' } });
  const conns = (await call(base, 'GET', '/api/connections')).json as Array<{ name: string; user_provided_name?: string }>;
  const connectionName = conns.find((c) => c.user_provided_name === 'sample-app')?.name ?? '';
  return { conn, connectionName };
}

/** A JSON value's shape with integers and floats told apart (JSON.parse cannot). */
export type Shape =
  | { t: 'int' | 'float' | 'string' | 'bool' | 'null' }
  | { t: 'array'; items: Shape[] }
  | { t: 'object'; fields: Map<string, Shape> };

/** Parses JSON text into its Shape. */
export function parseShape(text: string): Shape {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const value = (): Shape => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const fields = new Map<string, Shape>();
      ws();
      if (text[i] === '}') {
        i++;
        return { t: 'object', fields };
      }
      for (;;) {
        ws();
        const key = string();
        ws();
        i++; // ':'
        fields.set(key, value());
        ws();
        if (text[i++] === '}') return { t: 'object', fields };
      }
    }
    if (c === '[') {
      i++;
      const items: Shape[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return { t: 'array', items };
      }
      for (;;) {
        items.push(value());
        ws();
        if (text[i++] === ']') return { t: 'array', items };
      }
    }
    if (c === '"') {
      string();
      return { t: 'string' };
    }
    if (text.startsWith('true', i) || text.startsWith('false', i)) {
      i += text[i] === 't' ? 4 : 5;
      return { t: 'bool' };
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return { t: 'null' };
    }
    const m = /^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!m) throw new Error(`not JSON at ${i}: ${text.slice(i, i + 20)}`);
    i += m[0].length;
    return { t: m[1] || m[2] ? 'float' : 'int' };
  };
  const string = (): string => {
    const start = i;
    i++;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  return value();
}

export interface ShapeRules {
  /** Keys whose members are data (arguments, client_properties): their own keys are not compared. */
  openMaps?: string[];
  /** Keys not compared at all (message_stats: counted by src/metrics). */
  skip?: string[];
  /** Keys whose value may be null in one and a string in the other (policy, ...). */
  nullable?: string[];
}

/**
 * Where actual lacks a key sample has, or holds another JSON type: one line per difference
 * (empty when actual carries at least every key of sample with the same types). Arrays are
 * compared item to item where both have items.
 */
export function shapeDifferences(sample: Shape, actual: Shape, rules: ShapeRules = {}, path = ''): string[] {
  const key = path.slice(path.lastIndexOf('.') + 1).replace(/\[\]$/, '');
  if (rules.openMaps?.includes(key)) return [];
  if (sample.t !== actual.t) {
    if (rules.nullable?.includes(key) && (sample.t === 'null' || actual.t === 'null')) return [];
    return [`${path || '(top)'}: ${sample.t} in RabbitMQ, ${actual.t} in Warren`];
  }
  if (sample.t === 'object' && actual.t === 'object') {
    const out: string[] = [];
    for (const [k, v] of sample.fields) {
      if (rules.skip?.includes(k)) continue;
      const a = actual.fields.get(k);
      if (!a) out.push(`${path}.${k}: missing in Warren`);
      else out.push(...shapeDifferences(v, a, rules, `${path}.${k}`));
    }
    return out;
  }
  if (sample.t === 'array' && actual.t === 'array') {
    const out: string[] = [];
    const n = Math.min(sample.items.length, actual.items.length);
    for (let j = 0; j < n; j++) out.push(...shapeDifferences(sample.items[j]!, actual.items[j]!, rules, `${path}[]`));
    return out;
  }
  return [];
}
