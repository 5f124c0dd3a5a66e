/**
 * Shovel throughput (issue 18): how fast a dynamic shovel (ack-mode on-confirm, prefetch 1000,
 * both defaults) moves N persistent messages from a durable queue to a durable queue
 *
 *   warren→warren      Warren's shovel between two Warrens (child processes, fresh data dirs)
 *   warren→rabbitmq    Warren's shovel into the reference RabbitMQ (--ref-dest)
 *   rabbitmq→rabbitmq  RabbitMQ's own shovel (rabbitmq_shovel) between two reference nodes on
 *                      this machine (--ref → --ref-dest), defined through --ref's management API
 *
 * The queue is filled first (confirmed publishes); the clock runs from the shovel's PUT to the
 * destination queue holding N messages (passive declares every 50 ms). Prints messages/s, and
 * the CPU of the broker processes where their pids are known.
 *
 *   npx tsx bench/shovel.ts [--messages 100000] [--size 64] [--rounds 3]
 *       [--ref amqp://guest:guest@127.0.0.1:5704 --ref-dest amqp://guest:guest@127.0.0.1:5705]
 *       [--src] [--only warren→warren,...]
 *
 * The reference nodes need the plugin: rabbitmq-plugins enable rabbitmq_shovel
 * rabbitmq_shovel_management (test/support/reference-rabbitmq.ts enableShovelPlugin does it for
 * the nodes of ../shared/tools/reference-rabbitmq.sh). Their management API is taken to be on
 * the AMQP port + 10000 (that script's layout) unless --ref-mgmt says otherwise.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { children, ensureBuilt, freePort, pidListeningOn, ROOT } from './lib/brokers.js';
import { processCpuMs } from './lib/proc.js';
import { fmt, median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '100000' },
    size: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '1' },
    ref: { type: 'string' },
    'ref-dest': { type: 'string' },
    'ref-mgmt': { type: 'string' },
    src: { type: 'boolean' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write('npx tsx bench/shovel.ts [--messages N] [--size B] [--rounds R] [--ref URL --ref-dest URL] [--ref-mgmt URL] [--src] [--only a,b]\n');
  process.exit(0);
}
const N = Number(values.messages);
const body = Buffer.alloc(Number(values.size), 'x');
const rounds = Number(values.rounds);
const QUEUE = 'shovel-bench';
const auth = `Basic ${Buffer.from('guest:guest').toString('base64')}`;

interface Broker {
  name: string;
  url: string;
  /** AMQP port: the reference's management API is on it + 10000 unless --ref-mgmt. */
  mgmt: string;
  pid: number;
  stop(): Promise<void>;
}

async function startWarren(tag: string): Promise<Broker> {
  const [port, mgmtPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), `warren-shovel-bench-${tag}-`));
  const log = openSync(join(dataDir, '..', `warren-shovel-bench-${tag}-${port}.log`), 'w');
  const args = values.src ? ['--import', 'tsx', join(ROOT, 'src', 'main.ts')] : ['--max-semi-space-size=64', join(ROOT, 'dist', 'main.js')];
  args.push('--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', String(mgmtPort));
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', log, log] });
  closeSync(log);
  children.add(proc);
  const mgmt = `http://127.0.0.1:${mgmtPort}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`${mgmt}/api/overview`, { headers: { authorization: auth } }).then((r) => r.ok, () => false);
    if (up) break;
    if (i > 600 || proc.exitCode !== null) throw new Error(`Warren (${tag}) did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name: `Warren ${tag}`,
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    mgmt,
    pid: proc.pid!,
    stop: async () => {
      proc.kill('SIGTERM');
      await new Promise((r) => proc.once('exit', r));
      children.delete(proc);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function reference(url: string, mgmt?: string): Broker {
  const port = Number(new URL(url).port || 5672);
  return { name: `RabbitMQ :${port}`, url, mgmt: mgmt ?? `http://127.0.0.1:${port + 10000}`, pid: pidListeningOn(port), stop: async () => {} };
}

async function api(b: Broker, method: string, path: string, body?: unknown): Promise<void> {
  const r = await fetch(`${b.mgmt}${path}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!r.ok && !(method === 'DELETE' && r.status === 404)) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
}

async function depth(url: string): Promise<number> {
  const c = await amqp.connect(url);
  try {
    return (await (await c.createChannel()).checkQueue(QUEUE)).messageCount;
  } finally {
    await c.close().catch(() => {});
  }
}

async function fill(b: Broker): Promise<void> {
  const c = await amqp.connect(b.url);
  const ch = await c.createConfirmChannel();
  await ch.deleteQueue(QUEUE).catch(() => {});
  await ch.assertQueue(QUEUE, { durable: true });
  for (let i = 0; i < N; i++) if (!ch.sendToQueue(QUEUE, body, { persistent: true })) await new Promise((r) => ch.once('drain', r));
  await ch.waitForConfirms();
  await c.close();
}

async function fresh(b: Broker): Promise<void> {
  const c = await amqp.connect(b.url);
  const ch = await c.createChannel();
  await ch.deleteQueue(QUEUE).catch(() => {});
  await ch.assertQueue(QUEUE, { durable: true });
  await c.close();
}

/** One transfer: returns messages/s and the CPU ms of source and destination. */
async function transfer(src: Broker, dest: Broker): Promise<{ rate: number; cpu: [number, number]; ms: number }> {
  await api(src, 'DELETE', '/api/parameters/shovel/%2F/bench');
  await fill(src);
  await fresh(dest);
  const cpu0 = [src.pid ? processCpuMs(src.pid) : 0, dest.pid ? processCpuMs(dest.pid) : 0];
  const t0 = performance.now();
  await api(src, 'PUT', '/api/parameters/shovel/%2F/bench', { value: { 'src-uri': 'amqp://', 'src-queue': QUEUE, 'dest-uri': dest.url, 'dest-queue': QUEUE } });
  for (;;) {
    if ((await depth(dest.url)) >= N) break;
    if (performance.now() - t0 > 600_000) throw new Error(`${src.name} → ${dest.name}: not done in 10 minutes`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = performance.now() - t0;
  const cpu: [number, number] = [src.pid ? processCpuMs(src.pid) - cpu0[0]! : NaN, dest.pid ? processCpuMs(dest.pid) - cpu0[1]! : NaN];
  await api(src, 'DELETE', '/api/parameters/shovel/%2F/bench');
  return { rate: (N * 1000) / ms, cpu, ms };
}

const only = values.only?.split(',');
const cases: Array<{ name: string; brokers: () => Promise<[Broker, Broker]> }> = [
  { name: 'warren→warren', brokers: async () => [await startWarren('src'), await startWarren('dest')] },
];
if (values['ref-dest']) {
  cases.push({ name: 'warren→rabbitmq', brokers: async () => [await startWarren('src'), reference(values['ref-dest']!)] });
  if (values.ref) cases.push({ name: 'rabbitmq→rabbitmq', brokers: async () => [reference(values.ref!, values['ref-mgmt']), reference(values['ref-dest']!)] });
}

if (!values.src) process.stdout.write(`${ensureBuilt()}\n`);
process.stdout.write(`shovel throughput: ${N} persistent messages of ${body.length} B, on-confirm, prefetch 1000, ${rounds} round(s)\n`);
for (const c of cases) {
  if (only && !only.includes(c.name)) continue;
  const [src, dest] = await c.brokers();
  try {
    const results = [];
    for (let r = 0; r < rounds; r++) results.push(await transfer(src, dest));
    const rate = median(results.map((x) => x.rate));
    const cpuSrc = median(results.map((x) => x.cpu[0]));
    const cpuDest = median(results.map((x) => x.cpu[1]));
    process.stdout.write(`${c.name.padEnd(18)} ${fmt(rate, ' msg/s').padStart(14)}   ${fmt(median(results.map((x) => x.ms)), ' ms')} for ${N}; CPU source ${fmt(cpuSrc, ' ms')}, destination ${fmt(cpuDest, ' ms')}\n`);
  } finally {
    await src.stop();
    await dest.stop();
  }
}
