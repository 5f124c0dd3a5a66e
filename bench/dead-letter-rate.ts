/**
 * Dead-lettering throughput, Warren beside a reference RabbitMQ: a queue holding MESSAGES is
 * given a max-length of 0 and a dead-letter exchange by a policy (set over the management API,
 * as an operator would), and every message moves to the dead-letter queue at once.
 *
 *   npx tsx bench/dead-letter-rate.ts [--messages 100000] [--rounds 3] [--only TEXT]
 *       [--ref amqp://guest:guest@127.0.0.1:5710 --ref-mgmt http://127.0.0.1:15710]
 *
 * (--only: the cases whose name contains TEXT.)
 *
 * Warren runs from dist/ (npm run build) in a process of its own, with a fresh data dir. For
 * each case, the medians over the rounds of: the time from the policy's PUT until the
 * dead-letter queue holds every message (polled every 5 ms), per message; and the broker's CPU
 * time (utime + stime of its process, all threads) over the same span, per message. Cases:
 *
 * - first death: 16 B transient messages with a small header (content type, one header);
 * - second death: the same with an x-death header already (a message in a TTL retry loop,
 *   dead-lettered before), whose entry count goes up;
 * - persistent: 16 B persistent messages in durable queues, first death.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { freePort, pidListeningOn, tryConnect, warrenEntry } from './lib/brokers.js';
import { processCpuMs } from './lib/proc.js';
import { publishConfirmed } from './lib/publish-confirmed.js';

const { values } = parseArgs({
  options: { messages: { type: 'string' }, rounds: { type: 'string' }, ref: { type: 'string' }, 'ref-mgmt': { type: 'string' }, only: { type: 'string' } },
});
const messages = Number(values.messages ?? 100_000);
const rounds = Number(values.rounds ?? 3);

interface Target {
  name: string;
  url: string;
  mgmt: string;
  pid: number;
}

interface Case {
  name: string;
  persistent: boolean;
  headers: Record<string, unknown>;
}

const CASES: Case[] = [
  { name: 'first death, transient', persistent: false, headers: { 'x-app': 'bench' } },
  {
    name: 'second death (x-death present), transient',
    persistent: false,
    headers: {
      'x-app': 'bench',
      'x-death': [{ count: 1, reason: 'expired', queue: 'wait', time: { '!': 'timestamp', value: 1_700_000_000 }, exchange: '', 'routing-keys': ['wait'] }],
      'x-first-death-exchange': '',
      'x-first-death-queue': 'wait',
      'x-first-death-reason': 'expired',
    },
  },
  { name: 'first death, persistent', persistent: true, headers: { 'x-app': 'bench' } },
];

const AUTH = { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}`, 'content-type': 'application/json' };

async function policy(t: Target, method: 'PUT' | 'DELETE'): Promise<void> {
  const body = method === 'PUT' ? JSON.stringify({ pattern: '^dl-src$', 'apply-to': 'queues', definition: { 'max-length': 0, 'dead-letter-exchange': '', 'dead-letter-routing-key': 'dl-dst' } }) : undefined;
  const res = await fetch(`${t.mgmt}/api/policies/%2F/dl-bench`, { method, headers: AUTH, body });
  if (!res.ok && !(method === 'DELETE' && res.status === 404)) throw new Error(`${t.name}: ${method} policy: ${res.status} ${await res.text()}`);
}

/** One round of one case: µs per message, wall and broker CPU. */
async function round(t: Target, c: Case): Promise<{ wallUs: number; cpuUs: number }> {
  const conn = await amqp.connect(`${t.url}?heartbeat=0`);
  try {
    const ch = await conn.createConfirmChannel();
    await policy(t, 'DELETE');
    await ch.deleteQueue('dl-src');
    await ch.deleteQueue('dl-dst');
    await ch.assertQueue('dl-src', { durable: c.persistent });
    await ch.assertQueue('dl-dst', { durable: c.persistent });
    await publishConfirmed(ch, 'dl-src', messages, Buffer.alloc(16), { persistent: c.persistent, contentType: 'application/octet-stream', headers: c.headers });
    await new Promise((r) => setTimeout(r, 500)); // let the broker settle what the fill left
    const cpu0 = processCpuMs(t.pid);
    const t0 = performance.now();
    await policy(t, 'PUT');
    while ((await ch.checkQueue('dl-dst')).messageCount < messages) await new Promise((r) => setTimeout(r, 5));
    const wallMs = performance.now() - t0;
    const cpuMs = processCpuMs(t.pid) - cpu0;
    await policy(t, 'DELETE');
    await ch.deleteQueue('dl-src');
    await ch.deleteQueue('dl-dst');
    return { wallUs: (wallMs * 1000) / messages, cpuUs: (cpuMs * 1000) / messages };
  } finally {
    await conn.close().catch(() => {});
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startWarren(): Promise<{ target: Target; stop: () => void }> {
  const port = await freePort();
  const mgmtPort = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'warren-dl-'));
  const proc = spawn(process.execPath, ['--max-semi-space-size=64', warrenEntry(), '--port', String(port), '--host', '127.0.0.1', '--data-dir', data,
    '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', String(mgmtPort)], { stdio: 'ignore' });
  for (let i = 0; !(await tryConnect(port)) || !(await tryConnect(mgmtPort)); i++) {
    if (i > 3000) throw new Error('Warren did not listen');
    await new Promise((r) => setTimeout(r, 10));
  }
  const target = { name: 'Warren', url: `amqp://guest:guest@127.0.0.1:${port}`, mgmt: `http://127.0.0.1:${mgmtPort}`, pid: proc.pid! };
  return {
    target,
    stop: () => {
      proc.kill('SIGKILL');
      rmSync(data, { recursive: true, force: true });
    },
  };
}

const warren = await startWarren();
const targets: Target[] = [warren.target];
if (values.ref) {
  const port = Number(new URL(values.ref).port || 5672);
  const pid = pidListeningOn(port);
  if (!pid) throw new Error(`no process listens on port ${port} (run this as the broker's user or root)`);
  targets.push({ name: 'RabbitMQ', url: values.ref, mgmt: values['ref-mgmt'] ?? `http://127.0.0.1:${port + 10000}`, pid });
}
try {
  console.log(`dead-lettering ${messages.toLocaleString('en-US')} messages at once (max-length 0 by policy), medians of ${rounds} rounds; µs per message`);
  console.log(`| case | ${targets.map((t) => `${t.name} wall | ${t.name} broker CPU`).join(' | ')} |`);
  console.log(`| --- |${targets.map(() => ' --- | --- |').join('')}`);
  for (const c of CASES.filter((x) => x.name.includes(values.only ?? ''))) {
    const cells: string[] = [];
    for (const t of targets) {
      const rs: Array<{ wallUs: number; cpuUs: number }> = [];
      for (let r = 0; r < rounds; r++) rs.push(await round(t, c));
      cells.push(median(rs.map((x) => x.wallUs)).toFixed(1), median(rs.map((x) => x.cpuUs)).toFixed(1));
    }
    console.log(`| ${c.name} | ${cells.join(' | ')} |`);
  }
} finally {
  warren.stop();
}
