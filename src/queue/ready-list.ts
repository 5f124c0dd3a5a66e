import type { QueuedMessage } from './queued-message.js';

/** The ready messages of a queue, in delivery order. */
export interface ReadyStore {
  readonly length: number;
  /** Sum of body sizes of the ready messages. */
  readonly byteSize: number;
  peek(): QueuedMessage | undefined;
  /** The message that would be delivered last. */
  peekLast(): QueuedMessage | undefined;
  push(m: QueuedMessage): void;
  shift(): QueuedMessage | undefined;
  /** Puts back a message that was delivered, at its original (seq) position. */
  insertSorted(m: QueuedMessage): void;
  /**
   * Puts back messages that were delivered (in any order), each at its original (seq) position:
   * what insertSorted does for each, in time linear in the list's length (a consumer closing
   * with tens of thousands unacknowledged must not cost their number times the queue's length).
   */
  insertAllSorted(ms: readonly QueuedMessage[]): void;
  /** Removes and returns the last n messages in delivery order (all of them when it holds fewer). */
  takeTail(n: number): QueuedMessage[];
  /** Forgets every message (the queue is being deleted). */
  clear(): void;
  /** Puts msg in m's place (a last-value replacement): m stays where it is, with msg's size. */
  replace(m: QueuedMessage, msg: QueuedMessage['msg']): void;
  /** Every message in delivery order, none taken (a look inside, for the test toolkit). */
  entries(): Iterable<QueuedMessage>;
}

/** From this many messages, insertAllSorted merges instead of inserting each (each insert may move the whole list). */
const MERGE_FROM = 8;

function bySeq(a: QueuedMessage, b: QueuedMessage): number {
  return a.seq - b.seq;
}

/**
 * The ready messages of one queue, in seq order. Publishing appends at the tail and consumers
 * take from the head, both O(1); a requeued message goes back to its original position (found
 * by binary search), which is what RabbitMQ does and what users rely on for ordering.
 */
export class ReadyList implements ReadyStore {
  private items: (QueuedMessage | undefined)[] = [];
  private head = 0;
  private bytes = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  get byteSize(): number {
    return this.bytes;
  }

  peek(): QueuedMessage | undefined {
    return this.items[this.head];
  }

  peekLast(): QueuedMessage | undefined {
    return this.length > 0 ? this.items[this.items.length - 1] : undefined;
  }

  push(m: QueuedMessage): void {
    const last = this.items[this.items.length - 1];
    if (this.length > 0 && last && last.seq > m.seq) {
      this.insertSorted(m);
      return;
    }
    this.items.push(m);
    this.bytes += m.msg.size;
  }

  shift(): QueuedMessage | undefined {
    if (this.head >= this.items.length) return undefined;
    const m = this.items[this.head];
    this.items[this.head++] = undefined;
    // Emptied, the array is kept while it is short (a queue whose consumers keep up empties it
    // on every message: a new one would be allocated per message); taken slots go once they
    // dominate a long one.
    if (this.head === this.items.length && this.head > 64) {
      this.items = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    if (m) this.bytes -= m.msg.size;
    return m;
  }

  insertSorted(m: QueuedMessage): void {
    // Only the slots before head are emptied: items[head..] all hold messages.
    let lo = this.head;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid]!.seq < m.seq) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.head && this.head > 0) this.items[--this.head] = m;
    else this.items.splice(lo, 0, m);
    this.bytes += m.msg.size;
  }

  insertAllSorted(ms: readonly QueuedMessage[]): void {
    // A few go in one by one (at the head, the common case, that costs nothing).
    if (ms.length <= MERGE_FROM) {
      for (const m of ms) this.insertSorted(m);
      return;
    }
    const back = [...ms].sort(bySeq);
    const items = this.items;
    const merged: QueuedMessage[] = new Array(this.length + back.length);
    let i = this.head;
    let j = 0;
    let k = 0;
    while (i < items.length && j < back.length) merged[k++] = items[i]!.seq < back[j]!.seq ? items[i++]! : back[j++]!;
    while (i < items.length) merged[k++] = items[i++]!;
    while (j < back.length) merged[k++] = back[j++]!;
    this.items = merged;
    this.head = 0;
    for (const m of back) this.bytes += m.msg.size;
  }

  replace(m: QueuedMessage, msg: QueuedMessage['msg']): void {
    this.bytes += msg.size - m.msg.size;
    m.msg = msg;
  }

  /** The last message, removed. */
  pop(): QueuedMessage | undefined {
    if (this.length === 0) return undefined;
    const m = this.items.pop() as QueuedMessage;
    this.bytes -= m.msg.size;
    if (this.length === 0) this.clear();
    return m;
  }

  *entries(): Generator<QueuedMessage> {
    // items[head..] all hold messages (see insertSorted).
    for (let i = this.head; i < this.items.length; i++) yield this.items[i]!;
  }

  takeTail(n: number): QueuedMessage[] {
    const k = Math.min(Math.max(n, 0), this.length);
    const out = this.items.splice(this.items.length - k, k) as QueuedMessage[];
    for (const m of out) this.bytes -= m.msg.size;
    if (this.length === 0) this.clear();
    return out;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.bytes = 0;
  }
}

/**
 * A priority queue (x-max-priority): one ReadyList per priority level; the highest non-empty
 * level delivers first, FIFO within a level. Priorities above the maximum count as the maximum.
 */
export class PriorityReadyList implements ReadyStore {
  private readonly levels: ReadyList[];
  /** Kept as counts, not summed over up to 256 levels: the length is read on every peek and shift. */
  private count = 0;
  private bytes = 0;

  constructor(readonly maxPriority: number) {
    this.levels = Array.from({ length: maxPriority + 1 }, () => new ReadyList());
  }

  /** levels has one list for each priority 0..maxPriority. */
  private level(m: QueuedMessage): ReadyList {
    const p = Math.min(Math.max(m.msg.priority ?? 0, 0), this.maxPriority);
    return this.levels[p]!;
  }

  private top(): ReadyList | undefined {
    if (this.count === 0) return undefined;
    for (let p = this.maxPriority; p >= 0; p--) {
      const level = this.levels[p]!;
      if (level.length > 0) return level;
    }
    return undefined;
  }

  get length(): number {
    return this.count;
  }

  get byteSize(): number {
    return this.bytes;
  }

  peek(): QueuedMessage | undefined {
    return this.top()?.peek();
  }

  peekLast(): QueuedMessage | undefined {
    for (const level of this.levels) if (level.length > 0) return level.peekLast();
    return undefined;
  }

  push(m: QueuedMessage): void {
    this.level(m).push(m);
    this.count++;
    this.bytes += m.msg.size;
  }

  shift(): QueuedMessage | undefined {
    const m = this.top()?.shift();
    if (m) {
      this.count--;
      this.bytes -= m.msg.size;
    }
    return m;
  }

  insertSorted(m: QueuedMessage): void {
    this.level(m).insertSorted(m);
    this.count++;
    this.bytes += m.msg.size;
  }

  insertAllSorted(ms: readonly QueuedMessage[]): void {
    const byLevel = new Map<ReadyList, QueuedMessage[]>();
    for (const m of ms) {
      const level = this.level(m);
      const list = byLevel.get(level);
      if (list === undefined) byLevel.set(level, [m]);
      else list.push(m);
      this.count++;
      this.bytes += m.msg.size;
    }
    for (const [level, list] of byLevel) level.insertAllSorted(list);
  }

  /** m keeps its level (the priority it was queued with), whatever msg's priority. */
  replace(m: QueuedMessage, msg: QueuedMessage['msg']): void {
    const level = this.level(m);
    this.bytes += msg.size - m.msg.size;
    level.replace(m, msg);
  }

  /** The highest level first, FIFO within a level: the order shift() takes them in. */
  *entries(): Generator<QueuedMessage> {
    for (let p = this.maxPriority; p >= 0; p--) yield* this.levels[p]!.entries();
  }

  /** The lowest priorities are delivered last: their tails go first. */
  takeTail(n: number): QueuedMessage[] {
    let out: QueuedMessage[] = [];
    for (let p = 0; p <= this.maxPriority && out.length < n; p++) {
      const taken = (this.levels[p] as ReadyList).takeTail(n - out.length);
      for (const m of taken) {
        this.count--;
        this.bytes -= m.msg.size;
      }
      out = taken.concat(out);
    }
    return out;
  }

  clear(): void {
    for (const l of this.levels) l.clear();
    this.count = 0;
    this.bytes = 0;
  }
}

/**
 * A quorum queue with x-delivery-limit (rabbit_fifo in RabbitMQ 3.10) hands returned messages
 * out again before anything else, in the order they came back.
 */
export class ReturnsFirstList implements ReadyStore {
  private returns: QueuedMessage[] = [];
  private returnsBytes = 0;

  constructor(private readonly inner: ReadyStore) {}

  get length(): number {
    return this.returns.length + this.inner.length;
  }

  get byteSize(): number {
    return this.returnsBytes + this.inner.byteSize;
  }

  peek(): QueuedMessage | undefined {
    return this.returns[0] ?? this.inner.peek();
  }

  peekLast(): QueuedMessage | undefined {
    return this.inner.peekLast() ?? this.returns[this.returns.length - 1];
  }

  push(m: QueuedMessage): void {
    this.inner.push(m);
  }

  shift(): QueuedMessage | undefined {
    const m = this.returns.shift();
    if (!m) return this.inner.shift();
    this.returnsBytes -= m.msg.size;
    return m;
  }

  /** A returned message joins the returns, behind earlier ones. */
  insertSorted(m: QueuedMessage): void {
    this.returns.push(m);
    this.returnsBytes += m.msg.size;
  }

  /** Returned messages join the returns in the order given. */
  insertAllSorted(ms: readonly QueuedMessage[]): void {
    for (const m of ms) this.insertSorted(m);
  }

  *entries(): Generator<QueuedMessage> {
    yield* this.returns;
    yield* this.inner.entries();
  }

  replace(m: QueuedMessage, msg: QueuedMessage['msg']): void {
    if (!this.returns.includes(m)) {
      this.inner.replace(m, msg);
      return;
    }
    this.returnsBytes += msg.size - m.msg.size;
    m.msg = msg;
  }

  /** Returns are delivered first, so the tail is the inner list's. */
  takeTail(n: number): QueuedMessage[] {
    return this.inner.takeTail(n);
  }

  clear(): void {
    this.returns = [];
    this.returnsBytes = 0;
    this.inner.clear();
  }
}
