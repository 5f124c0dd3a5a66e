/**
 * A classic queue's consumer capacity (the management API's consumer_capacity and
 * consumer_utilisation, rabbitmq_queue_consumer_capacity): the fraction of time the queue could
 * hand a message to a consumer at once, as RabbitMQ 3.10 measures it (rabbit_queue_consumers:
 * update_use/2, capacity/1, use_avg/3). The queue is inactive from a delivery attempt that found
 * messages ready and no consumer able to take one (all at their prefetch, or none), active again
 * from a consumer added or one that took a message; capacity is a moving average of the active
 * share of time, with a half-life of one second, starting at 1.0.
 *
 * Time is the queue's injected monotonic clock (ms, read once per task), read only when the
 * state changes or capacity is asked for: a busy queue pays a boolean test per delivery attempt.
 */

/** rabbit_queue_consumers' USE_AVG_HALF_LIFE: one second. */
const HALF_LIFE_MS = 1000;

export class ConsumerUse {
  private active = true;
  /** When the current active or inactive period began. */
  private since: number;
  /** While inactive: how long the active period before it lasted. */
  private activeFor = 0;
  private avg = 1.0;

  constructor(private readonly now: () => number) {
    this.since = now();
  }

  /** A consumer was added, or one took a message. */
  activate(): void {
    if (this.active) return;
    const now = this.now();
    this.avg = useAvg(this.activeFor, now - this.since, this.avg);
    this.active = true;
    this.since = now;
  }

  /** A delivery attempt found messages ready and no consumer able to take one. */
  deactivate(): void {
    if (!this.active) return;
    const now = this.now();
    this.activeFor = now - this.since;
    this.active = false;
    this.since = now;
  }

  /** Between 0 and 1 (rabbit_queue_consumers:capacity/1). */
  get capacity(): number {
    const elapsed = this.now() - this.since;
    return this.active ? useAvg(elapsed, 0, this.avg) : useAvg(this.activeFor, elapsed, this.avg);
  }
}

/** rabbit_queue_consumers:use_avg/3 over rabbit_misc:moving_average/4. */
function useAvg(active: number, inactive: number, avg: number): number {
  const time = active + inactive;
  if (time <= 0) return avg;
  const weight = Math.exp((time * Math.log(0.5)) / HALF_LIFE_MS);
  return (active / time) * (1 - weight) + avg * weight;
}
