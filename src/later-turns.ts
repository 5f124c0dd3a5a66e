/**
 * Work spread over event-loop turns so that no single turn holds the broker for long: a queue
 * that must dead-letter a large part of itself at once (a lowered max-length, a mass expiry,
 * recovery after downtime, a nack of many delivered messages) does it a chunk per turn
 * (Queue.removeWhile, Queue.removeInTurns); a channel settles an ack of many deliveries, and
 * applies a large tx.commit, a chunk per turn (Channel.ackTag, commitTx); a queue puts many
 * requeued messages back, and writes their redelivered marks, a chunk per turn (Queue.requeue).
 * The broker has one of these; `settle()` (Broker.settle, hence FakeClock.advance in tests)
 * waits until nothing is left, so a test sees all of it.
 */
export class LaterTurns {
  private readonly queued: Array<() => void> = [];
  private scheduled = false;
  private stopped = false;
  private idleWaiters: Array<() => void> = [];

  /** `onError`: what a scheduled function threw (logged by the broker); the others still run. */
  constructor(private readonly onError: (err: unknown) => void) {}

  /** Runs fn in a later turn (after I/O: other connections are served first). */
  schedule(fn: () => void): void {
    if (this.stopped) return;
    this.queued.push(fn);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runTurn);
    }
  }

  /** Nothing queued or running. */
  get idle(): boolean {
    return this.stopped || (this.queued.length === 0 && !this.scheduled);
  }

  /** Resolves once nothing is queued (work scheduled by the work itself included). */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * The broker is closing (before its store closes): what is queued is dropped, and what is
   * scheduled from now on too. What was cut short is as after a crash, minus the loss: a
   * removal leaves its messages in the queue and the store (the next start removes them again:
   * Queue.recovered), an ack leaves the messages it had not settled yet in the store (they come
   * back after a restart), and requeued messages whose redelivered mark was not written yet
   * come back unmarked.
   */
  stop(): void {
    this.stopped = true;
    this.queued.length = 0;
    this.settleIdle();
  }

  /** What was queued before this turn runs now; what it schedules runs in the next turn. */
  private readonly runTurn = (): void => {
    const batch = this.queued.splice(0);
    for (const fn of batch) {
      if (this.stopped) break;
      try {
        fn();
      } catch (err) {
        this.onError(err);
      }
    }
    if (this.queued.length > 0) setImmediate(this.runTurn);
    else {
      this.scheduled = false;
      this.settleIdle();
    }
  };

  private settleIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

/** A list of items handed on a part at a time, over turns: `at` is where its next part starts. */
export interface TakenInParts<T> {
  readonly entries: T[];
  at: number;
}

/**
 * Takes the next parts of `lists`, in order, up to `budget` items in all (Infinity: all that is
 * left), handing each part to `use` with its list; a list taken to its end leaves `lists` first.
 * A list taken whole at once is handed on as itself, not copied. Returns the budget left.
 */
export function takeParts<L extends TakenInParts<unknown>>(lists: L[], budget: number, use: (part: L['entries'], list: L) => void): number {
  while (lists.length > 0 && budget > 0) {
    const list = lists[0]!;
    const { entries, at } = list;
    const end = Math.min(entries.length, at + budget);
    const part = at === 0 && end === entries.length ? entries : entries.slice(at, end);
    budget -= end - at;
    list.at = end;
    if (end === entries.length) lists.shift();
    use(part, list);
  }
  return budget;
}
