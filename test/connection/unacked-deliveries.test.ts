import { expect } from 'chai';
import fc from 'fast-check';
import { UnackedDeliveries } from '../../src/connection/unacked-deliveries.js';
import type { ChannelQueueCounters } from '../../src/metrics/counters.js';
import type { QueuedMessage } from '../../src/queue/queued-message.js';

/**
 * The channel's unacked deliveries (slots in tag order, holes, compaction) against a Map kept
 * in tag order, which is what the channel used before: lookups, takes and the oldest delivery
 * must agree after any sequence of deliveries (some tags skipped, as no-ack deliveries skip
 * them), acks, multiple acks, takes of everything and restores.
 */
const counters = { queue: { name: 'q' } } as unknown as ChannelQueueCounters;
const entry = (tag: number) => ({ seq: tag }) as unknown as QueuedMessage;

type Op =
  | { op: 'deliver'; skip: number }
  | { op: 'ack'; pick: number; multiple: boolean }
  | { op: 'unknown'; pick: number }
  | { op: 'takeAll' }
  | { op: 'restore' };

describe('UnackedDeliveries', () => {
  it('finds tags after skipped tags and holes, and reports the oldest delivery', () => {
    const u = new UnackedDeliveries();
    for (const tag of [1, 2, 3, 5, 6, 9]) u.add(tag, entry(tag), counters, null, tag * 10);
    expect(u.indexOf(4)).to.equal(-1);
    expect(u.tagAt(u.indexOf(6))).to.equal(6);
    expect(u.tagAt(u.indexOf(9))).to.equal(9);
    expect(u.take(u.indexOf(2), u.indexOf(2)).map((d) => d.tag)).to.deep.equal([2]);
    expect(u.indexOf(2)).to.equal(-1);
    expect(u.take(u.first, u.indexOf(5)).map((d) => d.tag)).to.deep.equal([1, 3, 5]);
    expect(u.oldestAt()).to.equal(60);
    expect([...u.values()].map((d) => d.tag)).to.deep.equal([6, 9]);
    expect(u.takeAll().map((d) => d.tag)).to.deep.equal([6, 9]);
    expect(u.size).to.equal(0);
    expect(u.oldestAt()).to.equal(-1);
  });

  it('keeps at most twice the live deliveries plus the compaction minimum in slots', () => {
    const u = new UnackedDeliveries();
    u.add(1, entry(1), counters, null, 0);
    // One old delivery stays unacked while 100,000 others come and go one by one.
    for (let tag = 2; tag < 100_002; tag++) {
      u.add(tag, entry(tag), counters, null, 0);
      u.take(u.indexOf(tag), u.indexOf(tag));
    }
    expect(u.size).to.equal(1);
    expect(u.last - u.first).to.be.at.most(2 * u.size + 1024);
    expect(u.indexOf(1)).to.be.at.least(0);
  });

  it('agrees with a Map in tag order', () => {
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constant('deliver' as const), skip: fc.nat(3) }) },
      { weight: 4, arbitrary: fc.record({ op: fc.constant('ack' as const), pick: fc.nat(), multiple: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('unknown' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('takeAll' as const) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant('restore' as const) }) },
    );
    fc.assert(fc.property(fc.array(op, { maxLength: 3000 }), (ops) => {
      const u = new UnackedDeliveries();
      const model = new Map<number, number>();
      let next = 1;
      let held: number[] = [];
      for (const o of ops) {
        if (o.op === 'deliver') {
          next += o.skip;
          u.add(next, entry(next), counters, null, next);
          model.set(next, next);
          next++;
        } else if (o.op === 'ack' && model.size > 0) {
          const tags = [...model.keys()];
          const tag = tags[o.pick % tags.length]!;
          const i = u.indexOf(tag);
          expect(i).to.be.at.least(0);
          const taken = u.take(o.multiple ? u.first : i, i).map((d) => d.tag);
          const expected = o.multiple ? tags.filter((t) => t <= tag) : [tag];
          for (const t of expected) model.delete(t);
          expect(taken).to.deep.equal(expected);
          held.push(...taken);
        } else if (o.op === 'unknown') {
          const tag = (o.pick % (next + 2));
          expect(u.indexOf(tag) >= 0).to.equal(model.has(tag));
        } else if (o.op === 'takeAll') {
          expect(u.takeAll().map((d) => d.tag)).to.deep.equal([...model.keys()]);
          model.clear();
        } else if (o.op === 'restore') {
          u.restore(held.map((tag) => ({ tag, queue: counters.queue, entry: entry(tag), consumer: null, at: tag, counters })));
          for (const tag of held) model.set(tag, tag);
          const sorted = [...model.keys()].sort((a, b) => a - b);
          model.clear();
          for (const t of sorted) model.set(t, t);
          held = [];
        }
        expect(u.size).to.equal(model.size);
        expect(u.oldestAt()).to.equal(model.size > 0 ? model.keys().next().value : -1);
        expect(u.last - u.first).to.be.at.most(2 * u.size + 1024);
      }
      expect([...u.values()].map((d) => d.tag)).to.deep.equal([...model.keys()]);
    }), { numRuns: 60 });
  });
});
