/**
 * Read coalescing: input that streams in a few octets at a time is read in fewer, larger reads.
 *
 * A client that writes each message as it makes it (amqplib sends one TCP segment per publish)
 * and waits for nothing in return is read a handful of messages at a time: each read costs a
 * poll, a read syscall, the ACK the kernel sends back from inside that syscall (on loopback it
 * also runs the client socket's ACK processing) and Node's buffer for it. In amqplib's 16-octet
 * publish scenario the poll, the read and the ACK alone were about a quarter of the broker's CPU,
 * 5 messages a read (BENCHMARKS.md, tenth session). Network cards face the same trade with interrupts
 * and moderate them: wait a few tens of microseconds, then take everything that arrived.
 *
 * Here the whole event loop waits, once its output is out. After a connection handled a read,
 * a nap is due when that read
 * - was small (under SMALL_READ octets: a larger one is already a batch, and a loop that falls
 *   behind reads full buffers and never naps),
 * - came less than two naps' time after the connection's previous read (the client streams), and
 * - followed a read after which the connection sent nothing (the client waits for nothing from
 *   the broker: a request/reply client, a publisher awaiting confirms and a consumer being
 *   delivered to are never napped for, so none of them waits on a nap).
 * The nap runs from setImmediate: after the flushes of output that the turn's reads have
 * queued so far (FrameWriter schedules its flush the same way, earlier), so what a read produced
 * leaves before the loop sleeps. The loop then sleeps `micros` (Atomics.wait: no CPU, no
 * timers) and the next poll finds the input that arrived meanwhile, read in one go. At most one
 * nap is pending at a time, whatever the number of connections streaming. The cost is at most
 * `micros` of latency on input that arrives during a nap; input that arrives sparsely (a
 * connection's reads further apart than two naps) never waits.
 *
 * One per broker (config.readCoalescingMicros; 0 = none). An embedded broker (startBroker) has
 * none unless asked: it shares its event loop with the code that embeds it, which a nap would
 * stop too, and with its clients, so nothing would arrive meanwhile. For the same reason the
 * connections of the direct listener (shovels, which run on the broker's own loop) never ask.
 */

import { nap } from '../nap.js';

/** A read of at least this many octets is not napped after. */
export const SMALL_READ = 16 * 1024;

/** What a connection keeps for read coalescing: when it last read, and how much it had sent then. */
export interface ReadPace {
  /** performance.now() of its last read (-Infinity before the first). */
  lastReadAt: number;
  /** Its writer's bytesWritten when it last read (-1 before the first). */
  writtenAtLastRead: number;
}

export class ReadCoalescing {
  /** Naps taken so far (bench/publish-profile.ts prints them per read). */
  naps = 0;
  private readonly napMs: number;
  /** Reads closer together than this are a stream. */
  private readonly streamGapMs: number;
  private pending = false;
  private readonly nap = (): void => {
    this.pending = false;
    this.naps++;
    this.sleep(this.napMs);
  };

  constructor(
    /** How long a nap is, in microseconds (> 0). */
    readonly micros: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => void = nap,
    private readonly schedule: (fn: () => void) => void = (fn) => void setImmediate(fn),
  ) {
    this.napMs = micros / 1000;
    this.streamGapMs = (2 * micros) / 1000;
  }

  /**
   * A connection handled a read of `bytes` octets and has now written `written` octets in all
   * (FrameWriter.bytesWritten): schedules a nap when one is due, and notes the read in `pace`.
   */
  afterRead(pace: ReadPace, bytes: number, written: number): void {
    const now = this.now();
    if (!this.pending && bytes < SMALL_READ && written === pace.writtenAtLastRead && now - pace.lastReadAt < this.streamGapMs) {
      this.pending = true;
      this.schedule(this.nap);
    }
    pace.lastReadAt = now;
    pace.writtenAtLastRead = written;
  }
}
