import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { connect, confirmChannel, channel, type ChannelModel, type ConfirmChannel } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const MiB = 1024 * 1024;

/** A field of /proc/<pid>/status in bytes (VmHWM: peak resident memory; RssAnon). */
function procStatus(pid: number, field: string): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

/**
 * Headers of about 60 KiB (amqplib encodes at most 64 KiB of them): thousands of short fields,
 * the shape that costs most decoded (issue 10).
 */
function manyFields(): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < 5000; i++) headers[`h${i}`] = 'v';
  return headers;
}

/**
 * Publishes n messages as fast as the connection takes them (waiting for 'drain' when its
 * buffer is full, as a blocked connection's soon is) and resolves when all are confirmed.
 */
async function flood(ch: ConfirmChannel, queue: string, n: number, message: (i: number) => { body: Buffer; headers?: Record<string, unknown>; persistent?: boolean }): Promise<void> {
  for (let i = 0; i < n; i++) {
    const m = message(i);
    if (!ch.sendToQueue(queue, m.body, { headers: m.headers, persistent: m.persistent ?? false })) {
      await new Promise((resolve) => ch.once('drain', resolve));
    }
  }
  await ch.waitForConfirms();
}

/** Resolves with the reason of the connection's next connection.blocked. */
const blocked = (conn: ChannelModel) => new Promise<string>((resolve) => conn.once('blocked', resolve));
const unblocked = (conn: ChannelModel) => new Promise<void>((resolve) => conn.once('unblocked', () => resolve()));

/**
 * The memory alarm in a broker whose JS heap is small (issue 10: heap growth ended in "FATAL
 * ERROR: Reached heap limit" with no connection.blocked ever sent). Each broker runs in a child
 * Node with --max-old-space-size, so a limit that is reached ends that process, not the tests.
 */
describe('memory alarm with a small JS heap', function () {
  this.timeout(60000);
  let dir: string;
  let broker: BrokerProcess | undefined;
  const exits: Array<number | null> = [];

  /** A broker whose heap is sized as the launcher sizes one: a semi-space of 1/16 of the old space. */
  async function start(oldSpaceMiB: number, args: string[] = []): Promise<BrokerProcess> {
    const semiSpaceMiB = Math.max(1, Math.floor(oldSpaceMiB / 16));
    broker = await BrokerProcess.start(dir, { nodeArgs: [`--max-old-space-size=${oldSpaceMiB}`, `--max-semi-space-size=${semiSpaceMiB}`], args });
    broker.child.once('exit', (code) => exits.push(code));
    return broker;
  }

  beforeEach(() => {
    dir = makeTmpDir('warren-memory-');
    exits.length = 0;
  });
  afterEach(async () => {
    if (broker && broker.child.exitCode === null && broker.child.signalCode === null) await broker.kill();
    broker = undefined;
    removeDir(dir);
  });

  it('many small messages: blocks publishers before the heap limit, and unblocks them once consumers drain the queue', async () => {
    // A priority queue keeps every message in memory (it never pages): only consumers free it.
    const b = await start(28);
    const n = 60_000; // ~22 MB of queued messages: more than twice what the alarm share of a 28 MiB heap leaves
    const publisher = await connect(b.url);
    const pch = await confirmChannel(publisher);
    await pch.assertQueue('pq', { durable: false, arguments: { 'x-max-priority': 2 } });
    const published = flood(pch, 'pq', n, () => ({ body: Buffer.from('m') }));
    expect(await Promise.race([blocked(publisher), published.then(() => 'published all without a block')])).to.equal('low on memory');
    const wasUnblocked = unblocked(publisher);

    const consumer = await connect(b.url);
    const cch = await channel(consumer);
    const { messageCount } = await cch.checkQueue('pq');
    expect(messageCount).to.be.greaterThan(0).and.below(n);
    await cch.prefetch(1000);
    let consumed = 0;
    const all = new Promise<void>((resolve) => {
      void cch.consume('pq', (m) => {
        cch.ack(m!);
        if (++consumed === n) resolve();
      });
    });
    await wasUnblocked;
    await published;
    await all;
    expect(exits).to.deep.equal([]);
    await publisher.close();
    await consumer.close();
  });

  it('large headers: memory grows with their bytes, not their decoded size; beyond the watermark\'s paging share transient ones go to the store, and a restart drops them', async function () {
    if (process.platform !== 'linux') this.skip(); // reads /proc/<pid>/status
    const watermark = 64 * MiB;
    const b = await start(64, ['--memory-high-watermark-absolute', String(watermark)]);
    const pid = b.child.pid as number;
    const conn = await connect(b.url);
    const ch = await confirmChannel(conn);

    // Thousands of small fields, into a priority queue, which keeps them in memory: decoded,
    // each header was about 0.9 MiB of JS objects, and 60 of them raised the heap alarm.
    await ch.assertQueue('pq', { durable: false, arguments: { 'x-max-priority': 2 } });
    const fields = manyFields();
    const kept = flood(ch, 'pq', 60, () => ({ body: Buffer.from('b'), headers: fields }));
    expect(await Promise.race([kept.then(() => 'all confirmed'), blocked(conn)])).to.equal('all confirmed');
    await ch.purgeQueue('pq');

    // A durable queue: the transient messages beyond its window's 16 MiB are paged out once
    // memory is over half the watermark (the persistent ones beyond it are in the store anyway).
    await ch.assertQueue('big', { durable: true });
    const blob = { blob: 'x'.repeat(60 * 1024) };
    const n = 1200; // ~70 MiB of headers: more than the watermark
    const baseline = procStatus(pid, 'RssAnon');
    let peak = 0;
    await flood(ch, 'big', n, (i) => {
      if (i % 50 === 0) peak = Math.max(peak, procStatus(pid, 'RssAnon'));
      return { body: Buffer.from(String(i)), headers: blob, persistent: i % 100 === 0 };
    });
    expect((await ch.checkQueue('big')).messageCount).to.equal(n);
    // Held in memory: the window's 16 MiB, what waits for the next store commit, and what the
    // allocator keeps of what was freed; the rest of the ~70 MiB is in the store.
    expect(peak - baseline, `anonymous RSS from ${baseline / MiB} MiB to ${peak / MiB} MiB`).to.be.below(watermark);
    expect(exits).to.deep.equal([]);
    await conn.close();

    await b.kill();
    const restarted = await start(64);
    const after = await connect(restarted.url);
    const ach = await channel(after);
    expect((await ach.checkQueue('big')).messageCount).to.equal(n / 100);
    await after.close();
  });
});
