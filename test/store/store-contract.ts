/**
 * The store contract (src/store/message-store.ts, src/store/metadata-store.ts), run against
 * every backend: the memory store and the LMDB store must not be told apart by the broker.
 * Reads see writes at once (before sync()); `stats()` is read after `await sync()` because the
 * LMDB store reports committed counts.
 */

import { expect } from 'chai';
import type { MessageStore, PersistedMessage, QueueEntry, StoredEntry } from '../../src/store/message-store.js';
import type { BindingRecord, ExchangeRecord, QueueRecord } from '../../src/store/metadata-store.js';
import type { Store } from '../../src/store/store.js';

export interface StoreHarness {
  /** `log`: where the store reports what it logs (a writer that threw). */
  open(opts?: { log?: (msg: string) => void }): Store | Promise<Store>;
  /** Closes and opens the same store again; undefined for backends that do not persist. */
  reopen?: (store: Store) => Promise<Store>;
  cleanup?: () => void | Promise<void>;
}

export function makeMessage(id: number, body = `body-${id}`, header = `hdr-${id}`): PersistedMessage {
  return { id, exchange: 'amq.direct', routingKey: `rk.${id}`, header: Buffer.from(header), body: Buffer.from(body) };
}

export function makeEntry(seq: number, msgId: number, extra: Partial<QueueEntry> = {}): QueueEntry {
  return { seq, msgId, redelivered: false, deliveryCount: 0, expiresAt: 0, ...extra };
}

/** entry as readEntries returns it: with the body size of msg, the message it refers to. */
function storedAs(entry: QueueEntry, msg: PersistedMessage): StoredEntry {
  return { ...entry, size: msg.body.length };
}

function publish(ms: MessageStore, queues: string[], seq: number, body?: string): PersistedMessage {
  const msg = makeMessage(ms.nextMessageId(), body);
  for (const q of queues) ms.enqueue(q, makeEntry(seq, msg.id), msg);
  return msg;
}

const seqs = (ms: MessageStore, q: string, from = 0, limit = 1e9): number[] => ms.readEntries(q, from, limit).map((e) => e.seq);

export function describeStoreContract(name: string, harness: () => StoreHarness): void {
  describe(`store contract: ${name}`, () => {
    let h: StoreHarness;
    let store: Store;
    let ms: MessageStore;

    beforeEach(async () => {
      h = harness();
      store = await h.open();
      ms = store.messages;
    });

    afterEach(async () => {
      await store.close().catch(() => undefined);
      await h.cleanup?.();
    });

    async function reopenIfPersistent(): Promise<void> {
      if (!h.reopen) return;
      store = await h.reopen(store);
      ms = store.messages;
    }

    it('hands out increasing message ids', () => {
      const a = ms.nextMessageId();
      const b = ms.nextMessageId();
      expect(b).to.be.greaterThan(a);
      expect(a).to.be.at.least(1);
    });

    it('reads entries in seq order, from a seq, at most limit, and the message of each', async () => {
      const ids = [5, 1, 3, 2, 4].map((seq) => ({ seq, msg: publish(ms, ['q'], seq) }));
      expect(seqs(ms, 'q')).to.deep.equal([1, 2, 3, 4, 5]);
      expect(seqs(ms, 'q', 2, 2)).to.deep.equal([2, 3]);
      expect(seqs(ms, 'q', 6)).to.deep.equal([]);
      expect(ms.readEntries('q', 0, 0)).to.deep.equal([]);
      expect(ms.readEntries('nope', 0, 10)).to.deep.equal([]);
      for (const { seq, msg } of ids) {
        const [e] = ms.readEntries('q', seq, 1);
        expect(e).to.deep.equal(storedAs(makeEntry(seq, msg.id), msg));
        const stored = ms.readMessage('q', e!)!;
        expect(stored.id).to.equal(msg.id);
        expect(stored.exchange).to.equal('amq.direct');
        expect(stored.routingKey).to.equal(`rk.${msg.id}`);
        expect(stored.header.toString()).to.equal(`hdr-${msg.id}`);
        expect(stored.body.toString()).to.equal(`body-${msg.id}`);
      }
      await ms.sync();
      expect(seqs(ms, 'q', 3)).to.deep.equal([3, 4, 5]); // same answer once committed
      expect(ms.readMessage('q', { seq: ids[0]!.seq, msgId: ids[0]!.msg.id })!.body.toString()).to.equal(`body-${ids[0]!.msg.id}`);
    });

    it('runs a writer registered with beforeCommit once, before the sync() called after it resolves, and keeps what it wrote', async () => {
      const calls: string[] = [];
      let held = 0;
      const write = (): void => {
        calls.push('write');
        for (let seq = 0; seq < held; seq++) publish(ms, ['held'], seq);
      };
      held = 3;
      ms.beforeCommit(write);
      await ms.sync().then(() => calls.push('synced'));
      expect(calls).to.deep.equal(['write', 'synced']);
      expect(seqs(ms, 'held')).to.deep.equal([0, 1, 2]);
      // Once per registration; with no sync(), by the end of the turn at the latest.
      await ms.sync();
      expect(calls).to.deep.equal(['write', 'synced']);
      ms.beforeCommit(write);
      await new Promise((resolve) => setImmediate(resolve));
      expect(calls).to.deep.equal(['write', 'synced', 'write']);
      await ms.sync();
      await reopenIfPersistent();
      expect(seqs(ms, 'held')).to.deep.equal([0, 1, 2]);
    });

    it('reports a beforeCommit writer that throws, and still runs the others and resolves the sync', async () => {
      const logs: string[] = [];
      await store.close();
      store = await h.open({ log: (m) => logs.push(m) });
      ms = store.messages;
      const ran: string[] = [];
      ms.beforeCommit(() => {
        ran.push('broken');
        throw new Error('the writer broke');
      });
      ms.beforeCommit(() => {
        ran.push('sound');
        publish(ms, ['written'], 1);
      });
      await ms.sync();
      expect(ran).to.deep.equal(['broken', 'sound']);
      expect(seqs(ms, 'written')).to.deep.equal([1]);
      expect(logs.filter((l) => l.includes('a write held for the commit failed: Error: the writer broke'))).to.have.length(1);
    });

    it('counts messages and body bytes per queue and knows the last seq', async () => {
      publish(ms, ['q'], 0, 'abc');
      publish(ms, ['q'], 7, 'defgh');
      expect(ms.countEntries('q')).to.deep.equal({ messages: 2, bytes: 8 });
      expect(ms.lastSeq('q')).to.equal(7);
      ms.remove('q', 7);
      expect(ms.countEntries('q')).to.deep.equal({ messages: 1, bytes: 3 });
      expect(ms.lastSeq('q')).to.equal(0);
      expect(ms.countEntries('none')).to.deep.equal({ messages: 0, bytes: 0 });
      expect(ms.lastSeq('none')).to.equal(-1);
      await ms.sync();
      expect(ms.lastSeq('q')).to.equal(0);
    });

    it('stores a body once for several queues and frees it with the last entry', async () => {
      const msg = publish(ms, ['a', 'b', 'c'], 1);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 3 });
      ms.remove('a', 1);
      ms.remove('b', 1);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
      expect(ms.readMessage('c', { seq: 1, msgId: msg.id })).to.not.equal(undefined);
      ms.remove('c', 1);
      expect(ms.readMessage('c', { seq: 1, msgId: msg.id })).to.equal(undefined);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 0, entries: 0 });
      expect(ms.readMessage('c', { seq: 1, msgId: msg.id })).to.equal(undefined);
      ms.remove('c', 1); // removing a missing entry does nothing
      ms.remove('zzz', 1);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 0, entries: 0 });
    });

    it('frees a message enqueued and removed in the same turn, and one removed turns later', async () => {
      const m1 = publish(ms, ['q'], 1);
      ms.remove('q', 1);
      const m2 = publish(ms, ['q'], 2);
      await ms.sync();
      ms.remove('q', 2);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 0, entries: 0 });
      expect(ms.readMessage('q', { seq: 1, msgId: m1.id })).to.equal(undefined);
      expect(ms.readMessage('q', { seq: 2, msgId: m2.id })).to.equal(undefined);
    });

    it('does not find a message through an entry removed since it was read, before or after the commit', async () => {
      publish(ms, ['q'], 1);
      publish(ms, ['q'], 2);
      await ms.sync();
      const [first, second] = ms.readEntries('q', 0, 10);
      ms.remove('q', 1);
      expect(ms.readMessage('q', first!)).to.equal(undefined);
      await ms.sync();
      expect(ms.readMessage('q', first!)).to.equal(undefined);
      expect(ms.readMessage('q', second!)?.body.toString()).to.equal(`body-${second!.msgId}`);
    });

    it('reads the last entries in seq order, with what is not yet committed and without what is removed', async () => {
      const msgs = [1, 2, 3, 4, 5, 6].map((seq) => publish(ms, ['q', 'other'], seq, 'x'.repeat(seq)));
      await ms.sync();
      ms.remove('q', 6);
      ms.update('q', makeEntry(4, msgs[3]!.id, { redelivered: true }));
      publish(ms, ['other'], 7);
      const last = (q: string, limit: number): number[] => ms.readLastEntries(q, limit).map((e) => e.seq);
      expect(last('q', 2)).to.deep.equal([4, 5]);
      expect(ms.readLastEntries('q', 2)[0]).to.deep.equal(storedAs(makeEntry(4, msgs[3]!.id, { redelivered: true }), msgs[3]!));
      expect(last('q', 99)).to.deep.equal([1, 2, 3, 4, 5]);
      expect(last('other', 1)).to.deep.equal([7]);
      expect(last('q', 0)).to.deep.equal([]);
      expect(last('nope', 3)).to.deep.equal([]);
      await ms.sync();
      await reopenIfPersistent();
      expect(ms.readLastEntries('q', 3).map((e) => [e.seq, e.size])).to.deep.equal([[3, 3], [4, 4], [5, 5]]);
    });

    it('updates redelivered, deliveryCount and expiresAt, keeping seq order and the message', async () => {
      const msg = publish(ms, ['q'], 1);
      const second = publish(ms, ['q'], 2);
      await ms.sync();
      ms.update('q', makeEntry(1, msg.id, { redelivered: true, deliveryCount: 3, expiresAt: 1_700_000_000_123 }));
      const expected = storedAs(makeEntry(1, msg.id, { redelivered: true, deliveryCount: 3, expiresAt: 1_700_000_000_123 }), msg);
      expect(ms.readEntries('q', 0, 1)).to.deep.equal([expected]);
      ms.update('q', makeEntry(9, msg.id, { redelivered: true })); // missing: ignored
      ms.update('nope', makeEntry(1, msg.id, { redelivered: true }));
      await ms.sync();
      expect(ms.readEntries('q', 0, 5)).to.deep.equal([expected, storedAs(makeEntry(2, second.id), second)]);
      expect(ms.countEntries('q').messages).to.equal(2);
      await reopenIfPersistent();
      expect(ms.readEntries('q', 0, 1)).to.deep.equal([expected]);
    });

    it('replaces an entry enqueued again at the same seq', async () => {
      const m1 = publish(ms, ['q'], 1, 'one');
      await ms.sync();
      const m2 = publish(ms, ['q'], 1, 'two');
      expect(ms.countEntries('q')).to.deep.equal({ messages: 1, bytes: 3 });
      expect(ms.readEntries('q', 0, 10)).to.deep.equal([storedAs(makeEntry(1, m2.id), m2)]);
      await ms.sync();
      expect(ms.readMessage('q', { seq: 1, msgId: m1.id })).to.equal(undefined);
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
    });

    it('moves an entry to another queue with a rewritten message under a new id (dead-lettering)', async () => {
      const msg = publish(ms, ['src', 'other'], 4);
      await ms.sync();
      const dead: PersistedMessage = { ...msg, id: ms.nextMessageId(), header: Buffer.from('x-death header') };
      ms.move('src', 4, 'dlq', makeEntry(10, dead.id, { redelivered: true }), dead);
      expect(seqs(ms, 'src')).to.deep.equal([]);
      expect(ms.readEntries('dlq', 0, 10)).to.deep.equal([storedAs(makeEntry(10, dead.id, { redelivered: true }), dead)]);
      expect(ms.readMessage('dlq', { seq: 10, msgId: dead.id })!.header.toString()).to.equal('x-death header');
      expect(ms.readMessage('other', { seq: 4, msgId: msg.id })!.header.toString()).to.equal(`hdr-${msg.id}`); // still held by 'other'
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 2, entries: 2 });
      ms.remove('other', 4);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
      await reopenIfPersistent();
      expect(ms.readMessage('dlq', { seq: 10, msgId: dead.id })!.header.toString()).to.equal('x-death header');
      expect(ms.countEntries('dlq')).to.deep.equal({ messages: 1, bytes: msg.body.length });
    });

    it('moves an unshared message keeping its id and rewriting its header in place', async () => {
      const msg = publish(ms, ['src'], 1);
      await ms.sync();
      const rewritten = { ...msg, header: Buffer.from('new header') };
      ms.move('src', 1, 'dlq', makeEntry(1, msg.id), rewritten);
      expect(ms.readMessage('dlq', { seq: 1, msgId: msg.id })!.header.toString()).to.equal('new header');
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
      await reopenIfPersistent();
      expect(ms.readMessage('dlq', { seq: 1, msgId: msg.id })!.header.toString()).to.equal('new header');
      expect(seqs(ms, 'dlq')).to.deep.equal([1]);
      expect(ms.queues()).to.deep.equal(['dlq']);
    });

    it('refuses to rewrite a shared message in place, but moves it unchanged', async () => {
      const msg = publish(ms, ['a', 'b'], 1);
      expect(() => ms.move('a', 1, 'dlq', makeEntry(1, msg.id), { ...msg, header: Buffer.from('changed') })).to.throw(/shared by 2/);
      ms.move('a', 1, 'dlq', makeEntry(1, msg.id), msg);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 2 });
      expect(ms.queues().sort()).to.deep.equal(['b', 'dlq']);
    });

    it('moves an entry back into its own queue, at a new seq or onto itself', async () => {
      const msg = publish(ms, ['q'], 1);
      ms.move('q', 1, 'q', makeEntry(5, msg.id, { deliveryCount: 1 }), msg); // dead-lettered to itself
      expect(ms.readEntries('q', 0, 10)).to.deep.equal([storedAs(makeEntry(5, msg.id, { deliveryCount: 1 }), msg)]);
      const renewed = { ...msg, id: ms.nextMessageId(), header: Buffer.from('x-death') };
      ms.move('q', 5, 'q', makeEntry(5, renewed.id), renewed);
      expect(ms.readEntries('q', 0, 10)).to.deep.equal([storedAs(makeEntry(5, renewed.id), renewed)]);
      expect(ms.readMessage('q', { seq: 5, msgId: msg.id })).to.equal(undefined);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
      expect(ms.countEntries('q').messages).to.equal(1);
    });

    it('turns a move of a missing entry into an enqueue', async () => {
      const msg = makeMessage(ms.nextMessageId());
      ms.move('nowhere', 3, 'dlq', makeEntry(3, msg.id), msg);
      await ms.sync();
      expect(seqs(ms, 'dlq')).to.deep.equal([3]);
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
    });

    it('deletes a queue, freeing messages no other queue holds', async () => {
      const shared = publish(ms, ['doomed', 'kept'], 1);
      await ms.sync();
      const own = publish(ms, ['doomed'], 2); // one committed, one still in this turn
      ms.deleteQueue('doomed');
      expect(seqs(ms, 'doomed')).to.deep.equal([]);
      expect(ms.countEntries('doomed')).to.deep.equal({ messages: 0, bytes: 0 });
      expect(ms.readMessage('doomed', { seq: 2, msgId: own.id })).to.equal(undefined);
      expect(ms.readMessage('kept', { seq: 1, msgId: shared.id })).to.not.equal(undefined);
      expect(ms.queues()).to.deep.equal(['kept']);
      ms.deleteQueue('never-existed');
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 1, entries: 1 });
      publish(ms, ['doomed'], 1); // a queue declared again starts empty
      expect(seqs(ms, 'doomed')).to.deep.equal([1]);
      await reopenIfPersistent();
      expect(seqs(ms, 'doomed')).to.deep.equal([1]);
      expect(ms.queues().sort()).to.deep.equal(['doomed', 'kept']);
    });

    it('lists only queues that have entries', async () => {
      publish(ms, ['a'], 1);
      publish(ms, ['b'], 1);
      ms.remove('b', 1);
      expect(ms.queues()).to.deep.equal(['a']);
      await ms.sync();
      expect(ms.queues()).to.deep.equal(['a']);
    });

    it('accepts any string as a queue key (vhost NUL name)', async () => {
      const q = '/\u0000my queue ü';
      publish(ms, [q, ''], 1);
      await ms.sync();
      await reopenIfPersistent();
      expect(seqs(ms, q)).to.deep.equal([1]);
      expect(seqs(ms, '')).to.deep.equal([1]);
      expect(ms.queues().sort()).to.deep.equal(['', q]);
    });

    it('rejects bad input before changing anything', async () => {
      const msg = makeMessage(ms.nextMessageId());
      expect(() => ms.enqueue('q', makeEntry(1, msg.id + 1), msg)).to.throw(/msgId/);
      expect(() => ms.enqueue('q', makeEntry(-1, msg.id), msg)).to.throw(RangeError);
      expect(() => ms.enqueue('q', makeEntry(1, msg.id), { ...msg, exchange: 'x'.repeat(256) })).to.throw(RangeError);
      await ms.sync();
      expect(ms.stats()).to.deep.equal({ messages: 0, entries: 0 });
      expect(ms.queues()).to.deep.equal([]);
    });

    it('resolves the sync() of thousands of enqueues in one turn', async () => {
      const promises: Array<Promise<void>> = [];
      for (let i = 0; i < 3000; i++) {
        publish(ms, ['bulk'], i);
        promises.push(ms.sync());
      }
      await Promise.all(promises);
      expect(ms.countEntries('bulk').messages).to.equal(3000);
      expect(seqs(ms, 'bulk', 2998)).to.deep.equal([2998, 2999]);
      expect(ms.stats()).to.deep.equal({ messages: 3000, entries: 3000 });
    });

    it('keeps ids increasing across a reopen', async () => {
      const msg = publish(ms, ['q'], 1);
      await ms.sync();
      await reopenIfPersistent();
      expect(ms.nextMessageId()).to.be.greaterThan(msg.id);
    });

    it('keeps the BCC routing keys of a message, across a reopen, and none for a message without', async () => {
      const bcc = { ...makeMessage(ms.nextMessageId()), bccRoutingKeys: ['q-b', 'ключ', 'x'.repeat(300)] };
      const plain = makeMessage(ms.nextMessageId());
      ms.enqueue('q', makeEntry(1, bcc.id), bcc);
      ms.enqueue('q', makeEntry(2, plain.id), plain);
      await ms.sync();
      await reopenIfPersistent();
      expect(ms.readMessage('q', { seq: 1, msgId: bcc.id })?.bccRoutingKeys).to.deep.equal(bcc.bccRoutingKeys);
      expect(ms.readMessage('q', { seq: 1, msgId: bcc.id })?.body.toString()).to.equal(bcc.body.toString());
      expect(ms.readMessage('q', { seq: 2, msgId: plain.id })?.bccRoutingKeys).to.equal(undefined);
    });

    it('keeps more BCC keys than 16 bits count (a large frame_max lets a header carry them)', async () => {
      const keys = Array.from({ length: 70_000 }, (_, i) => `k${i}`);
      const msg = { ...makeMessage(ms.nextMessageId()), bccRoutingKeys: keys };
      ms.enqueue('q', makeEntry(1, msg.id), msg);
      await ms.sync();
      await reopenIfPersistent();
      expect(ms.readMessage('q', { seq: 1, msgId: msg.id })?.bccRoutingKeys).to.deep.equal(keys);
    });

    describe('metadata', () => {
      const args = (s: string): Buffer => Buffer.from(s);
      const ex = (name: string): ExchangeRecord => ({
        vhost: '/',
        name,
        type: 'topic',
        durable: true,
        autoDelete: false,
        internal: name.startsWith('int'),
        arguments: args(`args-${name}`),
      });
      const q = (name: string): QueueRecord => ({ vhost: '/', name, durable: true, autoDelete: true, arguments: args('') });
      const bind = (rk: string, a = ''): BindingRecord => ({
        vhost: '/',
        source: 'ex1',
        destination: 'q1',
        destinationKind: 'queue',
        routingKey: rk,
        arguments: args(a),
      });
      const byName = <T extends { name: string }>(xs: T[]): T[] => [...xs].sort((a, b) => a.name.localeCompare(b.name));

      it('puts, replaces, deletes and loads exchanges, queues and bindings', async () => {
        const md = store.metadata;
        md.putExchange(ex('ex1'));
        md.putExchange(ex('int-ex'));
        md.putExchange({ ...ex('ex1'), type: 'fanout' }); // replaces
        md.putQueue(q('q1'));
        md.putQueue(q('q2'));
        md.putQueue({ ...q('q2'), vhost: 'other' }); // a different queue
        md.putBinding(bind('a'));
        md.putBinding(bind('a', 'x-match')); // arguments make it another binding
        md.putBinding(bind('b'));
        md.putBinding({ ...bind('a'), destinationKind: 'exchange', destination: 'ex2' });
        md.deleteBinding(bind('b'));
        md.deleteQueue('/', 'q1');
        md.deleteExchange('/', 'missing');
        const check = (): void => {
          const loaded = store.metadata.load();
          expect(byName(loaded.exchanges)).to.deep.equal([{ ...ex('ex1'), type: 'fanout' }, ex('int-ex')]);
          expect(loaded.queues.map((r) => `${r.vhost}|${r.name}`).sort()).to.deep.equal(['/|q2', 'other|q2']);
          expect(loaded.queues.find((r) => r.vhost === 'other')).to.deep.equal({ ...q('q2'), vhost: 'other' });
          const keys = loaded.bindings.map((b) => `${b.destinationKind}:${b.destination}:${b.routingKey}:${b.arguments.toString()}`).sort();
          expect(keys).to.deep.equal(['exchange:ex2:a:', 'queue:q1:a:', 'queue:q1:a:x-match']);
        };
        check(); // before the commit
        await md.sync();
        check();
        await reopenIfPersistent();
        check();
        store.metadata.deleteExchange('/', 'ex1');
        await store.metadata.sync();
        expect(store.metadata.load().exchanges.map((e) => e.name)).to.deep.equal(['int-ex']);
      });

      it("loads a queue's arguments as they were put: the empty table, four other octets, none, a longer table", async () => {
        const md = store.metadata;
        const given: Record<string, Buffer> = {
          empty: Buffer.alloc(4), // an encoded empty field table: most queues (shared when loaded)
          four: Buffer.from([0, 0, 0, 1]),
          none: Buffer.alloc(0),
          long: Buffer.from('\u0000\u0000\u0000\u000cx-max-lengthI'),
        };
        for (const [name, a] of Object.entries(given)) md.putQueue({ ...q(name), arguments: Buffer.from(a) });
        const check = (): void => {
          const loaded = Object.fromEntries(store.metadata.load().queues.map((r) => [r.name, r.arguments.toString('hex')]));
          expect(loaded).to.deep.equal(Object.fromEntries(Object.entries(given).map(([n, a]) => [n, a.toString('hex')])));
        };
        await md.sync();
        check();
        await reopenIfPersistent();
        check();
      });

      it('keeps delayed messages in due order until deleted', async () => {
        const md = store.metadata;
        const m1 = makeMessage(ms.nextMessageId(), 'late');
        const m2 = makeMessage(ms.nextMessageId(), 'early');
        md.putDelayed({ vhost: '/', exchange: 'dx', dueAt: 2000, seq: 1 }, m1);
        md.putDelayed({ vhost: '/', exchange: 'dx', dueAt: 1000, seq: 2 }, m2);
        await md.sync();
        md.putDelayed({ vhost: '/', exchange: 'dy', dueAt: 1500, seq: 3 }, makeMessage(ms.nextMessageId(), 'mid'));
        const bodies = (): string[] => store.metadata.loadDelayed().map((d) => d.message.body.toString());
        expect(bodies()).to.deep.equal(['early', 'mid', 'late']);
        await md.sync();
        await reopenIfPersistent();
        const loaded = store.metadata.loadDelayed();
        expect(loaded.map((d) => d.record)).to.deep.equal([
          { vhost: '/', exchange: 'dx', dueAt: 1000, seq: 2 },
          { vhost: '/', exchange: 'dy', dueAt: 1500, seq: 3 },
          { vhost: '/', exchange: 'dx', dueAt: 2000, seq: 1 },
        ]);
        expect(loaded[0]!.message).to.deep.include({ id: m2.id, exchange: 'amq.direct', routingKey: m2.routingKey });
        expect(loaded[0]!.message.header.toString()).to.equal(m2.header.toString());
        store.metadata.deleteDelayed({ vhost: '/', exchange: 'dx', dueAt: 1000, seq: 2 });
        expect(bodies()).to.deep.equal(['mid', 'late']);
        await store.metadata.sync();
        expect(bodies()).to.deep.equal(['mid', 'late']);
      });

      it('puts, replaces, deletes and loads definitions by kind and key, ordered by kind then key', async () => {
        const md = store.metadata;
        md.putDefinition({ kind: 'user', key: 'bob', value: { tags: ['management'] } });
        md.putDefinition({ kind: 'vhost', key: 'b', value: { description: 'B' } });
        md.putDefinition({ kind: 'vhost', key: '/', value: {} });
        md.putDefinition({ kind: 'permission', key: 'bob\u0000/', value: { configure: '.*', write: '', read: 'ü' } });
        md.putDefinition({ kind: 'user', key: 'alice', value: { tags: [] } });
        md.putDefinition({ kind: 'user', key: 'bob', value: { tags: ['administrator'] } }); // replaces
        md.putDefinition({ kind: 'policy', key: '/\u0000gone', value: null });
        md.deleteDefinition('policy', '/\u0000gone');
        md.deleteDefinition('user', 'missing');
        const check = (): void => {
          expect(store.metadata.loadDefinitions()).to.deep.equal([
            { kind: 'vhost', key: '/', value: {} },
            { kind: 'vhost', key: 'b', value: { description: 'B' } },
            { kind: 'user', key: 'alice', value: { tags: [] } },
            { kind: 'user', key: 'bob', value: { tags: ['administrator'] } },
            { kind: 'permission', key: 'bob\u0000/', value: { configure: '.*', write: '', read: 'ü' } },
          ]);
        };
        check(); // before the commit
        await md.sync();
        check();
        await reopenIfPersistent();
        check();
        store.metadata.deleteDefinition('vhost', 'b');
        await store.metadata.sync();
        expect(store.metadata.loadDefinitions().map((r) => `${r.kind}:${r.key}`)).to.deep.equal(['vhost:/', 'user:alice', 'user:bob', 'permission:bob\u0000/']);
      });

      it('does not share a loaded definition with the store', () => {
        const value = { tags: ['a'] };
        store.metadata.putDefinition({ kind: 'user', key: 'u', value });
        value.tags.push('changed');
        const loaded = store.metadata.loadDefinitions()[0]!;
        (loaded.value as { tags: string[] }).tags.push('again');
        expect(store.metadata.loadDefinitions()[0]!.value).to.deep.equal({ tags: ['a'] });
      });

      it('keeps state spaces apart: put, replace, delete, load in key order, drop a space (deduplication caches, last-value versions)', async () => {
        const md = store.metadata;
        const b = (s: string) => Buffer.from(s, 'latin1');
        const show = (space: string) => store.metadata.loadState(space).map(([k, v]) => `${k.toString('latin1')}=${v.toString('latin1')}`);
        md.putState('dedup\u0000/\u0000x', b('k2'), b('two'));
        md.putState('dedup\u0000/\u0000x', b('k1'), b('one'));
        md.putState('dedup\u0000/\u0000x', b('k2'), b('TWO'));
        // A space whose name is a prefix of another's is still another space.
        md.putState('dedup\u0000/\u0000', b('xk1'), b('other'));
        md.putState('lvq\u0000/\u0000q', b('\u0000\u00ff'), b('binary'));
        const check = (): void => {
          expect(show('dedup\u0000/\u0000x')).to.deep.equal(['k1=one', 'k2=TWO']);
          expect(show('dedup\u0000/\u0000')).to.deep.equal(['xk1=other']);
          expect(show('lvq\u0000/\u0000q')).to.deep.equal(['\u0000\u00ff=binary']);
        };
        check();
        await md.sync();
        check();
        await reopenIfPersistent();
        check();
        store.metadata.deleteState('dedup\u0000/\u0000x', b('k1'));
        store.metadata.deleteStateSpace('lvq\u0000/\u0000q');
        expect(show('dedup\u0000/\u0000x')).to.deep.equal(['k2=TWO']);
        expect(show('lvq\u0000/\u0000q')).to.deep.equal([]);
        await store.metadata.sync();
        await reopenIfPersistent();
        expect(show('dedup\u0000/\u0000x')).to.deep.equal(['k2=TWO']);
        expect(show('dedup\u0000/\u0000')).to.deep.equal(['xk1=other']);
        expect(show('lvq\u0000/\u0000q')).to.deep.equal([]);
        expect(() => store.metadata.putState('s', Buffer.alloc(4000), b('v'))).to.throw(RangeError);
      });
    });
  });
}
