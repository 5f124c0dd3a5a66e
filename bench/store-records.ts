/**
 * Micro-benchmark of the LMDB store's record paths, to price the per-record checksums
 * (issue 10): CPU time (user + system of this process) and wall time of
 *
 * 1. enqueue: N confirmed enqueues of `size`-byte messages, 1000 per turn, each turn awaiting sync()
 * 2. page-in: after a reopen, readEntries in windows of 1000 and readMessage of each (what a
 *    recovering queue does)
 * 3. ack: remove every entry, 1000 per turn
 *
 * Each round uses a fresh data dir; the median of `rounds` is printed.
 *
 *   npx tsx bench/store-records.ts [--messages 200000] [--size 1024] [--rounds 5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
}

async function timed(fn: () => Promise<void> | void): Promise<Sample> {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs: Number(process.hrtime.bigint() - t0) / 1e6 };
}

async function round(): Promise<Record<string, Sample>> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-store-'));
  try {
    let store = openLmdbStore(dir);
    const enqueue = await timed(async () => {
      const ms = store.messages;
      for (let seq = 0; seq < total; ) {
        for (let i = 0; i < 1000 && seq < total; i++, seq++) {
          const id = ms.nextMessageId();
          ms.enqueue('/\u0000q', { seq, msgId: id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id, exchange: '', routingKey: 'q', header, body });
        }
        await ms.sync();
      }
    });
    await store.close();
    store = openLmdbStore(dir);
    let bytes = 0;
    const pageIn = await timed(() => {
      const ms = store.messages;
      for (let from = 0; ; ) {
        const entries = ms.readEntries('/\u0000q', from, 1000);
        if (entries.length === 0) break;
        for (const e of entries) bytes += ms.readMessage(e.msgId)!.body.length;
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
    await store.close();
    return { enqueue, 'page-in': pageIn, ack };
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
  console.log(`${name.padEnd(8)} cpu ${cpu.toFixed(0).padStart(6)} ms (${((cpu * 1000) / total).toFixed(2)} µs/msg)  wall ${wall.toFixed(0).padStart(6)} ms (${Math.round(total / (wall / 1000))}/s)`);
}
