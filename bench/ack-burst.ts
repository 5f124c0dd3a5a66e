/**
 * Broker CPU per message for a consumer that acknowledges every delivery with its own basic.ack
 * (multiple=false, as amqplib's `ch.ack(msg)` does), for A/B comparisons of builds on a busy
 * machine:
 *
 *   npx tsx bench/ack-burst.ts DIR_A,DIR_B [ROUNDS=5] [MESSAGES=300000]
 *
 * Each DIR is a checkout with a built dist/. Each round starts each build's broker in turn (with
 * the bench's --max-semi-space-size=64), fills a queue with MESSAGES 16 B messages (lg-publish's
 * frames), then consumes them with prefetch 1000 through a load-generator connection that
 * answers each chunk of deliveries with one ack per delivery, in one write; the broker's CPU time
 * (utime + stime) from basic.consume until the last ack is settled, per message. The client is
 * fast, so the broker reads many acks at a time: the figure is the per-delivery and per-ack
 * cost, with little of the per-read and per-turn cost that a slower client adds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import type { ChannelModel } from 'amqplib';
import { encodeBasicAck } from '../src/frame/fast.js';
import { freePort } from './lib/brokers.js';
import { processCpuMs } from './lib/proc.js';
import { LoadClient } from './loadgen/client.js';
import { benchBody, encodePublishRing } from './loadgen/wire.js';

const dirs = (process.argv[2] ?? '.').split(',');
const rounds = Number(process.argv[3] ?? 5);
const messages = Number(process.argv[4] ?? 300_000);

async function round(dir: string): Promise<number> {
  const port = await freePort();
  const data = mkdtempSync(join(tmpdir(), 'ack-burst-'));
  const args = ['--max-semi-space-size=64', join(dir, 'dist/main.js'), '--port', String(port), '--host', '127.0.0.1', '--data-dir', data,
    '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', 'off'];
  const proc = spawn(process.execPath, args, { stdio: 'ignore' });
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  try {
    let conn: ChannelModel | undefined;
    for (let i = 0; conn === undefined; i++) {
      try {
        conn = await amqp.connect(`${url}?heartbeat=0`);
      } catch (err) {
        if (i >= 300) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const ch = await conn.createChannel();
    await ch.assertQueue('q', { durable: false });
    const socket = (conn.connection as unknown as { stream: Socket }).stream;
    const ring = encodePublishRing(1, '', ['q'], benchBody(16), {}, 4096);
    const n = Math.ceil(messages / ring.count) * ring.count;
    for (let sent = 0; sent < n; sent += ring.count) {
      if (!socket.write(ring.buf)) await new Promise((r) => socket.once('drain', r));
    }
    while ((await ch.checkQueue('q')).messageCount < n) await new Promise((r) => setTimeout(r, 20));

    const c = await LoadClient.open({ url });
    await c.qos(1000);
    const raw = (c as unknown as { socket: Socket }).socket;
    let acked = 0;
    let done: () => void = () => {};
    const finished = new Promise<void>((r) => (done = r));
    // After LoadClient's own listener has counted the chunk's deliveries: one ack each.
    raw.on('data', () => {
      const upTo = c.delivered;
      if (upTo === acked) return;
      const frames: Buffer[] = [];
      for (let tag = acked + 1; tag <= upTo; tag++) frames.push(encodeBasicAck(1, tag, false));
      acked = upTo;
      raw.write(Buffer.concat(frames));
      if (acked === n) done();
    });
    // LoadClient acks multiple=true per chunk (consume() sets ackEvery): these acks replace it.
    Object.defineProperty(c, 'ackEvery', { get: () => 0, set: () => {} });
    const before = processCpuMs(proc.pid!);
    await c.consume('q', 'c', false, 0);
    await finished;
    // A round trip after the last acks: the broker has settled them all.
    await c.qos(1000);
    const us = ((processCpuMs(proc.pid!) - before) * 1000) / n;
    if ((await ch.checkQueue('q')).messageCount !== 0) throw new Error('queue not empty');
    await c.close().catch(() => {});
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
