/**
 * Records fixtures/reference-3.10.8.json: runs scenario.ts against a real RabbitMQ 3.10 with
 * rabbitmq_prometheus enabled and writes the counters it produced. Not part of `npm test`;
 * run by hand when the scenario changes:
 *
 *   ../shared/tools/reference-rabbitmq.sh start 5704
 *   (enable rabbitmq_prometheus on it, e.g. on port 15804)
 *   npx tsx test/metrics/record-reference.ts amqp://guest:guest@127.0.0.1:5704 http://127.0.0.1:15804 http://127.0.0.1:15704
 *
 * What it keeps:
 * - counters: how much each rabbitmq_global_*, churn and amqp091 login counter grew over the
 *   scenario, connection closed;
 * - perObject: /metrics/per-object samples while the connection was open, for the scenario's
 *   queues, its exchanges and its channels (renamed ch1, ch2, ch3 in the order they opened);
 * - management: the management API's message_stats of the scenario's queues, exchanges and
 *   channels (keys RabbitMQ leaves out count 0), and how much the overview's and the vhost's grew.
 * RabbitMQ updates per-object metrics and management stats every 5 s: it waits 6 s for them.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import { COUNTER, samples } from './prometheus-text.js';
import { QUEUES, runScenario, scenarioPerObject } from './scenario.js';

const [amqpUrl, metricsUrl, managementUrl] = process.argv.slice(2);
if (!amqpUrl || !metricsUrl || !managementUrl) {
  process.stderr.write('usage: record-reference.ts AMQP_URL METRICS_URL MANAGEMENT_URL\n');
  process.exit(2);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const text = async (path: string) => (await fetch(metricsUrl + path)).text();
const auth = { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` };
const api = async (path: string): Promise<Record<string, unknown>> => (await fetch(managementUrl + path, { headers: auth })).json() as Promise<Record<string, unknown>>;

const MESSAGE_STATS = ['publish', 'confirm', 'return_unroutable', 'drop_unroutable', 'deliver', 'deliver_no_ack', 'get', 'get_no_ack', 'get_empty', 'deliver_get', 'redeliver', 'ack'];

function stats(o: unknown, keys: readonly string[]): Record<string, number> {
  const ms = ((o as { message_stats?: Record<string, number> })?.message_stats) ?? {};
  return Object.fromEntries(keys.map((k) => [k, ms[k] ?? 0]));
}

function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k]! - (before[k] ?? 0)]));
}

// Objects left by an earlier run go first, so that the scenario's own deletes find nothing.
const cleanup = await amqp.connect(amqpUrl);
const cch = await cleanup.createChannel();
for (const q of QUEUES) await cch.deleteQueue(q);
await cch.deleteExchange('mt.fan');
await cleanup.close();
await sleep(6000);

const before = samples(await text('/metrics'));
const overviewBefore = stats(await api('/api/overview'), MESSAGE_STATS);
const vhostBefore = stats(await api('/api/vhosts/%2F'), MESSAGE_STATS);
const xBefore = {
  'amq.default': stats(await api('/api/exchanges/%2F/amq.default'), ['publish_in', 'publish_out']),
  'amq.direct': stats(await api('/api/exchanges/%2F/amq.direct'), ['publish_in', 'publish_out']),
};

const perObject: Record<string, number> = {};
const management: Record<string, unknown> = {};
await runScenario({
  url: amqpUrl,
  settle: async () => {
    await sleep(300);
  },
  whileOpen: async () => {
    await sleep(6000);
    for (const [key, value] of scenarioPerObject(await text('/metrics/per-object'))) perObject[key] = value;
    const queues: Record<string, unknown> = {};
    for (const q of QUEUES) queues[q] = stats(await api(`/api/queues/%2F/${q}`), ['publish', ...MESSAGE_STATS.slice(4)]);
    const exchanges: Record<string, unknown> = { 'mt.fan': stats(await api('/api/exchanges/%2F/mt.fan'), ['publish_in', 'publish_out']) };
    for (const [x, b] of Object.entries(xBefore)) exchanges[x] = delta(stats(await api(`/api/exchanges/%2F/${x}`), ['publish_in', 'publish_out']), b);
    const channels: Record<string, unknown> = {};
    for (const ch of (await api('/api/channels')) as unknown as Array<{ number: number }>) channels[String(ch.number)] = stats(ch, MESSAGE_STATS);
    management['queues'] = queues;
    management['exchanges'] = exchanges;
    management['channels'] = channels;
    management['overview'] = delta(stats(await api('/api/overview'), MESSAGE_STATS), overviewBefore);
    management['vhost'] = delta(stats(await api('/api/vhosts/%2F'), MESSAGE_STATS), vhostBefore);
  },
});
await sleep(2000);
const after = samples(await text('/metrics'));
const counters: Record<string, number> = {};
for (const [key, value] of after) if (COUNTER.test(key)) counters[key] = value - (before.get(key) ?? 0);

const out = {
  recorded: 'RabbitMQ 3.10.8 (Debian) with rabbitmq_prometheus, by test/metrics/record-reference.ts running scenario.ts',
  counters,
  perObject,
  management,
};
const file = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'reference-3.10.8.json');
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
process.stdout.write(`wrote ${file}\n`);
