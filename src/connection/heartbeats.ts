/**
 * The heartbeat checks of every connection of a broker on one timer per heartbeat interval,
 * instead of one timer (a Timeout, its closures and a Timer object) per connection: 10,000 idle
 * connections with heartbeats hold 10,000 small entries, not 10,000 timers (issue 19).
 *
 * Timing is that of a timer per connection re-armed on every check: a peer's first check is one
 * interval after it joins, and each check is one interval after the previous one ran. The
 * entries of one interval (a lane) are a list in due order: every entry joins or re-joins at the
 * tail with `now + interval`, which no earlier entry exceeds, so only the head can be due and the
 * lane needs one timer, armed for its head.
 */
import type { Clock, Timer } from '../clock.js';

/** What is checked: a connection. `heartbeatCheck` runs once per interval while scheduled. */
export interface HeartbeatPeer {
  /** One check (the peer may call schedule again from here to be checked one interval later). */
  heartbeatCheck(): void;
}

/** A peer's place in its lane; kept by the peer to leave the schedule. */
export class HeartbeatEntry {
  due = 0;
  next: HeartbeatEntry | undefined = undefined;
  prev: HeartbeatEntry | undefined = undefined;
  /** The lane the entry is in; undefined when it is in none (its check is running, or it left). */
  lane: Lane | undefined = undefined;
  constructor(readonly peer: HeartbeatPeer) {}
}

class Lane {
  head: HeartbeatEntry | undefined = undefined;
  tail: HeartbeatEntry | undefined = undefined;
  timer: Timer | undefined = undefined;
  constructor(readonly intervalMs: number) {}
}

export class Heartbeats {
  private readonly lanes = new Map<number, Lane>();

  constructor(private readonly clock: Clock) {}

  /**
   * Checks the entry's peer in intervalMs (monotonic time), then not again unless scheduled
   * again. An entry already scheduled is moved.
   */
  schedule(entry: HeartbeatEntry, intervalMs: number): void {
    this.cancel(entry);
    let lane = this.lanes.get(intervalMs);
    if (!lane) this.lanes.set(intervalMs, (lane = new Lane(intervalMs)));
    entry.due = this.clock.monotonic() + intervalMs;
    entry.lane = lane;
    entry.prev = lane.tail;
    entry.next = undefined;
    if (lane.tail) lane.tail.next = entry;
    else lane.head = entry;
    lane.tail = entry;
    if (!lane.timer) this.arm(lane, intervalMs);
  }

  /** Takes the entry out of the schedule (nothing when it is not in it). */
  cancel(entry: HeartbeatEntry): void {
    const lane = entry.lane;
    if (!lane) return;
    if (entry.prev) entry.prev.next = entry.next;
    else lane.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else lane.tail = entry.prev;
    entry.prev = entry.next = entry.lane = undefined;
  }

  /** Entries scheduled, over all lanes (for tests and diagnostics). */
  get size(): number {
    let n = 0;
    for (const lane of this.lanes.values()) for (let e = lane.head; e; e = e.next) n++;
    return n;
  }

  private arm(lane: Lane, ms: number): void {
    lane.timer = this.clock.setTimeout(() => this.run(lane), Math.max(0, ms));
  }

  /** The lane's timer: checks every entry that is due, in order, then re-arms for the new head. */
  private run(lane: Lane): void {
    // lane.timer stays set while the checks run: peers re-scheduled from them must not arm another.
    const now = this.clock.monotonic();
    // Entries re-scheduled during their check join the tail with a later due time, so the loop
    // ends at them.
    try {
      let e = lane.head;
      while (e && e.due <= now) {
        this.cancel(e);
        e.peer.heartbeatCheck();
        e = lane.head;
      }
    } finally {
      // A check that threw (the clock reports it) does not stop the others'.
      lane.timer = undefined;
      if (lane.head) this.arm(lane, lane.head.due - now);
      else if (this.lanes.get(lane.intervalMs) === lane) this.lanes.delete(lane.intervalMs);
    }
  }
}
