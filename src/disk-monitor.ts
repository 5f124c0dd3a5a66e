import { statfsSync } from 'node:fs';
import type { Clock, Timer } from './clock.js';
import type { Logger } from './log.js';

/** Bytes an unprivileged process may still write on the file system holding dir (df's "Available"). */
export type FreeSpace = (dir: string) => number;

export const statfsFreeSpace: FreeSpace = (dir) => {
  const st = statfsSync(dir);
  return st.bavail * st.bsize;
};

/** rabbit_disk_monitor's bounds on the time between two checks, and the write rate it assumes. */
const MIN_INTERVAL_MS = 100;
const MAX_INTERVAL_MS = 10_000;
const FAST_RATE_BYTES_PER_MS = 250_000;

/**
 * RabbitMQ's free disk space alarm (disk_free_limit, 50 MB by default): below the limit
 * publishers are blocked until space returns. Like rabbit_disk_monitor, it checks more often
 * the closer free space is to the limit (every 2·(free − limit) / 250 MB/s, between 100 ms and
 * 10 s) and every 10 s while the alarm is on.
 */
export class DiskMonitor {
  private timer: Timer | undefined;
  private alarmed = false;
  private free: number | undefined;
  private failing = false;
  private running = false;

  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
    readonly dir: string,
    readonly limitBytes: number,
    /** Called after every check with the alarm state (the broker also retries a failed store then). */
    private readonly onCheck: (alarmed: boolean) => void,
    private readonly freeSpace: FreeSpace = statfsFreeSpace,
  ) {}

  /** Checks now (publishers are blocked from the start if space is short), then on a timer. */
  start(): void {
    this.log.info({ limit: this.limitBytes, dir: this.dir }, `disk free limit set to ${Math.trunc(this.limitBytes / 1e6)}MB`);
    this.running = true;
    this.check();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  /** Samples free space now, raises or clears the alarm and reports to onCheck. */
  check(): void {
    this.timer?.cancel();
    this.timer = undefined;
    try {
      this.free = this.freeSpace(this.dir);
      this.failing = false;
    } catch (err) {
      // Keep the last state (RabbitMQ keeps its alarm as it was when df fails) and try again.
      if (!this.failing) this.log.error({ err: (err as Error).message, dir: this.dir }, 'cannot read free disk space');
      this.failing = true;
      this.schedule(MAX_INTERVAL_MS);
      return;
    }
    const over = this.free < this.limitBytes;
    if (over !== this.alarmed) {
      this.alarmed = over;
      const info = { free: this.free, limit: this.limitBytes, dir: this.dir };
      if (over) this.log.warn(info, 'free disk space is insufficient: disk alarm set, blocking publishers');
      else this.log.info(info, 'free disk space is sufficient: disk alarm cleared');
    }
    this.schedule(this.interval());
    this.onCheck(this.alarmed);
  }

  private interval(): number {
    if (this.alarmed || this.free === undefined) return MAX_INTERVAL_MS;
    const ideal = (2 * (this.free - this.limitBytes)) / FAST_RATE_BYTES_PER_MS;
    return Math.trunc(Math.max(MIN_INTERVAL_MS, Math.min(MAX_INTERVAL_MS, ideal)));
  }

  private schedule(ms: number): void {
    if (this.running) this.timer = this.clock.setTimeout(() => this.check(), ms);
  }

  get isAlarmed(): boolean {
    return this.alarmed;
  }

  /** Free bytes at the last check (undefined before the first or while checks fail). */
  get freeBytes(): number | undefined {
    return this.failing ? undefined : this.free;
  }
}
