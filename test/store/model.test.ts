/**
 * Model check: random operations, applied to the memory store (the model) and the LMDB store,
 * must leave both answering every read the same way, whether the LMDB writes are still in
 * the open batch, flushed but not committed, committed, or reloaded after a reopen. Run twice:
 * with the default sweep chunk (a deleted queue of this size is swept in its deleteQueue call)
 * and with a chunk of 3 entries, so deleted queues are swept over many commits and reopens
 * while the operations go on.
 */

import path from 'node:path';
import { expect } from 'chai';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MessageStore, PersistedMessage } from '../../src/store/message-store.js';
import { makeEntry } from './store-contract.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { rng } from '../frame/helpers.js';

const QUEUES = ['q0', 'q1', 'q2', '/\u0000q3'];

function compare(model: MessageStore, lmdb: LmdbStore['messages'], ids: number[], where: string): void {
  expect(lmdb.queues().sort(), `${where}: queues`).to.deep.equal(model.queues().sort());
  for (const q of QUEUES) {
    expect(lmdb.readEntries(q, 0, 1e9), `${where}: entries of ${q}`).to.deep.equal(model.readEntries(q, 0, 1e9));
    expect(lmdb.readEntries(q, 7, 3), `${where}: page of ${q}`).to.deep.equal(model.readEntries(q, 7, 3));
    expect(lmdb.readLastEntries(q, 4), `${where}: last entries of ${q}`).to.deep.equal(model.readLastEntries(q, 4));
    expect(lmdb.countEntries(q), `${where}: counts of ${q}`).to.deep.equal(model.countEntries(q));
    expect(lmdb.lastSeq(q), `${where}: lastSeq of ${q}`).to.equal(model.lastSeq(q));
  }
  // Every entry's message, found through the entry (the LMDB store may keep it inside).
  const held = new Set<number>();
  for (const q of QUEUES) {
    for (const e of model.readEntries(q, 0, 1e9)) {
      held.add(e.msgId);
      const a = model.readMessage(q, e)!;
      const b = lmdb.readMessage(q, e);
      expect(b, `${where}: message ${e.msgId} of ${q} seq ${e.seq}`).to.not.equal(undefined);
      expect(b!.header.toString(), `${where}: header ${e.msgId}`).to.equal(a.header.toString());
      expect(b!.body.toString(), `${where}: body ${e.msgId}`).to.equal(a.body.toString());
      expect(b!.routingKey).to.equal(a.routingKey);
    }
  }
  // A message no entry refers to is gone (a record only a deleted queue referred to may be read until the sweep removes it).
  for (const id of ids) {
    if (held.has(id)) continue;
    const b = lmdb.readMessage('', { seq: -1, msgId: id });
    if (!(b !== undefined && lmdb.sweepsLeft > 0)) expect(b, `${where}: message ${id} freed`).to.equal(undefined);
  }
}

describe('LMDB store matches the memory model under random operations', () => {
  const seeds = process.env.STORE_MODEL_SEEDS ? Array.from({ length: Number(process.env.STORE_MODEL_SEEDS) }, (_, i) => i + 1) : [1, 2, 3];
  // The default layout (a message of one entry inside it), deleted queues swept a few entries a
  // commit, and every message in a record of its own (inlineMax 0).
  // And both layouts in one store (a store of format 4 opened by this build, and the other way):
  // each reopen switches between them.
  const variants: Array<{ sweepChunk?: number; inlineMax?: number; mixed?: boolean; label: string }> = [
    { label: '' },
    { sweepChunk: 3, label: ', deleted queues swept 3 entries per commit' },
    { inlineMax: 0, label: ', every message in a record of its own' },
    { mixed: true, label: ', the layout switched on every reopen' },
  ];
  for (const { sweepChunk, inlineMax, mixed, label } of variants)
  for (const seed of seeds) {
    it(`seed ${seed}${label}`, async function () {
      this.timeout(20_000);
      const dir = makeTmpDir();
      const dataDir = path.join(dir, 'store');
      const model = openMemoryStore().messages;
      let opened = 0;
      const open = (): LmdbStore => openLmdbStore(dataDir, { sweepChunk, inlineMax: mixed ? (opened++ % 2 === 0 ? 0 : undefined) : inlineMax });
      // Entries holding their message, seen at some commit (none with inlineMax 0).
      let inlineSeen = 0;
      const inlineNow = (): number => (lmdb as unknown as { engine: { inlineEntryCount: number } }).engine.inlineEntryCount;
      let lmdb: LmdbStore = open();
      const random = rng(seed);
      const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
      const ids: number[] = [];
      const nextSeq = new Map<string, number>(QUEUES.map((q) => [q, 0]));
      let id = 1_000;
      const both = (f: (s: MessageStore) => void): void => {
        let modelError: unknown;
        try {
          f(model);
        } catch (err) {
          modelError = err;
        }
        if (modelError) expect(() => f(lmdb.messages)).to.throw();
        else f(lmdb.messages);
      };
      const existingSeq = (q: string): number | undefined => {
        const entries = model.readEntries(q, 0, 1e9);
        return entries.length ? pick(entries).seq : undefined;
      };
      try {
        for (let step = 0; step < 1500; step++) {
          const r = random();
          if (r < 0.35) {
            const msg: PersistedMessage = { id: ++id, exchange: 'x', routingKey: `rk${id}`, header: Buffer.from(`h${id}`), body: Buffer.from(`body ${id}`.repeat(1 + (id % 3))) };
            ids.push(msg.id);
            const targets = QUEUES.filter(() => random() < 0.4);
            for (const q of targets.length ? targets : [pick(QUEUES)]) {
              const reuse = random() < 0.05 ? existingSeq(q) : undefined;
              const seq = reuse ?? nextSeq.get(q)!;
              if (reuse === undefined) nextSeq.set(q, seq + 1 + Math.floor(random() * 2));
              both((s) => s.enqueue(q, makeEntry(seq, msg.id), msg));
            }
          } else if (r < 0.6) {
            const q = pick(QUEUES);
            const seq = random() < 0.9 ? existingSeq(q) ?? 0 : 999_999;
            both((s) => s.remove(q, seq));
          } else if (r < 0.72) {
            const q = pick(QUEUES);
            const seq = existingSeq(q);
            if (seq === undefined) continue;
            const cur = model.readEntries(q, seq, 1)[0]!;
            const e = { ...cur, redelivered: true, deliveryCount: cur.deliveryCount + 1, expiresAt: random() < 0.5 ? 0 : 1e12 + step };
            both((s) => s.update(q, e));
          } else if (r < 0.85) {
            const from = pick(QUEUES);
            const to = pick(QUEUES);
            const seq = existingSeq(from);
            if (seq === undefined) continue;
            const cur = model.readEntries(from, seq, 1)[0]!;
            const old = model.readMessage(from, cur)!;
            const toSeq = nextSeq.get(to)!;
            nextSeq.set(to, toSeq + 1);
            // An entry of a deleted queue not swept yet still shares its message (MessageStore.move).
            const mode = lmdb.messages.sweepsLeft > 0 ? random() * 0.7 : random();
            const msg: PersistedMessage =
              mode < 0.4
                ? { ...old, id: ++id, header: Buffer.from(`dead ${id}`) } // new id, rewritten header
                : mode < 0.7
                  ? old // unchanged
                  : { ...old, header: Buffer.from(`rewritten in place ${step}`) }; // throws when shared
            if (msg.id !== old.id) ids.push(msg.id);
            both((s) => s.move(from, seq, to, makeEntry(toSeq, msg.id, { redelivered: true }), msg));
          } else if (r < 0.87) {
            const q = pick(QUEUES);
            both((s) => s.deleteQueue(q));
          } else if (r < 0.93) {
            await new Promise((resolve) => setImmediate(resolve)); // flush, commit still in flight
            compare(model, lmdb.messages, ids, `step ${step} (in flight)`);
          } else if (r < 0.98) {
            if (random() < 0.5) await lmdb.messages.sync();
            else await lmdb.messages.swept();
            compare(model, lmdb.messages, ids, `step ${step} (synced)`);
            inlineSeen = Math.max(inlineSeen, inlineNow());
          } else {
            await lmdb.close();
            lmdb = open();
            expect(lmdb.verify().problems).to.deep.equal([]);
            compare(model, lmdb.messages, ids, `step ${step} (reopened)`);
          }
        }
        compare(model, lmdb.messages, ids, 'end');
        await lmdb.messages.swept();
        expect(lmdb.messages.sweepsLeft).to.equal(0);
        expect(lmdb.messages.stats()).to.deep.equal(model.stats());
        if (mixed) expect(opened).to.be.greaterThan(1);
        else if (inlineMax === 0) expect(inlineSeen).to.equal(0);
        else expect(inlineSeen).to.be.greaterThan(0);
        expect(lmdb.verify().problems).to.deep.equal([]);
      } finally {
        await lmdb.close().catch(() => undefined);
        removeDir(dir);
      }
    });
  }
});
