/**
 * LMDB-only behaviour (issue "Durability on LMDB: nothing confirmed is ever lost"; DESIGN.md,
 * convention 8): group commit, recovery after reopen and after SIGKILL, repair of a torn or
 * tampered file, and a failing commit (file-size limit standing in for a full disk).
 */

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { open } from 'lmdb';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import { makeEntry, makeMessage } from './store-contract.js';
import type { MessageStore } from '../../src/store/message-store.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const writerScript = path.join(repoRoot, 'test/store/fixtures/store-writer.ts');
const sweepScript = path.join(repoRoot, 'test/store/fixtures/sweep-writer.ts');

interface ChildRun {
  lines: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs the writer fixture (or `script`); `killWhen` is checked after each stdout line and SIGKILLs the child when true. */
function runWriter(args: string[], opts: { script?: string; killWhen?: (lines: string[]) => boolean; fileSizeLimitKiB?: number }): Promise<ChildRun> {
  const nodeArgs = ['--import', 'tsx', opts.script ?? writerScript, ...args];
  const child = opts.fileSizeLimitKiB
    ? spawn('bash', ['-c', `ulimit -f ${opts.fileSizeLimitKiB} && exec "$0" "$@"`, process.execPath, ...nodeArgs], { cwd: repoRoot })
    : spawn(process.execPath, nodeArgs, { cwd: repoRoot });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  let killed = false;
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  child.stdout.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    if (!killed && opts.killWhen?.(lines)) {
      killed = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ lines, code, signal, stderr }));
  });
}

/** Every seq of the "ok a-b" lines, in print order. */
function confirmedSeqs(lines: string[]): number[] {
  const out: number[] = [];
  for (const line of lines) {
    const m = /^ok (\d+)-(\d+)$/.exec(line);
    if (m) for (let s = Number(m[1]); s <= Number(m[2]); s++) out.push(s);
  }
  return out;
}

/**
 * Enqueues 48 MiB into queue 'big' (BIG_COUNT messages of 256 KiB) in one batch, whose commit
 * takes far longer than a few turns: `committed()` turns true once it is durable.
 */
const BIG_COUNT = 192;
function bigCommit(ms: MessageStore): { synced: Promise<void>; committed: () => boolean } {
  const big = Buffer.alloc(256 * 1024, 1);
  for (let i = 0; i < BIG_COUNT; i++) {
    const msg = { ...makeMessage(ms.nextMessageId()), body: big };
    ms.enqueue('big', makeEntry(i, msg.id), msg);
  }
  let done = false;
  const synced = ms.sync().then(() => {
    done = true;
  });
  return { synced, committed: () => done };
}

describe('LMDB store', () => {
  let dir: string;
  let dataDir: string;
  let store: LmdbStore | undefined;

  beforeEach(() => {
    dir = makeTmpDir();
    dataDir = path.join(dir, 'store');
  });

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    removeDir(dir);
  });

  it('commits thousands of enqueues from one turn in one LMDB transaction (one fsync)', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const before = store.counters;
    const promises: Array<Promise<void>> = [];
    for (let i = 0; i < 5000; i++) {
      const msg = makeMessage(ms.nextMessageId());
      ms.enqueue(`q${i % 7}`, makeEntry(i, msg.id), msg); // many "connections", many queues
      promises.push(ms.sync());
    }
    await Promise.all(promises);
    const after = store.counters;
    expect(after.batches - before.batches).to.equal(1);
    expect(after.transactions - before.transactions).to.equal(1);
    expect(ms.stats()).to.deep.equal({ messages: 5000, entries: 5000 });
  });

  it('holds the writes of every turn while a commit is in flight, and commits them as one batch after it', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const before = store.counters;
    const big = bigCommit(ms);
    // Twenty more turns, one write each, all while it commits: one batch for all of them.
    const held: Array<Promise<boolean>> = [];
    for (let turn = 0; turn < 20; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      const msg = makeMessage(ms.nextMessageId());
      ms.enqueue('small', makeEntry(turn, msg.id), msg);
      held.push(ms.sync().then(() => big.committed()));
    }
    expect(big.committed(), 'the big commit took less than 20 turns: the test proves nothing').to.equal(false);
    expect(store.counters.batches - before.batches).to.equal(1);
    await big.synced;
    // Each held write was durable only after the commit before it.
    expect(await Promise.all(held)).to.deep.equal(new Array(20).fill(true));
    const after = store.counters;
    expect(after.batches - before.batches).to.equal(2);
    expect(after.transactions - before.transactions).to.equal(2);
    // With nothing in flight, a write goes out at the end of its own turn, as before.
    const last = makeMessage(ms.nextMessageId());
    ms.enqueue('small', makeEntry(20, last.id), last);
    await ms.sync();
    expect(store.counters.batches - before.batches).to.equal(3);
    await store.close();
    store = openLmdbStore(dataDir);
    expect(store.messages.countEntries('small').messages).to.equal(21);
    expect(store.messages.countEntries('big').messages).to.equal(BIG_COUNT);
  });

  it('runs a beforeCommit writer as its batch is flushed: once for all the turns a commit in flight held', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const before = store.counters;
    const big = bigCommit(ms);
    // A writer that gathers what twenty turns append, as a stream's open chunk does.
    let pending: number[] = [];
    let writes = 0;
    const write = (): void => {
      writes++;
      const msg = { ...makeMessage(ms.nextMessageId()), body: Buffer.from(pending.join(',')) };
      ms.enqueue('chunks', makeEntry(pending.at(-1)!, msg.id), msg);
      pending = [];
    };
    const confirmed: Array<Promise<boolean>> = [];
    for (let turn = 0; turn < 20; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (pending.length === 0) ms.beforeCommit(write);
      pending.push(turn);
      confirmed.push(ms.sync().then(() => writes === 1));
    }
    expect([big.committed(), writes], 'the big commit took less than 20 turns: the test proves nothing').to.deep.equal([false, 0]);
    await big.synced;
    // One write, one record, in the one batch after the big one; every sync waited for it.
    expect(await Promise.all(confirmed)).to.deep.equal(new Array(20).fill(true));
    expect(store.counters.batches - before.batches).to.equal(2);
    const [chunk] = ms.readEntries('chunks', 0, 10);
    expect(ms.readMessage('chunks', chunk!)!.body.toString()).to.equal(Array.from({ length: 20 }, (_, i) => i).join(','));
  });

  describe('holding a batch past the commit in flight while publishers stream (commitHold)', () => {
    /** A store whose hold runs on a clock the test moves (ms), and whose naps move it. */
    let clock: number;
    let naps: number[];
    const openHeld = (): LmdbStore =>
      openLmdbStore(dataDir, {
        commitHold: {
          quietMs: 10,
          napMs: 1,
          now: () => clock,
          sleep: (ms) => {
            naps.push(ms);
            clock += ms;
          },
        },
      });
    const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    /** One write and the sync a publisher's confirm waits on, in queue 'small'. */
    let seq: number;
    const publish = (ms: MessageStore): Promise<void> => {
      const msg = makeMessage(ms.nextMessageId());
      ms.enqueue('small', makeEntry(seq++, msg.id), msg);
      return ms.sync();
    };

    /** A held store with a big commit in flight, handed to LMDB at clock 1000; `before`: its batch count before that. */
    const behindBigCommit = async (): Promise<{ s: LmdbStore; ms: MessageStore; before: number; big: ReturnType<typeof bigCommit> }> => {
      const s = (store = openHeld());
      const before = s.counters.batches;
      const big = bigCommit(s.messages);
      await turn();
      return { s, ms: s.messages, before, big };
    };

    beforeEach(() => {
      clock = 1000;
      naps = [];
      seq = 0;
    });

    it('holds it while syncs keep coming, and lets it go once they stop for quietMs, napping through the quiet turns', async () => {
      const { s, ms, before, big } = await behindBigCommit();
      const held = [publish(ms)];
      // The commit in flight ends at clock 1050, a publisher having synced just then: held up to 1050 + 2 × 50.
      clock = 1050;
      held.push(publish(ms));
      expect(big.committed(), 'the big commit ended before the test could write behind it: it proves nothing').to.equal(false);
      await big.synced;
      expect(s.counters.batches - before).to.equal(1);
      // Ten turns of a publisher streaming, 2 ms apart: still held, no nap (every turn had a sync).
      for (let i = 0; i < 10; i++) {
        clock += 2;
        held.push(publish(ms));
        await turn();
      }
      expect([s.counters.batches - before, naps.length]).to.deep.equal([1, 0]);
      // The publisher stops at clock 1070: held turns nap 1 ms each until 1080, then the batch goes.
      const lastSync = clock;
      while (s.counters.batches - before === 1) {
        expect(naps.length, 'still held after far more naps than quietMs').to.be.below(20);
        await turn();
      }
      expect(clock - lastSync).to.equal(10);
      expect(naps).to.deep.equal(new Array(10).fill(1));
      await Promise.all(held);
      expect(s.counters.batches - before).to.equal(2);
      expect(ms.countEntries('small').messages).to.equal(held.length);
    });

    it('lets it go after twice the duration of the commit it waited for, however busy the publishers', async () => {
      const { s, ms, before, big } = await behindBigCommit();
      clock = 1008; // the commit ends at 1008: held until 1024 at the latest
      const held = [publish(ms)];
      await big.synced;
      const clockAtBatch: number[] = [];
      while (s.counters.batches - before < 2) {
        expect(clock, 'still held long past its limit').to.be.below(1100);
        clockAtBatch.push(clock);
        clock += 3;
        held.push(publish(ms));
        await turn();
      }
      // Every turn had a sync (never quiet), and the batch went in the first turn at or past 1024.
      expect(naps).to.deep.equal([]);
      expect(clock).to.be.at.least(1024);
      expect(clockAtBatch.at(-1)).to.be.below(1024);
      await Promise.all(held);
    });

    it('does not nap in a held turn that had a sync, even when the clock read the same as at the last one', async () => {
      const { s, ms, before, big } = await behindBigCommit();
      clock = 1008; // held until 1024 at the latest
      const held = [publish(ms)];
      await big.synced;
      // A coarse clock: five turns of a streaming publisher read the same time.
      for (let i = 0; i < 5; i++) {
        held.push(publish(ms));
        await turn();
      }
      expect([s.counters.batches - before, naps.length]).to.deep.equal([1, 0]);
      clock = 1030;
      await turn();
      await Promise.all(held);
      expect(s.counters.batches - before).to.equal(2);
    });

    it('lets it go at once when no sync came for quietMs before the commit ended (publishers that wait for each confirm)', async () => {
      const { s, ms, before, big } = await behindBigCommit();
      const held = publish(ms); // at 1000; nothing more: this publisher waits for its confirm
      clock = 1030;
      await big.synced;
      await turn();
      expect([s.counters.batches - before, naps.length]).to.deep.equal([2, 0]);
      await held;
    });
  });

  it('recovers everything synced after a reopen, with counts, ids and metadata', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const body = Buffer.alloc(100_000, 7); // larger than a page: overflow pages
    let lastId = 0;
    for (let seq = 0; seq < 50; seq++) {
      const msg = { ...makeMessage(ms.nextMessageId()), body: seq === 3 ? body : Buffer.from(`b${seq}`) };
      lastId = msg.id;
      ms.enqueue('/\u0000q1', makeEntry(seq, msg.id, { expiresAt: seq === 5 ? 1_800_000_000_000 : 0 }), msg);
      if (seq % 2 === 0) ms.enqueue('/\u0000q2', makeEntry(seq, msg.id), msg);
    }
    store.metadata.putQueue({ vhost: '/', name: 'q1', durable: true, autoDelete: false, arguments: Buffer.from([1, 2]) });
    await ms.sync();
    for (let seq = 10; seq < 20; seq++) ms.remove('/\u0000q1', seq);
    ms.update('/\u0000q1', makeEntry(0, 1, { redelivered: true, deliveryCount: 2 }));
    await ms.sync();
    const entries1 = ms.readEntries('/\u0000q1', 0, 1000);
    const entries2 = ms.readEntries('/\u0000q2', 0, 1000);
    const counts1 = ms.countEntries('/\u0000q1');
    await store.close();

    store = openLmdbStore(dataDir);
    const again = store.messages;
    expect(again.readEntries('/\u0000q1', 0, 1000)).to.deep.equal(entries1);
    expect(again.readEntries('/\u0000q2', 0, 1000)).to.deep.equal(entries2);
    expect(again.countEntries('/\u0000q1')).to.deep.equal(counts1);
    expect(counts1.messages).to.equal(40);
    expect(again.readEntries('/\u0000q1', 5, 1)[0]!.expiresAt).to.equal(1_800_000_000_000);
    expect(again.readEntries('/\u0000q1', 0, 1)[0]).to.deep.include({ redelivered: true, deliveryCount: 2 });
    expect(again.readMessage('/\u0000q1', entries1[3]!)!.body.equals(body)).to.equal(true);
    expect(again.nextMessageId()).to.be.greaterThan(lastId);
    expect(again.queues().sort()).to.deep.equal(['/\u0000q1', '/\u0000q2']);
    expect(again.stats()).to.deep.equal({ messages: 45, entries: 65 }); // odd seqs 11..19 were only in q1
    expect(store.metadata.load().queues.map((q) => q.name)).to.deep.equal(['q1']);
    expect(store.verify().problems).to.deep.equal([]);
  });

  it('never reuses a message id after a reopen, even when every message was acked', async () => {
    store = openLmdbStore(dataDir);
    let ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const msg = makeMessage(store.messages.nextMessageId());
      ids.push(msg.id);
      store.messages.enqueue('q', makeEntry(i, msg.id), msg);
    }
    await store.messages.sync();
    for (let i = 0; i < 3; i++) store.messages.remove('q', i);
    await store.close();
    store = openLmdbStore(dataDir);
    expect(store.messages.nextMessageId()).to.be.greaterThan(Math.max(...ids));
    ids = [];
  });

  it('keeps a refcount record only while several entries share a message, in every commit and across reopens', async () => {
    // Format 3: a message of one entry has none; the O(1) check on open (entries = messages +
    // shared references) and the full check (verify) hold after each step.
    // Refcount records in the file (committed): read from the store's own environment (a private field).
    const refsRecords = (): number => (store as unknown as { core: { refsDb: { getStats(): { entryCount: number } } } }).core.refsDb.getStats().entryCount;
    const logs: string[] = [];
    const reopen = async (): Promise<LmdbStore> => {
      await store?.close();
      store = openLmdbStore(dataDir, { log: (m) => logs.push(m) });
      return store;
    };
    let s = await reopen();
    const single = makeMessage(s.messages.nextMessageId());
    const shared = makeMessage(s.messages.nextMessageId());
    s.messages.enqueue('q', makeEntry(0, single.id), single);
    for (const q of ['q', 'r', 's']) s.messages.enqueue(q, makeEntry(1, shared.id), shared);
    await s.messages.sync();
    expect([s.messages.stats(), refsRecords()]).to.deep.equal([{ messages: 2, entries: 4 }, 1]);
    expect(s.verify().problems).to.deep.equal([]);
    s.messages.remove('q', 1); // 3 -> 2: still shared
    await s.messages.sync();
    expect(s.verify().problems).to.deep.equal([]);
    s = await reopen();
    s.messages.remove('r', 1); // 2 -> 1: the refcount record goes
    await s.messages.sync();
    expect([s.messages.stats(), refsRecords()]).to.deep.equal([{ messages: 2, entries: 2 }, 0]);
    expect(s.verify().problems).to.deep.equal([]);
    s.messages.move('s', 1, 'dead', makeEntry(0, shared.id), shared); // a message of one entry moves with its record
    s.messages.remove('q', 0);
    await s.messages.sync();
    expect([s.messages.stats(), refsRecords()]).to.deep.equal([{ messages: 1, entries: 1 }, 0]);
    s = await reopen();
    expect(s.messages.readMessage('dead', { seq: 0, msgId: shared.id })?.body).to.deep.equal(shared.body);
    expect(s.messages.readMessage('q', { seq: 0, msgId: single.id })).to.equal(undefined);
    s.messages.enqueue('again', makeEntry(0, shared.id), shared); // shared again after a reopen: 1 -> 2
    await s.messages.sync();
    expect([s.messages.stats(), refsRecords()]).to.deep.equal([{ messages: 1, entries: 2 }, 1]);
    s.messages.deleteQueue('dead');
    s.messages.remove('again', 0);
    await s.messages.sync();
    expect([s.messages.stats(), refsRecords()]).to.deep.equal([{ messages: 0, entries: 0 }, 0]);
    s = await reopen();
    expect(s.verify().problems).to.deep.equal([]);
    expect(logs.join('\n')).not.to.match(/full check|disagree/);
  });

  it('stores a small message of one entry inside its entry: one record, through update, move, requeue and reopen', async () => {
    const logs: string[] = [];
    const reopen = async (): Promise<LmdbStore> => {
      await store?.close();
      store = openLmdbStore(dataDir, { log: (m) => logs.push(m) });
      return store;
    };
    // Message records in the file (committed), from the store's own environment (a private field).
    const records = (): number => (store as unknown as { core: { messagesDb: { getStats(): { entryCount: number } } } }).core.messagesDb.getStats().entryCount;
    let s = await reopen();
    const small = makeMessage(s.messages.nextMessageId());
    const large = makeMessage(s.messages.nextMessageId(), 'L'.repeat(5000)); // over 4096 as stored: a record of its own
    const shared = makeMessage(s.messages.nextMessageId());
    s.messages.enqueue('q', makeEntry(0, small.id), small);
    s.messages.enqueue('q', makeEntry(1, large.id), large);
    for (const q of ['q', 'r']) s.messages.enqueue(q, makeEntry(2, shared.id), shared);
    // Read back before the flush, and while its commit is in flight.
    expect(s.messages.readMessage('q', { seq: 0, msgId: small.id })?.body.toString()).to.equal(small.body.toString());
    await new Promise((resolve) => setImmediate(resolve));
    expect(s.messages.readMessage('q', { seq: 0, msgId: small.id })?.body.toString()).to.equal(small.body.toString());
    await s.messages.sync();
    expect([s.messages.stats(), records()]).to.deep.equal([{ messages: 3, entries: 4 }, 2]);
    s = await reopen();
    expect(s.messages.readMessage('q', { seq: 0, msgId: small.id })?.header.toString()).to.equal(small.header.toString());
    expect(s.messages.readMessage('q', { seq: 1, msgId: large.id })?.body.toString()).to.equal(large.body.toString());
    // Not found through another entry, nor by id alone.
    expect(s.messages.readMessage('q', { seq: 2, msgId: small.id })).to.equal(undefined);
    expect(s.messages.readMessage('r', { seq: 0, msgId: small.id })).to.equal(undefined);
    // An update writes the entry again with its message.
    s.messages.update('q', makeEntry(0, small.id, { redelivered: true, deliveryCount: 2 }));
    await s.messages.sync();
    s = await reopen();
    expect(s.messages.readEntries('q', 0, 1)[0]).to.include({ redelivered: true, deliveryCount: 2, size: small.body.length });
    expect(s.messages.readMessage('q', { seq: 0, msgId: small.id })?.body.toString()).to.equal(small.body.toString());
    // Dead-lettered with its id and a rewritten header: the message moves inside the new entry.
    const dead = { ...small, header: Buffer.from('x-death') };
    s.messages.move('q', 0, 'dlq', makeEntry(5, small.id), dead);
    await s.messages.sync();
    expect([s.messages.stats(), records()]).to.deep.equal([{ messages: 3, entries: 4 }, 2]);
    s = await reopen();
    expect(s.messages.readMessage('dlq', { seq: 5, msgId: small.id })?.header.toString()).to.equal('x-death');
    // Returned to the back of its queue (a quorum queue without a delivery limit): a new seq, the same id.
    s.messages.remove('dlq', 5);
    s.messages.enqueue('dlq', makeEntry(6, small.id, { redelivered: true }), dead);
    await s.messages.sync();
    s = await reopen();
    expect(s.messages.readEntries('dlq', 0, 9).map((e) => e.seq)).to.deep.equal([6]);
    expect(s.messages.readMessage('dlq', { seq: 6, msgId: small.id })?.header.toString()).to.equal('x-death');
    expect(s.verify().problems).to.deep.equal([]);
    // Acked, and a queue of them deleted: nothing is left, and the counters agree on every open.
    s.messages.remove('dlq', 6);
    for (let i = 0; i < 10; i++) {
      const m = makeMessage(s.messages.nextMessageId());
      s.messages.enqueue('doomed', makeEntry(i, m.id), m);
    }
    await s.messages.sync();
    expect(s.messages.stats()).to.deep.equal({ messages: 12, entries: 13 });
    s.messages.deleteQueue('doomed');
    for (const seq of [1, 2]) s.messages.remove('q', seq);
    s.messages.remove('r', 2);
    await s.messages.swept();
    expect([s.messages.stats(), records()]).to.deep.equal([{ messages: 0, entries: 0 }, 0]);
    s = await reopen();
    expect(s.verify().problems).to.deep.equal([]);
    expect(logs.join('\n')).not.to.match(/full check|disagree/);
  });

  it('deletes a deep queue of unshared messages without a refcount item each, and one holding a shared message as before', async () => {
    // With no message shared in the file, a message outside the overlay has one entry: deleting
    // the entry deletes the message record directly (MessageStore.deleteQueue's fast path).
    // Every message in a record of its own (small ones would be inside their entries).
    let s = (store = openLmdbStore(dataDir, { inlineMax: 0 }));
    const n = 2000;
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      const msg = makeMessage(s.messages.nextMessageId());
      ids.push(msg.id);
      s.messages.enqueue('deep', makeEntry(i, msg.id), msg);
    }
    await s.close();
    s = store = openLmdbStore(dataDir, { inlineMax: 0 });
    // One more written in this turn (in the overlay): it takes the refcount path.
    const fresh = makeMessage(s.messages.nextMessageId());
    s.messages.enqueue('deep', makeEntry(n, fresh.id), fresh);
    const overlay = (s as unknown as { engine: { overlay: { msgs: Map<number, unknown> } } }).engine.overlay.msgs;
    s.messages.deleteQueue('deep');
    expect(overlay.size).to.equal(1);
    // Gone for reads at once, before the commit (the file still holds them until then).
    const read = (seq: number, msgId: number): unknown => s.messages.readMessage('deep', { seq, msgId });
    expect([read(0, ids[0]!), read(n - 1, ids[n - 1]!), read(n, fresh.id)]).to.deep.equal([undefined, undefined, undefined]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(read(7, ids[7]!)).to.equal(undefined);
    await s.messages.sync();
    expect(s.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
    expect(s.verify().problems).to.deep.equal([]);
    // A shared message anywhere in the file: every message takes the refcount path.
    const shared = makeMessage(s.messages.nextMessageId());
    const single = makeMessage(s.messages.nextMessageId());
    for (const q of ['a', 'b']) s.messages.enqueue(q, makeEntry(0, shared.id), shared);
    s.messages.enqueue('a', makeEntry(1, single.id), single);
    await s.close();
    s = store = openLmdbStore(dataDir, { inlineMax: 0 });
    s.messages.deleteQueue('a');
    await s.messages.sync();
    expect(s.messages.stats()).to.deep.equal({ messages: 1, entries: 1 });
    expect(s.messages.readMessage('b', { seq: 0, msgId: shared.id })?.body).to.deep.equal(shared.body);
    expect(s.messages.readMessage('a', { seq: 1, msgId: single.id })).to.equal(undefined);
    s = store = await (async () => { await s.close(); return openLmdbStore(dataDir, { inlineMax: 0 }); })();
    expect(s.verify().problems).to.deep.equal([]);
    expect(s.messages.readEntries('b', 0, 10).map((e) => e.msgId)).to.deep.equal([shared.id]);
  });

  it('sweeps a deleted deep queue a chunk per commit: gone for reads and its name free at once, and the sweep goes on after a reopen', async () => {
    const logs: string[] = [];
    const open = (): LmdbStore => (store = openLmdbStore(dataDir, { sweepChunk: 100, log: (m) => logs.push(m) }));
    let s = open();
    const n = 1000;
    for (let i = 0; i < n; i++) {
      const msg = makeMessage(s.messages.nextMessageId());
      s.messages.enqueue('deep', makeEntry(i, msg.id), msg);
    }
    await s.close();
    s = open();
    const before = s.counters.batches;
    s.messages.deleteQueue('deep');
    // Gone for every read at once; the name is free for a new queue (a new store id).
    expect([s.messages.readEntries('deep', 0, 10), s.messages.countEntries('deep'), s.messages.lastSeq('deep'), s.messages.queues()]).to.deep.equal([[], { messages: 0, bytes: 0 }, -1, []]);
    const fresh = makeMessage(s.messages.nextMessageId());
    s.messages.enqueue('deep', makeEntry(5, fresh.id), fresh);
    expect(s.messages.readEntries('deep', 0, 10).map((e) => e.msgId)).to.deep.equal([fresh.id]);
    await s.messages.sync();
    // The first chunk went with the deleteQueue call's batch, the rest are still in the file.
    expect(s.messages.stats()).to.deep.equal({ messages: n - 100 + 1, entries: n - 100 + 1 });
    expect(s.messages.sweepsLeft).to.equal(1);
    // Closed mid-sweep: the index keeps a sweep record that counts what is left.
    await new Promise((resolve) => setImmediate(resolve));
    await s.messages.sync();
    await s.close();
    s = open();
    expect(logs.join('\n')).to.match(/1 deleted queue\(s\) still to sweep/);
    expect(logs.join('\n')).not.to.match(/full check|disagree/);
    expect(s.verify().problems).to.deep.equal([]);
    expect(s.messages.sweepsLeft).to.equal(1);
    expect(s.messages.readEntries('deep', 0, 10).map((e) => e.msgId)).to.deep.equal([fresh.id]);
    await s.messages.swept();
    expect(s.messages.sweepsLeft).to.equal(0);
    expect(s.messages.stats()).to.deep.equal({ messages: 1, entries: 1 });
    expect(s.counters.batches - before).to.be.at.least(2);
    await s.close();
    s = open();
    expect(s.verify().problems).to.deep.equal([]);
    expect(logs.join('\n')).not.to.match(/full check|disagree/);
    expect([s.messages.sweepsLeft, s.messages.readEntries('deep', 0, 10).map((e) => e.msgId)]).to.deep.equal([0, [fresh.id]]);
  });

  it('goes on with a sweep the process was SIGKILLed in the middle of, without a full check', async function () {
    this.timeout(20_000);
    const run = await runWriter([dataDir], { script: sweepScript, killWhen: (lines) => lines.filter((l) => l.startsWith('left')).length >= 5 });
    expect(run.signal, run.stderr).to.equal('SIGKILL');
    const left = Number(run.lines.filter((l) => l.startsWith('left')).at(-1)!.split(' ')[1]);
    expect(left).to.be.above(10).and.below(5010);
    const logs: string[] = [];
    store = openLmdbStore(dataDir, { log: (m) => logs.push(m) });
    expect(logs.join('\n')).to.match(/1 deleted queue\(s\) still to sweep/);
    expect(logs.join('\n')).not.to.match(/full check|disagree/);
    expect(store.verify().problems).to.deep.equal([]);
    expect(store.messages.queues()).to.deep.equal(['keep']);
    await store.messages.swept();
    expect(store.messages.stats()).to.deep.equal({ messages: 10, entries: 10 });
    expect(store.messages.readEntries('keep', 0, 100).map((e) => e.seq)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(store.verify().problems).to.deep.equal([]);
  });

  it('stops sweeping when a commit fails, and goes on after resume()', async () => {
    let s = (store = openLmdbStore(dataDir, { sweepChunk: 50 }));
    for (let i = 0; i < 400; i++) {
      const msg = makeMessage(s.messages.nextMessageId());
      s.messages.enqueue('deep', makeEntry(i, msg.id), msg);
    }
    await s.messages.sync();
    s.messages.deleteQueue('deep');
    await s.messages.sync();
    s.failNextCommit(true);
    const stopped = await s.messages.swept().then(
      () => 'swept',
      (err: Error) => err.message,
    );
    expect(stopped).to.match(/ENOSPC/);
    expect(s.messages.sweepsLeft).to.equal(1);
    await s.resume();
    await s.messages.swept();
    expect(s.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
    expect(s.verify().problems).to.deep.equal([]);
  });

  it('repairs orphan messages, wrong refcounts and counters on open', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const kept = makeMessage(ms.nextMessageId());
    ms.enqueue('q', makeEntry(1, kept.id), kept);
    ms.enqueue('r', makeEntry(1, kept.id), kept);
    await store.close();
    store = undefined;

    // Tamper with the file the way a torn or buggy writer could: an orphan body without
    // refcount, a refcount without entries, a wrong refcount, an entry of an unknown queue.
    const raw = open<Buffer, Buffer>(dataDir, { maxDbs: 16, overlappingSync: false, encoding: 'binary', keyEncoding: 'binary' });
    const db = (name: string) => raw.openDB<Buffer, Buffer>(name, { encoding: 'binary', keyEncoding: 'binary' });
    const key = (n: number): Buffer => {
      const b = Buffer.alloc(8);
      b.writeUInt32BE(n, 4);
      return b;
    };
    const u32 = (n: number): Buffer => Buffer.from([0, 0, 0, n]);
    raw.transactionSync(() => {
      db('messages').put(key(900), Buffer.from([1, 0, 0, 0, 0, 0, 0]));
      db('refs').put(key(901), u32(3));
      db('refs').put(key(kept.id), u32(7));
      db('entries').put(Buffer.from([0, 0, 0, 99, 0, 0, 0, 0, 0, 0, 0, 1]), Buffer.alloc(25));
    });
    await raw.close();

    const logs: string[] = [];
    store = openLmdbStore(dataDir, { log: (m) => logs.push(m) });
    expect(logs.join('\n')).to.match(/repaired 4 problem/);
    expect(logs.join('\n')).to.match(/orphan message 900/);
    expect(store.verify().problems).to.deep.equal([]);
    expect(store.messages.stats()).to.deep.equal({ messages: 1, entries: 2 });
    expect(store.messages.readMessage('q', { seq: 1, msgId: kept.id })!.body.toString()).to.equal(kept.body.toString());
    store.messages.remove('q', 1);
    store.messages.remove('r', 1);
    await store.messages.sync();
    expect(store.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
  });

  it('loses nothing whose sync() resolved when the process is SIGKILLed mid-stream', async function () {
    this.timeout(20_000);
    const run = await runWriter([dataDir, '2048', '200'], { killWhen: (lines) => lines.length >= 15 });
    expect(run.signal, run.stderr).to.equal('SIGKILL');
    const printed = confirmedSeqs(run.lines);
    expect(printed.length).to.be.at.least(15 * 200);

    store = openLmdbStore(dataDir);
    const ms = store.messages;
    const a = ms.readEntries('a', 0, 1e9).map((e) => e.seq);
    // Batches commit in order, so 'a' holds a gap-free prefix that covers every printed seq.
    expect(a.length).to.be.at.least(printed.length);
    a.forEach((seq, i) => expect(seq).to.equal(i));
    const inA = new Set(a);
    for (const seq of printed) expect(inA.has(seq), `seq ${seq}`).to.equal(true);
    for (const e of ms.readEntries('a', 0, 1e9)) {
      const msg = ms.readMessage('a', e)!;
      expect(msg.routingKey).to.equal(`k${e.seq}`);
      expect(msg.body.length).to.equal(2048);
    }
    expect(store.verify().problems).to.deep.equal([]);
    expect(ms.stats().messages).to.equal(a.length); // every body is held by 'a'; 'b' acks freed nothing twice
    expect(ms.countEntries('a').messages).to.equal(a.length);
  });

  it('rejects sync() with a clear error when a commit fails, and keeps the file consistent', async function () {
    if (process.platform !== 'linux') this.skip();
    this.timeout(20_000);
    // A 2 MiB file-size limit makes LMDB's page writes fail as on a full disk.
    const run = await runWriter([dataDir, '65536', '10'], { fileSizeLimitKiB: 2048 });
    expect(run.code, run.stderr).to.equal(0);
    const failed = run.lines.find((l) => l.startsWith('failed '));
    expect(failed, run.lines.join('\n')).to.be.a('string');
    expect(failed).to.include(`LMDB commit failed in data dir ${dataDir}`);
    expect(failed).to.match(/short write|full/);
    expect(run.lines).to.include('later rejected onError 1');
    const printed = confirmedSeqs(run.lines);
    expect(printed.length).to.be.greaterThan(0);

    store = openLmdbStore(dataDir);
    const a = new Set(store.messages.readEntries('a', 0, 1e9).map((e) => e.seq));
    for (const seq of printed) expect(a.has(seq), `seq ${seq}`).to.equal(true);
    expect(store.verify().problems).to.deep.equal([]);
    const msg = makeMessage(store.messages.nextMessageId());
    store.messages.enqueue('a', makeEntry(1e6, msg.id), msg); // writable again once the cause is gone
    await store.messages.sync();
  });

  /** Moves the chain counter behind the store's back, as a second writer would; returns its old version. */
  function moveChainCounter(to: number): number {
    const meta = (store as unknown as { core: { meta: { getEntry(k: Buffer): { version: number } | undefined; putSync(k: Buffer, v: Buffer, version: number): boolean } } }).core.meta;
    const before = meta.getEntry(Buffer.from('turn'))!.version;
    meta.putSync(Buffer.from('turn'), Buffer.from([1]), to);
    return before;
  }

  it('fails every sync() after a failed commit, keeps later writes in memory, and refuses to resume over another writer', async () => {
    const errors: Error[] = [];
    store = openLmdbStore(dataDir, { onError: (e) => errors.push(e) });
    const ms = store.messages;
    const msg = makeMessage(ms.nextMessageId());
    ms.enqueue('q', makeEntry(1, msg.id), msg);
    await ms.sync();
    moveChainCounter(12345);
    const m2 = makeMessage(ms.nextMessageId());
    ms.enqueue('q', makeEntry(2, m2.id), m2);
    const err = await ms.sync().then(() => undefined, (e: Error) => e);
    expect(err?.message).to.match(/another process writing/);
    expect(errors).to.have.length(1);
    ms.enqueue('q', makeEntry(3, m2.id), m2); // kept for resume(), not durable
    expect(await ms.sync().then(() => 'resolved', () => 'rejected')).to.equal('rejected');
    expect(ms.readEntries('q', 0, 10).map((e) => e.seq)).to.deep.equal([1, 2, 3]);
    const resumed = await store.resume().then(() => undefined, (e: Error) => e);
    expect(resumed?.message).to.match(/another process wrote to the file/);
    await store.close().catch(() => undefined);
    store = openLmdbStore(dataDir);
    expect(store.messages.readEntries('q', 0, 10).map((e) => e.seq)).to.deep.equal([1]);
  });

  it('failNextCommit fails the next batch as a full disk does, held behind a commit in flight; resume() writes it', async () => {
    const errors: Error[] = [];
    store = openLmdbStore(dataDir, { onError: (e) => errors.push(e) });
    const ms = store.messages;
    const put = (seq: number) => {
      const m = makeMessage(ms.nextMessageId(), `m${seq}`);
      ms.enqueue('q', makeEntry(seq, m.id), m);
    };
    const big = bigCommit(ms);
    await new Promise((r) => setImmediate(r)); // the big batch goes to LMDB
    store.failNextCommit(true);
    put(1);
    const failed = ms.sync().then(() => 'resolved', (e: Error) => e.message);
    await new Promise((r) => setImmediate(r));
    // Held while the big batch commits: not failed yet.
    expect([big.committed(), errors.length]).to.deep.equal([false, 0]);
    // It goes, and fails, once the big one committed; the big one is on disk.
    expect(await failed).to.match(/ENOSPC/);
    expect([big.committed(), errors.length]).to.deep.equal([true, 1]);
    await big.synced;
    await store.resume();
    put(2);
    await ms.sync();
    await store.close();
    store = openLmdbStore(dataDir);
    expect(store.messages.readEntries('q', 0, 10).map((e) => e.seq)).to.deep.equal([1, 2]);
    expect(store.messages.countEntries('big').messages).to.equal(BIG_COUNT);
  });

  it('resume() writes everything a failed commit left unwritten, in order, and takes writes again (disk full, then room)', async () => {
    const errors: Error[] = [];
    store = openLmdbStore(dataDir, { onError: (e) => errors.push(e) });
    const ms = store.messages;
    const put = (seq: number) => {
      const m = makeMessage(ms.nextMessageId(), `m${seq}`);
      ms.enqueue('q', makeEntry(seq, m.id), m);
    };
    put(1);
    put(2);
    await ms.sync();
    // A commit that writes nothing, as one refused for lack of space: the counter is put back
    // once the batch has failed, so the file is exactly as the store left it.
    const version = moveChainCounter(999);
    put(3);
    ms.remove('q', 1);
    expect(await ms.sync().then(() => 'resolved', () => 'rejected')).to.equal('rejected');
    moveChainCounter(version);
    // Writes while failed: an ack, an update and a publish, spread over several turns.
    ms.remove('q', 2);
    await new Promise((r) => setImmediate(r));
    put(4);
    ms.update('q', makeEntry(3, ms.readEntries('q', 3, 1)[0]!.msgId, { redelivered: true, deliveryCount: 1 }));
    expect(await ms.sync().then(() => 'resolved', () => 'rejected')).to.equal('rejected');
    await store.resume();
    expect(errors).to.have.length(1);
    put(5);
    await ms.sync();
    expect(store.failure).to.equal(undefined);
    expect(store.verify().problems).to.deep.equal([]);
    await store.close();
    store = openLmdbStore(dataDir);
    const entries = store.messages.readEntries('q', 0, 10);
    expect(entries.map((e) => e.seq)).to.deep.equal([3, 4, 5]);
    expect(entries[0]).to.include({ redelivered: true, deliveryCount: 1 });
    expect(store.messages.readMessage('q', entries[1]!)?.body.toString()).to.equal('m4');
    expect(store.verify().problems).to.deep.equal([]);
    expect(store.messages.stats()).to.deep.equal({ messages: 3, entries: 3 });
  });

  it('opens a large store without reading its entries', async () => {
    store = openLmdbStore(dataDir);
    const ms = store.messages;
    for (let turn = 0; turn < 5; turn++) {
      for (let i = 0; i < 10_000; i++) {
        const msg = makeMessage(ms.nextMessageId(), 'x');
        ms.enqueue('big', makeEntry(turn * 10_000 + i, msg.id), msg);
      }
      await ms.sync();
    }
    await store.close();
    const started = process.hrtime.bigint();
    store = openLmdbStore(dataDir);
    const ms2 = store.messages;
    expect(ms2.countEntries('big')).to.deep.equal({ messages: 50_000, bytes: 50_000 });
    expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.below(200);
    expect(ms2.lastSeq('big')).to.equal(49_999);
    expect(ms2.readEntries('big', 25_000, 2).map((e) => e.seq)).to.deep.equal([25_000, 25_001]);
  });

  it('grows the map beyond its initial size by itself', async () => {
    store = openLmdbStore(dataDir, { mapSize: 256 * 1024 });
    const ms = store.messages;
    for (let i = 0; i < 40; i++) {
      const msg = { ...makeMessage(ms.nextMessageId()), body: Buffer.alloc(64 * 1024, i) };
      ms.enqueue('q', makeEntry(i, msg.id), msg);
    }
    await ms.sync();
    expect(ms.countEntries('q')).to.deep.equal({ messages: 40, bytes: 40 * 64 * 1024 });
    expect(ms.readMessage('q', ms.readEntries('q', 39, 1)[0]!)!.body[0]).to.equal(39);
  });

  it('keeps the data file small however big the map is', async () => {
    store = openLmdbStore(dataDir, { mapSize: 2 ** 34 });
    const msg = makeMessage(store.messages.nextMessageId());
    store.messages.enqueue('q', makeEntry(1, msg.id), msg);
    await store.messages.sync();
    expect(fs.statSync(path.join(dataDir, 'data.mdb')).size).to.be.below(2 ** 20);
  });
});
