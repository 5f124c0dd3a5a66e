import type { EntryCounts, MessageStore, PersistedMessage, QueueEntry, StoredEntry } from '../store/message-store.js';
import { Message } from './message.js';
import { isDue, QueuedMessage } from './queued-message.js';
import { ReadyList, type ReadyStore } from './ready-list.js';

export interface PagingOptions {
  /** The store that holds the paged-out entries (and every persisted entry of the queue). */
  store: Pick<MessageStore, 'readEntries' | 'readLastEntries' | 'readMessage' | 'countEntries' | 'enqueue' | 'remove' | 'deleteQueue'>;
  /** The queue's key in the store. */
  storeKey: string;
  /**
   * How many ready messages the list keeps in memory before new ones may stay only in the
   * store (DESIGN.md, convention 5). The window refills from the store once it is half empty.
   */
  window: number;
  /**
   * How many bytes (headers and bodies) the window may hold, whatever their number: 4096
   * messages of 100 KiB would be 400 MiB. Default WINDOW_BYTES.
   */
  windowBytes?: number;
  /**
   * Says whether a new entry, beyond the window, may be left only in the store. The entry must
   * already be written there (entry.persisted). The queue itself (no closure per queue): it
   * answers true for persistent messages while nobody consumes and the queue is pageable
   * (durable, no x-max-priority).
   */
  owner: { mayStayInStore(entry: QueuedMessage): boolean };
  /** Paging transient entries out to the store under memory pressure (none when absent). */
  transient?: TransientPaging;
  /**
   * Requeued messages go first whatever their seq (the window is a ReturnsFirstList: quorum
   * queues with x-delivery-limit); otherwise a requeued message goes back to its seq's place.
   */
  returnsFirst?: boolean;
}

/**
 * Transient entries are written under transientStoreKey(storeKey), never under the queue's own
 * key: nothing there is meant to survive a restart, and recovery deletes whatever it finds under
 * such keys, so a transient message can never come back as a persistent one.
 */
export interface TransientPaging {
  /** Whether a transient entry beyond the window may go to the store now (memory pressure). */
  mayPageOut: (entry: QueuedMessage) => boolean;
}

/**
 * The store key of a queue's paged-out transient entries: the queue's key behind a prefix no
 * queue key starts with (queue keys start with a configured vhost name).
 */
export function transientStoreKey(storeKey: string): string {
  return `${TRANSIENT_PREFIX}${storeKey}`;
}

export const TRANSIENT_PREFIX = '\u0000transient\u0000';

/** What PagedReadyList.dropHead or dropExpired dropped. */
export interface DroppedHead {
  /** Every message dropped: those in memory and those only in the store. */
  count: number;
  /** The persistent messages, and their body bytes, that left the store. */
  persistent: EntryCounts;
}

/** What PagedReadyList.walkBehindWindow does with each entry behind the window. */
interface BehindWindowVisitor {
  /** Whether to take next, the next entry (its deadline: entries carry it, as messages do). */
  more(next: { readonly expiresAt: number }): boolean;
  /** A persistent entry only in the store, under the queue's key. */
  stored(e: StoredEntry): void;
  /** A transient entry paged out to the store, under `paged`'s key. */
  paged(e: StoredEntry, paged: StoredRange): void;
  /** The first held entry (in memory): the visitor takes it. */
  held(): void;
}

/** Entries read from the store per call when the delivered ones are looked for (clearKeepingDelivered). */
const READ_PAGE = 1024;

/** The window's default limit in bytes (PagingOptions.windowBytes). */
export const WINDOW_BYTES = 16 * 1024 * 1024;

/** The memory a ready message holds: its header and body. */
function memoryOf(m: QueuedMessage): number {
  return m.msg.size + m.msg.header.length;
}

/**
 * What writing an entry out costs until its commit: its header and body, and about 1 KiB of
 * store bookkeeping (the LMDB store's overlay items, keys and values), which is what many
 * small messages cost most.
 */
export function pageOutCost(m: QueuedMessage): number {
  return memoryOf(m) + 1024;
}

/** Entries of one store key that only the store holds: how many, their body bytes, and the lowest seq. */
class StoredRange {
  /** No entry of the range has a lower seq (meaningful while count > 0). */
  from = 0;
  count = 0;
  bytes = 0;

  constructor(readonly key: string) {}

  add(m: QueuedMessage): void {
    if (this.count === 0 || m.seq < this.from) this.from = m.seq;
    this.count++;
    this.bytes += m.msg.size;
  }

  taken(e: QueueEntry, size: number): void {
    this.from = e.seq + 1;
    this.count--;
    this.bytes -= size;
  }

  clear(): void {
    this.count = 0;
    this.bytes = 0;
  }
}

/** mayPageOut without transient paging (one function for every such list). */
const never = (): boolean => false;

/**
 * The ready messages of a queue, in delivery order, with paging: at most a window of them is in
 * memory (the inner list), the rest are either only in the store or, when they may not be left
 * there, held in memory behind the stored ones ("held", in seq order). Two kinds are only in
 * the store: persisted entries of a durable queue ("stored": under the queue's key, where they
 * are anyway, read back with persisted=true), and transient entries written out under memory
 * pressure ("paged": under the transient key, deleted from it as they are read back, with
 * persisted=false). peek() and shift() read the next entries of both back, merged with the
 * held ones by seq, whenever the window runs low, so the order is the publish order whatever
 * was paged out.
 *
 * Invariants: every entry in the window precedes (by seq) every stored, paged or held entry;
 * held is empty while nothing is stored or paged; stored entries are exactly the store's
 * entries of the queue from stored.from on that are not held; paged entries are exactly the
 * entries under the transient key.
 */
export class PagedReadyList {
  private readonly store: PagingOptions['store'];
  private readonly windowSize: number;
  private readonly windowBytes: number;
  /** Bytes of headers and bodies in the window. */
  private windowMemory = 0;
  private readonly owner: PagingOptions['owner'];
  private readonly mayPageOut: (entry: QueuedMessage) => boolean;
  private readonly returnsFirst: boolean;
  private readonly stored: StoredRange;
  /** Transient entries paged out (made at the first: most queues never page one out). */
  private paged: StoredRange | undefined;
  /** Transient entries may be paged out (options.transient). */
  private readonly pagesOut: boolean;
  /** Something was written under the transient key since the last clear(). */
  private pagedAny = false;
  /** In memory, but queued behind stored or paged entries (a consumer was waiting, or not persisted). */
  private readonly held = new ReadyList();
  /** Entries read back with a seq up to this one are marked redelivered (recovery after a crash). */
  private redeliveredUpTo = 0;

  constructor(
    /** The in-memory window: a ReadyList, PriorityReadyList or ReturnsFirstList. */
    private readonly window: ReadyStore,
    options: PagingOptions,
  ) {
    this.store = options.store;
    this.windowSize = options.window;
    this.windowBytes = options.windowBytes ?? WINDOW_BYTES;
    this.owner = options.owner;
    this.stored = new StoredRange(options.storeKey);
    this.pagesOut = options.transient !== undefined;
    this.mayPageOut = options.transient?.mayPageOut ?? never;
    this.returnsFirst = options.returnsFirst ?? false;
  }

  /** Every ready message: in the window, held, and only in the store. */
  get length(): number {
    return this.window.length + this.held.length + this.storedOnly;
  }

  get byteSize(): number {
    return this.window.byteSize + this.held.byteSize + this.stored.bytes + (this.paged?.bytes ?? 0);
  }

  /** Bytes of the ready messages in memory now (window and held). */
  get bytesInMemory(): number {
    return this.window.byteSize + this.held.byteSize;
  }

  /** Ready messages in memory now (window and held). */
  get inMemory(): number {
    return this.window.length + this.held.length;
  }

  /** Messages are in memory beyond the window (by count or by bytes): pageOut has work. */
  get overWindow(): boolean {
    return this.held.length > 0 || this.window.length > this.windowSize || this.windowMemory > this.windowBytes;
  }

  /** Ready messages only in the store (persisted ones, and transient ones paged out). */
  get storedOnly(): number {
    return this.stored.count + (this.paged?.count ?? 0);
  }

  peek(): QueuedMessage | undefined {
    if (this.window.length === 0) this.pageIn();
    return this.window.peek();
  }

  /** The head if the window holds it; nothing is read from the store. */
  peekWindow(): QueuedMessage | undefined {
    return this.window.peek();
  }

  /** The window has as many messages, or as many bytes, as it may hold. */
  private get windowFull(): boolean {
    return this.window.length >= this.windowSize || this.windowMemory >= this.windowBytes;
  }

  private toWindow(m: QueuedMessage): void {
    this.window.push(m);
    this.windowMemory += memoryOf(m);
  }

  /**
   * Appends a new entry: to the window while it has room and nothing is only in the store.
   * A transient entry beyond the window stays in memory here even under memory pressure:
   * pageOut() writes such entries out, a batch per store commit.
   */
  push(m: QueuedMessage): void {
    if (this.storedOnly === 0) {
      if (!this.windowFull || !this.owner.mayStayInStore(m)) {
        this.toWindow(m);
        return;
      }
    } else if (!this.owner.mayStayInStore(m)) {
      this.held.push(m);
      return;
    }
    this.stored.add(m);
  }

  /**
   * Memory pressure: writes transient entries kept in memory beyond the window (at its tail,
   * or held) to the store, from the back (what would be delivered last goes first), until
   * their cost reaches budget (pageOutCost; at least one entry), and returns the cost written:
   * less than budget when no such entry is left. Persisted entries stay where they
   * are: read back from the queue's own key, one could come before messages delivered and not
   * yet acknowledged, which are there too.
   */
  pageOut(budget: number): number {
    if (!this.pagesOut) return 0;
    if (this.window.length > this.windowSize || this.windowMemory > this.windowBytes) {
      // The window's tail precedes everything held: it goes in front of it.
      const tail: QueuedMessage[] = [];
      while (this.window.length > 1 && (this.window.length > this.windowSize || this.windowMemory > this.windowBytes)) {
        const m = this.window.takeTail(1)[0] as QueuedMessage;
        this.windowMemory -= memoryOf(m);
        tail.push(m);
      }
      tail.reverse();
      for (const m of this.held.takeTail(this.held.length)) tail.push(m);
      for (const m of tail) this.held.push(m);
    }
    const kept: QueuedMessage[] = [];
    let written = 0;
    while (written < budget && this.held.length > 0) {
      const m = this.held.pop() as QueuedMessage;
      if (!m.persisted && this.mayPageOut(m)) {
        this.pageOutEntry(m);
        written += pageOutCost(m);
      } else {
        kept.push(m);
      }
    }
    for (let i = kept.length - 1; i >= 0; i--) this.held.push(kept[i] as QueuedMessage);
    if (this.storedOnly === 0) while (this.held.length > 0) this.takeHeld();
    return written;
  }

  private pageOutEntry(m: QueuedMessage): void {
    const paged = (this.paged ??= new StoredRange(transientStoreKey(this.stored.key)));
    this.store.enqueue(paged.key, m, m.msg);
    paged.add(m);
    this.pagedAny = true;
  }

  shift(): QueuedMessage | undefined {
    if (this.window.length === 0) this.pageIn();
    const m = this.window.shift();
    if (m) this.windowMemory -= memoryOf(m);
    if (this.storedOnly > 0 && this.window.length < this.windowSize / 2 && this.windowMemory < this.windowBytes / 2) this.pageIn();
    return m;
  }

  /**
   * A requeued message goes back to its place by seq: into the window when it comes before
   * the window's last entry, else behind it, among the held ones, which are merged by seq with
   * the entries only in the store (pageOut moves the window's tail out, and that may include
   * messages published before one delivered and requeued now). With returnsFirst, returns go
   * into the window whatever their seq.
   */
  /**
   * A last-value replacement: msg takes m's place. m is in memory (last-value queues never
   * page: Queue.pageable), in the window or held behind stored entries.
   */
  replace(m: QueuedMessage, msg: Message): void {
    const before = memoryOf(m);
    if (this.held.length > 0 && [...this.held.entries()].includes(m)) {
      this.held.replace(m, msg);
      return;
    }
    this.window.replace(m, msg);
    this.windowMemory += memoryOf(m) - before;
  }

  /** Puts back delivered messages at their seq positions, each list merged once (ReadyStore.insertAllSorted). */
  insertAllSorted(ms: readonly QueuedMessage[]): void {
    // Behind the window's last entry while entries are only in the store: among the held ones.
    // (Inserting before the window's last entry does not change which one is last.)
    const windowLast = this.window.peekLast()?.seq ?? -Infinity;
    const toHeld = !this.returnsFirst && this.storedOnly > 0;
    const held: QueuedMessage[] = [];
    const window: QueuedMessage[] = [];
    for (const m of ms) {
      if (toHeld && !(m.seq < windowLast)) held.push(m);
      else {
        window.push(m);
        this.windowMemory += memoryOf(m);
      }
    }
    if (held.length > 0) this.held.insertAllSorted(held);
    if (window.length > 0) this.window.insertAllSorted(window);
  }

  /**
   * Forgets every entry, stored and paged ones included; the caller deletes the queue's own
   * store entries, the paged ones are deleted here.
   */
  clear(): void {
    this.window.clear();
    this.windowMemory = 0;
    this.held.clear();
    this.stored.clear();
    if (this.paged && this.pagedAny) {
      this.store.deleteQueue(this.paged.key);
      this.paged.clear();
      this.pagedAny = false;
    }
  }

  /**
   * Forgets every entry, as clear() does, while delivered entries of the queue are still
   * unacknowledged (queue.purge), without reading back the entries only in the store: the
   * ones in memory leave the store one by one, which leaves below the stored range only the
   * delivered entries (every store entry from stored.from on is stored or held: the
   * invariants above). Those are read, the queue's store entries are deleted at once
   * (MessageStore.deleteQueue, which the store sweeps in the background) and the delivered
   * ones written again under the same key. Returns what the store then holds for the queue
   * (the delivered entries); undefined, having done nothing, when no entry is only in the
   * store (taking them one by one then costs no more than memory holds).
   */
  clearKeepingDelivered(): EntryCounts | undefined {
    if (this.stored.count === 0) return undefined;
    for (const list of [this.window, this.held]) for (const m of list.entries()) if (m.persisted) this.store.remove(this.stored.key, m.seq);
    const delivered = this.readDelivered();
    this.clear();
    return this.rewrite(delivered);
  }

  /**
   * x-overflow=drop-head when nothing is dead-lettered: drops ready messages from the head
   * while more than maxLength are ready or their bodies take more than maxBytes, without
   * reading back any message only the store holds (their entries give their sizes). The
   * stored entries it drops are removed from the store here, one by one, or, when the store
   * holds more to drop than to keep, all at once: the entries to keep (the delivered ones and
   * the stored tail) are read, the queue's entries deleted (MessageStore.deleteQueue, swept in
   * the background) and the kept ones written again, so capping a deep queue costs what it
   * keeps, not what it drops. Returns how many were dropped, and the persistent messages and
   * body bytes that left the store.
   */
  dropHead(maxLength: number | undefined, maxBytes: number | undefined): DroppedHead {
    const over = (): boolean => (maxLength !== undefined && this.length > maxLength) || (maxBytes !== undefined && this.byteSize > maxBytes);
    const result: DroppedHead = { count: 0, persistent: { messages: 0, bytes: 0 } };
    this.dropWhile(over, result, () => {
      if (over() && this.held.length === 0 && (this.paged?.count ?? 0) === 0) this.dropStoredKeepingTail(maxLength, maxBytes, result);
    });
    return result;
  }

  /**
   * Expiry when nothing is dead-lettered (RabbitMQ's dropwhile): drops ready messages from the
   * head while their deadline is at or before now, without reading back any message only the
   * store holds (entries carry their deadlines and sizes). Returns what it dropped, as dropHead.
   */
  dropExpired(now: number): DroppedHead {
    const result: DroppedHead = { count: 0, persistent: { messages: 0, bytes: 0 } };
    this.dropWhile((m) => isDue(m.expiresAt, now), result);
    return result;
  }

  /**
   * Drops ready messages from the head while drop(head) says so: the window's, then (the window
   * empty, after `beforeStore` has had its go) the ones behind it a page at a time, then the held
   * ones once nothing is only in the store. The window is read again if it is left empty.
   */
  private dropWhile(drop: (head: { readonly expiresAt: number }) => boolean, result: DroppedHead, beforeStore?: () => void): void {
    for (let m = this.window.peek(); m !== undefined && drop(m); m = this.window.peek()) {
      this.window.shift();
      this.windowMemory -= memoryOf(m);
      this.dropInMemory(m, result);
    }
    if (this.window.length > 0) return;
    if (this.storedOnly > 0) beforeStore?.();
    // (What beforeStore keeps goes into the window, and leaves nothing only in the store.)
    for (let declined = false; !declined && this.storedOnly > 0; ) declined = this.dropNextPage(drop, result);
    if (this.storedOnly === 0) {
      // Nothing is only in the store: the held entries (if any) are the list.
      for (let h = this.held.peek(); h !== undefined && drop(h); h = this.held.peek()) this.dropInMemory(this.held.shift() as QueuedMessage, result);
      while (this.held.length > 0) this.takeHeld();
    }
    if (this.window.length === 0) this.pageIn();
  }

  private dropInMemory(m: QueuedMessage, result: DroppedHead): void {
    result.count++;
    if (!m.persisted) return;
    this.store.remove(this.stored.key, m.seq);
    result.persistent.messages++;
    result.persistent.bytes += m.msg.size;
  }

  /**
   * dropHead with only stored entries left to drop from (none in the window, held or paged
   * out). When the entries to keep fit in the window and are fewer than those to drop, they
   * are read, with the delivered entries, the queue's store entries deleted at once and both
   * written again; the kept ones become the window. Otherwise nothing is done here, and
   * dropNextPage drops one entry at a time.
   */
  private dropStoredKeepingTail(maxLength: number | undefined, maxBytes: number | undefined, result: DroppedHead): void {
    const stored = this.stored;
    // The last entries of the queue in the store are stored ones: nothing is held, and the
    // delivered entries all come before the stored range.
    const want = Math.min(this.windowSize, maxLength ?? Infinity) + 1;
    const tail = this.store.readLastEntries(stored.key, Math.min(want, stored.count));
    let keep = 0;
    let keptBytes = 0;
    for (; keep < tail.length; keep++) {
      const size = (tail[tail.length - 1 - keep] as StoredEntry).size;
      if ((maxLength !== undefined && keep + 1 > maxLength) || (maxBytes !== undefined && keptBytes + size > maxBytes)) break;
      keptBytes += size;
    }
    // More to keep than the window holds (every entry read fits), or than to drop.
    if (keep === tail.length || keptBytes > this.windowBytes || keep >= stored.count - keep) return;
    const kept: Array<[QueueEntry, PersistedMessage]> = [];
    for (const e of tail.slice(tail.length - keep)) {
      const msg = this.store.readMessage(stored.key, e);
      if (msg) kept.push([e, msg]);
    }
    const delivered = this.readDelivered();
    const dropped = stored.count - kept.length;
    result.count += dropped;
    result.persistent.messages += dropped;
    result.persistent.bytes += stored.bytes;
    this.clear();
    this.rewrite([...delivered, ...kept]);
    for (const [e, msg] of kept) {
      result.persistent.bytes -= msg.body.length;
      this.toWindow(this.entry(e, Message.fromStored(msg), true));
    }
  }

  /**
   * One step of dropWhile: the next entries in delivery order among the stored, paged-out and
   * held ones (a page of each range at a time: walkBehindWindow), dropped while drop(next) says
   * so. Returns true when it said no.
   */
  private dropNextPage(drop: (next: { readonly expiresAt: number }) => boolean, result: DroppedHead): boolean {
    const stored = this.stored;
    return this.walkBehindWindow(READ_PAGE, {
      more: drop,
      stored: (e) => {
        this.store.remove(stored.key, e.seq);
        stored.taken(e, e.size);
        result.count++;
        result.persistent.messages++;
        result.persistent.bytes += e.size;
      },
      paged: (e, paged) => {
        this.store.remove(paged.key, e.seq);
        paged.taken(e, e.size);
        result.count++;
      },
      held: () => this.dropInMemory(this.held.shift() as QueuedMessage, result),
    });
  }

  /**
   * The delivered entries of the queue and their messages: with nothing of the queue in
   * memory still in the store, the store's entries below the stored range (the invariants above).
   */
  private readDelivered(): Array<[QueueEntry, PersistedMessage]> {
    const stored = this.stored;
    const delivered: Array<[QueueEntry, PersistedMessage]> = [];
    for (let from = 0, more = true; more; ) {
      const page = this.store.readEntries(stored.key, from, READ_PAGE);
      more = page.length === READ_PAGE;
      for (const e of page) {
        if (e.seq >= stored.from) {
          more = false;
          break;
        }
        const msg = this.store.readMessage(stored.key, e);
        if (msg) delivered.push([e, msg]);
        from = e.seq + 1;
      }
    }
    return delivered;
  }

  /**
   * Deletes the queue's store entries at once (MessageStore.deleteQueue, swept in the
   * background) and writes entries again under the same key; returns what they hold.
   */
  private rewrite(entries: Array<[QueueEntry, PersistedMessage]>): EntryCounts {
    const key = this.stored.key;
    this.store.deleteQueue(key);
    let bytes = 0;
    for (const [e, msg] of entries) {
      this.store.enqueue(key, e, msg);
      bytes += msg.body.length;
    }
    return { messages: entries.length, bytes };
  }

  /**
   * After a restart: the queue's entries in the store become the list. Only the first window
   * is read now (all of them with loadAll, for lists that cannot page); entries up to
   * redeliveredUpTo come back marked redelivered.
   */
  recover(redeliveredUpTo: number, loadAll: boolean): void {
    const { messages, bytes } = this.store.countEntries(this.stored.key);
    this.redeliveredUpTo = redeliveredUpTo;
    this.stored.from = 0;
    this.stored.count = messages;
    this.stored.bytes = bytes;
    this.pageIn();
    if (loadAll) while (this.stored.count > 0) this.pageIn();
  }

  /**
   * Reads the next stored and paged entries into the window, merged in seq order with the held
   * ones: up to what the window lacks in messages or bytes (at least one).
   */
  private pageIn(): void {
    if (this.storedOnly === 0) return;
    const want = Math.max(1, this.windowSize - this.window.length);
    let taken = 0;
    this.walkBehindWindow(want, {
      more: () => taken < want && (taken === 0 || this.windowMemory < this.windowBytes),
      stored: (e) => {
        const msg = this.readBack(e, this.stored);
        if (msg) this.toWindow(this.entry(e, msg, true));
        taken++;
      },
      paged: (e, paged) => {
        const msg = this.readBack(e, paged);
        this.store.remove(paged.key, e.seq);
        if (msg) this.toWindow(this.entry(e, msg, false));
        taken++;
      },
      held: () => {
        this.takeHeld();
        taken++;
      },
    });
    // Nothing left in the store: whatever is held comes next.
    if (this.storedOnly === 0) while (this.held.length > 0) this.takeHeld();
  }

  /**
   * Visits the entries behind the window in delivery order while visitor.more() says so: the
   * next `page` stored and paged-out entries read from the store, merged by seq with the held
   * ones, never past the last entry read of a range that has more (the next one, unread, could
   * come first). A held entry that is also stored (a persistent message kept in memory: it
   * arrived while a consumer waited) is visited once, as held. A range read to its end, or
   * counted out, has nothing more: it is cleared. Returns true when visitor.more() said no.
   */
  private walkBehindWindow(page: number, visitor: BehindWindowVisitor): boolean {
    const stored = this.stored;
    const paged = this.paged;
    const s = stored.count > 0 ? this.store.readEntries(stored.key, stored.from, page) : [];
    const p = paged && paged.count > 0 ? this.store.readEntries(paged.key, paged.from, page) : [];
    let si = 0;
    let pi = 0;
    let declined = false;
    for (;;) {
      if ((si === s.length && s.length === page) || (pi === p.length && p.length === page)) break;
      const se = s[si];
      const pe = p[pi];
      const h = this.held.peek();
      // The next entry: the stored one (held too when h has its seq), the paged one, or h.
      const next = se && (!pe || se.seq < pe.seq) && (!h || se.seq <= h.seq) ? se : pe && (!h || pe.seq < h.seq) ? pe : h;
      if (next === undefined) break;
      if (!visitor.more(next === se && h?.seq === se.seq ? h : next)) {
        declined = true;
        break;
      }
      if (next === se) {
        si++;
        if (h?.seq === se.seq) {
          // Not counted in the stored range.
          stored.from = se.seq + 1;
          visitor.held();
        } else {
          visitor.stored(se);
        }
      } else if (next === pe) {
        pi++;
        visitor.paged(pe, paged as StoredRange);
      } else {
        visitor.held();
      }
    }
    if ((s.length < page && si === s.length) || stored.count <= 0) stored.clear();
    if (paged && ((p.length < page && pi === p.length) || paged.count <= 0)) paged.clear();
    return declined;
  }

  private readBack(e: QueueEntry, range: StoredRange): Message | undefined {
    const stored = this.store.readMessage(range.key, e);
    if (!stored) {
      range.from = e.seq + 1;
      return undefined;
    }
    range.taken(e, stored.body.length);
    return Message.fromStored(stored);
  }

  private entry(e: QueueEntry, msg: Message, persisted: boolean): QueuedMessage {
    const redelivered = e.redelivered || (persisted && e.seq <= this.redeliveredUpTo);
    return new QueuedMessage(e.seq, msg, e.expiresAt, persisted, redelivered, e.deliveryCount);
  }

  /**
   * Every ready message in delivery order, without taking or moving any: the window's, then
   * the held ones merged by seq with those only in the store, read back as copies (the test
   * toolkit's inspect). Nothing is paged in, and nothing read here stays in memory.
   */
  *entries(): Generator<QueuedMessage> {
    yield* this.window.entries();
    if (this.storedOnly === 0) {
      yield* this.held.entries();
      return;
    }
    const held = [...this.held.entries()];
    // The stored range's entries include the persisted ones that are held too (same seq).
    const s = this.stored.count > 0 ? this.store.readEntries(this.stored.key, this.stored.from, this.stored.count + held.length) : [];
    const paged = this.paged;
    const p = paged && paged.count > 0 ? this.store.readEntries(paged.key, paged.from, paged.count) : [];
    let hi = 0;
    let si = 0;
    let pi = 0;
    for (;;) {
      const h = held[hi];
      const se = s[si];
      const pe = p[pi];
      const hSeq = h?.seq ?? Infinity;
      const sSeq = se?.seq ?? Infinity;
      const pSeq = pe?.seq ?? Infinity;
      if (hSeq === Infinity && sSeq === Infinity && pSeq === Infinity) return;
      if (hSeq <= sSeq && hSeq <= pSeq) {
        hi++;
        if (sSeq === hSeq) si++;
        yield h!;
      } else if (sSeq <= pSeq) {
        si++;
        const stored = this.store.readMessage(this.stored.key, se!);
        if (stored) yield this.entry(se!, Message.fromStored(stored), true);
      } else {
        pi++;
        const stored = this.store.readMessage(paged!.key, pe!);
        if (stored) yield this.entry(pe!, Message.fromStored(stored), false);
      }
    }
  }

  private takeHeld(): void {
    this.toWindow(this.held.shift() as QueuedMessage);
  }
}
