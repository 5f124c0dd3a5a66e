import { expect } from 'chai';
import { getHeapStatistics } from 'node:v8';
import { FakeClock } from '../src/clock.js';
import { createLogger } from '../src/log.js';
import {
  availableMemory,
  collectGarbage,
  HEAP_ALARM_FRACTION,
  heapSizeFor,
  MemoryMonitor,
  PAGING_RATIO,
  sampleHeap,
  sampleProcessMemory,
  semiSpaceMiB,
  watermarkBytes,
  type HeapSample,
} from '../src/memory-monitor.js';

const MiB = 1024 * 1024;
const silent = createLogger('silent');

/** RabbitMQ's memory alarm (vm_memory_high_watermark) counting the process and the JS heap (issue 10). */
describe('memory monitor', () => {
  describe('what it measures against', () => {
    it('takes the container limit as the memory available when it is below RAM (cgroup memory.max)', () => {
      expect(availableMemory(8 * 1024 * MiB, 512 * MiB)).to.equal(512 * MiB);
      // No limit: Node 20 reports undefined, 0, or 2^64 for cgroup's "max".
      for (const none of [undefined, 0, 2 ** 64]) expect(availableMemory(8 * 1024 * MiB, none)).to.equal(8 * 1024 * MiB);
      expect(availableMemory()).to.be.greaterThan(0);
    });

    it('reads the watermark as a share of memory (.relative) or in bytes (.absolute)', () => {
      expect(watermarkBytes(0.4, 1000 * MiB)).to.equal(400 * MiB);
      expect(watermarkBytes({ absolute: 123 * MiB }, 1000 * MiB)).to.equal(123 * MiB);
    });

    it('sizes the old space so that the heap alarm goes off at the watermark', () => {
      for (const limit of [100e6, 400 * MiB, 9.6e9]) {
        const oldSpace = heapSizeFor(limit) * MiB;
        expect(oldSpace * HEAP_ALARM_FRACTION).to.be.at.least(limit).and.below(limit + MiB);
      }
    });

    it('counts the heap against the old generation: heap_size_limit less three semi-spaces', () => {
      expect(semiSpaceMiB([])).to.equal(16);
      expect(semiSpaceMiB(['--import', 'tsx', '--max-semi-space-size=64'])).to.equal(64);
      expect(semiSpaceMiB(['--max_semi_space_size=8', '--max-semi-space-size=32'])).to.equal(32);
      const { used, limit } = sampleHeap();
      expect(limit).to.equal(getHeapStatistics().heap_size_limit - 3 * semiSpaceMiB(process.execArgv) * MiB);
      expect(used).to.be.greaterThan(0).and.below(limit);
    });

    it('counts what the broker holds: the heap in use and Buffers, which go when they are collected', async () => {
      // V8 frees the memory of collected ArrayBuffers on a thread of its own, after the
      // collection: what earlier tests left may still be going, so wait until two samples agree.
      const settled = async (): Promise<number> => {
        let last = Number.NaN;
        for (let round = 0; round < 50; round++) {
          collectGarbage();
          await new Promise((resolve) => setImmediate(resolve));
          const now = sampleProcessMemory();
          if (Math.abs(now - last) < MiB) return now;
          last = now;
        }
        return last;
      };
      const before = await settled();
      const held = [Buffer.alloc(32 * MiB, 1)];
      expect(sampleProcessMemory() - before).to.be.at.least(31 * MiB);
      held.length = 0;
      expect((await settled()) - before).to.be.below(4 * MiB);
    });
  });

  describe('alarm and paging', () => {
    function monitor(opts: { collect?: () => void } = {}) {
      const clock = new FakeClock();
      const state = { used: 0, heap: { used: 0, limit: 100 * MiB } as HeapSample, alarms: [] as boolean[], paging: [] as boolean[] };
      const m = new MemoryMonitor(clock, silent, 0.5, (a) => state.alarms.push(a), () => state.used, 1000, {
        ram: 1000 * MiB,
        heap: () => state.heap,
        collectGarbage: opts.collect,
        onPaging: (p) => state.paging.push(p),
      });
      m.start();
      return { clock, state, m };
    }

    it('raises the alarm when the heap nears its limit, however little the process uses of RAM', () => {
      const { clock, state, m } = monitor();
      state.used = 100 * MiB; // far below 500 MiB
      state.heap.used = 70 * MiB + 1; // over 70% of the old generation
      clock.advance(1000);
      expect([m.isAlarmed, state.alarms]).to.deep.equal([true, [true]]);
      state.heap.used = 60 * MiB;
      clock.advance(1000);
      expect([m.isAlarmed, state.alarms]).to.deep.equal([false, [true, false]]);
      m.stop();
    });

    it('pages from half the watermark on (vm_memory_high_watermark_paging_ratio), before the alarm', () => {
      const { clock, state, m } = monitor();
      expect(PAGING_RATIO).to.equal(0.5);
      state.used = 250 * MiB; // the watermark is 500 MiB
      clock.advance(1000);
      expect([m.isPaging, m.isAlarmed]).to.deep.equal([false, false]);
      state.used = 250 * MiB + 1;
      clock.advance(1000);
      expect([m.isPaging, m.isAlarmed, state.paging]).to.deep.equal([true, false, [true]]);
      state.used = 500 * MiB + 1;
      clock.advance(1000);
      expect([m.isPaging, m.isAlarmed, state.alarms]).to.deep.equal([true, true, [true]]);
      state.used = 10 * MiB;
      clock.advance(1000);
      expect([m.isPaging, m.isAlarmed, state.paging, state.alarms]).to.deep.equal([false, false, [true, false], [true, false]]);
      m.stop();
      expect(clock.pending).to.equal(0);
    });

    it('collects garbage before a sample over the limit counts: only live data raises the alarm', () => {
      let collections = 0;
      const live = { process: 200 * MiB, heap: 30 * MiB };
      const { clock, state, m } = monitor({
        collect: () => {
          collections++;
          state.used = live.process;
          state.heap.used = live.heap;
        },
      });
      state.used = 600 * MiB; // over, but most of it garbage
      clock.advance(1000);
      expect([collections, m.isAlarmed, state.alarms]).to.deep.equal([1, false, []]);
      // Below the watermark nothing is collected.
      state.used = 400 * MiB;
      clock.advance(1000);
      expect(collections).to.equal(1);
      // Live data over it: raised after the collection.
      live.process = 600 * MiB;
      state.used = 700 * MiB;
      clock.advance(1000);
      expect([collections, m.isAlarmed]).to.deep.equal([2, true]);
      m.stop();
    });

    it('an absolute watermark ignores how much memory there is', () => {
      const m = new MemoryMonitor(new FakeClock(), silent, { absolute: 300 * MiB }, () => {}, () => 301 * MiB, 1000, {
        ram: 64 * 1024 * MiB,
        heap: () => ({ used: 0, limit: MiB }),
      });
      expect(m.limitBytes).to.equal(300 * MiB);
      m.check();
      expect(m.isAlarmed).to.equal(true);
    });

    it('with inputCheckBytes, checks as soon as that many bytes were read from clients', () => {
      let samples = 0;
      const m = new MemoryMonitor(new FakeClock(), silent, 0.4, () => {}, () => {
        samples++;
        return 0;
      }, 1000, { inputCheckBytes: 1000, heap: () => ({ used: 0, limit: MiB }) });
      m.noteInput(5000);
      expect(samples, 'not before start()').to.equal(0);
      m.start();
      m.noteInput(600);
      m.noteInput(399);
      expect(samples).to.equal(0);
      m.noteInput(1);
      expect(samples).to.equal(1);
      // The count starts again after each check.
      m.noteInput(999);
      expect(samples).to.equal(1);
      m.stop();
    });

    it('with checkAfterGc, checks after a collection V8 ran by itself, between two ticks', async () => {
      let samples = 0;
      let sampled!: () => void;
      const checked = new Promise<void>((resolve) => (sampled = resolve));
      const m = new MemoryMonitor(new FakeClock(), silent, 0.4, () => {}, () => {
        samples++;
        sampled();
        return 0;
      }, 1000, { checkAfterGc: true, heap: () => ({ used: 0, limit: MiB }) });
      m.start();
      // Short-lived garbage that escapes (so the optimiser cannot elide it): the young generation
      // fills up and V8 scavenges. Rounds of it, each followed by a macrotask so the GC observer
      // can report, until the check has run (a busy machine may need more than one round).
      let done = false;
      void checked.then(() => (done = true));
      const keep: Array<{ i: number }> = new Array(1024);
      for (let round = 0; !done && round < 200; round++) {
        for (let i = 0; i < 200_000; i++) keep[i & 1023] = { i };
        await new Promise((resolve) => setImmediate(resolve));
      }
      await checked;
      m.stop();
      expect(samples).to.be.greaterThan(0);
    });
  });
});
