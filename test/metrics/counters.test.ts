import { expect } from 'chai';
import { ChannelCounters, DeadLetterCounters, QueueCounters, VHostCounters } from '../../src/metrics/counters.js';
import type { Exchange } from '../../src/vhost/exchange.js';
import type { Queue } from '../../src/queue/queue.js';

const queue = (name: string, quorum = false) => ({ name, deleted: false, isQuorum: quorum, counters: new QueueCounters() }) as unknown as Queue & { deleted: boolean };
const exchange = (name: string) => ({ name, deleted: false }) as unknown as Exchange & { deleted: boolean };

describe('counters (src/metrics/counters.ts)', () => {
  it('a channel keeps one counter per queue and exchange, the last one used at hand', () => {
    const c = new ChannelCounters('<0.1.0>');
    const q = queue('q');
    const first = c.queue(q);
    expect(c.queue(q)).to.equal(first);
    c.queue(queue('other'));
    expect(c.queue(q)).to.equal(first);
    const x = exchange('x');
    expect(c.exchange(x)).to.equal(c.exchange(x));
    expect(c.exchange(x).queue(q)).to.equal(c.exchange(x).queue(q));
  });

  it('counters of deleted queues leave the per-queue map as it grows but stay in the channel totals', () => {
    const c = new ChannelCounters('<0.1.0>');
    const x = exchange('');
    for (let i = 0; i < 64; i++) {
      const q = queue(`rpc-${i}`);
      c.queue(q).get++;
      c.exchange(x).queue(q).published++;
      q.deleted = true;
    }
    // The 65th queue sweeps the 64 deleted ones out.
    const live = queue('live');
    c.queue(live).deliver++;
    c.exchange(x).queue(live).published++;
    expect([...c.queues()].map((d) => d.queue.name)).to.deep.equal(['live']);
    expect([...c.exchange(x).queues()].map(([q, n]) => [q.name, n])).to.deep.equal([['live', 1]]);
    expect(c.deliveryTotals().get).to.equal(64);
    expect(c.deliveryTotals().deliver).to.equal(1);
  });

  it('dead-lettered messages by queue type, strategy and reason', () => {
    const d = new DeadLetterCounters();
    d.count(false, 'at_most_once', 'expired', 2);
    d.count(false, 'disabled', 'expired', 1);
    d.count(true, 'at_most_once', 'delivery_limit', 4);
    d.count(true, 'at_least_once', 'delivery_limit', 3);
    expect([d.get(false, 'at_most_once', 'expired'), d.get(false, 'disabled', 'expired'), d.get(true, 'at_most_once', 'delivery_limit'),
      d.get(true, 'at_least_once', 'delivery_limit'), d.get(true, 'at_most_once', 'expired')]).to.deep.equal([2, 1, 4, 3, 0]);
  });

  it("a deleted queue's counts stay in its vhost, by queue type", () => {
    const v = new VHostCounters();
    const classic = queue('c');
    classic.counters.published = 3;
    classic.counters.ack = 2;
    const quorum = queue('q', true);
    quorum.counters.get = 5;
    v.retire(classic);
    v.retire(quorum);
    expect([v.retiredClassic.published, v.retiredClassic.ack, v.retiredQuorum.get, v.retiredQuorum.published]).to.deep.equal([3, 2, 5, 0]);
  });
});
