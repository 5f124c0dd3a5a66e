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
import type { Socket } from 'node:net';
import { encodeBasicAck } from '../src/frame/fast.js';
import { pairedRounds, withBuild, writeRepeatedly } from './lib/paired-builds.js';
import { processCpuMs } from './lib/proc.js';
import { LoadClient } from './loadgen/client.js';
import { benchBody, encodePublishRing } from './loadgen/wire.js';

const dirs = (process.argv[2] ?? '.').split(',');
const rounds = Number(process.argv[3] ?? 5);
const messages = Number(process.argv[4] ?? 300_000);

function round(dir: string): Promise<number> {
  return withBuild(dir, 'ack-burst', async ({ proc, url, conn, socket }) => {
    const ch = await conn.createChannel();
    await ch.assertQueue('q', { durable: false });
    const ring = encodePublishRing(1, '', ['q'], benchBody(16), {}, 4096);
    const n = Math.ceil(messages / ring.count) * ring.count;
    await writeRepeatedly(socket, ring.buf, n / ring.count);
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
    return us;
  });
}

await pairedRounds(dirs, rounds, round);
