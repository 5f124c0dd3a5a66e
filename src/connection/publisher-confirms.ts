import { encodeBasicAck, encodeBasicNack } from '../frame/fast.js';
import { objectArray } from '../object-array.js';

/** Where confirms are counted: a channel's counters for an exchange, the vhost's. */
export interface ConfirmCounter {
  confirmed: number;
}

/** The group commit confirms wait on (the broker's CommitBatcher). */
export interface DurableCommits {
  /** Increments each time a batch is handed to the store. */
  readonly generation: number;
  /** Runs done once everything written so far is on disk (with an error if the commit failed). */
  whenDurable(done: (err?: Error) => void): void;
}

/** Where confirm frames go (the connection's FrameWriter). */
export interface FrameSink {
  write(frame: Buffer): void;
}

/** Confirmed seqs at the head of the waiting lists before they are dropped (see diskCommitted). */
const COMPACT_FROM = 1024;

/**
 * Publisher confirms of one channel in confirm mode: sequence numbers, waiting for the store
 * commit that holds a persistent message, and basic.ack / basic.nack sent in seq order, batched
 * as rabbit_channel batches them.
 */
export class PublisherConfirms {
  private seq = 0;
  /** Seqs waiting for a store commit, in order. */
  private awaitingDisk: number[] = [];
  /** The counter each of them is counted in once confirmed. */
  private awaitingCounters: ConfirmCounter[] = objectArray<ConfirmCounter>();
  private awaitingDiskHead = 0;
  private readyAcks: number[] = [];
  private readyNacks: number[] = [];
  private flushScheduled = false;
  private diskBatch: { generation: number; upTo: number } | null = null;
  private stopped = false;

  constructor(
    private readonly channelId: number,
    private readonly commits: DurableCommits,
    private readonly out: FrameSink,
    /** Counts every confirm (the vhost's counters). */
    private readonly total: ConfirmCounter = { confirmed: 0 },
    /**
     * Asked before the confirms gathered go out: true keeps them until resume is called (the
     * test toolkit's faults.holdConfirms, src/hooks.ts).
     */
    private readonly held: (resume: () => void) => boolean = () => false,
  ) {}

  private readonly resume = (): void => {
    if (!this.flushScheduled) this.flush();
  };

  /** Publishes not yet confirmed: waiting for the store, or for this tick's ack/nack to go out. */
  get unconfirmed(): number {
    return this.awaitingDisk.length - this.awaitingDiskHead + this.readyAcks.length + this.readyNacks.length;
  }

  /**
   * Seqs held for the disk waits, the confirmed ones not yet dropped included: at most twice
   * the unconfirmed ones, or COMPACT_FROM.
   */
  get retainedSeqs(): number {
    return this.awaitingDisk.length;
  }

  /** Assigns the next publish sequence number. */
  next(): number {
    return ++this.seq;
  }

  /**
   * The message with seq is routed and enqueued; durable is true when a store commit holds it.
   * Its basic.ack is counted in counter (and the total) when it is decided.
   */
  confirmWhenSafe(seq: number, durable: boolean, counter: ConfirmCounter = { confirmed: 0 }): void {
    if (!durable) {
      counter.confirmed++;
      this.total.confirmed++;
      this.readyAcks.push(seq);
      this.scheduleFlush();
      return;
    }
    this.awaitingDisk.push(seq);
    this.awaitingCounters.push(counter);
    const commits = this.commits;
    // One callback per channel per commit batch, not one per message.
    if (this.diskBatch && this.diskBatch.generation === commits.generation) {
      this.diskBatch.upTo = seq;
      return;
    }
    const batch = { generation: commits.generation, upTo: seq };
    this.diskBatch = batch;
    commits.whenDurable((err) => this.diskCommitted(batch.upTo, err));
  }

  /** basic.nack to the publisher (reject-publish overflow, store failure). */
  nack(seq: number): void {
    this.readyNacks.push(seq);
    this.scheduleFlush();
  }

  /** The channel is gone: no confirm is sent any more. */
  stop(): void {
    this.stopped = true;
  }

  private diskCommitted(upTo: number, err?: Error): void {
    const out = err ? this.readyNacks : this.readyAcks;
    const waiting = this.awaitingDisk;
    const counters = this.awaitingCounters;
    let head = this.awaitingDiskHead;
    for (; head < waiting.length; head++) {
      const seq = waiting[head]!;
      if (seq > upTo) break;
      out.push(seq);
      if (!err) {
        counters[head]!.confirmed++;
        this.total.confirmed++;
      }
    }
    if (head === waiting.length) {
      // Emptied in place, not replaced (objectArray).
      waiting.length = 0;
      counters.length = 0;
      head = 0;
    } else if (head >= COMPACT_FROM && head * 2 >= waiting.length) {
      // A publisher that never lets every confirm arrive (a window kept full) leaves the lists
      // never empty: the confirmed prefix goes once it is half of them, so they hold at most
      // twice what waits, however long the stream.
      waiting.splice(0, head);
      counters.splice(0, head);
      head = 0;
    }
    this.awaitingDiskHead = head;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    queueMicrotask(() => this.flush());
  }

  /**
   * Sends the confirms gathered this tick in seq order: runs of acks below the oldest
   * still-unconfirmed seq collapse into one basic.ack with multiple=true (rabbit_channel's
   * coalesce_and_send); nacks and later acks go one by one.
   */
  private flush(): void {
    this.flushScheduled = false;
    if (this.stopped || this.held(this.resume)) return;
    const out = this.out;
    const id = this.channelId;
    // The oldest seq still waiting for the disk (none past the end).
    const cutoff = this.awaitingDisk[this.awaitingDiskHead] ?? Infinity;
    const acks = sortedSeqs(this.readyAcks);
    const nacks = sortedSeqs(this.readyNacks);
    this.readyAcks = [];
    this.readyNacks = [];
    let a = 0;
    let n = 0;
    while (a < acks.length || n < nacks.length) {
      // Past the end of either list its next seq is Infinity: the other list goes first.
      const nextNack = nacks[n] ?? Infinity;
      const nextAck = acks[a] ?? Infinity;
      if (nextNack < nextAck) {
        // multiple=false, requeue=true: the field's default in RabbitMQ's basic.nack record, which it sends as is.
        out.write(encodeBasicNack(id, nextNack, false, true));
        n++;
        continue;
      }
      // A run of acks up to the next nack (and below the cutoff) is one multiple ack.
      const limit = Math.min(cutoff, nextNack);
      const start = a;
      while (a < acks.length && acks[a]! < limit) a++;
      if (a > start) {
        out.write(encodeBasicAck(id, acks[a - 1]!, a - start > 1));
      } else {
        out.write(encodeBasicAck(id, nextAck, false));
        a++;
      }
    }
  }
}

function sortedSeqs(seqs: number[]): number[] {
  let previous = -Infinity;
  for (const seq of seqs) {
    if (seq < previous) return seqs.sort((x, y) => x - y);
    previous = seq;
  }
  return seqs;
}
