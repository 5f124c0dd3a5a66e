import { expect } from 'chai';
import type { QueuedMessage } from '../../src/queue/queued-message.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import { F, makeQueue, message } from './harness.js';

/** A small deterministic generator (mulberry32), so a failing seed can be replayed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A deduplication queue's values across deliveries, requeues, rejects, acks and purges, against
 * a model: a value is held while a message with it is in the queue, ready or delivered and not
 * acknowledged. queue.purge forgets what the ready messages held in one step (only the
 * unacknowledged ones keep theirs), rather than releasing each purged message's value: these
 * runs check that the two ways agree, with durable queues whose messages page out to the store.
 */
describe('deduplication values through purges (a model)', () => {
  const VALUES = 6;

  it('accepts a value exactly when no message in the queue, ready or unacknowledged, holds it', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const int = (n: number): number => Math.floor(r() * n);
      const store = openMemoryStore().messages;
      const durable = seed % 2 === 0;
      const h = makeQueue({ name: `d${seed}`, durable, window: 1 + int(4), store, args: { 'x-message-deduplication': F.bool(true) } });
      const ready = new Map<string, number>();
      const unacked = new Map<string, [QueuedMessage, number]>();
      const held = (v: number): boolean => [...ready.values()].includes(v) || [...unacked.values()].some(([, x]) => x === v);
      let uid = 0;
      const publish = (v: number, at: string): void => {
        const body = `${uid++}:${v}`;
        const before = h.queue.messageCount;
        h.queue.enqueue(message(store, body, { deliveryMode: durable ? 2 : 1, headers: { 'x-deduplication-header': F.int32(v) } }));
        const taken = h.queue.messageCount === before + 1;
        expect(taken, `${at}: value ${v} ${held(v) ? 'is held' : 'is free'}`).to.equal(!held(v));
        if (taken) ready.set(body, v);
      };
      for (let step = 0; step < 200; step++) {
        const at = `seed ${seed} step ${step}`;
        const op = int(10);
        if (op < 4) publish(int(VALUES), at);
        else if (op < 6) {
          const e = h.queue.take();
          if (!e) continue;
          h.queue.delivered(e);
          const body = e.msg.body.toString();
          unacked.set(body, [e, ready.get(body)!]);
          ready.delete(body);
        } else if (op === 9) {
          expect(h.queue.purge(), at).to.equal(ready.size);
          ready.clear();
        } else if (unacked.size > 0) {
          const [body, [e, v]] = [...unacked][int(unacked.size)]!;
          unacked.delete(body);
          if (op === 6) h.queue.ack(e);
          else if (op === 7) h.queue.discard([e]);
          else {
            h.queue.requeue([e]);
            ready.set(body, v);
          }
        }
      }
      // Everything acknowledged and purged: every value is free again, once.
      for (const [e] of unacked.values()) h.queue.ack(e);
      unacked.clear();
      h.queue.purge();
      ready.clear();
      for (let v = 0; v < VALUES; v++) publish(v, `seed ${seed} end`);
      for (let v = 0; v < VALUES; v++) publish(v, `seed ${seed} end, again`);
    }
  });
});
