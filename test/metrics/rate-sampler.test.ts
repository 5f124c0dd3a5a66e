import amqp from 'amqplib';
import { expect } from 'chai';
import { startBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { RateSampler, SAMPLE_CHUNK, SAMPLE_INTERVAL_MS, withDetails } from '../../src/metrics/rate-sampler.js';

/**
 * Rates for the management API's `*_details: {rate}`: the change of a number over the last
 * 5 s sample interval, per second, as RabbitMQ's management database computes them. The
 * clock is a FakeClock: sampling happens when the test moves it.
 */
describe('RateSampler (src/metrics/rate-sampler.ts)', () => {
  it('a number\'s change over the last interval, per second; 0 until two samples exist', () => {
    const clock = new FakeClock();
    const counted = { publish: 0, messages: 10 };
    const key = {};
    const sampler = new RateSampler(clock, () => [[key, { ...counted }]]);
    expect(sampler.rates(key)).to.deep.equal({});
    sampler.start();
    expect(sampler.rates(key)).to.deep.equal({ publish: 0, messages: 0 });
    counted.publish += 25;
    counted.messages -= 5;
    clock.advance(4999);
    expect(sampler.rate(key, 'publish')).to.equal(0);
    clock.advance(1);
    expect(sampler.rates(key)).to.deep.equal({ publish: 5, messages: -1 });
    // Nothing new in the next interval: the rate falls back to 0.
    clock.advance(5000);
    expect(sampler.rates(key)).to.deep.equal({ publish: 0, messages: 0 });
    sampler.stop();
    expect(clock.pending).to.equal(0);
  });

  it('objects that are gone drop out; new ones start at 0', () => {
    const clock = new FakeClock();
    const a = { n: 0 };
    const b = { n: 0 };
    let tracked = [a];
    const sampler = new RateSampler(clock, () => tracked.map((o): [object, { n: number }] => [o, { n: o.n }]));
    sampler.start();
    a.n = 10;
    tracked = [b];
    clock.advance(5000);
    expect(sampler.rates(a)).to.deep.equal({});
    expect(sampler.rates(b)).to.deep.equal({ n: 0 });
    sampler.stop();
  });

  it('takes SAMPLE_CHUNK objects a turn: the rates read meanwhile are those of the last complete sample', () => {
    const clock = new FakeClock();
    const objects = Array.from({ length: 2 * SAMPLE_CHUNK + 10 }, () => ({ n: 0 }));
    const later: Array<() => void> = [];
    const sampler = new RateSampler(clock, () => objects.map((o): [object, { n: number }] => [o, { n: o.n }]), SAMPLE_INTERVAL_MS, (fn) => later.push(fn));
    const runLater = (): number => {
      let turns = 0;
      while (later.length > 0) {
        later.shift()!();
        turns++;
      }
      return turns;
    };
    sampler.start();
    expect(sampler.rates(objects[0]!), 'nothing complete yet').to.deep.equal({});
    expect(runLater()).to.equal(2);
    expect(sampler.rates(objects.at(-1)!)).to.deep.equal({ n: 0 });
    for (const o of objects) o.n += 10;
    clock.advance(SAMPLE_INTERVAL_MS);
    // The second sample is under way: the rates are still those of the first one alone.
    expect(sampler.rates(objects[0]!)).to.deep.equal({ n: 0 });
    clock.advance(1000);
    runLater();
    // Each object's rate over its own interval: the first chunk was taken 1 s before the rest.
    expect(sampler.rates(objects[0]!)).to.deep.equal({ n: 2 });
    expect(sampler.rates(objects.at(-1)!)).to.deep.equal({ n: 10 / 6 });
    sampler.stop();
    expect(clock.pending).to.equal(0);
  });

  it('withDetails writes each number with its k_details: {rate}', () => {
    expect(withDetails({ publish: 10, ack: 2 }, { publish: 1.5 })).to.deep.equal({
      publish: 10, publish_details: { rate: 1.5 }, ack: 2, ack_details: { rate: 0 },
    });
  });
});

describe('broker.metrics.rates: message rates of a running broker on a FakeClock', () => {
  it('publish, deliver and queue depth rates for the overview, the vhost and the queue', async () => {
    const clock = new FakeClock();
    const b = await startBroker({ port: 0, logLevel: 'silent', clock });
    const conn = await amqp.connect(b.url);
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue('r.q');
      const m = b.broker.metrics;
      const vhost = b.broker.vhosts.get('/')!;
      const queue = vhost.queues.get('r.q')!;
      // The first call starts sampling.
      expect(m.rates(m)['publish']).to.equal(0);
      for (let i = 0; i < 10; i++) ch.publish('', 'r.q', Buffer.from(`${i}`));
      await ch.waitForConfirms();
      clock.advance(5000);
      expect(m.rates(m)).to.include({ publish: 2, confirm: 2, messages: 2, messages_ready: 2 });
      expect(m.rates(vhost)).to.include({ publish: 2, messages_ready: 2 });
      expect(m.rates(queue)).to.include({ publish: 2, messages: 2 });
      for (let i = 0; i < 5; i++) {
        const got = await ch.get('r.q', { noAck: true });
        expect(got).not.to.equal(false);
      }
      clock.advance(5000);
      expect(m.rates(queue)).to.include({ publish: 0, get_no_ack: 1, deliver_get: 1, messages: -1 });
      // The vhost's and the overview's totals over its queues, summed in the same pass.
      expect(m.rates(vhost)).to.include({ publish: 0, get_no_ack: 1, deliver_get: 1, messages: -1, messages_ready: -1 });
      expect(m.rates(m)).to.include({ publish: 0, get_no_ack: 1, deliver_get: 1, messages: -1, messages_ready: -1 });
      expect(m.rates(m.churn)).to.include({ queue_declared: 0 });
      const [c] = [...b.broker.connections];
      expect(m.rates(c!)['recv_oct']).to.be.greaterThan(0);
    } finally {
      await conn.close();
      await b.close();
    }
  });
});
