/**
 * Broker CPU per message for a burst of pre-encoded transient publishes (16 B, default exchange,
 * one queue, no consumer), for A/B comparisons of builds on a busy machine:
 *
 *   npx tsx bench/publish-burst.ts DIR_A,DIR_B [ROUNDS=5] [MESSAGES=1000000] [--stream|--persistent]
 *
 * Each DIR is a checkout with a built dist/ (e.g. a copy of the worktree before a change). Each
 * round starts each build's broker in turn (with the bench's --max-semi-space-size=64), opens a
 * channel with amqplib, sends 200,000 messages to warm it up and then MESSAGES more as fast as
 * the socket takes them (the same frames as lg-publish, written straight to amqplib's socket),
 * and reads the broker's CPU time (utime + stime) from when the burst starts until the queue
 * holds them all. Prints µs per message per round and the medians. A burst keeps the broker's
 * input full, so the figure moves less with the load around it than a timed round's does.
 * With --stream the queue is a stream (x-queue-type stream), which writes every message; with
 * --persistent a durable queue and persistent messages (the store's write path, without confirms).
 */
import { pairedRounds, withBuild, writeRepeatedly } from './lib/paired-builds.js';
import { processCpuMs } from './lib/proc.js';
import { benchBody, encodePublishRing } from './loadgen/wire.js';

const stream = process.argv.includes('--stream');
const persistent = process.argv.includes('--persistent');
const [dirList, roundsArg, messagesArg] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dirs = (dirList ?? '.').split(',');
const rounds = Number(roundsArg ?? 5);
const messages = Number(messagesArg ?? 1_000_000);
const WARM_UP = 200_000;

function round(dir: string): Promise<number> {
  return withBuild(dir, 'publish-burst', async ({ proc, conn, socket }) => {
    const ch = await conn.createChannel();
    await ch.assertQueue('q', stream ? { durable: true, arguments: { 'x-queue-type': 'stream' } } : { durable: persistent });
    // amqplib's channel 1 is ch: the pre-encoded frames go on it, straight to the socket.
    const ring = encodePublishRing(1, '', ['q'], benchBody(16), persistent ? { deliveryMode: 2 } : {}, 4096);
    const until = async (count: number): Promise<void> => {
      while ((await ch.checkQueue('q')).messageCount < count) await new Promise((r) => setTimeout(r, 20));
    };
    const warm = Math.ceil(WARM_UP / ring.count) * ring.count;
    await writeRepeatedly(socket, ring.buf, warm / ring.count);
    await until(warm);
    const n = Math.ceil(messages / ring.count) * ring.count;
    const before = processCpuMs(proc.pid!);
    await writeRepeatedly(socket, ring.buf, n / ring.count);
    await until(warm + n);
    return ((processCpuMs(proc.pid!) - before) * 1000) / n;
  });
}

await pairedRounds(dirs, rounds, round);
