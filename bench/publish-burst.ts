/**
 * Broker CPU per message for a burst of pre-encoded transient publishes (16 B, default exchange,
 * one queue, no consumer), for A/B comparisons of builds on a busy machine:
 *
 *   npx tsx bench/publish-burst.ts DIR_A,DIR_B [ROUNDS=5] [MESSAGES=1000000]
 *
 * Each DIR is a checkout with a built dist/ (e.g. a copy of the worktree before a change). Each
 * round starts each build's broker in turn (with the bench's --max-semi-space-size=64), opens a
 * channel with amqplib, sends 200,000 messages to warm it up and then MESSAGES more as fast as
 * the socket takes them (the same frames as lg-publish, written straight to amqplib's socket),
 * and reads the broker's CPU time (utime + stime) from when the burst starts until the queue
 * holds them all. Prints µs per message per round and the medians. A burst keeps the broker's
 * input full, so the figure moves less with the load around it than a timed round's does.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import type { ChannelModel } from 'amqplib';
import { freePort } from './lib/brokers.js';
import { processCpuMs } from './lib/proc.js';
import { benchBody, encodePublishRing } from './loadgen/wire.js';

const dirs = (process.argv[2] ?? '.').split(',');
const rounds = Number(process.argv[3] ?? 5);
const messages = Number(process.argv[4] ?? 1_000_000);
const WARM_UP = 200_000;

async function round(dir: string): Promise<number> {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'publish-burst-'));
  const args = ['--max-semi-space-size=64', join(dir, 'dist/main.js'), '--port', String(port), '--host', '127.0.0.1', '--data-dir', data,
    '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', 'off'];
  const proc = spawn(process.execPath, args, { stdio: 'ignore' });
  try {
    let conn: ChannelModel | undefined;
    for (let i = 0; conn === undefined; i++) {
      try {
        conn = await amqp.connect(`amqp://guest:guest@127.0.0.1:${port}?heartbeat=0`);
      } catch (err) {
        if (i >= 300) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const ch = await conn.createChannel();
    await ch.assertQueue('q', { durable: false });
    // amqplib's channel 1 is ch: the pre-encoded frames go on it, straight to the socket.
    const socket = (conn.connection as unknown as { stream: Socket }).stream;
    const ring = encodePublishRing(1, '', ['q'], benchBody(16), {}, 4096);
    const send = async (n: number): Promise<void> => {
      for (let sent = 0; sent < n; sent += ring.count) {
        if (!socket.write(ring.buf)) await new Promise((r) => socket.once('drain', r));
      }
    };
    const until = async (count: number): Promise<void> => {
      while ((await ch.checkQueue('q')).messageCount < count) await new Promise((r) => setTimeout(r, 20));
    };
    const warm = Math.ceil(WARM_UP / ring.count) * ring.count;
    await send(warm);
    await until(warm);
    const n = Math.ceil(messages / ring.count) * ring.count;
    const before = processCpuMs(proc.pid!);
    await send(n);
    await until(warm + n);
    const us = ((processCpuMs(proc.pid!) - before) * 1000) / n;
    await conn.close().catch(() => {});
    return us;
  } finally {
    proc.kill('SIGKILL');
    rmSync(data, { recursive: true, force: true });
  }
}

const results = new Map<string, number[]>(dirs.map((d) => [d, []]));
for (let r = 0; r < rounds; r++) {
  for (const dir of dirs) {
    const us = await round(dir);
    results.get(dir)!.push(us);
    console.log(`${dir} round ${r + 1}: ${us.toFixed(3)} µs/msg`);
  }
}
for (const [dir, v] of results) {
  const sorted = [...v].sort((a, b) => a - b);
  console.log(`median ${dir} ${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)} µs/msg (${sorted.map((x) => x.toFixed(2)).join(' ')})`);
}
process.exit(0);
