/**
 * Recovery benchmark (issue: durability on LMDB): fills a durable queue with N persistent
 * messages through a real Warren (confirmed publishes), restarts Warren on the same data
 * directory — after a clean stop and after SIGKILL — and reports the time until it accepts
 * connections, the time until the queue's first message is delivered, and the broker's memory.
 *
 *   npx tsx bench/recovery.ts [--messages 1000000] [--size 16]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { warrenEntry } from './lib/brokers.js';

const { values } = parseArgs({
  options: { messages: { type: 'string', default: '1000000' }, size: { type: 'string', default: '16' } },
});
const total = Number(values.messages);
const size = Number(values.size);
const QUEUE = 'recovery-bench';

interface Running {
  child: ChildProcess;
  port: number;
  startedMs: number;
  listeningMs: number;
}

function startWarren(dataDir: string): Promise<Running> {
  const started = performance.now();
  const child = spawn(process.execPath, [warrenEntry(), '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', '--management-port', 'off'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      try {
        const e = JSON.parse(line) as { msg?: string; port?: number };
        if (e.msg?.startsWith('warren listening') && e.port) {
          resolve({ child, port: e.port, startedMs: started, listeningMs: performance.now() - started });
        }
      } catch {
        /* not a log line */
      }
    });
    child.once('exit', (code) => reject(new Error(`warren exited (${code}) before listening`)));
  });
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

function stop(w: Running, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    w.child.once('exit', () => resolve());
    w.child.kill(signal);
  });
}

async function fill(port: number): Promise<number> {
  const conn = await amqp.connect(`amqp://guest:guest@127.0.0.1:${port}`, { noDelay: true });
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(QUEUE, { durable: true });
  const body = Buffer.alloc(size, 'r');
  const t0 = performance.now();
  let sent = 0;
  let acked = 0;
  await new Promise<void>((resolve, reject) => {
    const onConfirm = (err: unknown) => {
      if (err) return reject(err as Error);
      acked++;
      if (acked === total) resolve();
      else if (sent - acked < 500) pump();
    };
    const pump = () => {
      while (sent < total && sent - acked < 2000) {
        sent++;
        ch.sendToQueue(QUEUE, body, { persistent: true }, onConfirm);
      }
    };
    pump();
  });
  const ms = performance.now() - t0;
  await conn.close();
  return ms;
}

async function firstDelivery(port: number): Promise<{ count: number; ms: number }> {
  const t0 = performance.now();
  const conn = await amqp.connect(`amqp://guest:guest@127.0.0.1:${port}`, { noDelay: true });
  const ch = await conn.createChannel();
  const { messageCount } = await ch.checkQueue(QUEUE);
  const m = await ch.get(QUEUE, { noAck: false });
  const ms = performance.now() - t0;
  if (m) ch.nack(m, false, true);
  await conn.close();
  return { count: messageCount, ms };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-recovery-'));
  try {
    let w = await startWarren(dataDir);
    const fillMs = await fill(w.port);
    console.log(`filled ${total} × ${size} B persistent messages in ${(fillMs / 1000).toFixed(1)} s (${Math.round(total / (fillMs / 1000))} confirmed msg/s); broker RSS ${rssMiB(w.child.pid!).toFixed(0)} MiB`);
    for (const [label, signal] of [['clean stop (SIGTERM)', 'SIGTERM'], ['crash (SIGKILL)', 'SIGKILL']] as const) {
      await stop(w, signal);
      w = await startWarren(dataDir);
      const first = await firstDelivery(w.port);
      console.log(
        `after ${label}: listening in ${w.listeningMs.toFixed(0)} ms, ${first.count} messages, first delivery ${first.ms.toFixed(0)} ms later, broker RSS ${rssMiB(w.child.pid!).toFixed(0)} MiB`,
      );
    }
    await stop(w, 'SIGTERM');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
