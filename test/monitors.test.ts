import { expect } from 'chai';
import { totalmem } from 'node:os';
import { FakeClock } from '../src/clock.js';
import { DiskMonitor } from '../src/disk-monitor.js';
import { MemoryMonitor } from '../src/memory-monitor.js';
import { captureLog } from './support/capture-log.js';

/** RabbitMQ's resource alarms (rabbit_disk_monitor, vm_memory_monitor), on an injected clock. */
describe('resource monitors', () => {
  describe('MemoryMonitor', () => {
    it('keeps checking after a sample throws EMFILE (the error is logged, the alarm keeps its state)', () => {
      const clock = new FakeClock();
      const { log, entries } = captureLog();
      const changes: boolean[] = [];
      const samples: Array<number | Error> = [0, Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' }), totalmem(), 0];
      const monitor = new MemoryMonitor(clock, log, 0.4, (alarmed) => changes.push(alarmed), () => {
        const s = samples.shift();
        if (s instanceof Error) throw s;
        return s as number;
      });
      monitor.start();
      clock.advance(1000);
      clock.advance(1000); // throws inside the timer: must neither escape nor stop the checks
      expect(entries.some((e) => e.level === 50 && e.msg === 'cannot sample memory use' && String(e['err']).includes('EMFILE'))).to.equal(true);
      expect(monitor.isAlarmed).to.equal(false);
      clock.advance(1000);
      expect(changes).to.deep.equal([true]);
      clock.advance(1000);
      expect(changes).to.deep.equal([true, false]);
      monitor.stop();
      expect(clock.pending).to.equal(0);
    });
  });

  describe('DiskMonitor (disk_free_limit)', () => {
    const LIMIT = 50_000_000;

    function setup(free: () => number) {
      const clock = new FakeClock();
      const { log, entries } = captureLog();
      const checks: boolean[] = [];
      const monitor = new DiskMonitor(clock, log, '/data', LIMIT, (alarmed) => checks.push(alarmed), free);
      return { clock, entries, checks, monitor };
    }

    it('raises the alarm below the limit (not at it) at once on start, and clears it when space returns', () => {
      let free = LIMIT - 1;
      const { clock, checks, monitor, entries } = setup(() => free);
      monitor.start();
      expect(monitor.isAlarmed).to.equal(true);
      expect(checks).to.deep.equal([true]);
      expect(entries.some((e) => e.level === 40 && /insufficient/.test(e.msg))).to.equal(true);
      free = LIMIT;
      // While alarmed it checks every 10 s (rabbit_disk_monitor's max_check_interval).
      clock.advance(9999);
      expect(monitor.isAlarmed).to.equal(true);
      clock.advance(1);
      expect(monitor.isAlarmed).to.equal(false);
      expect(checks).to.deep.equal([true, false]);
      monitor.stop();
      expect(clock.pending).to.equal(0);
    });

    it('checks more often the closer free space is to the limit: 2·(free − limit)/250 MB/s, within 100 ms..10 s', () => {
      let free = LIMIT + 2_000_000_000;
      const { clock, checks, monitor } = setup(() => free);
      monitor.start();
      clock.advance(9999);
      expect(checks).to.have.length(1); // far from the limit: every 10 s
      free = LIMIT + 250_000_000; // next interval: 2 s
      clock.advance(1);
      expect(checks).to.have.length(2);
      clock.advance(1999);
      expect(checks).to.have.length(2);
      free = LIMIT + 1000; // next interval: 8 ms, raised to the 100 ms minimum
      clock.advance(1);
      expect(checks).to.have.length(3);
      clock.advance(99);
      expect(checks).to.have.length(3);
      clock.advance(1);
      expect(checks).to.have.length(4);
      monitor.stop();
    });

    it('keeps its state and retries when free space cannot be read', () => {
      let fail = false;
      const { clock, checks, monitor, entries } = setup(() => {
        if (fail) throw new Error('EIO: i/o error, statfs');
        return 0;
      });
      monitor.start();
      expect(monitor.isAlarmed).to.equal(true);
      fail = true;
      clock.advance(10_000);
      clock.advance(10_000);
      expect(monitor.isAlarmed).to.equal(true);
      expect(entries.filter((e) => e.msg === 'cannot read free disk space')).to.have.length(1);
      fail = false;
      clock.advance(10_000);
      expect(checks).to.deep.equal([true, true]);
      monitor.stop();
    });
  });
});
