import { totalmem } from 'node:os';
import type { Clock, Timer } from './clock.js';
import type { Logger } from './log.js';

/**
 * RabbitMQ's memory alarm (vm_memory_high_watermark, default 0.4 of RAM): above the watermark
 * publishers are blocked until memory falls back under it. Checked on a clock tick.
 */
export class MemoryMonitor {
  private timer: Timer | undefined;
  private alarmed = false;
  readonly limitBytes: number;

  constructor(
    private readonly clock: Clock,
    private readonly log: Logger,
    highWatermark: number,
    private readonly onChange: (alarmed: boolean) => void,
    private readonly sample: () => number = () => process.memoryUsage.rss(),
    private readonly intervalMs = 1000,
  ) {
    this.limitBytes = Math.floor(totalmem() * highWatermark);
  }

  start(): void {
    this.timer = this.clock.setTimeout(() => this.check(), this.intervalMs);
  }

  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * Samples memory now and raises or clears the alarm. The next check is scheduled first, and
   * a sample that fails (EMFILE when the process is out of file descriptors) keeps the alarm as
   * it was: an error here must neither stop the checks nor end the broker.
   */
  check(): void {
    if (this.timer) {
      this.timer.cancel();
      this.start();
    }
    let used: number;
    try {
      used = this.sample();
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'cannot sample memory use');
      return;
    }
    const over = used > this.limitBytes;
    if (over !== this.alarmed) {
      this.alarmed = over;
      if (over) this.log.warn({ used, limit: this.limitBytes }, 'memory alarm: blocking publishers');
      else this.log.info({ used, limit: this.limitBytes }, 'memory alarm cleared: unblocking publishers');
      this.onChange(over);
    }
  }

  get isAlarmed(): boolean {
    return this.alarmed;
  }
}
