import { expect } from 'chai';
import { Consumer, type ConsumerHost } from '../../src/queue/consumer.js';
import { ConsumerList } from '../../src/queue/consumer-list.js';
import type { Queue } from '../../src/queue/queue.js';

/** A host whose consumers can take a message unless marked full. */
class Host implements ConsumerHost {
  readonly full = new Set<Consumer>();
  canDeliver(c: Consumer): boolean {
    return !this.full.has(c);
  }
  deliver(): void {}
  cancelledByServer(): void {}
}

const host = new Host();
const consumer = (tag: string, priority = 0, exclusive = false): Consumer =>
  new Consumer(tag, host, undefined as unknown as Queue, { noAck: false, exclusive, prefetch: 0, priority });

/** The tags of n picks in a row. */
const picks = (list: ConsumerList, n: number): Array<string | undefined> => Array.from({ length: n }, () => list.pick()?.tag);

describe('ConsumerList', () => {
  afterEach(() => host.full.clear());

  it('round-robins among consumers that can take a message, skipping full ones', () => {
    const list = new ConsumerList(false);
    const [a, b, c] = [consumer('a'), consumer('b'), consumer('c')];
    for (const x of [a, b, c]) list.add(x);
    expect(picks(list, 4)).to.deep.equal(['a', 'b', 'c', 'a']);
    host.full.add(c);
    expect(picks(list, 3)).to.deep.equal(['b', 'a', 'b']);
    host.full.add(a).add(b);
    expect(list.pick()).to.equal(undefined);
  });

  it('resumes the rotation after the consumer served last when an earlier one leaves', () => {
    const list = new ConsumerList(false);
    const [a, b, c, d] = [consumer('a'), consumer('b'), consumer('c'), consumer('d')];
    for (const x of [a, b, c, d]) list.add(x);
    expect(picks(list, 2)).to.deep.equal(['a', 'b']);
    expect(list.remove(a)).to.equal(true);
    expect(list.remove(a)).to.equal(false);
    expect(picks(list, 3)).to.deep.equal(['c', 'd', 'b']);
  });

  it('serves the highest priority that can take a message, round-robin within it', () => {
    const list = new ConsumerList(false);
    const [lo, hi1, hi2] = [consumer('lo', -1), consumer('hi1', 5), consumer('hi2', 5)];
    for (const x of [lo, hi1, hi2]) list.add(x);
    expect(picks(list, 3)).to.deep.equal(['hi1', 'hi2', 'hi1']);
    host.full.add(hi1).add(hi2);
    expect(picks(list, 2)).to.deep.equal(['lo', 'lo']);
  });

  it('under single active consumer only the longest-registered one is picked, whatever its priority', () => {
    const list = new ConsumerList(true);
    const [a, b] = [consumer('a', 0), consumer('b', 10)];
    list.add(a);
    list.add(b);
    expect([list.active?.tag, ...picks(list, 2)]).to.deep.equal(['a', 'a', 'a']);
    host.full.add(a);
    expect(list.pick()).to.equal(undefined);
    list.remove(a);
    expect([list.active?.tag, list.pick()?.tag]).to.deep.equal(['b', 'b']);
    expect(new ConsumerList(false).active).to.equal(undefined);
  });

  it('reports exclusive consumers and hands every consumer back on clear', () => {
    const list = new ConsumerList(false);
    list.add(consumer('a'));
    expect(list.hasExclusive()).to.equal(false);
    list.add(consumer('x', 0, true));
    expect(list.hasExclusive()).to.equal(true);
    expect(list.clear().map((c) => c.tag)).to.deep.equal(['a', 'x']);
    expect([list.length, list.all.length, list.pick()]).to.deep.equal([0, 0, undefined]);
  });
});
