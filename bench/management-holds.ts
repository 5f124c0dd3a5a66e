/**
 * What an operator's request costs the broker's other clients on a broker with many queues:
 * while each request below runs, a probe connection publishes a confirmed message every 2 ms
 * and the longest wait from when a publish was due to its confirm is reported (what any AMQP client waited at most), beside
 * the request's own time. Warren (built: `npm run build` first) runs in this process; with
 * `--ref-port P` the same requests go to a RabbitMQ on 127.0.0.1:P (management on P + 10000),
 * whose queues are declared in a vhost of their own and deleted with it.
 *
 *   npx tsx bench/management-holds.ts [--queues 100000] [--ref-port 5710] [--vhost holds]
 *
 * Requests: GET /api/queues (every queue), GET /api/queues?page=1&page_size=100, GET
 * /api/bindings, GET /api/overview, GET /api/definitions, Prometheus /metrics and /metrics/per-object (plain and gzip: what Prometheus asks for) (Warren; RabbitMQ only when its
 * rabbitmq_prometheus answers on 15692 + P - 5672), and a policy over every queue put and
 * deleted (PUT and DELETE /api/policies).
 */
import { parseArgs } from 'node:util';
import { request } from 'node:http';
import amqp from 'amqplib';
import { startBroker } from '../dist/broker.js';

const { values } = parseArgs({ options: { queues: { type: 'string' }, 'ref-port': { type: 'string' }, vhost: { type: 'string' } } });
const QUEUES = Number(values.queues ?? 100_000);
/** The vhost the queues are declared in (on RabbitMQ, deleted with them at the end). */
const VHOST = values.vhost ?? 'holds';

interface Target {
  name: string;
  amqpUrl: string;
  http: string;
  prometheus: string | undefined;
}

/** One HTTP request as guest; resolves with its status and how many octets came back. */
function http(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; octets: number }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(url, {
      method,
      headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}`, ...(payload ? { 'content-type': 'application/json' } : {}), ...headers },
    }, (res) => {
      let octets = 0;
      res.on('data', (chunk: Buffer) => (octets += chunk.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, octets }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A confirmed publish every 2 ms on a connection of its own; `stop()` returns the longest round trip. */
async function probe(url: string): Promise<{ stop: () => Promise<number> }> {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  const { queue } = await ch.assertQueue('', { exclusive: true, arguments: { 'x-max-length': 10 } });
  let longest = 0;
  let running = true;
  const loop = (async () => {
    // From when each publish was due (2 ms after the last confirm) to its confirm: a broker in
    // this process that holds the event loop delays the timer, not only the confirm.
    let due = performance.now();
    while (running) {
      ch.sendToQueue(queue, Buffer.from('p'));
      await ch.waitForConfirms();
      const now = performance.now();
      longest = Math.max(longest, now - due);
      due = now + 2;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      await conn.close();
      return longest;
    },
  };
}

async function declareQueues(url: string): Promise<void> {
  const conn = await amqp.connect(url);
  const ch = await conn.createChannel();
  for (let i = 0; i < QUEUES; i++) {
    void ch.assertQueue(`q-${i}`, { durable: false });
    if (i % 2000 === 1999) await ch.checkQueue(`q-${i}`);
  }
  await ch.checkQueue(`q-${QUEUES - 1}`);
  await conn.close();
}

async function measure(t: Target): Promise<Array<[string, number, number, string]>> {
  const rows: Array<[string, number, number, string]> = [];
  const v = encodeURIComponent(VHOST);
  const requests: Array<[string, () => Promise<{ status: number; octets: number }>]> = [
    ['GET /api/queues', () => http('GET', `${t.http}/api/queues/${v}`)],
    ['GET /api/queues?page=1&page_size=100', () => http('GET', `${t.http}/api/queues/${v}?page=1&page_size=100`)],
    ['GET /api/bindings', () => http('GET', `${t.http}/api/bindings/${v}`)],
    ['GET /api/overview', () => http('GET', `${t.http}/api/overview`)],
    ['GET /api/definitions', () => http('GET', `${t.http}/api/definitions`)],
    ['PUT a policy over every queue', () => http('PUT', `${t.http}/api/policies/${v}/cap`, { pattern: '^q-', definition: { 'max-length': 1000 }, 'apply-to': 'queues' })],
    ['DELETE that policy', () => http('DELETE', `${t.http}/api/policies/${v}/cap`)],
  ];
  if (t.prometheus) {
    requests.push(['GET /metrics (Prometheus)', () => http('GET', `${t.prometheus}/metrics`)]);
    requests.push(['GET /metrics/per-object', () => http('GET', `${t.prometheus}/metrics/per-object`)]);
    // As Prometheus scrapes: gzip.
    requests.push(['GET /metrics/per-object, gzip', () => http('GET', `${t.prometheus}/metrics/per-object`, undefined, { 'accept-encoding': 'gzip' })]);
  }
  for (const [name, run] of requests) {
    const p = await probe(t.amqpUrl);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const t0 = performance.now();
    const res = await run().catch((err: Error) => ({ status: 0, octets: 0, error: err.message }));
    const ms = performance.now() - t0;
    // A policy is applied after its PUT answered (Warren: a chunk a turn; RabbitMQ: by each queue).
    await new Promise((resolve) => setTimeout(resolve, name.startsWith('GET') ? 50 : 2000));
    const longest = await p.stop();
    rows.push([name, ms, longest, 'error' in res ? `failed: ${res.error}` : `${res.status}, ${(res.octets / 1e6).toFixed(1)} MB`]);
    console.error(`${t.name}: ${name}: ${ms.toFixed(0)} ms, longest wait ${longest.toFixed(1)} ms (${rows.at(-1)![3]})`);
  }
  return rows;
}

async function setUpVhost(http0: string): Promise<void> {
  await http('PUT', `${http0}/api/vhosts/${VHOST}`);
  await http('PUT', `${http0}/api/permissions/${VHOST}/guest`, { configure: '.*', write: '.*', read: '.*' });
}

const results: Array<[string, Array<[string, number, number, string]>]> = [];

const warren = await startBroker({ port: 0, logLevel: 'silent', managementPort: 0, prometheusPort: 0 });
try {
  const t: Target = { name: 'Warren', amqpUrl: `${warren.url}/${VHOST}`, http: warren.managementUrl!, prometheus: warren.broker.prometheusUrl };
  await setUpVhost(t.http);
  await declareQueues(t.amqpUrl);
  results.push([t.name, await measure(t)]);
} finally {
  await warren.close();
}

if (values['ref-port']) {
  const port = Number(values['ref-port']);
  const prometheus = `http://127.0.0.1:${15692 + port - 5672}`;
  const t: Target = {
    name: 'RabbitMQ', amqpUrl: `amqp://guest:guest@127.0.0.1:${port}/${VHOST}`, http: `http://127.0.0.1:${port + 10000}`,
    prometheus: (await http('GET', `${prometheus}/metrics`).catch(() => undefined))?.status === 200 ? prometheus : undefined,
  };
  await setUpVhost(t.http);
  try {
    await declareQueues(t.amqpUrl);
    results.push([t.name, await measure(t)]);
  } finally {
    // RabbitMQ may take longer to delete 100,000 queues than its HTTP timeout.
    await http('DELETE', `${t.http}/api/vhosts/${VHOST}`).catch((err: Error) => console.error(`deleting vhost ${VHOST}: ${err.message}`));
  }
}

console.log(`\n${QUEUES.toLocaleString('en-US')} queues: each request's time, and the longest another AMQP client waited meanwhile for a confirm (ms)\n`);
console.log(`| request | ${results.map(([n]) => `${n} request | ${n} longest wait`).join(' | ')} |`);
console.log(`| --- | ${results.map(() => '--- | ---').join(' | ')} |`);
for (let i = 0; i < results[0]![1].length; i++) {
  const name = results[0]![1][i]![0];
  const cells = results.map(([, rows]) => {
    const row = rows.find((r) => r[0] === name);
    return row ? `${row[1].toFixed(0)} | ${row[2].toFixed(1)}` : '— | —';
  });
  console.log(`| ${name} | ${cells.join(' | ')} |`);
}
for (const [n, rows] of results) console.log(`${n}: ${rows.map((r) => `${r[0]}: ${r[3]}`).join('; ')}`);
