/**
 * Time is injected (DESIGN.md, convention 7). Two kinds of time, never mixed:
 *
 * - **Monotonic time** (`monotonic()`, and every `setTimeout`) for durations: heartbeats, the
 *   handshake, close and consumer-acknowledgement timeouts, x-expires, alarm polling. It never
 *   jumps, so stepping the system clock (NTP, an operator) neither drops healthy peers nor
 *   keeps dead ones.
 * - **Wall time** (`now()`) only for instants that must mean the same after a restart or to a
 *   client: message TTL deadlines (stored with the entry), delayed-message due times, x-death
 *   and other timestamps. A wall-clock step moves those, as it does in RabbitMQ.
 *
 * Tests use FakeClock, which moves both by hand (`advance`) or only the wall clock
 * (`stepWall`), so nothing waits on the real clock.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Wall time: milliseconds since the Unix epoch. May jump; not for measuring durations. */
  now(): number;
  /** Monotonic milliseconds from an arbitrary origin: for durations only, never jumps. */
  monotonic(): number;
  /**
   * monotonic() read once per task: the first call in an event-loop callback reads the clock,
   * later calls before its microtasks have run get the same value. For stamping many events of
   * one callback (the deliveries of a dispatch, for the consumer acknowledgement timeout) where
   * a callback's duration is below the precision that matters.
   */
  monotonicOncePerTask(): number;
  /** Runs fn once after ms milliseconds of monotonic time. */
  setTimeout(fn: () => void, ms: number): Timer;
}

/**
 * The real clocks: Date.now() and performance.now() (CLOCK_MONOTONIC). Node's timers already
 * run on monotonic time. A timer callback that throws is caught and reported to onError: an
 * error in one periodic check (say EMFILE while sampling memory) must never end the broker.
 */
export class SystemClock implements Clock {
  constructor(private readonly onError: (err: unknown) => void = reportToStderr) {}

  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return performance.now();
  }

  /**
   * The value read in this task, -Infinity once its microtasks have run (performance.now() is
   * > 0). Not -1: a field first given a small integer and later a fraction changes the clock's
   * shape, and every compiled function that reads the clock is thrown away (a broker's first
   * delivery did this mid-run).
   */
  private taskNow = -Infinity;
  private readonly endTask = (): void => {
    this.taskNow = -Infinity;
  };

  monotonicOncePerTask(): number {
    let t = this.taskNow;
    if (t < 0) {
      t = this.taskNow = performance.now();
      queueMicrotask(this.endTask);
    }
    return t;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    // Node fires a timer longer than 2^31-1 ms after 1 ms: a long wait (a TTL of weeks, a
    // policy's expires) is chained through timers of at most that length.
    let handle: NodeJS.Timeout;
    const arm = (left: number) => {
      const step = Math.min(Math.max(0, left), MAX_TIMER_MS);
      handle = setTimeout(() => {
        if (left > MAX_TIMER_MS) {
          arm(left - MAX_TIMER_MS);
          return;
        }
        try {
          fn();
        } catch (err) {
          this.onError(err);
        }
      }, step);
      handle.unref?.();
    };
    arm(ms);
    return { cancel: () => clearTimeout(handle) };
  }
}

/** The longest delay Node's setTimeout takes as given. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function reportToStderr(err: unknown): void {
  process.stderr.write(`warren: error in a timer callback: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
}

interface PendingTimer {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. Timers run on monotonic time and fire in due order
 * during advance(); an exception from a callback propagates to the caller of advance(), so a
 * test sees it. advance() also returns a promise that resolves once every broker on this clock
 * has settled what those timers set going (Broker.settle: frames written to the sockets, store
 * commits done): `await clock.advance(ms)`.
 */
export class FakeClock implements Clock {
  private mono = 0;
  /** Wall time minus monotonic time; stepWall() changes it. */
  private wallOffset: number;
  private seq = 0;
  private timers: PendingTimer[] = [];
  private readonly settlers = new Set<() => Promise<void>>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.wallOffset = start;
  }

  now(): number {
    return this.wallOffset + this.mono;
  }

  monotonic(): number {
    return this.mono;
  }

  /** The fake clock moves only when told to: the same as monotonic(). */
  monotonicOncePerTask(): number {
    return this.mono;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: PendingTimer = { due: this.mono + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /**
   * Lets ms pass (both clocks move), firing every timer that falls due, in order, at its due
   * time, before it returns; the promise it returns resolves once what they set going has
   * settled (onAdvance).
   */
  advance(ms: number): Promise<void> {
    const target = this.mono + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: PendingTimer | undefined;
      for (const t of this.timers) {
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.mono = Math.max(this.mono, next.due);
      next.cancelled = true;
      next.fn();
    }
    this.mono = target;
    return this.settle();
  }

  /**
   * Registers what advance() waits for after firing timers (a broker on this clock registers
   * its settle()); returns the function that takes it off.
   */
  onAdvance(settle: () => Promise<void>): () => void {
    this.settlers.add(settle);
    return () => this.settlers.delete(settle);
  }

  private async settle(): Promise<void> {
    await Promise.all([...this.settlers].map((settle) => settle()));
  }

  /** Steps the wall clock by ms (negative: backwards), as NTP or an operator does; no time passes. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  /** Number of timers still waiting. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
