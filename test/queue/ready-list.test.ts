import { expect } from 'chai';
import fc from 'fast-check';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { Message } from '../../src/queue/message.js';
import { PagedReadyList } from '../../src/queue/paged-ready-list.js';
import { QueuedMessage } from '../../src/queue/queued-message.js';
import { PriorityReadyList, ReadyList, ReturnsFirstList, type ReadyStore } from '../../src/queue/ready-list.js';
import { openMemoryStore } from '../../src/store/memory-store.js';

let nextId = 1;
function entry(seq: number, body = String(seq), priority?: number): QueuedMessage {
  const buf = Buffer.from(body);
  const props = priority === undefined ? {} : { priority };
  const msg = new Message(nextId++, '', 'k', encodeContentHeaderPayload(60, buf.length, props), buf, props);
  return new QueuedMessage(seq, msg, 0, false);
}

/** Shifts everything out: the bodies in delivery order. */
function order(list: Pick<ReadyStore, 'shift'>): string[] {
  const out: string[] = [];
  for (let m = list.shift(); m; m = list.shift()) out.push(m.msg.body.toString());
  return out;
}

describe('ready lists', () => {
  // Queue.requeue puts back all of a closing channel's deliveries of a queue with one
  // insertAllSorted: it must leave the list as inserting each one by one does.
  it('insertAllSorted leaves a list as insertSorted of each does, whatever was taken and in whatever order they come back', () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 60 }), fc.array(fc.nat(), { maxLength: 60 }), fc.integer({ min: 0, max: 2 }),
      (size, taken, picks, maxPriority) => {
        const make = () => (maxPriority === 0 ? new ReadyList() : new PriorityReadyList(maxPriority));
        const [one, all] = [make(), make()];
        const es = Array.from({ length: size }, (_, i) => entry(i * 2 + 1, `m${i}`, i % 3));
        for (const e of es) {
          one.push(e);
          all.push(e);
        }
        // Delivered: taken from the head (the same ones from both), some of them come back.
        const out: QueuedMessage[] = [];
        for (let i = 0; i < Math.min(taken, size); i++) {
          out.push(one.shift()!);
          all.shift();
        }
        const back = [...new Set(picks.filter(() => out.length > 0).map((p) => out[p % out.length]!))];
        for (const e of back) one.insertSorted(e);
        all.insertAllSorted(back);
        expect([all.length, all.byteSize]).to.deep.equal([one.length, one.byteSize]);
        expect(order(all)).to.deep.equal(order(one));
      },
    ), { numRuns: 300 });
  });

  it('ReadyList: FIFO, a requeue goes back to its seq position, byteSize follows', () => {
    const l = new ReadyList();
    const es = [1, 2, 3, 4].map((s) => entry(s, `m${s}`));
    for (const e of es) l.push(e);
    const [e1, e2] = [l.shift()!, l.shift()!];
    l.insertSorted(e2);
    l.insertSorted(e1);
    l.push(entry(9, 'm9'));
    expect([l.length, l.byteSize]).to.deep.equal([5, 10]);
    expect(order(l)).to.deep.equal(['m1', 'm2', 'm3', 'm4', 'm9']);
    expect([l.length, l.byteSize, l.peek()]).to.deep.equal([0, 0, undefined]);
  });

  it('PriorityReadyList: highest priority first, FIFO within one, above the maximum counts as it', () => {
    const l = new PriorityReadyList(2);
    l.push(entry(1, 'a0', 0));
    l.push(entry(2, 'b2', 2));
    l.push(entry(3, 'c9', 9));
    l.push(entry(4, 'd1', 1));
    l.push(entry(5, 'e-', undefined));
    expect(order(l)).to.deep.equal(['b2', 'c9', 'd1', 'a0', 'e-']);
  });

  it('ReturnsFirstList: returned messages first, in the order they came back', () => {
    const l = new ReturnsFirstList(new ReadyList());
    for (const s of [1, 2, 3, 4]) l.push(entry(s));
    const [e1, e2] = [l.shift()!, l.shift()!];
    l.insertSorted(e2);
    l.insertSorted(e1);
    expect(order(l)).to.deep.equal(['2', '1', '3', '4']);
  });

  it('takeTail and peekLast: the messages delivered last, in delivery order, for each kind of list', () => {
    const plain = new ReadyList();
    for (const s of [1, 2, 3, 4]) plain.push(entry(s));
    expect([plain.peekLast()?.seq, plain.pop()?.seq]).to.deep.equal([4, 4]);
    expect(plain.takeTail(2).map((e) => e.seq)).to.deep.equal([2, 3]);
    expect([plain.length, plain.byteSize, plain.takeTail(5).length, plain.peekLast(), plain.pop()]).to.deep.equal([1, 1, 1, undefined, undefined]);

    const prio = new PriorityReadyList(2);
    for (const [s, p] of [[1, 2], [2, 0], [3, 1], [4, 0], [5, 2]] as const) prio.push(entry(s, String(s), p));
    // Delivery order is 1 5 3 2 4: the last three are 3 2 4.
    expect(prio.peekLast()?.seq).to.equal(4);
    expect(prio.takeTail(3).map((e) => e.seq)).to.deep.equal([3, 2, 4]);
    expect([prio.length, prio.byteSize, order(prio)]).to.deep.equal([2, 2, ['1', '5']]);

    const returns = new ReturnsFirstList(new ReadyList());
    for (const s of [1, 2, 3]) returns.push(entry(s));
    const e1 = returns.shift() as QueuedMessage;
    returns.insertSorted(e1);
    // The return goes first: the tail is the inner list's.
    expect([returns.peekLast()?.seq, returns.takeTail(5).map((e) => e.seq), returns.peekLast()?.seq]).to.deep.equal([3, [2, 3], 1]);
  });

  describe('PagedReadyList', () => {
    /** A list over a memory store with a window of w; stayInStore is its mayStayInStore. */
    function paged(w: number, stayInStore: (m: QueuedMessage) => boolean) {
      const store = openMemoryStore().messages;
      const list = new PagedReadyList(new ReadyList(), { store, storeKey: 'q', window: w, owner: { mayStayInStore: stayInStore } });
      /** Writes the entry to the store when persisted, as Queue does, then pushes it. */
      const add = (seq: number, persisted: boolean): void => {
        const e = entry(seq);
        e.persisted = persisted;
        if (persisted) {
          const m = e.msg;
          store.enqueue('q', { seq, msgId: m.id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id: m.id, exchange: '', routingKey: 'k', header: m.header, body: m.body });
        }
        list.push(e);
      };
      return { list, add, store };
    }

    it('counts stored and held entries in length and byteSize, and reads them back in seq order', () => {
      const { list, add } = paged(2, (m) => m.persisted);
      for (let s = 1; s <= 7; s++) add(s, s !== 4 && s !== 6);
      // Window 1-2; 3, 5, 7 only in the store; 4 and 6 (not persisted) held behind them.
      expect([list.length, list.inMemory, list.storedOnly, list.byteSize]).to.deep.equal([7, 4, 3, 7]);
      expect(order(list)).to.deep.equal(['1', '2', '3', '4', '5', '6', '7']);
      expect([list.length, list.byteSize, list.storedOnly]).to.deep.equal([0, 0, 0]);
    });

    it('a persisted entry that may not stay in the store is held, and read once', () => {
      let consumerWaiting = false;
      const { list, add } = paged(1, (m) => m.persisted && !consumerWaiting);
      add(1, true);
      add(2, true);
      consumerWaiting = true;
      add(3, true);
      expect([list.inMemory, list.storedOnly]).to.deep.equal([2, 1]);
      expect(order(list)).to.deep.equal(['1', '2', '3']);
    });

    it('grows the window past its size while nothing is stored and entries may not stay there', () => {
      const { list, add } = paged(2, () => false);
      for (let s = 1; s <= 5; s++) add(s, true);
      expect([list.inMemory, list.storedOnly]).to.deep.equal([5, 0]);
    });

    it('peek and shift read the next page when the window is empty; clear forgets everything', () => {
      // A window of 0 keeps nothing in memory until a message is asked for.
      const { list, add } = paged(0, (m) => m.persisted);
      for (let s = 1; s <= 3; s++) add(s, true);
      expect([list.inMemory, list.storedOnly]).to.deep.equal([0, 3]);
      expect([list.peek()?.seq, list.inMemory, list.storedOnly]).to.deep.equal([1, 1, 2]);
      expect(list.shift()?.seq).to.equal(1);
      expect([list.inMemory, list.storedOnly]).to.deep.equal([0, 2]);
      expect(list.shift()?.seq).to.equal(2);
      list.clear();
      expect([list.length, list.inMemory, list.storedOnly, list.peek()]).to.deep.equal([0, 0, 0, undefined]);
    });
  });
});

// Versioned last-value queues (src/queue/keyed-messages.ts): a replacement takes the replaced
// message's place and the lists count its bytes instead.
describe('ready lists: replace (last-value queues)', () => {
  it('ReadyList, PriorityReadyList and ReturnsFirstList keep the place and count the new size', () => {
    const plain = new ReadyList();
    const [a, b] = [entry(1, 'aaaa'), entry(2, 'bb')];
    plain.push(a);
    plain.push(b);
    plain.replace(a, entry(9, 'a').msg);
    expect(plain.byteSize).to.equal(3);
    expect(order(plain)).to.deep.equal(['a', 'bb']);

    const prio = new PriorityReadyList(5);
    const low = entry(1, 'low', 1);
    prio.push(low);
    prio.push(entry(2, 'high', 5));
    // The replacement keeps the replaced message's level, whatever its own priority.
    prio.replace(low, entry(9, 'new low, asked for 5', 5).msg);
    expect(prio.byteSize).to.equal('high'.length + 'new low, asked for 5'.length);
    expect(order(prio)).to.deep.equal(['high', 'new low, asked for 5']);

    const returns = new ReturnsFirstList(new ReadyList());
    const [r1, r2] = [entry(1, 'r1'), entry(2, 'r2')];
    returns.push(r1);
    returns.push(r2);
    returns.insertSorted(returns.shift()!);
    returns.replace(r2, entry(9, 'r2 new').msg);
    returns.replace(r1, entry(10, 'r1 new').msg);
    expect(returns.byteSize).to.equal(12);
    expect(order(returns)).to.deep.equal(['r1 new', 'r2 new']);
  });

  it('PagedReadyList counts the window\'s memory with the new message', () => {
    const { messages } = openMemoryStore();
    const paged = new PagedReadyList(new ReadyList(), { store: messages, storeKey: 'q', window: 10, windowBytes: 1000, owner: { mayStayInStore: () => false } });
    const a = entry(1, 'x'.repeat(100));
    paged.push(a);
    paged.push(entry(2, 'y'));
    paged.replace(a, entry(9, 'z').msg);
    expect(paged.byteSize).to.equal(2);
    expect(paged.bytesInMemory).to.equal(2);
    expect(order(paged)).to.deep.equal(['z', 'y']);
  });
});
