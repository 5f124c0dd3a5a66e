/**
 * Time is injected (DESIGN.md, convention 7). TTL, expiry, heartbeats, delays and timeouts read
 * a Clock; tests use FakeClock and move time by hand, so nothing waits on the wall clock.
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
  /** Runs fn once after ms milliseconds. */
  setTimeout(fn: () => void, ms: number): Timer;
}

export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimeout(fn: () => void, ms: number): Timer {
    const handle = setTimeout(fn, Math.max(0, ms));
    handle.unref?.();
    return { cancel: () => clearTimeout(handle) };
  }
}

interface PendingTimer {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when told to; timers fire in due order during advance(). */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Timer {
    const timer: PendingTimer = { due: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => { timer.cancelled = true; } };
  }

  /** Moves time forward by ms, firing every timer that falls due, in order, at its due time. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers = this.timers.filter((t) => !t.cancelled);
      let next: PendingTimer | undefined;
      for (const t of this.timers) {
        if (t.due <= target && (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq))) next = t;
      }
      if (!next) break;
      this.current = Math.max(this.current, next.due);
      next.cancelled = true;
      next.fn();
    }
    this.current = target;
  }

  /** Number of timers still waiting. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
