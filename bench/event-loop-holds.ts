/**
 * How long one client's request can hold the broker's event loop (every other client waits
 * that long): operations on many messages at once (dead-lettering, settling, requeueing,
 * committing them), each on a broker of its own in this process, with amqplib clients.
 *
 *   npx tsx bench/event-loop-holds.ts [MESSAGES=100000] [CASE: only the cases whose name contains it]
 *
 * For each case: the longest gap between the ticks of a 2 ms interval timer while the broker
 * does the work (what any other connection would wait at most), the 99th percentile of those
 * gaps, and the time until every message is dead-lettered. Cases:
 *
 * - maxlen-policy: a policy sets max-length 10 and a dead-letter exchange on a queue holding
 *   MESSAGES (durable and persistent: most are paged out and read back from the store; and
 *   transient);
 * - nack-multiple: a consumer nacks (multiple, requeue=false) MESSAGES unacknowledged persistent
 *   messages of a queue with a dead-letter exchange;
 * - nack-requeue: a consumer, cancelled, nacks (multiple, requeue=true) MESSAGES unacknowledged
 *   persistent messages, which go back to the queue;
 * - tx-commit publishes: a transactional channel commits MESSAGES persistent publishes;
 * - mass-expiry: MESSAGES transient messages with the same deadline expire at once (a FakeClock
 *   advanced past it) into a dead-letter exchange;
 * - ack-multiple: a consumer acks MESSAGES unacknowledged persistent messages with one basic.ack
 *   (multiple);
 * - channel-close: a consumer closes its channel with MESSAGES persistent messages
 *   unacknowledged, which go back to the queue.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import { startBroker, type RunningBroker } from '../src/broker.js';
import { FakeClock } from '../src/clock.js';
import { txCommit, txSelect } from './lib/amqplib-tx.js';
import { publishConfirmed } from './lib/publish-confirmed.js';

const messages = Number(process.argv[2] ?? 100_000);
/** Only the cases whose name contains this (all when absent). */
const only = process.argv[3];
const BODY = Buffer.alloc(16);

interface Holds {
  longestMs: number;
  p99Ms: number;
  totalMs: number;
}

/** Runs work, then waits for done(), timing the gaps between the ticks of a 2 ms interval meanwhile. */
async function measure(work: () => void | Promise<void>, done: () => Promise<void>): Promise<Holds> {
  const gaps: number[] = [];
  let prev = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push(now - prev);
    prev = now;
  }, 2);
  const start = performance.now();
  prev = start;
  await work();
  await done();
  const totalMs = performance.now() - start;
  clearInterval(timer);
  gaps.push(performance.now() - prev);
  gaps.sort((a, b) => a - b);
  return { longestMs: gaps[gaps.length - 1]!, p99Ms: gaps[Math.floor(gaps.length * 0.99)]!, totalMs };
}

async function withBroker<T>(options: { persistent: boolean; clock?: FakeClock }, fn: (b: RunningBroker, ch: amqp.ConfirmChannel, conn: amqp.ChannelModel) => Promise<T>): Promise<T> {
  const dataDir = options.persistent ? mkdtempSync(join(tmpdir(), 'warren-holds-')) : undefined;
  const b = await startBroker({ port: 0, logLevel: 'silent', heartbeat: 0, ...(dataDir ? { dataDir } : {}), ...(options.clock ? { clock: options.clock } : {}) });
  const conn = await amqp.connect(b.url);
  try {
    const ch = await conn.createConfirmChannel();
    return await fn(b, ch, conn);
  } finally {
    await conn.close();
    await b.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

function fill(ch: amqp.ConfirmChannel, q: string, persistent: boolean): Promise<void> {
  return publishConfirmed(ch, q, messages, BODY, { persistent });
}

const DLX = { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'dead' };
const deadLettered = (b: RunningBroker) => () => b.until.queueLength('dead', messages, { timeout: 600_000 }).then(() => b.broker.settle());

async function maxlenPolicy(persistent: boolean): Promise<Holds> {
  return withBroker({ persistent }, async (b, ch) => {
    await ch.assertQueue('dead', { durable: persistent });
    await ch.assertQueue('q', { durable: persistent });
    await fill(ch, 'q', persistent);
    const done = b.until.queueLength('dead', messages - 10, { timeout: 600_000 }).then(() => b.broker.settle());
    return measure(() => void b.broker.policies.put('policy', '/', 'cap', { pattern: '^q$', definition: { 'max-length': 10, 'dead-letter-exchange': '', 'dead-letter-routing-key': 'dead' } }), () => done);
  });
}

async function nackMultiple(): Promise<Holds> {
  return withBroker({ persistent: true }, async (b, ch, conn) => {
    await ch.assertQueue('dead', { durable: true });
    const { consumer, last } = await allUnacked(b, ch, conn, DLX);
    return measure(() => consumer.nack(last, true, false), deadLettered(b));
  });
}

async function nackRequeue(): Promise<Holds> {
  return withBroker({ persistent: true }, async (b, ch, conn) => {
    const { consumer, last } = await allUnacked(b, ch, conn);
    // Cancelled first: the requeued messages stay in the queue (not redelivered at once).
    await consumer.cancel(last.fields.consumerTag);
    return measure(() => consumer.nack(last, true, true), () => b.until.queueLength('q', messages, { timeout: 600_000 }).then(() => b.broker.settle()));
  });
}

async function txCommitPublishes(): Promise<Holds> {
  return withBroker({ persistent: true }, async (b, _ch, conn) => {
    const tx = await conn.createChannel();
    await tx.assertQueue('q', { durable: true });
    await tx.assertQueue('other', { durable: true });
    await txSelect(tx);
    for (let i = 0; i < messages; i++) tx.sendToQueue('q', BODY, { persistent: true });
    await tx.checkQueue('other'); // a round trip: every publish is held by the transaction
    await b.broker.settle();
    return measure(() => void txCommit(tx), () => b.until.queueLength('q', messages, { timeout: 600_000 }).then(() => b.broker.settle()));
  });
}

async function massExpiry(): Promise<Holds> {
  const clock = new FakeClock(1_700_000_000_000);
  return withBroker({ persistent: false, clock }, async (b, ch) => {
    await ch.assertQueue('dead', { durable: false });
    await ch.assertQueue('q', { durable: false, arguments: { ...DLX, 'x-message-ttl': 60_000 } });
    await fill(ch, 'q', false);
    return measure(() => void clock.advance(60_000), deadLettered(b));
  });
}

/**
 * A consumer channel with every message of durable queue q (with `args`), MESSAGES persistent
 * ones, delivered and unacknowledged.
 */
async function allUnacked(b: RunningBroker, ch: amqp.ConfirmChannel, conn: amqp.ChannelModel, args: Record<string, unknown> = {}): Promise<{ consumer: amqp.Channel; last: amqp.ConsumeMessage }> {
  await ch.assertQueue('q', { durable: true, arguments: args });
  await fill(ch, 'q', true);
  const consumer = await conn.createChannel();
  let last: amqp.ConsumeMessage | undefined;
  let n = 0;
  await new Promise<void>((resolve) => void consumer.consume('q', (m: amqp.ConsumeMessage | null) => {
    last = m!;
    if (++n === messages) resolve();
  }));
  await b.broker.settle();
  return { consumer, last: last! };
}

async function ackMultiple(): Promise<Holds> {
  return withBroker({ persistent: true }, async (b, ch, conn) => {
    const { consumer, last } = await allUnacked(b, ch, conn);
    // A round trip on the same connection, whose input waits for the ack to be settled.
    return measure(() => consumer.ack(last, true), () => ch.checkQueue('q').then(() => b.broker.settle()));
  });
}

async function channelClose(): Promise<Holds> {
  return withBroker({ persistent: true }, async (b, ch, conn) => {
    const { consumer } = await allUnacked(b, ch, conn);
    return measure(() => consumer.close(), () => b.broker.settle());
  });
}

const cases: Array<[string, () => Promise<Holds>]> = [
  ['maxlen-policy, durable, persistent', () => maxlenPolicy(true)],
  ['maxlen-policy, transient', () => maxlenPolicy(false)],
  ['nack-multiple, persistent', nackMultiple],
  ['nack-requeue, persistent', nackRequeue],
  ['tx-commit publishes, persistent', txCommitPublishes],
  ['mass-expiry, transient', massExpiry],
  ['ack-multiple, persistent', ackMultiple],
  ['channel-close, persistent', channelClose],
];

console.log(`event-loop holds, ${messages.toLocaleString('en-US')} messages at once (ms)`);
console.log('| case | longest hold | p99 hold | until all done |');
console.log('| --- | --- | --- | --- |');
for (const [name, run] of cases.filter(([name]) => only === undefined || name.includes(only))) {
  const h = await run();
  console.log(`| ${name} | ${h.longestMs.toFixed(0)} | ${h.p99Ms.toFixed(0)} | ${h.totalMs.toFixed(0)} |`);
}
