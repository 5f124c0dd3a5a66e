import type { MessageStore } from '../store/message-store.js';
import { Message } from './message.js';
import type { QueuedMessage } from './queued-message.js';
import { ReadyList, type ReadyStore } from './ready-list.js';

export interface PagingOptions {
  /** The store that holds the paged-out entries (and every persisted entry of the queue). */
  store: Pick<MessageStore, 'readEntries' | 'readMessage' | 'countEntries'>;
  /** The queue's key in the store. */
  storeKey: string;
  /**
   * How many ready messages the list keeps in memory before new ones may stay only in the
   * store (DESIGN.md, convention 5). The window refills from the store once it is half empty.
   */
  window: number;
  /**
   * Whether a new entry, beyond the window, may be left only in the store. The entry must
   * already be written there (entry.persisted). Queue answers true for persistent messages
   * while nobody consumes and the queue is pageable (durable, no x-max-priority).
   */
  mayStayInStore: (entry: QueuedMessage) => boolean;
}

/**
 * The ready messages of a queue, in delivery order, with paging: at most a window of them is in
 * memory (the inner list), the rest are either only in the store ("stored": a count, their
 * bytes and the first seq not read yet) or, when they may not be left there, held in memory
 * behind the stored ones ("held", in seq order). peek() and shift() read the next stored
 * entries back, merged with the held ones by seq, whenever the window runs low, so the order
 * is the publish order whatever was paged out.
 *
 * Invariants: every entry in the window precedes (by seq) every stored or held entry; held
 * is empty while nothing is stored; stored entries are exactly the store's entries of the
 * queue from storedFromSeq on that are not held.
 *
 * To page out more (for example transient messages under memory pressure): write the entry to
 * the store first, then let mayStayInStore accept it; push() counts it as stored, and it comes
 * back through readEntries/readMessage with persisted=true.
 */
export class PagedReadyList implements ReadyStore {
  private readonly store: PagingOptions['store'];
  private readonly storeKey: string;
  private readonly windowSize: number;
  private readonly mayStayInStore: (entry: QueuedMessage) => boolean;
  /** First seq not read back from the store yet (meaningful while storedCount > 0). */
  private storedFromSeq = 0;
  private storedCount = 0;
  private storedBytes = 0;
  /** In memory, but queued behind stored entries (a consumer was waiting, or not persisted). */
  private readonly held = new ReadyList();
  /** Entries read back with a seq up to this one are marked redelivered (recovery after a crash). */
  private redeliveredUpTo = 0;

  constructor(
    /** The in-memory window: a ReadyList, PriorityReadyList or ReturnsFirstList. */
    private readonly window: ReadyStore,
    options: PagingOptions,
  ) {
    this.store = options.store;
    this.storeKey = options.storeKey;
    this.windowSize = options.window;
    this.mayStayInStore = options.mayStayInStore;
  }

  /** Every ready message: in the window, held, and only in the store. */
  get length(): number {
    return this.window.length + this.held.length + this.storedCount;
  }

  get byteSize(): number {
    return this.window.byteSize + this.held.byteSize + this.storedBytes;
  }

  /** Ready messages in memory now (window and held). */
  get inMemory(): number {
    return this.window.length + this.held.length;
  }

  /** Ready messages only in the store. */
  get storedOnly(): number {
    return this.storedCount;
  }

  peek(): QueuedMessage | undefined {
    if (this.window.length === 0) this.pageIn();
    return this.window.peek();
  }

  /** Appends a new entry: to the window while it has room and nothing is paged out. */
  push(m: QueuedMessage): void {
    if (this.storedCount === 0) {
      if (this.window.length < this.windowSize || !this.mayStayInStore(m)) {
        this.window.push(m);
        return;
      }
      this.storedFromSeq = m.seq;
    } else if (!this.mayStayInStore(m)) {
      this.held.push(m);
      return;
    }
    this.storedCount++;
    this.storedBytes += m.msg.size;
  }

  shift(): QueuedMessage | undefined {
    if (this.window.length === 0) this.pageIn();
    const m = this.window.shift();
    if (this.storedCount > 0 && this.window.length < this.windowSize / 2) this.pageIn();
    return m;
  }

  /** A requeued message was delivered from the window, so it goes back into the window. */
  insertSorted(m: QueuedMessage): void {
    this.window.insertSorted(m);
  }

  /** Forgets every entry, stored ones included; the caller deletes the queue's store entries. */
  clear(): void {
    this.window.clear();
    this.held.clear();
    this.storedCount = 0;
    this.storedBytes = 0;
  }

  /**
   * After a restart: the queue's entries in the store become the list. Only the first window
   * is read now (all of them with loadAll, for lists that cannot page); entries up to
   * redeliveredUpTo come back marked redelivered.
   */
  recover(redeliveredUpTo: number, loadAll: boolean): void {
    const { messages, bytes } = this.store.countEntries(this.storeKey);
    this.redeliveredUpTo = redeliveredUpTo;
    this.storedFromSeq = 0;
    this.storedCount = messages;
    this.storedBytes = bytes;
    this.pageIn();
    if (loadAll) while (this.storedCount > 0) this.pageIn();
  }

  /** Reads the next stored entries into the window, merged in seq order with the held ones. */
  private pageIn(): void {
    if (this.storedCount === 0) return;
    const want = Math.max(1, this.windowSize - this.window.length);
    const entries = this.store.readEntries(this.storeKey, this.storedFromSeq, want);
    for (const e of entries) {
      while (this.held.length > 0 && (this.held.peek() as QueuedMessage).seq < e.seq) this.takeHeld();
      this.storedFromSeq = e.seq + 1;
      if (this.held.peek()?.seq === e.seq) {
        // A persistent message kept in memory (it arrived while a consumer waited).
        this.takeHeld();
        continue;
      }
      const stored = this.store.readMessage(e.msgId);
      if (!stored) continue;
      this.storedCount--;
      this.storedBytes -= stored.body.length;
      const msg = new Message(stored.id, stored.exchange, stored.routingKey, stored.header, stored.body);
      this.window.push({
        seq: e.seq, msg, redelivered: e.redelivered || e.seq <= this.redeliveredUpTo,
        deliveryCount: e.deliveryCount, expiresAt: e.expiresAt, persisted: true,
      });
    }
    if (entries.length < want || this.storedCount <= 0) {
      // The store has nothing more: whatever is held comes next.
      this.storedCount = 0;
      this.storedBytes = 0;
      while (this.held.length > 0) this.takeHeld();
    }
  }

  private takeHeld(): void {
    this.window.push(this.held.shift() as QueuedMessage);
  }
}
