import type { Clock, Timer } from '../clock.js';

/** Named numbers of one object at one instant (counters or gauges). */
export type Snapshot = Record<string, number>;

/** Where the sampler gets its snapshots: every object to track now, with its numbers (made as the sampler asks). */
export type SnapshotSource = () => Iterable<[object, Snapshot]>;

interface Sampled {
  at: number;
  values: Snapshot;
}

/** RabbitMQ's management stats interval (collect_statistics_interval): 5 s. */
export const SAMPLE_INTERVAL_MS = 5000;

/** Objects a sample takes in one turn; more go on in later turns (about 10 ms of queues). */
export const SAMPLE_CHUNK = 2000;

/**
 * Rates for the management API's `*_details: {rate}`: every interval (5 s, RabbitMQ's
 * collect_statistics_interval) it takes a snapshot of every tracked object's numbers, and the
 * rate of a number is its change between the last two snapshots, per second, as RabbitMQ's
 * management database computes it. An object seen in one snapshot only (new, or sampling just
 * started) has rate 0. Objects that are gone drop out at the next snapshot. Timers run on the
 * injected clock (monotonic time), so tests step it with FakeClock.
 *
 * A sample takes SAMPLE_CHUNK objects a turn and goes on in later turns (`schedule`), each
 * object with the time it was taken: with 100,000 queues a sample held the event loop for 0.7 s
 * every 5 s once the management API had been asked for anything. The rates read meanwhile are
 * those of the last two complete samples.
 */
export class RateSampler {
  private previous = new Map<object, Sampled>();
  private latest = new Map<object, Sampled>();
  /** A sample under way: what is left to take, and what it took so far. */
  private taking: { left: Iterator<[object, Snapshot]>; taken: Map<object, Sampled> } | undefined;
  private timer: Timer | undefined;
  private running = false;

  constructor(
    private readonly clock: Clock,
    private readonly source: SnapshotSource,
    private readonly intervalMs = SAMPLE_INTERVAL_MS,
    /** Runs the rest of a sample in a later turn (the broker's LaterTurns, which settle() waits for). */
    private readonly schedule: (fn: () => void) => void = setImmediate,
  ) {}

  /** Takes a first snapshot now and one every interval after; idempotent. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.sample();
  }

  stop(): void {
    this.running = false;
    this.taking = undefined;
    this.timer?.cancel();
    this.timer = undefined;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /** Starts a snapshot of every tracked object now (the timer calls this): its first chunk now, the rest in later turns. */
  sample(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.taking = { left: this.source()[Symbol.iterator](), taken: new Map() };
    this.goOn();
  }

  /** The next chunk of the sample under way; once it is complete, it is the latest. */
  private readonly goOn = (): void => {
    const taking = this.taking;
    if (taking === undefined) return; // stopped, or a newer sample began
    const at = this.clock.monotonic();
    for (let n = 0; n < SAMPLE_CHUNK; n++) {
      const next = taking.left.next();
      if (next.done === true) {
        this.taking = undefined;
        this.previous = this.latest;
        this.latest = taking.taken;
        if (this.running) this.timer = this.clock.setTimeout(() => this.sample(), this.intervalMs);
        return;
      }
      taking.taken.set(next.value[0], { at, values: next.value[1] });
    }
    this.schedule(() => {
      if (this.taking === taking) this.goOn();
    });
  };

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
