import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { REMOVE_CHUNK } from '../../src/queue/queue.js';
import { channel, confirmChannel, connect, type Channel, type ConsumeMessage, type GetMessage } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * A queue that must dead-letter thousands of messages at once (a lowered max-length, a mass
 * expiry, messages that expired while the broker was down) does it REMOVE_CHUNK messages a turn
 * (Queue.removeWhile), so other clients are served in between: before, a max-length policy on a
 * queue of 300,000 persistent messages with a dead-letter exchange held the event loop for
 * 10.7 s. What a client of the queue observes is as if the removal were done at once: the
 * dead-lettered messages arrive in queue order, nothing is delivered (nor got) that the removal
 * takes, and the survivors come after.
 */
describe('large removals spread over turns', function () {
  this.timeout(60000);
  const N = 3 * REMOVE_CHUNK + 500;
  const LIMIT = 10;
  const bodies = (from: number, to: number): string[] => Array.from({ length: to - from }, (_, i) => `m${from + i}`);

  async function fill(ch: Channel, q: string, n: number, options: Record<string, unknown> = {}): Promise<void> {
    for (let i = 0; i < n; i++) ch.sendToQueue(q, Buffer.from(`m${i}`), options);
    await ch.checkQueue(q); // a round trip on the channel: every publish is in
  }

  async function drain(ch: Channel, q: string): Promise<GetMessage[]> {
    const got: GetMessage[] = [];
    for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true })) got.push(m);
    return got;
  }

  describe('a max-length policy over a deep queue with a dead-letter exchange', () => {
    const broker = useBroker({ heartbeat: 0 });
    const policy = (q: string) => broker.running.broker.policies.put('policy', '/', `cap-${q}`, { pattern: `^${q}$`, definition: { 'max-length': LIMIT, 'dead-letter-exchange': '', 'dead-letter-routing-key': `${q}-dead` } });
    const length = (q: string) => broker.running.inspect.queue(q)!.messages;

    for (const durable of [false, true]) {
      it(`takes a chunk a turn, delivers only the survivors to a consumer that came meanwhile, and dead-letters the rest in order (${durable ? 'durable, persistent: most read back from the store' : 'transient'})`, async () => {
        const conn = await connect(broker.url);
        try {
          const ch = await channel(conn);
          const q = `cap-${durable ? 'd' : 't'}`;
          await ch.assertQueue(q, { durable });
          await ch.assertQueue(`${q}-dead`, { durable });
          await fill(ch, q, N, { persistent: durable });
          expect(length(q)).to.equal(N);

          policy(q);
          // Only the first chunk went in the turn that applied the policy.
          expect(length(q)).to.equal(N - REMOVE_CHUNK);
          // A consumer that arrives while the rest is being removed gets the survivors only.
          const got: ConsumeMessage[] = [];
          let gotAll!: () => void;
          const all = new Promise<void>((resolve) => (gotAll = resolve));
          await ch.consume(q, (m) => {
            got.push(m!);
            if (got.length === LIMIT) gotAll();
          }, { noAck: true });
          await all;
          await broker.running.broker.settle();
          expect(got.map((m) => m.content.toString())).to.deep.equal(bodies(N - LIMIT, N));
          expect(got.every((m) => !m.fields.redelivered)).to.equal(true);

          const dead = await drain(ch, `${q}-dead`);
          expect(dead.map((m) => m.content.toString())).to.deep.equal(bodies(0, N - LIMIT));
          expect(dead[N - LIMIT - 1]!.properties.headers!['x-first-death-reason']).to.equal('maxlen');
          expect(length(q)).to.equal(0);
        } finally {
          await conn.close();
        }
      });
    }

    /**
     * Fills q (durable, with `args` and a dead-letter queue q-dead) with N persistent messages,
     * has them all delivered to a new channel without acks, then runs settle(channel, last
     * delivery) and waits for the broker; returns how many turns LaterTurns was asked for and
     * what q-dead holds.
     */
    async function unackedThen(q: string, args: Record<string, unknown>, settle: (consumer: Channel, last: ConsumeMessage) => Promise<void>): Promise<{ turns: number; dead: string[]; reason: unknown }> {
      const conn = await connect(broker.url);
      const later = broker.running.broker.later;
      const schedule = later.schedule;
      let turns = 0;
      later.schedule = (fn) => {
        turns++;
        schedule.call(later, fn);
      };
      try {
        const ch = await channel(conn);
        await ch.assertQueue(`${q}-dead`, { durable: true });
        await ch.assertQueue(q, { durable: true, arguments: { ...args, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${q}-dead` } });
        await fill(ch, q, N, { persistent: true });
        const consumer = await channel(conn);
        let last!: ConsumeMessage;
        let n = 0;
        let all!: () => void;
        const delivered = new Promise<void>((resolve) => (all = resolve));
        await consumer.consume(q, (m) => {
          last = m!;
          if (++n === N) all();
        });
        await delivered;
        await settle(consumer, last);
        await broker.running.broker.settle();
        expect(length(q)).to.equal(0);
        const dead = await drain(ch, `${q}-dead`);
        return { turns, dead: dead.map((m) => m.content.toString()), reason: dead.at(-1)?.properties.headers?.['x-first-death-reason'] };
      } finally {
        later.schedule = schedule;
        await conn.close();
      }
    }

    it('a nack (multiple, no requeue) of thousands of unacknowledged messages dead-letters them over several turns, in order', async () => {
      const { turns, dead, reason } = await unackedThen('rej', {}, async (consumer, last) => {
        consumer.nack(last, true, false);
        // None is unacknowledged once the nack is read; the dead-lettering goes on after.
        await broker.running.until.queue('rej', (info) => info.unacked === 0);
      });
      expect(turns).to.be.at.least(Math.floor(N / REMOVE_CHUNK));
      expect(dead).to.deep.equal(bodies(0, N));
      expect(reason).to.equal('rejected');
    });

    it('a quorum queue dead-letters thousands of messages returned past x-delivery-limit over several turns, in order', async () => {
      // The channel closes with every message unacknowledged: each returns once, past the limit of 0.
      const { turns, dead, reason } = await unackedThen('poison', { 'x-queue-type': 'quorum', 'x-delivery-limit': 0 }, (consumer) => consumer.close());
      expect(turns).to.be.at.least(Math.floor(N / REMOVE_CHUNK));
      expect(dead).to.deep.equal(bodies(0, N));
      expect(reason).to.equal('delivery_limit');
    });

    /** A transient queue q of N messages capped by the policy (its first chunk removed): then(ch). */
    async function capped(q: string, then: (ch: Channel) => Promise<void>): Promise<void> {
      const conn = await connect(broker.url);
      try {
        const ch = await channel(conn);
        await ch.assertQueue(q, { durable: false });
        await ch.assertQueue(`${q}-dead`, { durable: false });
        await fill(ch, q, N);
        policy(q);
        expect(length(q)).to.equal(N - REMOVE_CHUNK);
        await then(ch);
      } finally {
        await conn.close();
      }
    }

    it('basic.get during the removal finishes it first and gets the first survivor', () =>
      capped('cap-get', async (ch) => {
        const first = await ch.get('cap-get', { noAck: true });
        expect(first && first.content.toString()).to.equal(`m${N - LIMIT}`);
        // get-ok's message-count: what is left after it, the removal done.
        expect(first && first.fields.messageCount).to.equal(LIMIT - 1);
        expect((await drain(ch, 'cap-get-dead')).map((m) => m.content.toString())).to.deep.equal(bodies(0, N - LIMIT));
      }));

    it('a queue deleted during the removal stops it; the messages dead-lettered before stay dead-lettered', () =>
      capped('cap-del', async (ch) => {
        await ch.deleteQueue('cap-del');
        await broker.running.broker.settle();
        const dead = (await drain(ch, 'cap-del-dead')).map((m) => m.content.toString());
        expect(dead.length).to.be.at.least(REMOVE_CHUNK).and.below(N - LIMIT);
        expect(dead).to.deep.equal(bodies(0, dead.length));
      }));
  });

  describe('expiry', () => {
    const clock = new FakeClock(1_700_000_000_000);
    const broker = useBroker({ heartbeat: 0, clock });

    it('a mass expiry dead-letters every message in order; FakeClock.advance resolves once it is all done', async () => {
      const conn = await connect(broker.url);
      try {
        const ch = await channel(conn);
        await ch.assertQueue('ttl-dead', { durable: false });
        await ch.assertQueue('ttl', { durable: false, arguments: { 'x-message-ttl': 1000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'ttl-dead' } });
        await fill(ch, 'ttl', N);
        await clock.advance(1000);
        expect(broker.running.inspect.queue('ttl')!.messages).to.equal(0);
        const dead = await drain(ch, 'ttl-dead');
        expect(dead.map((m) => m.content.toString())).to.deep.equal(bodies(0, N));
        expect(dead[0]!.properties.headers!['x-first-death-reason']).to.equal('expired');
      } finally {
        await conn.close();
      }
    });
  });

  describe('with a data dir', () => {
    const dataDir = useTmpDir('warren-large-removals-');
    const T0 = 1_700_000_000_000;
    const start = (clock: FakeClock): Promise<RunningBroker> => startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path, clock, heartbeat: 0 });

    it('messages that expired while the broker was down are dead-lettered after it listens; a close during the removal loses none', async () => {
      const first = await start(new FakeClock(T0));
      let conn = await connect(first.url);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('dead', { durable: true });
      await ch.assertQueue('src', { durable: true, arguments: { 'x-message-ttl': 60_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'dead' } });
      for (let i = 0; i < N; i++) ch.sendToQueue('src', Buffer.from(`m${i}`), { persistent: true });
      await ch.waitForConfirms();
      await conn.close();
      await first.close();

      // Started after the TTL: the removal starts with the recovery and goes on after listening;
      // this broker is closed in the middle of it.
      const second = await start(new FakeClock(T0 + 120_000));
      const left = second.inspect.queue('src')!.messages;
      expect(left).to.be.above(0).and.below(N);
      await second.close();

      const third = await start(new FakeClock(T0 + 240_000));
      try {
        await third.broker.settle();
        conn = await connect(third.url);
        const ch3 = await channel(conn);
        expect((await ch3.checkQueue('src')).messageCount).to.equal(0);
        const dead = (await drain(ch3, 'dead')).map((m) => m.content.toString());
        // Each message once, in queue order: those dead-lettered before the close, then the rest.
        expect(dead).to.deep.equal(bodies(0, N));
        await conn.close();
      } finally {
        await third.close();
      }
    });
  });
});
