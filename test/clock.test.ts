import { expect } from 'chai';
import { startBroker } from '../src/broker.js';
import { FakeClock, SystemClock } from '../src/clock.js';
import { channel, connect } from './support/amqp.js';
import { captureLog } from './support/capture-log.js';

/** DESIGN.md, convention 7: durations run on monotonic time, instants on wall time. */
describe('Clock', () => {
  describe('FakeClock', () => {
    it('moves wall and monotonic time together on advance(), only wall time on stepWall()', () => {
      const clock = new FakeClock(Date.UTC(2026, 0, 1));
      const wall0 = clock.now();
      const mono0 = clock.monotonic();
      clock.advance(1500);
      expect(clock.now() - wall0).to.equal(1500);
      expect(clock.monotonic() - mono0).to.equal(1500);
      clock.stepWall(3_600_000);
      expect(clock.now() - wall0).to.equal(3_601_500);
      expect(clock.monotonic() - mono0).to.equal(1500);
      clock.stepWall(-7_200_000);
      expect(clock.now() - wall0).to.equal(-3_598_500);
      expect(clock.monotonic() - mono0).to.equal(1500);
    });

    it('fires timers on monotonic time: a wall-clock step fires nothing and delays nothing', () => {
      const clock = new FakeClock();
      const fired: string[] = [];
      clock.setTimeout(() => fired.push('a'), 1000);
      clock.setTimeout(() => fired.push('b'), 2000);
      clock.stepWall(3_600_000);
      expect(fired).to.deep.equal([]);
      clock.advance(1000);
      expect(fired).to.deep.equal(['a']);
      clock.stepWall(-3_600_000);
      clock.advance(1000);
      expect(fired).to.deep.equal(['a', 'b']);
    });
  });

  describe('SystemClock', () => {
    it('reads performance.now() as monotonic time and Date.now() as wall time', () => {
      const clock = new SystemClock();
      const mono = clock.monotonic();
      expect(Math.abs(mono - performance.now())).to.be.below(1000);
      expect(Math.abs(clock.now() - Date.now())).to.be.below(1000);
    });

    it('monotonicOncePerTask reads the clock once per task: the same value until the microtasks have run', async () => {
      const clock = new SystemClock();
      const first = clock.monotonicOncePerTask();
      const until = first + 2;
      while (performance.now() <= until) { /* let monotonic time move on */ }
      expect(clock.monotonicOncePerTask()).to.equal(first);
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(clock.monotonicOncePerTask()).to.be.above(until);
    });

    it('chains a wait longer than 2^31-1 ms through timers Node takes as given (Node fires a longer one after 1 ms)', () => {
      const real = globalThis.setTimeout;
      const armed: Array<{ fn: () => void; ms: number }> = [];
      globalThis.setTimeout = ((fn: () => void, ms: number) => {
        armed.push({ fn, ms });
        return { unref() {} } as unknown as NodeJS.Timeout;
      }) as typeof setTimeout;
      let fired = 0;
      try {
        // A 30-day message TTL or a policy's expires.
        new SystemClock().setTimeout(() => fired++, 30 * 24 * 3600 * 1000);
        const max = 2 ** 31 - 1;
        expect(armed.map((t) => t.ms)).to.deep.equal([max]);
        armed[0]!.fn();
        expect(fired).to.equal(0);
        expect(armed.map((t) => t.ms)).to.deep.equal([max, 30 * 24 * 3600 * 1000 - max]);
        armed[1]!.fn();
        expect(fired).to.equal(1);
      } finally {
        globalThis.setTimeout = real;
      }
    });

    it('catches an error thrown by a timer callback, reports it, and runs later timers (an EMFILE must not end the broker)', async () => {
      const reported: unknown[] = [];
      const clock = new SystemClock((err) => reported.push(err));
      const emfile = Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' });
      clock.setTimeout(() => {
        throw emfile;
      }, 0);
      // Were the error not caught, mocha would fail this test with an uncaught exception.
      await new Promise<void>((resolve) => clock.setTimeout(resolve, 1));
      expect(reported).to.deep.equal([emfile]);
    });

    it('in a broker, logs the error with the broker\'s logger and the broker goes on serving', async () => {
      const { log, waitFor } = captureLog('info');
      const running = await startBroker({ port: 0, logger: log });
      try {
        running.broker.clock.setTimeout(() => {
          throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        }, 0);
        const entry = await waitFor('error in a timer callback (the broker goes on)');
        expect(entry.level).to.equal(50);
        expect(JSON.stringify(entry['err'])).to.contain('EMFILE');
        const conn = await connect(running.url);
        await (await channel(conn)).checkExchange('amq.direct');
        await conn.close();
      } finally {
        await running.close();
      }
    });
  });
});
