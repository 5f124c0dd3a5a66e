import type { ChannelQueueCounters } from '../metrics/counters.js';
import type { Consumer } from '../queue/consumer.js';
import type { Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import { lowerBound } from '../sorted.js';

/** A message delivered on a channel and not yet acknowledged (made on demand: see UnackedDeliveries). */
export interface Delivery {
  tag: number;
  queue: Queue;
  entry: QueuedMessage;
  /** null for basic.get deliveries. */
  consumer: Consumer | null;
  /** When it was delivered (monotonic clock ms), for the consumer delivery-acknowledgement timeout. */
  at: number;
  /** The channel's counters for the queue, where the ack is counted. */
  counters: ChannelQueueCounters;
}

/** Dead slots (acknowledged, below or among the live ones) kept before they are compacted away. */
const COMPACT_MIN = 1024;

/**
 * A channel's unacknowledged deliveries in delivery-tag order, as parallel arrays of slots: no
 * object and no Map entry per delivery. Tags only grow (a channel numbers its deliveries one by
 * one), so a new delivery is appended, and a tag is found at `head + (tag - tags[head])` while
 * no tag was skipped (no-ack deliveries and direct reply-to take tags that are not tracked
 * here), by binary search otherwise. An acknowledged slot becomes a hole (its entry undefined);
 * holes at the front are passed over, and the arrays are compacted once the dead slots outnumber
 * the live ones (and COMPACT_MIN), so they hold at most twice the live deliveries plus
 * COMPACT_MIN slots.
 *
 * Slot indices (`indexOf`, `first`, `end`) are valid until the next `removed()` or `add()`.
 */
export class UnackedDeliveries {
  private readonly tags: number[] = [];
  private readonly entries: Array<QueuedMessage | undefined> = [];
  private readonly counters: Array<ChannelQueueCounters | undefined> = [];
  private readonly consumers: Array<Consumer | null> = [];
  private readonly times: number[] = [];
  /** Slots [head, end) are in use (live or holes); the arrays may be longer (kept capacity). */
  private head = 0;
  private end = 0;
  /** Live deliveries. */
  size = 0;

  /** Appends a delivery; tag is higher than every tag added before. */
  add(tag: number, entry: QueuedMessage, counters: ChannelQueueCounters, consumer: Consumer | null, at: number): void {
    const i = this.end++;
    this.tags[i] = tag;
    this.entries[i] = entry;
    this.counters[i] = counters;
    this.consumers[i] = consumer;
    this.times[i] = at;
    this.size++;
  }

  /** The first slot in use (live: holes at the front are passed over). */
  get first(): number {
    return this.head;
  }

  /** One past the last slot in use. */
  get last(): number {
    return this.end;
  }

  /** The slot of a live delivery with this tag, or -1. */
  indexOf(tag: number): number {
    const h = this.head;
    const n = this.end;
    if (h >= n) return -1;
    const tags = this.tags;
    const i = h + (tag - tags[h]!);
    let found = -1;
    if (i >= h && i < n && tags[i] === tag) found = i;
    else {
      const at = lowerBound(tags, tag, h, n);
      if (at < n && tags[at] === tag) found = at;
    }
    return found >= 0 && this.entries[found] !== undefined ? found : -1;
  }

  /** The slot's entry; undefined for a hole. */
  entryAt(i: number): QueuedMessage | undefined {
    return this.entries[i];
  }

  counterAt(i: number): ChannelQueueCounters {
    return this.counters[i]!;
  }

  consumerAt(i: number): Consumer | null {
    return this.consumers[i]!;
  }

  tagAt(i: number): number {
    return this.tags[i]!;
  }

  /** When the oldest live delivery was made, or -1 when there is none. */
  oldestAt(): number {
    return this.head < this.end ? this.times[this.head]! : -1;
  }

  /** Makes slot i (live) a hole; call removed() after the last one of a batch. */
  clear(i: number): void {
    this.entries[i] = undefined;
    this.counters[i] = undefined;
    this.consumers[i] = null;
    this.size--;
  }

  /** After clear(): passes over the holes at the front, and compacts when the dead slots dominate. */
  removed(): void {
    const entries = this.entries;
    let h = this.head;
    const n = this.end;
    while (h < n && entries[h] === undefined) h++;
    if (h === n) {
      this.head = this.end = 0;
      return;
    }
    this.head = h;
    const dead = n - this.size;
    if (dead >= COMPACT_MIN && dead > this.size) this.compact();
  }

  /** Moves the live slots to the front, in order. */
  private compact(): void {
    const { tags, entries, counters, consumers, times } = this;
    let w = 0;
    for (let r = this.head; r < this.end; r++) {
      const entry = entries[r];
      if (entry === undefined) continue;
      if (r !== w) {
        tags[w] = tags[r]!;
        entries[w] = entry;
        counters[w] = counters[r];
        consumers[w] = consumers[r]!;
        times[w] = times[r]!;
        entries[r] = undefined;
        counters[r] = undefined;
        consumers[r] = null;
      }
      w++;
    }
    this.head = 0;
    this.end = w;
  }

  /** The live delivery in slot i as an object (for the paths that are not per message). */
  at(i: number): Delivery {
    const counters = this.counters[i]!;
    return { tag: this.tags[i]!, queue: counters.queue, entry: this.entries[i]!, consumer: this.consumers[i]!, at: this.times[i]!, counters };
  }

  /** Removes and returns the live deliveries in slots [from, to], in tag order. */
  take(from: number, to: number): Delivery[] {
    const taken: Delivery[] = [];
    for (let i = from; i <= to; i++) {
      if (this.entries[i] === undefined) continue;
      taken.push(this.at(i));
      this.clear(i);
    }
    this.removed();
    return taken;
  }

  /**
   * Removes the live deliveries in slots [from, to] and returns their entries by queue, each
   * list in tag order, the queues in the order of their first delivery: no object per delivery
   * (a requeue of a hundred thousand unacknowledged).
   */
  takeByQueue(from: number, to: number): Map<Queue, QueuedMessage[]> {
    const byQueue = new Map<Queue, QueuedMessage[]>();
    const { entries, counters } = this;
    let lastQueue: Queue | undefined;
    let list: QueuedMessage[] | undefined;
    for (let i = from; i <= to; i++) {
      const entry = entries[i];
      if (entry === undefined) continue;
      const q = counters[i]!.queue;
      if (q !== lastQueue) {
        lastQueue = q;
        list = byQueue.get(q);
        if (list === undefined) byQueue.set(q, (list = []));
      }
      list!.push(entry);
      this.clear(i);
    }
    this.removed();
    return byQueue;
  }

  /** takeByQueue of every live delivery (a channel closing). */
  takeAllByQueue(): Map<Queue, QueuedMessage[]> {
    return this.takeByQueue(this.head, this.end - 1);
  }

  /** Removes and returns every live delivery, in tag order. */
  takeAll(): Delivery[] {
    return this.size === 0 ? [] : this.take(this.head, this.end - 1);
  }

  /** Every live delivery, in tag order. */
  *values(): IterableIterator<Delivery> {
    for (let i = this.head; i < this.end; i++) if (this.entries[i] !== undefined) yield this.at(i);
  }

  /** Puts deliveries taken earlier back (tx.rollback): every live one and these, in tag order. */
  restore(deliveries: Delivery[]): void {
    if (deliveries.length === 0) return;
    const all = [...this.takeAll(), ...deliveries].sort((a, b) => a.tag - b.tag);
    for (const d of all) this.add(d.tag, d.entry, d.counters, d.consumer, d.at);
  }
}
