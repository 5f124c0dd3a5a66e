import type { Clock, Timer } from '../clock.js';

/** Named numbers of one object at one instant (counters or gauges). */
export type Snapshot = Record<string, number>;

/** Where the sampler gets its snapshots: visit(key, snapshot) for every object to track now. */
export type SnapshotSource = (visit: (key: object, snapshot: Snapshot) => void) => void;

interface Sampled {
  at: number;
  values: Snapshot;
}

/** RabbitMQ's management stats interval (collect_statistics_interval): 5 s. */
export const SAMPLE_INTERVAL_MS = 5000;

/**
 * Rates for the management API's `*_details: {rate}`: every interval (5 s, RabbitMQ's
 * collect_statistics_interval) it takes a snapshot of every tracked object's numbers, and the
 * rate of a number is its change between the last two snapshots, per second, as RabbitMQ's
 * management database computes it. An object seen in one snapshot only (new, or sampling just
 * started) has rate 0. Objects that are gone drop out at the next snapshot. Timers run on the
 * injected clock (monotonic time), so tests step it with FakeClock.
 */
export class RateSampler {
  private previous = new Map<object, Sampled>();
  private latest = new Map<object, Sampled>();
  private timer: Timer | undefined;
  private running = false;

  constructor(
    private readonly clock: Clock,
    private readonly source: SnapshotSource,
    private readonly intervalMs = SAMPLE_INTERVAL_MS,
  ) {}

  /** Takes a first snapshot now and one every interval after; idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.sample();
  }

  stop(): void {
    this.running = false;
    this.timer?.cancel();
    this.timer = undefined;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Takes a snapshot of every tracked object now (the timer calls this). */
  sample(): void {
    this.timer?.cancel();
    this.timer = undefined;
    const at = this.clock.monotonic();
    const next = new Map<object, Sampled>();
    this.source((key, values) => next.set(key, { at, values }));
    this.previous = this.latest;
    this.latest = next;
    if (this.running) this.timer = this.clock.setTimeout(() => this.sample(), this.intervalMs);
  }

  /** Change per second of every number of key's snapshots over the last interval (0 when unknown). */
  rates(key: object): Snapshot {
    const b = this.latest.get(key);
    const a = this.previous.get(key);
    const out: Snapshot = {};
    if (!b) return out;
    const seconds = a ? (b.at - a.at) / 1000 : 0;
    for (const name of Object.keys(b.values)) {
      out[name] = a && seconds > 0 ? ((b.values[name]! - (a.values[name] ?? 0)) / seconds) : 0;
    }
    return out;
  }

  /** The rate of one number of key (0 when unknown). */
  rate(key: object, name: string): number {
    const b = this.latest.get(key);
    const a = this.previous.get(key);
    if (!a || !b || b.at === a.at) return 0;
    return ((b.values[name] ?? 0) - (a.values[name] ?? 0)) / ((b.at - a.at) / 1000);
  }
}

/**
 * A stats object in the management API's shape: each number `k` followed by
 * `k_details: {rate}`, the rate taken from rates (0 when missing).
 */
export function withDetails(stats: Snapshot, rates: Snapshot): Record<string, number | { rate: number }> {
  const out: Record<string, number | { rate: number }> = {};
  for (const [k, v] of Object.entries(stats)) {
    out[k] = v;
    out[`${k}_details`] = { rate: rates[k] ?? 0 };
  }
  return out;
}
