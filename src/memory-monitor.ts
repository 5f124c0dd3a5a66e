import { totalmem } from 'node:os';
import { constants as perf, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Clock, Timer } from './clock.js';
import type { Logger } from './log.js';

/**
 * RabbitMQ's vm_memory_high_watermark: a fraction of the memory available (`.relative`, 0.4 by
 * default) or a number of bytes (`.absolute`).
 */
export type MemoryWatermark = number | { absolute: number };

/** The JS heap, as the alarm counts it. */
export interface HeapSample {
  /** Bytes of JS objects, garbage not yet collected included (young generation too: its survivors move to the old one). */
  used: number;
  /** The old generation's limit (--max-old-space-size): V8 ends the process with "Reached heap limit" beyond it. */
  limit: number;
}

export interface MemoryMonitorOptions {
  /** Memory available to the process (default: availableMemory()). */
  ram?: number;
  /** Samples the JS heap (default: sampleHeap). */
  heap?: () => HeapSample;
  /**
   * Collects garbage before a sample over a limit counts (default: none). Without it, garbage
   * left behind after consumers drain a queue could hold the alarm up until V8 happens to
   * collect. Forced collections take at most a tenth of the time (see mayCollect()).
   */
  collectGarbage?: () => void;
  /**
   * Also check after each garbage collection V8 runs by itself (default false): the heap can
   * grow by more than its headroom between two timer ticks, but it cannot grow without
   * collections. Only for real time: with an injected clock, checks follow the clock alone.
   */
  checkAfterGc?: boolean;
  /**
   * Also check each time this many bytes have been read from clients (noteInput; default:
   * never). A collection is reported only once the event loop turns, and one turn can read
   * megabytes from a socket (libuv reads until it is empty), which small messages turn into
   * several times as much heap. Only for real time, as checkAfterGc.
   */
  inputCheckBytes?: number;
  /** Called when memory use crosses PAGING_RATIO of the watermark, either way. */
  onPaging?: (paging: boolean) => void;
}

/**
 * The share of the old-generation limit the JS heap may fill before the alarm goes off. V8 ends
 * the process as soon as a full collection cannot bring the live objects under the limit, and
 * a heap close to it spends most of its time collecting; 0.7 leaves 30% for the collector, for
 * the messages in flight when publishers stop being read, and for consumers to keep going.
 */
export const HEAP_ALARM_FRACTION = 0.7;

/**
 * RabbitMQ's vm_memory_high_watermark_paging_ratio: above this share of the watermark, queues
 * start paging transient messages out to disk, so that the alarm, and blocked publishers, come
 * only when paging cannot keep up.
 */
export const PAGING_RATIO = 0.5;

/**
 * RabbitMQ's memory alarm (vm_memory_high_watermark): above the watermark publishers are
 * blocked until memory falls back under it. Two things are counted, and either raises it:
 *
 * - the memory the broker holds (the JS heap and Buffers, see sampleProcessMemory) against the
 *   watermark, a share of RAM or of the container's memory limit, whichever is lower
 *   (availableMemory), as RabbitMQ reads cgroup limits;
 * - the JS heap against HEAP_ALARM_FRACTION of V8's old-generation limit, which is usually far
 *   lower than the watermark unless Node is started with a --max-old-space-size that fits it
 *   (bin/warren.js does: heapSizeFor). Without this, heap growth ended in V8's "FATAL ERROR:
 *   Reached heap limit" with no connection.blocked ever sent.
 *
 * From PAGING_RATIO of either limit on, it reports memory pressure (onPaging) so that queues
 * page transient messages out. Checked on a clock tick and, with checkAfterGc and
 * inputCheckBytes, after garbage collections and every so many bytes read from clients.
 */
export class MemoryMonitor {
  private timer: Timer | undefined;
  private alarmed = false;
  private paging = false;
  private readonly onPaging: ((paging: boolean) => void) | undefined;
  /** The watermark in bytes. */
  readonly limitBytes: number;
  private readonly heap: () => HeapSample;
  private readonly collectGarbage: (() => void) | undefined;
  private readonly checkAfterGc: boolean;
  private gcObserver: PerformanceObserver | undefined;
  private checkQueued = false;
  private readonly inputCheckBytes: number;
  private inputSinceCheck = 0;
  /** When (clock time) the last forced collection ended, and how long it took (real time). */
  private collectedAt = -Infinity;
  private collectMs = 0;

  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
    highWatermark: MemoryWatermark,
    private readonly onChange: (alarmed: boolean) => void,
    private readonly sample: () => number = sampleProcessMemory,
    private readonly intervalMs = 1000,
    options: MemoryMonitorOptions = {},
  ) {
    const ram = options.ram ?? availableMemory();
    this.limitBytes = watermarkBytes(highWatermark, ram);
    this.heap = options.heap ?? sampleHeap;
    this.collectGarbage = options.collectGarbage;
    this.checkAfterGc = options.checkAfterGc ?? false;
    this.inputCheckBytes = options.inputCheckBytes ?? Infinity;
    this.onPaging = options.onPaging;
    const heapLimit = this.heap().limit;
    const mib = (n: number) => Math.round(n / MiB);
    log.info(
      { watermark: this.limitBytes, available: ram, heapLimit },
      `memory high watermark set to ${mib(this.limitBytes)} MiB of ${mib(ram)} MiB available; JS heap alarm at ${mib(heapLimit * HEAP_ALARM_FRACTION)} MiB`,
    );
  }

  start(): void {
    this.timer = this.clock.setTimeout(() => this.check(), this.intervalMs);
    if (this.checkAfterGc && !this.gcObserver) {
      this.gcObserver = new PerformanceObserver((list) => {
        // Collections this monitor forced do not call for another check.
        if (list.getEntries().some((e) => !isForced(e))) this.queueCheck();
      });
      this.gcObserver.observe({ entryTypes: ['gc'] });
    }
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.gcObserver?.disconnect();
    this.gcObserver = undefined;
  }

  /** One check soon, however many collections report before it runs. */
  private queueCheck(): void {
    if (this.checkQueued) return;
    this.checkQueued = true;
    setImmediate(() => {
      this.checkQueued = false;
      if (this.timer) this.measure();
    });
  }

  /**
   * Bytes were read from a client (a socket's data event, before the next read): checks now
   * once inputCheckBytes have come in since the last check, so that an alarm blocks a
   * publisher between two reads rather than after all its data is in.
   */
  noteInput(bytes: number): void {
    if (!this.timer) return;
    this.inputSinceCheck += bytes;
    if (this.inputSinceCheck >= this.inputCheckBytes) this.measure();
  }

  /**
   * Samples memory now and raises or clears the alarm. The next check is scheduled first, and
   * a sample that fails (EMFILE when the process is out of file descriptors) keeps the alarm as
   * it was: an error here must neither stop the checks nor end the broker.
   */
  check(): void {
    // The next check is scheduled first: a failing sample (EMFILE reading /proc) must not stop them.
    if (this.timer) {
      this.timer.cancel();
      this.start();
    }
    try {
      this.measure();
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'cannot sample memory use');
    }
  }

  /** What the last check measured: the broker's memory in the watermark's terms (bytes). */
  usedBytes = 0;

  private measure(): void {
    this.inputSinceCheck = 0;
    let used = this.sample();
    let heap = this.heap();
    if (this.share(used, heap) > 1 && this.mayCollect()) {
      // Count live data only: the garbage would go at the next collection anyway.
      const started = performance.now();
      (this.collectGarbage as () => void)();
      this.collectMs = performance.now() - started;
      this.collectedAt = this.clock.monotonic();
      used = this.sample();
      heap = this.heap();
    }
    this.usedBytes = used;
    const share = this.share(used, heap);
    const paging = share > PAGING_RATIO;
    if (paging !== this.paging) {
      this.paging = paging;
      this.onPaging?.(paging);
    }
    const over = share > 1;
    if (over !== this.alarmed) {
      this.alarmed = over;
      const fields = { used, limit: this.limitBytes, heapUsed: heap.used, heapLimit: heap.limit };
      if (over) this.log.warn(fields, 'memory alarm: blocking publishers');
      else this.log.info(fields, 'memory alarm cleared: unblocking publishers');
      this.onChange(over);
    }
  }

  /** How full memory is: the larger of process memory over the watermark and heap over its alarm share (1 = alarm). */
  private share(used: number, heap: HeapSample): number {
    return Math.max(used / this.limitBytes, heap.used / (heap.limit * HEAP_ALARM_FRACTION));
  }

  /** At most a tenth of the time goes to forced collections (a full one of a large heap takes a while). */
  private mayCollect(): boolean {
    return this.collectGarbage !== undefined && this.clock.monotonic() - this.collectedAt >= 10 * this.collectMs;
  }

  get isAlarmed(): boolean {
    return this.alarmed;
  }

  /** Memory use is above PAGING_RATIO of the watermark (or the alarm is up). */
  get isPaging(): boolean {
    return this.paging;
  }
}

/**
 * The memory the broker may count on: RAM, or the container's limit when lower
 * (process.constrainedMemory(), the cgroup's memory.max), as RabbitMQ reads cgroup limits.
 * Without a limit Node reports undefined, 0 or 2^64.
 */
export function availableMemory(total = totalmem(), constrained = process.constrainedMemory?.()): number {
  return constrained !== undefined && constrained > 0 && constrained < total ? constrained : total;
}

/** The watermark in bytes, out of ram bytes available. */
export function watermarkBytes(watermark: MemoryWatermark, ram: number): number {
  return Math.floor(typeof watermark === 'number' ? ram * watermark : watermark.absolute);
}

const MiB = 1024 * 1024;

/**
 * The --max-old-space-size, in MiB, that lets the JS heap hold as much as the watermark allows:
 * its alarm share (HEAP_ALARM_FRACTION) of the old generation is the watermark, so neither
 * limit cuts in before the other, and the rest is the collector's room.
 */
export function heapSizeFor(limitBytes: number): number {
  return Math.ceil(limitBytes / HEAP_ALARM_FRACTION / MiB);
}

/**
 * The JS heap against the old generation's limit. V8's heap_size_limit adds the young
 * generation (three semi-spaces) to --max-old-space-size, but only the old generation's limit
 * ends the process: with --max-old-space-size=64 --max-semi-space-size=64 the limit says 256
 * MiB and V8 gives up at 70.
 */
export function sampleHeap(): HeapSample {
  const stats = getHeapStatistics();
  return { used: stats.used_heap_size, limit: stats.heap_size_limit - youngGenerationReserve };
}

/**
 * Three semi-spaces of --max-semi-space-size (a Node flag on the command line or in
 * NODE_OPTIONS), 16 MiB each when not set (V8 11 on 64-bit, Node 20). Measured: heap_size_limit
 * is --max-old-space-size + 3 × the semi-space size for every combination tried.
 */
const youngGenerationReserve = 3 * semiSpaceMiB([...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)]) * MiB;

export function semiSpaceMiB(flags: string[]): number {
  let mib = 16;
  for (const f of flags) {
    const m = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(f);
    if (m) mib = Number(m[1]);
  }
  return mib;
}

/**
 * The memory the broker holds: the JS heap in use and V8's external memory, which is where
 * Buffers live (message bodies and headers, socket chunks, store reads) — RabbitMQ's
 * `allocated` memory calculation strategy rather than its `rss` one. The resident set size
 * does not come back under the watermark once messages are consumed or paged out: the C
 * allocator keeps the pages it freed (anonymous RSS stayed at 100 MiB after a backlog of 300k
 * small messages drained, from 44 MiB), so an alarm on it could stay up for good; and it
 * counts mapped files (the node binary, LMDB's map) that are the kernel's cache.
 */
export function sampleProcessMemory(): number {
  const stats = getHeapStatistics();
  return stats.used_heap_size + stats.external_memory;
}

let gc: (() => void) | undefined;

/**
 * A full garbage collection. Node runs without --expose-gc, so the flag is set now and the gc
 * function taken from a fresh context (as Jest does for --logHeapUsage).
 */
export function collectGarbage(): void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
}

/** A collection entry of a forced collection (gc(), as collectGarbage runs it). */
function isForced(entry: PerformanceEntry): boolean {
  const flags = (entry as { detail?: { flags?: number } }).detail?.flags ?? 0;
  return (flags & perf.NODE_PERFORMANCE_GC_FLAGS_FORCED) !== 0;
}
