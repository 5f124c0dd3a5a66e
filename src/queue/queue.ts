import type { Clock, Timer } from '../clock.js';
import type { FieldTable } from '../frame/field-table.js';
import type { Logger } from '../log.js';
import type { MessageStore, QueueEntry } from '../store/message-store.js';
import type { Consumer } from './consumer.js';
import { Message } from './message.js';
import type { QueueSettings } from './queue-arguments.js';
import type { QueuedMessage } from './queued-message.js';
import { PriorityReadyList, ReadyList, ReturnsFirstList, type ReadyStore } from './ready-list.js';

export interface QueueOptions {
  vhost: string;
  name: string;
  durable: boolean;
  /** The connection that owns an exclusive queue; null for shared queues. */
  exclusiveOwner: object | null;
  autoDelete: boolean;
  arguments: FieldTable;
  settings: QueueSettings;
}

/** Why a message left a queue for its dead-letter exchange (the x-death "reason"). */
export type DeadLetterReason = 'rejected' | 'expired' | 'maxlen' | 'delivery_limit';

export interface QueueDeps {
  log: Logger;
  clock: Clock;
  /** The message store; persistent messages on durable queues are written through it. */
  store: MessageStore;
  /** Called when the queue deletes itself (auto-delete after its last consumer, x-expires). */
  onAutoDelete: (queue: Queue) => void;
  /** Ready messages a durable queue keeps in memory before paging persistent ones out. */
  memoryWindow: number;
  /** Republishes messages to the queue's dead-letter exchange (vhost routing). */
  deadLetter: (queue: Queue, entries: QueuedMessage[], reason: DeadLetterReason) => void;
}

/** What became of a message offered to a queue. */
export const enum EnqueueResult {
  /** Queued in memory only. */
  Transient,
  /** Queued and written to the store: a confirm must wait for the store commit. */
  Durable,
  /** Refused by x-overflow=reject-publish(-dlx): a confirming publisher gets basic.nack. */
  Rejected,
}

/** Offers msg to every queue: whether a store commit holds it, and whether any queue refused it. */
export function enqueueAll(queues: Iterable<Queue>, msg: Message): { durable: boolean; rejected: boolean } {
  let durable = false;
  let rejected = false;
  for (const q of queues) {
    const result = q.enqueue(msg);
    if (result === EnqueueResult.Durable) durable = true;
    else if (result === EnqueueResult.Rejected) rejected = true;
  }
  return { durable, rejected };
}

/**
 * One queue: its ready messages in order, its consumers, and the dispatch loop that hands ready
 * messages to consumers with credit, round-robin, as RabbitMQ does. TTL, length limits,
 * dead-lettering, priorities, single active consumer and x-expires follow RabbitMQ 3.10;
 * every timing rule reads the injected clock.
 */
export class Queue {
  readonly vhost: string;
  readonly name: string;
  readonly durable: boolean;
  readonly exclusiveOwner: object | null;
  readonly autoDelete: boolean;
  readonly arguments: FieldTable;
  readonly settings: QueueSettings;
  /** The store key of this queue's entries. */
  readonly storeKey: string;

  private readonly ready: ReadyStore;
  private consumers: Consumer[] = [];
  private nextConsumer = 0;
  private nextSeq = 1;
  private hadConsumer = false;
  private dispatching = false;
  private expiryTimer: Timer | undefined;
  private expiryDue = 0;
  private unusedTimer: Timer | undefined;
  /**
   * Paging (durable queues): persistent messages beyond the in-memory window stay only in the
   * store and are read back as consumers drain the window, so a queue of millions keeps bounded
   * memory. diskFromSeq is the first seq not loaded; transient messages that arrive meanwhile
   * wait in afterDisk, in seq order, behind the stored ones.
   */
  private diskFromSeq = 0;
  private diskCount = 0;
  private diskBytes = 0;
  private afterDisk: QueuedMessage[] = [];
  private afterDiskBytes = 0;
  /** Entries recovered after a crash, up to this seq, come back marked redelivered. */
  private crashRedeliveredUpTo = 0;
  /** Messages delivered (to consumers or basic.get) and not yet acknowledged. */
  unackedCount = 0;
  deleted = false;

  constructor(
    options: QueueOptions,
    private readonly deps: QueueDeps,
  ) {
    this.vhost = options.vhost;
    this.name = options.name;
    this.durable = options.durable;
    this.exclusiveOwner = options.exclusiveOwner;
    this.autoDelete = options.autoDelete;
    this.arguments = options.arguments;
    this.settings = options.settings;
    this.storeKey = `${options.vhost}\u0000${options.name}`;
    const max = this.settings.maxPriority;
    const list = max !== undefined && max > 0 ? new PriorityReadyList(max) : new ReadyList();
    this.ready = this.isQuorum && this.settings.deliveryLimit !== undefined ? new ReturnsFirstList(list) : list;
    this.touch();
  }

  /** Ready messages, in memory and paged out. */
  get messageCount(): number {
    return this.ready.length + this.diskCount + this.afterDisk.length;
  }

  private get readyBytes(): number {
    return this.ready.byteSize + this.diskBytes + this.afterDiskBytes;
  }

  /** True while some ready messages are only in the store. */
  private get paged(): boolean {
    return this.diskCount > 0;
  }

  get consumerCount(): number {
    return this.consumers.length;
  }

  get consumerList(): readonly Consumer[] {
    return this.consumers;
  }

  get isQuorum(): boolean {
    return this.settings.queueType === 'quorum';
  }

  // ---- publishing ---------------------------------------------------------------------------

  /** Offers a routed message to the queue. */
  enqueue(msg: Message): EnqueueResult {
    if (this.deleted) return EnqueueResult.Transient;
    const { settings } = this;
    if (settings.overflow !== 'drop-head' && this.isFull(msg.size)) {
      if (settings.overflow === 'reject-publish-dlx') {
        this.deps.deadLetter(this, [this.entryFor(msg, false)], 'maxlen');
      }
      return EnqueueResult.Rejected;
    }
    const persisted = this.durable && msg.persistent;
    const entry = this.entryFor(msg, persisted);
    if (persisted) this.deps.store.enqueue(this.storeKey, this.storeEntry(entry), msg);
    // An entry kept outside the ready window is neither delivered nor expired before paged in.
    if (!this.placeOutsideWindow(entry)) {
      this.ready.push(entry);
      // A consumer that can take the message now gets it even with a TTL of 0 (RabbitMQ ttl guide).
      if (this.consumers.length > 0) this.dispatch(entry);
      if (entry.expiresAt !== 0) this.expireHead();
    }
    if (settings.maxLength !== undefined || settings.maxLengthBytes !== undefined) this.dropHeadOverLimit();
    return persisted ? EnqueueResult.Durable : EnqueueResult.Transient;
  }

  /**
   * Keeps a new entry out of the in-memory window when the window is full or messages are
   * already paged out: a persistent one stays only in the store (when nobody consumes), a
   * transient one waits in afterDisk behind the stored ones. Returns false when it belongs
   * in the window.
   */
  private placeOutsideWindow(entry: QueuedMessage): boolean {
    if (!this.paged && this.ready.length < this.memoryWindow) return false;
    if (entry.persisted && this.consumers.length === 0 && this.pageable) {
      if (!this.paged) this.diskFromSeq = entry.seq;
      this.diskCount++;
      this.diskBytes += entry.msg.size;
      return true;
    }
    if (!this.paged) return false;
    this.afterDisk.push(entry);
    this.afterDiskBytes += entry.msg.size;
    return true;
  }

  private entryFor(msg: Message, persisted: boolean): QueuedMessage {
    let ttl = this.settings.messageTtl;
    if (msg.ttl !== undefined && (ttl === undefined || msg.ttl < ttl)) ttl = msg.ttl;
    const expiresAt = ttl === undefined ? 0 : this.deps.clock.now() + ttl;
    return { seq: this.nextSeq++, msg, redelivered: false, deliveryCount: 0, expiresAt, persisted };
  }

  /** True when one more message of size bytes would break x-max-length(-bytes). */
  private isFull(size: number): boolean {
    const { maxLength, maxLengthBytes } = this.settings;
    return (maxLength !== undefined && this.messageCount >= maxLength) ||
      (maxLengthBytes !== undefined && this.readyBytes + size > maxLengthBytes);
  }

  /** x-overflow=drop-head: drop (or dead-letter, reason maxlen) from the head until within limits. */
  private dropHeadOverLimit(): void {
    const { maxLength, maxLengthBytes } = this.settings;
    const dropped: QueuedMessage[] = [];
    while (this.messageCount > 0 &&
      ((maxLength !== undefined && this.messageCount > maxLength) ||
        (maxLengthBytes !== undefined && this.readyBytes > maxLengthBytes))) {
      if (this.ready.length === 0) this.pageIn();
      const head = this.ready.shift();
      if (!head) break;
      dropped.push(head);
    }
    if (dropped.length > 0) this.remove(dropped, 'maxlen');
  }

  /**
   * After a restart: the queue's stored entries become its ready messages. Only the first
   * window is read now; the rest is paged in as consumers need it.
   */
  recover(crashed: boolean): void {
    const store = this.deps.store;
    const last = store.lastSeq(this.storeKey);
    if (last < 0) return;
    const { messages, bytes } = store.countEntries(this.storeKey);
    this.nextSeq = last + 1;
    if (crashed) this.crashRedeliveredUpTo = last;
    this.diskFromSeq = 0;
    this.diskCount = messages;
    this.diskBytes = bytes;
    this.pageIn();
    if (!this.pageable) while (this.paged) this.pageIn();
    this.expireHead();
  }

  /** The largest number of ready messages a durable queue keeps in memory. */
  private get memoryWindow(): number {
    return this.deps.memoryWindow;
  }

  /** Priority queues keep every message in memory: a paged-out one could outrank the window. */
  private get pageable(): boolean {
    return this.durable && this.settings.maxPriority === undefined;
  }

  /** Reads the next stored entries into the window, merged in seq order with afterDisk. */
  private pageIn(): void {
    if (!this.paged) return;
    const store = this.deps.store;
    const want = Math.max(1, this.memoryWindow - this.ready.length);
    const entries = store.readEntries(this.storeKey, this.diskFromSeq, want);
    for (const e of entries) {
      while (this.afterDisk.length > 0 && (this.afterDisk[0] as QueuedMessage).seq < e.seq) this.takeAfterDisk();
      this.diskFromSeq = e.seq + 1;
      if (this.afterDisk.length > 0 && (this.afterDisk[0] as QueuedMessage).seq === e.seq) {
        // A persistent message that was kept in memory (it arrived while consumers waited).
        this.takeAfterDisk();
        continue;
      }
      const stored = store.readMessage(e.msgId);
      if (!stored) continue;
      this.diskCount--;
      this.diskBytes -= stored.body.length;
      const msg = new Message(stored.id, stored.exchange, stored.routingKey, stored.header, stored.body);
      this.ready.push({
        seq: e.seq, msg, redelivered: e.redelivered || e.seq <= this.crashRedeliveredUpTo,
        deliveryCount: e.deliveryCount, expiresAt: e.expiresAt, persisted: true,
      });
    }
    if (entries.length < want || this.diskCount <= 0) {
      this.diskCount = 0;
      this.diskBytes = 0;
      while (this.afterDisk.length > 0) this.takeAfterDisk();
    }
  }

  private takeAfterDisk(): void {
    const m = this.afterDisk.shift() as QueuedMessage;
    this.afterDiskBytes -= m.msg.size;
    this.ready.push(m);
  }

  /** Keeps the window filled while stored messages wait. */
  private refill(): void {
    if (this.paged && this.ready.length < this.memoryWindow / 2) this.pageIn();
  }

  // ---- taking and settling ------------------------------------------------------------------

  /** basic.get: takes the head message, or undefined when the queue is empty. */
  take(): QueuedMessage | undefined {
    this.touch();
    this.refill();
    this.expireHead();
    const m = this.ready.shift();
    this.refill();
    // Messages that expired behind the head go now, so get-ok's message-count is exact.
    this.expireHead();
    return m;
  }

  /**
   * Records that a message left the ready list for a delivery that needs an ack. Nothing is
   * written: a requeue stores the redelivered mark, and after a crash every recovered message
   * counts as redelivered (see Broker.recover).
   */
  delivered(): void {
    this.unackedCount++;
  }

  /** A delivered message was acknowledged (or delivered with no-ack). */
  settle(entry: QueuedMessage, wasUnacked: boolean): void {
    if (wasUnacked) this.unackedCount--;
    if (entry.persisted && !this.deleted) this.deps.store.remove(this.storeKey, entry.seq);
    if (wasUnacked) this.maybeDispatch();
  }

  /** basic.reject / basic.nack with requeue=false: dead-letter (reason rejected) or drop. */
  discard(entries: QueuedMessage[]): void {
    this.unackedCount -= entries.length;
    if (!this.deleted) this.remove(entries, 'rejected');
    this.maybeDispatch();
  }

  /**
   * Puts delivered messages back at their original positions with redelivered=true. A quorum
   * queue counts the return and dead-letters a message past its x-delivery-limit.
   */
  requeue(entries: QueuedMessage[]): void {
    this.unackedCount -= entries.length;
    if (this.deleted) return;
    const limit = this.settings.deliveryLimit;
    const overLimit: QueuedMessage[] = [];
    for (const entry of entries) {
      const firstReturn = !entry.redelivered;
      entry.redelivered = true;
      if (this.isQuorum) {
        entry.deliveryCount++;
        if (limit !== undefined && entry.deliveryCount > limit) {
          overLimit.push(entry);
          continue;
        }
      }
      if (this.isQuorum && limit === undefined) {
        // Without a delivery limit a quorum queue (rabbit_fifo, 3.10) puts a returned message
        // at the back of the queue; with one, ReturnsFirstList serves returns first.
        const oldSeq = entry.seq;
        entry.seq = this.nextSeq++;
        if (entry.persisted) {
          this.deps.store.remove(this.storeKey, oldSeq);
          this.deps.store.enqueue(this.storeKey, this.storeEntry(entry), entry.msg);
        }
        this.ready.push(entry);
        continue;
      }
      // The redelivered mark survives a restart.
      if (entry.persisted && firstReturn) this.deps.store.update(this.storeKey, this.storeEntry(entry));
      this.ready.insertSorted(entry);
    }
    if (overLimit.length > 0) this.remove(overLimit, 'delivery_limit');
    // Requeued messages count against x-max-length again: the head goes first.
    if (this.settings.maxLength !== undefined || this.settings.maxLengthBytes !== undefined) this.dropHeadOverLimit();
    this.expireHead();
    this.maybeDispatch();
  }

  /** Takes entries out of the queue for good: dead-lettered when the queue has a DLX. */
  private remove(entries: QueuedMessage[], reason: DeadLetterReason): void {
    if (this.settings.deadLetterExchange !== undefined) this.deps.deadLetter(this, entries, reason);
    for (const entry of entries) if (entry.persisted) this.deps.store.remove(this.storeKey, entry.seq);
  }

  purge(): number {
    let count = 0;
    do {
      const removed = [...this.ready.drain(), ...this.afterDisk];
      this.afterDisk = [];
      this.afterDiskBytes = 0;
      for (const entry of removed) if (entry.persisted) this.deps.store.remove(this.storeKey, entry.seq);
      count += removed.length;
      this.pageIn();
    } while (this.ready.length > 0);
    return count;
  }

  // ---- TTL ----------------------------------------------------------------------------------

  /**
   * Expires messages at the head of the queue, as RabbitMQ does (a message with a long TTL
   * holds back expired ones behind it), and arms one timer for the new head's deadline.
   */
  private expireHead(): void {
    if (this.deleted) return;
    const now = this.deps.clock.now();
    let expired: QueuedMessage[] | undefined;
    for (;;) {
      const head = this.ready.peek();
      if (!head || head.expiresAt === 0 || head.expiresAt > now) break;
      (expired ??= []).push(this.ready.shift() as QueuedMessage);
    }
    if (expired) this.remove(expired, 'expired');
    const head = this.ready.peek();
    const due = head ? head.expiresAt : 0;
    if (due === this.expiryDue) return;
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    this.expiryDue = due;
    if (due !== 0) {
      this.expiryTimer = this.deps.clock.setTimeout(() => {
        this.expiryTimer = undefined;
        this.expiryDue = 0;
        this.expireHead();
      }, due - now);
    }
  }

  // ---- x-expires ----------------------------------------------------------------------------

  /** Marks the queue as used now; with x-expires, an unused queue deletes itself in time. */
  touch(): void {
    const expires = this.settings.expires;
    if (expires === undefined || this.deleted) return;
    this.unusedTimer?.cancel();
    this.unusedTimer = undefined;
    if (this.consumers.length > 0) return;
    this.unusedTimer = this.deps.clock.setTimeout(() => {
      if (this.consumers.length === 0 && !this.deleted) this.deps.onAutoDelete(this);
    }, expires);
  }

  // ---- consumers ----------------------------------------------------------------------------

  addConsumer(consumer: Consumer): void {
    this.consumers.push(consumer);
    this.hadConsumer = true;
    this.touch();
    this.dispatch();
  }

  /** Removes a consumer (basic.cancel or its channel closed); may auto-delete the queue. */
  removeConsumer(consumer: Consumer): void {
    const i = this.consumers.indexOf(consumer);
    if (i < 0) return;
    this.consumers.splice(i, 1);
    if (this.nextConsumer > i) this.nextConsumer--;
    if (this.autoDelete && this.hadConsumer && this.consumers.length === 0 && !this.deleted) {
      this.deps.onAutoDelete(this);
      return;
    }
    this.touch();
    // Under single-active-consumer the next consumer in line takes over now.
    this.maybeDispatch();
  }

  hasExclusiveConsumer(): boolean {
    return this.consumers.some((c) => c.exclusive);
  }

  /** The consumer that receives under x-single-active-consumer (the longest-registered one). */
  get activeConsumer(): Consumer | undefined {
    return this.settings.singleActiveConsumer ? this.consumers[0] : undefined;
  }

  /** Called by the vhost when the queue is deleted: consumers are told, entries dropped. */
  destroy(): number {
    const count = this.messageCount;
    this.diskCount = 0;
    this.afterDisk = [];
    this.deleted = true;
    this.expiryTimer?.cancel();
    this.unusedTimer?.cancel();
    this.ready.drain();
    if (this.durable) this.deps.store.deleteQueue(this.storeKey);
    const consumers = this.consumers;
    this.consumers = [];
    for (const c of consumers) c.host.cancelledByServer(c);
    return count;
  }

  // ---- dispatch -----------------------------------------------------------------------------

  /** Tries to deliver when something freed capacity; cheap when nothing is ready. */
  maybeDispatch(): void {
    if (this.messageCount > 0 && this.consumers.length > 0) this.dispatch();
  }

  /**
   * Hands ready messages to consumers with credit: priority first, round-robin within it.
   * fresh is a message being enqueued right now: it is delivered even if its TTL is already up.
   */
  dispatch(fresh?: QueuedMessage): void {
    if (this.dispatching || this.deleted) return;
    this.dispatching = true;
    try {
      // Read the clock only once a message with a TTL reaches the head.
      let now = -1;
      for (;;) {
        if (this.ready.length === 0) {
          if (!this.paged) break;
          this.pageIn();
          continue;
        }
        const head = this.ready.peek() as QueuedMessage;
        if (head.expiresAt !== 0 && head !== fresh) {
          if (now < 0) now = this.deps.clock.now();
          if (head.expiresAt <= now) {
            this.expireHead();
            continue;
          }
        }
        const consumer = this.pickConsumer();
        if (!consumer) break;
        this.ready.shift();
        consumer.host.deliver(consumer, this, head);
      }
      this.refill();
    } finally {
      this.dispatching = false;
    }
  }

  private pickConsumer(): Consumer | undefined {
    const n = this.consumers.length;
    if (n === 0) return undefined;
    if (this.settings.singleActiveConsumer) {
      const active = this.consumers[0] as Consumer;
      return active.host.canDeliver(active) ? active : undefined;
    }
    let best: Consumer | undefined;
    let bestIndex = -1;
    for (let k = 0; k < n; k++) {
      const i = (this.nextConsumer + k) % n;
      const c = this.consumers[i] as Consumer;
      if (best && c.priority <= best.priority) continue;
      if (!c.host.canDeliver(c)) continue;
      best = c;
      bestIndex = i;
    }
    if (best) this.nextConsumer = (bestIndex + 1) % n;
    return best;
  }

  private storeEntry(entry: QueuedMessage): QueueEntry {
    return { seq: entry.seq, msgId: entry.msg.id, redelivered: entry.redelivered, deliveryCount: entry.deliveryCount, expiresAt: entry.expiresAt };
  }
}
