import { expect } from 'chai';
import { openLmdbStore } from '../../src/store/lmdb/index.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MessageStore } from '../../src/store/message-store.js';
import type { Store } from '../../src/store/store.js';
import { makeTmpDir, removeDir } from '../store/tmp-dir.js';
import { F, FakeChannel, get, makeQueue, message, publish, range, takeAll } from './harness.js';

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
      expect(takeAll(h.queue)).to.deep.equal(range(8));
    });

    it('a message returned to a quorum queue goes behind the paged-out ones, and comes once', () => {
      // Before PagedReadyList the return went into the window under its new seq, and a page-in
      // that read up to that seq delivered it a second time (with 8, 9 and 11 messages here).
      for (const n of [8, 9, 10, 11]) {
        const h = makeQueue({ durable: true, window: 4, store, name: `q${n}`, args: { 'x-queue-type': F.str('quorum') } });
        publish(h, range(n), persistent);
        h.queue.requeue([get(h.queue)]);
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

    it('drop-head drops the oldest messages, paged-out ones included', () => {
      const args = { 'x-max-length': F.int32(3), 'x-dead-letter-exchange': F.str('dlx') };
      const h = makeQueue({ durable: true, window: 2, store, args });
      publish(h, range(6), persistent);
      expect(h.deadLettered).to.deep.equal([['maxlen', '0'], ['maxlen', '1'], ['maxlen', '2']]);
      expect(takeAll(h.queue)).to.deep.equal(['3', '4', '5']);
    });
  });
}
