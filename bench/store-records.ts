/**
 * Micro-benchmark of the LMDB store's record paths, to price the per-record checksums
 * (issue 10): CPU time (user + system of this process) and wall time of
 *
 * 1. enqueue: N confirmed enqueues of `size`-byte messages, 1000 per turn, each turn awaiting sync()
 * 2. page-in: after a reopen, readEntries in windows of 1000 and readMessage of each (what a
 *    recovering queue does)
 * 3. ack: remove every entry, 1000 per turn
 * 4. delete-queue: N enqueues again, a reopen, then deleteQueue until the store has swept every
 *    entry (`swept()`); `call` is the synchronous deleteQueue alone, `max block` the longest the
 *    event loop was held meanwhile (the sweep goes a chunk per commit)
 *
 * Each round uses a fresh data dir; the median of `rounds` is printed.
 *
 *   npx tsx bench/store-records.ts [--messages 200000] [--size 1024] [--rounds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openLmdbStore } from '../src/store/lmdb/index.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '200000' },
    size: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '5' },
  },
});
const total = Number(values.messages);
const body = Buffer.alloc(Number(values.size), 0x61);
const header = Buffer.alloc(20, 1);
const rounds = Number(values.rounds);

interface Sample {
  cpuMs: number;
  wallMs: number;
  /** delete-queue: the synchronous deleteQueue call alone. */
  callMs?: number;
  /** delete-queue: the longest event-loop delay while the queue was swept. */
  maxBlockMs?: number;
}

async function timed(fn: () => Promise<void> | void): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

/** total confirmed enqueues into one queue (seqs from 0), 1000 per turn, each turn awaiting sync(). */
async function fill(store: ReturnType<typeof openLmdbStore>): Promise<void> {
  const ms = store.messages;
  const first = ms.lastSeq('/\u0000q') + 1;
  for (let seq = first; seq < first + total; ) {
    for (let i = 0; i < 1000 && seq < first + total; i++, seq++) {
      const id = ms.nextMessageId();
      ms.enqueue('/\u0000q', { seq, msgId: id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id, exchange: '', routingKey: 'q', header, body });
    }
    await ms.sync();
  }
}

async function round(): Promise<Record<string, Sample>> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-store-'));
  try {
    let store = openLmdbStore(dir);
    const enqueue = await timed(() => fill(store));
    await store.close();
    store = openLmdbStore(dir);
    let bytes = 0;
    const pageIn = await timed(() => {
      const ms = store.messages;
      for (let from = 0; ; ) {
        const entries = ms.readEntries('/\u0000q', from, 1000);
        if (entries.length === 0) break;
        for (const e of entries) bytes += ms.readMessage('/\u0000q', e)!.body.length;
        from = entries[entries.length - 1]!.seq + 1;
      }
    });
    if (bytes !== total * body.length) throw new Error(`read ${bytes} bytes, expected ${total * body.length}`);
    const ack = await timed(async () => {
      const ms = store.messages;
      for (let seq = 0; seq < total; ) {
        for (let i = 0; i < 1000 && seq < total; i++, seq++) ms.remove('/\u0000q', seq);
        await ms.sync();
      }
    });
    await fill(store);
    await store.close();
    store = openLmdbStore(dir);
    let call = 0;
    const delay = monitorEventLoopDelay({ resolution: 1 });
    const deleteQueue = await timed(async () => {
      delay.enable();
      const t0 = process.hrtime.bigint();
      store.messages.deleteQueue('/\u0000q');
      call = Number(process.hrtime.bigint() - t0) / 1e6;
      await store.messages.swept();
      delay.disable();
    });
    if (store.messages.stats().entries !== 0) throw new Error('deleteQueue left entries');
    await store.close();
    return { enqueue, 'page-in': pageIn, ack, 'delete-queue': { ...deleteQueue, callMs: call, maxBlockMs: delay.max / 1e6 } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const samples: Record<string, Sample[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, s] of Object.entries(await round())) (samples[name] ??= []).push(s);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`${total} messages of ${body.length} B, median of ${rounds} rounds`);
for (const [name, list] of Object.entries(samples)) {
  const cpu = median(list.map((s) => s.cpuMs));
  const wall = median(list.map((s) => s.wallMs));
  const calls = list.flatMap((s) => (s.callMs === undefined ? [] : [s.callMs]));
  const blocks = list.flatMap((s) => (s.maxBlockMs === undefined ? [] : [s.maxBlockMs]));
  const call = calls.length > 0 ? `  call ${median(calls).toFixed(0)} ms, max block ${median(blocks).toFixed(0)} ms` : '';
  console.log(`${name.padEnd(12)} cpu ${cpu.toFixed(0).padStart(6)} ms (${((cpu * 1000) / total).toFixed(2)} µs/msg)  wall ${wall.toFixed(0).padStart(6)} ms (${Math.round(total / (wall / 1000))}/s)${call}`);
}
