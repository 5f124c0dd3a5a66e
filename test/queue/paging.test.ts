import { expect } from 'chai';
import { openLmdbStore } from '../../src/store/lmdb/index.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MessageRef, MessageStore } from '../../src/store/message-store.js';
import type { Store } from '../../src/store/store.js';
import { countingReads } from '../support/store-reads.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { transientStoreKey } from '../../src/queue/paged-ready-list.js';
import { rng, int } from '../frame/helpers.js';
import { F, FakeChannel, get, makeQueue, message, PERSISTENT, publish, range, takeAll, type QueueHarness } from './harness.js';

/**
 * Paging (DESIGN.md, convention 5; PagedReadyList): a durable queue keeps a window of ready
 * messages in memory; persistent messages beyond it stay only in the store and are read back,
 * in publish order, as the window drains. Run against both stores: the LMDB one is what a
 * broker with a data directory pages from.
 */
for (const kind of ['memory', 'lmdb'] as const) {
  describe(`queue paging (${kind} store)`, () => {
    let dir: string | undefined;
    let backend: Store;
    let store: MessageStore;

    beforeEach(() => {
      if (kind === 'lmdb') {
        dir = makeTmpDir('warren-paging-');
        backend = openLmdbStore(dir);
      } else backend = openMemoryStore();
      store = backend.messages;
    });
    afterEach(async () => {
      await backend.close();
      if (dir) removeDir(dir);
      dir = undefined;
    });

    const persistent = (): boolean => true;
    /** The ready messages as readyEntries() lists them (the test toolkit's inspect): nothing is taken. */
    const listed = (h: QueueHarness): string[] => Array.from(h.queue.readyEntries(), (e) => e.msg.body.toString());

    it('keeps only the window in memory and refills it from the store once half of it is gone', () => {
      const h = makeQueue({ durable: true, window: 4, store });
      publish(h, range(10), persistent);
      expect([h.queue.messageCount, h.queue.readyInMemory]).to.deep.equal([10, 4]);
      const bodies: string[] = [];
      const inMemory: number[] = [];
      for (let e = h.queue.take(); e; e = h.queue.take()) {
        h.queue.settle(e);
        bodies.push(e.msg.body.toString());
        inMemory.push(h.queue.readyInMemory);
      }
      expect(bodies).to.deep.equal(range(10));
      // Below half the window (2) the next entries are read: 3 each time, back up to 4.
      expect(inMemory).to.deep.equal([3, 2, 4, 3, 2, 4, 3, 2, 1, 0]);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(0);
    });

    it('keeps transient messages in memory behind the stored ones, in publish order', () => {
      const h = makeQueue({ durable: true, window: 4, store });
      publish(h, range(12), (i) => i % 3 !== 0);
      // The window (0-3) and the transient messages beyond it (6, 9).
      expect([h.queue.messageCount, h.queue.readyInMemory]).to.deep.equal([12, 6]);
      expect(takeAll(h.queue)).to.deep.equal(range(12));
    });

    it('keeps persistent messages in memory while a consumer waits, and delivers all in order', () => {
      const h = makeQueue({ durable: true, window: 2, store });
      publish(h, range(6), persistent);
      expect(h.queue.readyInMemory).to.equal(2);
      const ch = new FakeChannel();
      ch.consume(h.queue, { prefetch: 1, tag: 'c' });
      // 6 and 7 arrive while the consumer is there: held in memory behind the stored 2-5.
      publish(h, range(2, 6), persistent);
      expect(h.queue.readyInMemory).to.equal(3);
      for (let i = 0; i < 8; i++) ch.ack(String(i));
      expect(ch.log).to.deep.equal(range(8).map((b) => `c:${b}`));
      expect(h.queue.messageCount).to.equal(0);
    });

    it('recovers the first window only; after a crash every entry comes back redelivered', () => {
      const before = makeQueue({ durable: true, window: 4, store });
      publish(before, range(10), persistent);
      for (const crashed of [false, true]) {
        const h = makeQueue({ durable: true, window: 4, store });
        h.queue.recover(crashed);
        expect([h.queue.messageCount, h.queue.readyInMemory]).to.deep.equal([10, 4]);
        const got: string[] = [];
        for (let i = 0; i < 10; i++) {
          const e = get(h.queue);
          got.push(`${e.msg.body.toString()}${e.redelivered ? '*' : ''}`);
        }
        expect(got).to.deep.equal(range(10).map((b) => (crashed ? `${b}*` : b)));
      }
    });

    it('keeps at most windowBytes of headers and bodies in the window, however few messages that is', () => {
      const big = 'x'.repeat(1000);
      const memory = message(store, big, PERSISTENT).header.length + 1000;
      const h = makeQueue({ durable: true, window: 100, windowBytes: 3 * memory, store });
      publish(h, Array.from({ length: 10 }, () => big), persistent);
      expect([h.queue.messageCount, h.queue.readyInMemory]).to.deep.equal([10, 3]);
      // Refilled up to the window's bytes once less than half of them is left.
      const inMemory: number[] = [];
      for (let e = h.queue.take(); e; e = h.queue.take()) inMemory.push(h.queue.readyInMemory);
      expect(inMemory).to.deep.equal([2, 3, 2, 3, 2, 3, 2, 2, 1, 0]);
    });

    it('a priority queue is never paged: recovery reads all of it, so priorities still order it', () => {
      const args = { 'x-max-priority': F.int32(5) };
      const before = makeQueue({ durable: true, window: 2, store, args });
      for (let p = 0; p <= 5; p++) before.queue.enqueue(message(store, `p${p}`, { deliveryMode: 2, priority: p }));
      expect(before.queue.readyInMemory).to.equal(6);
      const h = makeQueue({ durable: true, window: 2, store, args });
      h.queue.recover(false);
      expect(h.queue.readyInMemory).to.equal(6);
      expect(takeAll(h.queue)).to.deep.equal(['p5', 'p4', 'p3', 'p2', 'p1', 'p0']);
    });

    it('a requeue goes back ahead of the paged-out messages', () => {
      const h = makeQueue({ durable: true, window: 4, store });
      publish(h, range(8), persistent);
      const e0 = get(h.queue);
      const e1 = get(h.queue);
      h.queue.requeue([e1, e0]);
      expect(listed(h)).to.deep.equal(range(8));
      expect(takeAll(h.queue)).to.deep.equal(range(8));
    });

    it('a message returned to a quorum queue goes behind the paged-out ones, and comes once', () => {
      // Before PagedReadyList the return went into the window under its new seq, and a page-in
      // that read up to that seq delivered it a second time (with 8, 9 and 11 messages here).
      for (const n of [8, 9, 10, 11]) {
        const h = makeQueue({ durable: true, window: 4, store, name: `q${n}`, args: { 'x-queue-type': F.str('quorum') } });
        publish(h, range(n), persistent);
        h.queue.requeue([get(h.queue)]);
        expect(listed(h)).to.deep.equal([...range(n - 1, 1), '0']);
        expect(takeAll(h.queue)).to.deep.equal([...range(n - 1, 1), '0']);
        expect(h.queue.messageCount).to.equal(0);
      }
    });

    it('purge removes the paged-out messages from the store too', () => {
      const h = makeQueue({ durable: true, window: 4, store });
      publish(h, range(10), persistent);
      expect(h.queue.purge()).to.equal(10);
      expect([h.queue.messageCount, h.queue.readyInMemory]).to.deep.equal([0, 0]);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(0);
      // The queue goes on: new messages are stored and delivered in order.
      publish(h, range(6, 20), persistent);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(6);
      expect(takeAll(h.queue)).to.deep.equal(range(6, 20));
    });

    it('purge leaves the unacknowledged messages stored, whatever was paged out', () => {
      const h = makeQueue({ durable: true, window: 4, store });
      publish(h, range(10), persistent);
      const delivered = [get(h.queue), get(h.queue)];
      expect(h.queue.purge()).to.equal(8);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(2);
      h.queue.requeue(delivered);
      expect(takeAll(h.queue)).to.deep.equal(['0', '1']);
    });

    it('purge with deliveries unacknowledged reads back only the delivered messages, not the paged-out ones', async () => {
      let reads = 0;
      const counting = new Proxy(store, {
        get: (target, prop, receiver) => (prop === 'readMessage' ? (queue: string, e: MessageRef) => (reads++, target.readMessage(queue, e)) : Reflect.get(target, prop, receiver)),
      });
      const h = makeQueue({ durable: true, window: 4, store: counting });
      publish(h, range(1000), persistent);
      const delivered = [get(h.queue), get(h.queue), get(h.queue)];
      h.queue.ack(delivered[1]!);
      await store.sync(); // LMDB: the entries are read from the file, not from the overlay
      reads = 0;
      expect(h.queue.purge()).to.equal(997);
      expect(reads).to.equal(2);
      expect(store.countEntries(h.queue.storeKey)).to.deep.equal({ messages: 2, bytes: 2 });
      // The queue goes on; the delivered messages settle as before.
      publish(h, range(3, 1000), persistent);
      h.queue.ack(delivered[0]!);
      h.queue.requeue([delivered[2]!]);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(4);
      await store.swept();
      expect(store.stats()).to.deep.equal({ messages: 4, entries: 4 });
      expect(takeAll(h.queue)).to.deep.equal(['2', '1000', '1001', '1002']);
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(0);
    });

    it('x-message-ttl expires the paged-out messages too once the window is gone', () => {
      const args = { 'x-message-ttl': F.int32(1000), 'x-dead-letter-exchange': F.str('dlx') };
      const h = makeQueue({ durable: true, window: 2, store, args });
      publish(h, range(6), persistent);
      h.clock.advance(999);
      expect(h.queue.messageCount).to.equal(6);
      h.clock.advance(1);
      expect(h.queue.messageCount).to.equal(0);
      expect(h.deadLettered).to.deep.equal(range(6).map((b) => ['expired', b]));
      expect(store.countEntries(h.queue.storeKey).messages).to.equal(0);
    });

    it('without a dead-letter exchange, expiry drops the paged-out messages without reading them back, and stops at the first one still alive', async () => {
      const h = makeQueue({ durable: true, window: 2, store, args: { 'x-message-ttl': F.int32(1000) } });
      publish(h, range(6), persistent);
      h.clock.advance(500);
      publish(h, range(4, 6), persistent);
      const reads = await countingReads(store, () => {
        h.clock.advance(500);
      });
      // 0-5 expired: 0 and 1 in the window, 2-5 only in the store; the window is read again (6, 7).
      expect(h.queue.messageCount).to.equal(4);
      expect(reads).to.equal(2);
      expect(h.dropped).to.deep.equal([['expired', 6]]);
      expect(store.countEntries(h.queue.storeKey)).to.deep.equal({ messages: 4, bytes: 4 });
      expect(h.queue.persistentCount).to.equal(4);
      expect(takeAll(h.queue)).to.deep.equal(['6', '7', '8', '9']);
    });

    it('drop-head drops the oldest messages, paged-out ones included', () => {
      const args = { 'x-max-length': F.int32(3), 'x-dead-letter-exchange': F.str('dlx') };
      const h = makeQueue({ durable: true, window: 2, store, args });
      publish(h, range(6), persistent);
      expect(h.deadLettered).to.deep.equal([['maxlen', '0'], ['maxlen', '1'], ['maxlen', '2']]);
      expect(takeAll(h.queue)).to.deep.equal(['3', '4', '5']);
    });

    describe('transient messages under memory pressure', () => {
      /** Pressure as the broker's TransientPager signals it; wakes are counted. */
      function pressure(active = true) {
        const p = { on: active, wakes: 0, active: () => p.on, wake: () => void p.wakes++ };
        return p;
      }
      const pagedOut = (h: QueueHarness): number => store.countEntries(transientStoreKey(h.queue.storeKey)).messages;

      it('pageOut writes the transient messages beyond the window to the store, last ones first, within the budget', () => {
        const p = pressure();
        const h = makeQueue({ durable: false, window: 4, store, transientPaging: p });
        publish(h, range(10));
        // Beyond the window: a wake-up for each, nothing written yet.
        expect([h.queue.readyInMemory, p.wakes, pagedOut(h)]).to.deep.equal([10, 6, 0]);
        const cost = message(store, '9').size + message(store, '9').header.length + 1024;
        // A budget of two messages' cost writes two (9 and 8), and says there may be more.
        expect(h.queue.pageOut(2 * cost)).to.equal(2 * cost);
        expect([h.queue.messageCount, h.queue.readyInMemory, pagedOut(h)]).to.deep.equal([10, 8, 2]);
        // The rest; less than the budget comes back when nothing is left.
        expect(h.queue.pageOut(100 * cost)).to.equal(4 * cost);
        expect([h.queue.messageCount, h.queue.readyInMemory, pagedOut(h)]).to.deep.equal([10, 4, 6]);
        expect(h.queue.pageOut(100 * cost)).to.equal(0);
        // Read back in order, and deleted from the store as they are.
        expect(takeAll(h.queue)).to.deep.equal(range(10));
        expect(pagedOut(h)).to.equal(0);
      });

      it('pages out what is beyond the window\'s bytes, however few messages that is', () => {
        const p = pressure();
        const body = 'y'.repeat(2000);
        const memory = message(store, body).header.length + 2000;
        const h = makeQueue({ durable: false, window: 100, windowBytes: 2 * memory, store, transientPaging: p });
        publish(h, Array.from({ length: 6 }, () => body));
        h.queue.pageOut(1 << 20);
        expect([h.queue.readyInMemory, pagedOut(h)]).to.deep.equal([2, 4]);
        expect(takeAll(h.queue)).to.have.length(6);
        expect(pagedOut(h)).to.equal(0);
      });

      it('writes nothing without pressure, and nothing of a priority queue', () => {
        const p = pressure(false);
        const h = makeQueue({ durable: false, window: 2, store, transientPaging: p });
        publish(h, range(5));
        expect(h.queue.pageOut(1 << 20)).to.equal(0);
        const pp = pressure();
        const pq = makeQueue({ name: 'pq', durable: false, window: 2, store, transientPaging: pp, args: { 'x-max-priority': F.int32(3) } });
        for (let i = 0; i < 5; i++) pq.queue.enqueue(message(store, String(i), { priority: i % 3 }));
        expect([pq.queue.pageOut(1 << 20), pq.queue.readyInMemory, pp.wakes]).to.deep.equal([0, 5, 0]);
        expect(listed(pq)).to.deep.equal(['2', '1', '4', '0', '3']);
        expect(takeAll(pq.queue)).to.deep.equal(['2', '1', '4', '0', '3']);
      });

      it('interleaves paged-out transient, stored persistent and held messages of a durable queue in publish order', () => {
        const p = pressure();
        const h = makeQueue({ durable: true, window: 3, store, transientPaging: p });
        publish(h, range(12), (i) => i % 3 === 0);
        h.queue.pageOut(1 << 20);
        // Window 0-2; 3, 6, 9 only in the queue's own key; the transient ones beyond the window paged out.
        expect([h.queue.readyInMemory, store.countEntries(h.queue.storeKey).messages, pagedOut(h)]).to.deep.equal([3, 4, 6]);
        // While a consumer is there (it took 0), persistent 12 is held in memory behind the
        // stored ones, and transient 13 too.
        const ch = new FakeChannel();
        const c = ch.consume(h.queue, { prefetch: 1, tag: 'c' });
        publish(h, ['12', '13'], (i) => i === 0);
        h.queue.removeConsumer(c);
        ch.ack('0');
        // Listed without paging anything in: the window, then held, stored and paged-out ones by seq.
        const inMemory = h.queue.readyInMemory;
        expect(listed(h)).to.deep.equal(range(13, 1));
        expect(h.queue.readyInMemory).to.equal(inMemory);
        expect(takeAll(h.queue)).to.deep.equal(range(13, 1));
        expect([store.countEntries(h.queue.storeKey).messages, pagedOut(h)]).to.deep.equal([0, 0]);
      });

      it('a paged-out message keeps its redelivered mark and expiry; purge and delete clear the store', () => {
        const p = pressure();
        const h = makeQueue({ durable: false, window: 1, store, transientPaging: p, args: { 'x-message-ttl': F.int32(1000) } });
        publish(h, range(4));
        const e0 = get(h.queue);
        const e1 = get(h.queue);
        h.queue.requeue([e0, e1]);
        expect(h.queue.pageOut(1 << 20)).to.be.greaterThan(0);
        expect(pagedOut(h)).to.equal(3);
        const first = [get(h.queue), get(h.queue)].map((e) => `${e.msg.body.toString()}${e.redelivered ? '*' : ''}`);
        expect(first).to.deep.equal(['0*', '1*']);
        h.clock.advance(1000);
        expect([h.queue.messageCount, pagedOut(h)]).to.deep.equal([0, 0]);

        publish(h, range(5));
        h.queue.pageOut(1 << 20);
        expect(h.queue.purge()).to.equal(5);
        expect(pagedOut(h)).to.equal(0);
        publish(h, range(5));
        h.queue.pageOut(1 << 20);
        expect(pagedOut(h)).to.equal(4);
        h.queue.destroy();
        expect(pagedOut(h)).to.equal(0);
      });

      it('a message requeued after the window\'s tail was paged out goes back to its place in seq order', () => {
        const p = pressure(false);
        const h = makeQueue({ durable: false, window: 1, store, transientPaging: p });
        publish(h, range(8));
        const taken = range(7).map(() => get(h.queue));
        // 4 and 5 come back while 6 is out: the window holds 4 5 7.
        h.queue.requeue([taken[4]!, taken[5]!]);
        p.on = true;
        h.queue.pageOut(1 << 20);
        expect([h.queue.readyInMemory, pagedOut(h)]).to.deep.equal([1, 2]);
        // 6 goes behind the paged-out 5, not into the window next to 4.
        h.queue.requeue([taken[6]!]);
        h.queue.requeue(taken.slice(0, 4));
        expect(takeAll(h.queue)).to.deep.equal(range(8));
      });

      it('a message routed to two queues is stored once and read back by both', () => {
        const p = pressure();
        const a = makeQueue({ name: 'a', window: 1, store, transientPaging: p });
        const b = makeQueue({ name: 'b', window: 1, store, transientPaging: p });
        for (const body of range(3)) {
          const m = message(store, body);
          a.queue.enqueue(m);
          b.queue.enqueue(m);
        }
        a.queue.pageOut(1 << 20);
        b.queue.pageOut(1 << 20);
        expect([pagedOut(a), pagedOut(b)]).to.deep.equal([2, 2]);
        expect(takeAll(a.queue)).to.deep.equal(range(3));
        expect(takeAll(b.queue)).to.deep.equal(range(3));
      });

      it('random publishes, page-outs, gets, acks, requeues, purges, length limits and commits deliver what a plain queue would, in order', async () => {
        for (let seed = 1; seed <= 20; seed++) {
          const r = rng(seed);
          const p = pressure();
          const h = makeQueue({ name: `m${seed}`, durable: int(r, 2) === 0, window: 1 + int(r, 6), store, transientPaging: p });
          // The model: bodies are numbered in publish order, so a plain queue delivers the lowest ready one.
          const ready = new Set<number>();
          const unacked = new Map<number, ReturnType<typeof get>>();
          let next = 0;
          const lowest = (): number | undefined => (ready.size ? Math.min(...ready) : undefined);
          // Every other seed publishes persistent messages only: then nothing is held behind
          // the stored ones, and a length limit can keep the stored tail alone.
          const allPersistent = seed % 2 === 0;
          const bytesOf = (bodies: Iterable<number>): number => [...bodies].reduce((sum, b) => sum + String(b).length, 0);
          for (let step = 0; step < 300; step++) {
            const op = int(r, 13);
            if (op === 12) {
              // A drop-head length limit set and lifted again (a policy): the lowest ready go
              // until within it, the paged-out ones without being read back.
              const maxLength = int(r, 2) === 0 ? int(r, ready.size + 1) : undefined;
              const maxBytes = maxLength === undefined || int(r, 2) === 0 ? int(r, bytesOf(ready) + 2) : undefined;
              h.queue.applySettings({ ...h.queue.settings, maxLength, maxLengthBytes: maxBytes });
              while ((maxLength !== undefined && ready.size > maxLength) || (maxBytes !== undefined && bytesOf(ready) > maxBytes)) ready.delete(lowest()!);
              h.queue.applySettings({ ...h.queue.settings, maxLength: undefined, maxLengthBytes: undefined });
            } else if (op === 11) {
              // queue.purge: every ready message goes, delivered ones stay (paged-out ones are not read back).
              expect(h.queue.purge(), `purge, seed ${seed} step ${step}`).to.equal(ready.size);
              ready.clear();
            } else if (op === 10) {
              // The store commits what was written so far (LMDB: reads then come from the file).
              await store.sync();
            } else if (op < 4) {
              const n = 1 + int(r, 4);
              for (let i = 0; i < n; i++, next++) {
                h.queue.enqueue(message(store, String(next), allPersistent || int(r, 3) === 0 ? PERSISTENT : {}));
                ready.add(next);
              }
            } else if (op < 6) {
              p.on = int(r, 4) !== 0;
              h.queue.pageOut(1 + int(r, 3) * 1200);
            } else if (op < 8) {
              const e = h.queue.take();
              expect(e && Number(e.msg.body.toString()), `seed ${seed} step ${step}`).to.equal(lowest());
              if (!e) continue;
              h.queue.delivered(e);
              ready.delete(Number(e.msg.body.toString()));
              unacked.set(Number(e.msg.body.toString()), e);
            } else if (unacked.size > 0) {
              const [body, e] = [...unacked][int(r, unacked.size)] as [number, ReturnType<typeof get>];
              unacked.delete(body);
              if (op === 8) h.queue.ack(e);
              else {
                h.queue.requeue([e]);
                ready.add(body);
              }
            }
            expect(h.queue.messageCount, `seed ${seed} step ${step}`).to.equal(ready.size);
            expect(h.queue.readyBytes, `ready bytes, seed ${seed} step ${step}`).to.equal(bytesOf(ready));
            const { persistentCount, persistentBytes } = h.queue;
            expect({ messages: persistentCount, bytes: persistentBytes }, `persistent, seed ${seed} step ${step}`).to.deep.equal(store.countEntries(h.queue.storeKey));
            // A look costs a store read: every tenth step.
            if (step % 10 === 0) expect(listed(h).map(Number), `readyEntries, seed ${seed} step ${step}`).to.deep.equal([...ready].sort((x, y) => x - y));
          }
          expect(takeAll(h.queue).map(Number)).to.deep.equal([...ready].sort((x, y) => x - y));
          expect(pagedOut(h)).to.equal(0);
        }
      });
    });
  });
}
