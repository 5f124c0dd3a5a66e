import type { Clock, Timer } from '../clock.js';
import type { FieldTable } from '../frame/field-table.js';
import type { Hooks } from '../hooks.js';
import type { Logger } from '../log.js';
import { QueueCounters } from '../metrics/counters.js';
import type { MessageStore } from '../store/message-store.js';
import type { Consumer } from './consumer.js';
import { ConsumerList } from './consumer-list.js';
import { ConsumerUse } from './consumer-use.js';
import { DEAD_LETTER_RETRY_MS, HeldDeadLetters, type OutDeadLetter } from './held-dead-letters.js';
import type { Message } from './message.js';
import { PagedReadyList, type DroppedHead } from './paged-ready-list.js';
import type { QueueSettings } from './queue-arguments.js';
import { isDue, QueuedMessage } from './queued-message.js';
import { KeyedMessages, lastValueSpace, type KeyedOffer, type VersionStore } from './keyed-messages.js';
import { PriorityReadyList, ReadyList, ReturnsFirstList } from './ready-list.js';
import { takeParts, type LaterTurns, type TakenInParts } from '../later-turns.js';

export interface QueueOptions {
  vhost: string;
  name: string;
  durable: boolean;
  /** The connection that owns an exclusive queue; null for shared queues. */
  exclusiveOwner: object | null;
  autoDelete: boolean;
  arguments: FieldTable;
  /** What the arguments declare (parseQueueArguments). */
  settings: QueueSettings;
  /** The settings in force when the queue is created, if policies change them (default: settings). */
  effective?: QueueSettings;
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
  /** The same in bytes of headers and bodies (default WINDOW_BYTES, 16 MiB). */
  memoryWindowBytes?: number;
  /** Republishes messages to the queue's dead-letter exchange (vhost routing). */
  deadLetter: (queue: Queue, entries: QueuedMessage[], reason: DeadLetterReason) => void;
  /**
   * Counts messages the queue dropped for reason with no dead-letter exchange to republish
   * them to, without them (deadLetter counts the ones it is given).
   */
  dropped: (queue: Queue, reason: DeadLetterReason, count: number) => void;
  /**
   * Routes a dead-letter held under x-dead-letter-strategy at-least-once to the queue's
   * dead-letter exchange and offers it (HeldDeadLetters): true once every queue reached took it.
   */
  forwardDeadLetter: (queue: Queue, out: OutDeadLetter) => boolean;
  /** How often held dead-letters are forwarded again (the broker's deadLetterRetryMs; default DEAD_LETTER_RETRY_MS). */
  deadLetterRetryMs?: number;
  /**
   * Paging transient messages out under memory pressure (TransientPager): active() is true
   * while transient messages beyond the window should go to the store; wake() asks for a
   * page-out. Absent (no store on disk): they always stay in memory. `active` is called
   * detached (every queue's paged list holds the function itself).
   */
  transientPaging?: { readonly active: () => boolean; wake(): void };
  /** The broker's seams for the test toolkit (src/hooks.ts); absent in unit tests. */
  hooks?: Hooks;
  /** Where a durable last-value queue keeps its newest versions (the metadata store); absent: not kept. */
  state?: VersionStore;
  /**
   * Where a large removal goes on in later turns (removeWhile: REMOVE_CHUNK messages a turn).
   * Absent (unit tests): a removal is done at once, however large.
   */
  later?: LaterTurns;
}

/**
 * At most this many messages are taken from the head in one turn by a removal that hands them
 * to something (the dead-letter exchange, deduplication or last-value bookkeeping), which reads
 * back the paged-out ones and costs 10 to 40 µs a message when dead-lettered persistent: up to
 * about 10 ms a turn.
 */
export const REMOVE_CHUNK = 256;

/** Redelivered marks of requeued messages written to the store a turn (storeMarks: an update each, a few µs). */
export const MARK_CHUNK = 1024;

/**
 * Requeued messages put back a turn when more are requeued at once (returnInTurns): about a
 * microsecond each, with the merge into the ready list.
 */
export const RETURN_CHUNK = 4096;

/** What became of a message offered to a queue. */
export const enum EnqueueResult {
  /** Queued in memory only. */
  Transient,
  /** Queued and written to the store: a confirm must wait for the store commit. */
  Durable,
  /** Refused by x-overflow=reject-publish(-dlx): a confirming publisher gets basic.nack. */
  Rejected,
}

/**
 * One queue: its ready messages in order, its consumers, and the dispatch loop that hands ready
 * messages to consumers with credit, round-robin, as RabbitMQ does. TTL, length limits,
 * dead-lettering, priorities, single active consumer and x-expires follow RabbitMQ 3.10;
 * every timing rule reads the injected clock.
 */
export class Queue {
  readonly name: string;
  readonly durable: boolean;
  readonly exclusiveOwner: object | null;
  readonly autoDelete: boolean;
  readonly arguments: FieldTable;
  /** The settings its x-arguments declare. */
  readonly declared: QueueSettings;
  /**
   * The settings in force: the declared ones resolved against the policies that apply. They
   * change when a policy does (applySettings); read them afresh, never keep a copy.
   */
  settings: QueueSettings;
  /** The store key of this queue's entries. */
  readonly storeKey: string;

  /**
   * x-message-deduplication and x-last-value-key (keyed-messages.ts); undefined for every other
   * queue, whose paths then cost one check.
   */
  private readonly keyed: KeyedMessages | undefined;
  /** Leaves persistent messages beyond the window in the store while nobody consumes (pageable, when created). */
  private readonly pagesPersistent: boolean;
  /** Pages transient messages out under memory pressure; not for priority queues (see pageable). */
  private readonly pagesTransient: QueueDeps['transientPaging'];
  /** Ready messages, a window of them in memory, the rest paged out (durable queues). */
  private readonly ready: PagedReadyList;
  private readonly consumers: ConsumerList;
  private nextSeq = 1;
  private hadConsumer = false;
  private dispatching = false;
  /** A classic queue's consumer capacity, measured from its first consumer on. */
  private use: ConsumerUse | undefined;
  /** What the queue dead-lettered at least once and holds until its targets take it (quorum queues). */
  private held: HeldDeadLetters | undefined = undefined;
  private expiryTimer: Timer | undefined;
  private expiryDue = 0;
  private unusedTimer: Timer | undefined;
  /** Messages delivered (to consumers or basic.get) and not yet acknowledged. */
  unackedCount = 0;
  /** Body bytes of those messages. */
  private unackedSize = 0;
  /** Messages (ready and unacknowledged) the store holds for this queue, and their body bytes. */
  private persistent = { count: 0, bytes: 0 };
  /** When the queue was created (wall clock ms). */
  readonly createdAt: number;
  deleted = false;
  /**
   * A removal goes on in a later turn (goOnRemoving is scheduled): until it is done nothing is
   * delivered (the head may be a message it removes), and nothing else is removed before it.
   */
  private continuing = false;
  /** A removal from the head (removeWhile) stopped at REMOVE_CHUNK, for this reason. */
  private removing: DeadLetterReason | undefined = undefined;
  /**
   * Delivered messages rejected without requeue, or returned past the delivery limit, beyond
   * REMOVE_CHUNK: still to remove, in order (removeInTurns).
   */
  private readonly handingOn: Array<TakenInParts<QueuedMessage> & { reason: DeadLetterReason; unacked: boolean }> = [];
  /** finishRemoving is running: everything is removed at once. */
  private finishing = false;
  /**
   * Requeued messages whose redelivered mark the store has yet to get, beyond MARK_CHUNK
   * (storeMarks), from `marked` on.
   */
  private marks: QueuedMessage[] | undefined = undefined;
  private marked = 0;
  /**
   * Requeued messages not back in the ready list yet, from `at` on in each list (a requeue of
   * more than RETURN_CHUNK goes back a chunk a turn: returnInTurns), and how many and how large
   * they are. They count as ready. Until all are back nothing is delivered or expired (the head
   * may be one of them), and what needs the head or every ready message (basic.get, purge,
   * drop-head, a policy change, the toolkit's look inside) puts them all back first
   * (finishReturns).
   */
  private readonly returning: Array<TakenInParts<QueuedMessage>> = [];
  private returnsLeft = 0;
  private returnsBytes = 0;
  private returnScheduled = false;
  /** This queue alone as a set (`alone`), made when first asked for. */
  private aloneSet: ReadonlySet<Queue> | undefined = undefined;
  /**
   * A quorum queue with x-overflow=reject-publish went over its limit: publishes are refused
   * until it is back at 80 % of it (rabbit_fifo's reject_publish / go; see admits()).
   */
  private refusingPublishes = false;
  /** Publishes, deliveries, gets and acks (src/metrics): counted by the channels that make them. */
  readonly counters = new QueueCounters();

  constructor(
    options: QueueOptions,
    private readonly deps: QueueDeps,
  ) {
    this.name = options.name;
    this.durable = options.durable;
    this.exclusiveOwner = options.exclusiveOwner;
    this.autoDelete = options.autoDelete;
    this.arguments = options.arguments;
    this.declared = options.settings;
    this.settings = options.effective ?? options.settings;
    this.storeKey = `${options.vhost}\u0000${options.name}`;
    this.consumers = new ConsumerList(this.settings.singleActiveConsumer);
    const { deduplication, lastValue } = options.settings;
    if (deduplication || lastValue) {
      const persist = this.durable && lastValue?.versionHeader !== undefined && deps.state !== undefined
        ? { store: deps.state, space: lastValueSpace(options.vhost, options.name) }
        : undefined;
      this.keyed = new KeyedMessages(deduplication === true, lastValue, persist);
    }
    const max = this.settings.maxPriority;
    const list = max !== undefined && max > 0 ? new PriorityReadyList(max) : new ReadyList();
    // A quorum queue serves returned messages first while it has a delivery limit (which a
    // policy can set or lift at any time); without one, requeue puts them at the back.
    const returnsFirst = this.isQuorum;
    const window = returnsFirst ? new ReturnsFirstList(list) : list;
    // Persistent messages beyond the window stay only in the store while nobody consumes, so a
    // queue of millions keeps bounded memory; they are read back as consumers drain the window.
    // Under memory pressure transient ones beyond it go to the store too, for the time being.
    this.pagesPersistent = this.pageable;
    const paging = max === undefined && lastValue === undefined ? deps.transientPaging : undefined;
    this.pagesTransient = paging;
    this.ready = new PagedReadyList(window, {
      store: deps.store,
      storeKey: this.storeKey,
      window: deps.memoryWindow,
      windowBytes: deps.memoryWindowBytes,
      owner: this,
      // paging.active is the broker's one function (no closure per queue).
      transient: paging ? { mayPageOut: paging.active } : undefined,
      returnsFirst,
    });
    this.createdAt = deps.clock.now();
    this.touch();
    this.changed();
  }

  /** Tells the test toolkit the counts may have changed (src/hooks.ts); a null check otherwise. */
  private changed(): void {
    const watcher = this.deps.hooks?.queues;
    if (watcher !== undefined) watcher.changed(this);
  }

  /**
   * A policy changed what is in force (RabbitMQ's process_args_policy, in its order): the
   * x-expires lease restarts; a lower max-length or max-length-bytes drops (or dead-letters,
   * reason maxlen, to the dead-letter exchange now in force) messages from the head at once if
   * the overflow in force before this change is drop-head (a classic queue), and again under the
   * new overflow if that is drop-head (a quorum queue over its limit under reject-publish refuses
   * publishes instead); a new message TTL applies to messages enqueued from now on (messages
   * already queued keep the deadline they were given); expired messages at the head go.
   */
  applySettings(next: QueueSettings): void {
    if (this.deleted) return;
    // Under the settings they were requeued under.
    this.finishReturns();
    const before = this.settings.overflow;
    // (A quorum queue applies the new limits under the new overflow only: rabbit_fifo's
    // update_config, then evaluate_limit.)
    if (!this.isQuorum) {
      this.settings = { ...next, overflow: before };
      if (before === 'drop-head' && this.hasLengthLimit) this.dropHeadOverLimit();
    }
    this.settings = next;
    if (next.overflow === 'drop-head' && this.hasLengthLimit) this.dropHeadOverLimit();
    else this.refuseWhileOverLimit();
    this.unusedTimer?.cancel();
    this.unusedTimer = undefined;
    this.touch();
    this.expireHead();
    this.maybeDispatch();
    this.updateHeldDeadLetters();
    this.changed();
  }

  /**
   * rabbit_fifo_dlx:update_config after a policy change: with at-least-once still in force the
   * held dead-letters no queue took yet are forwarded again (the worker's lookup_topology); a
   * queue that no longer dead-letters at least once deletes them (switch_from), and logs it.
   */
  private updateHeldDeadLetters(): void {
    const held = this.held;
    if (held === undefined) return;
    if (this.deadLettersAtLeastOnce) return held.retry();
    const bytes = held.bytes;
    const messages = held.drop();
    // rabbit_fifo_dlx:switch_from logs it, in these words.
    if (messages > 0) this.deps.log.info({ queue: this.name }, `Deleted ${messages} dead-lettered messages (with total messages size of ${bytes} bytes) in queue '${this.name}'`);
  }

  // ---- at-least-once dead-lettering ---------------------------------------------------------

  /**
   * A quorum queue dead-letters at least once while x-dead-letter-strategy at-least-once, a
   * dead-letter exchange and x-overflow reject-publish are in force (rabbit_quorum_queue:dlh:
   * under drop-head it falls back to at most once).
   */
  get deadLettersAtLeastOnce(): boolean {
    const s = this.settings;
    return this.isQuorum && s.deadLetterStrategy === 'at-least-once' && s.deadLetterExchange !== undefined && s.overflow === 'reject-publish';
  }

  /**
   * A message this queue dead-lettered at least once (VHost.deadLetter made it): forwarded, and
   * held until the queues its dead-letter exchange reaches have taken it (HeldDeadLetters).
   */
  holdDeadLetter(message: Message, reason: DeadLetterReason): void {
    if (this.deleted) return;
    (this.held ??= this.newHeldDeadLetters()).hold(message, reason);
    // Held ones count in the length limits (rabbit_fifo:is_over_limit).
    this.refuseWhileOverLimit();
    this.changed();
  }

  private newHeldDeadLetters(): HeldDeadLetters {
    const forward = (out: OutDeadLetter) => this.deps.forwardDeadLetter(this, out);
    const { store, clock, deadLetterRetryMs: retryMs = DEAD_LETTER_RETRY_MS } = this.deps;
    return new HeldDeadLetters(HeldDeadLetters.storeKeyOf(this.storeKey), { store, clock, forward, retryMs });
  }

  /**
   * Messages the queue counts (RabbitMQ's `messages`): ready, unacknowledged and, in a quorum
   * queue, the dead-letters it holds (rabbit_fifo's messages_total).
   */
  get totalCount(): number {
    return this.messageCount + this.unackedCount + this.heldDeadLetterCount;
  }

  /** Their body bytes (RabbitMQ's `message_bytes`). */
  get totalBytes(): number {
    return this.readyBytes + this.unackedBytes + this.heldDeadLetterBytes;
  }

  /** Dead-letters held until their targets take them (messages_dlx). */
  get heldDeadLetterCount(): number {
    return this.held?.count ?? 0;
  }

  /** Their body bytes (message_bytes_dlx). */
  get heldDeadLetterBytes(): number {
    return this.held?.bytes ?? 0;
  }

  private get hasLengthLimit(): boolean {
    return this.settings.maxLength !== undefined || this.settings.maxLengthBytes !== undefined;
  }

  /** Ready messages, in memory and paged out (requeued ones not back in the list yet included). */
  get messageCount(): number {
    return this.ready.length + this.returnsLeft;
  }

  /** Ready messages held in memory now (the rest of messageCount is paged out to the store). */
  get readyInMemory(): number {
    return this.ready.inMemory;
  }

  /** Bytes of the ready messages' bodies, in memory and paged out (RabbitMQ's message_bytes_ready). */
  get readyBytes(): number {
    return this.ready.byteSize + this.returnsBytes;
  }

  get consumerCount(): number {
    return this.consumers.length;
  }

  /**
   * consumer_capacity as 3.10.8 reports it: 0 without consumers; for a classic queue the share
   * of time it could deliver at once (ConsumerUse); 1 for a quorum queue (recorded with its
   * consumers at their prefetch and messages ready).
   */
  get consumerCapacity(): number {
    if (this.consumers.length === 0) return 0;
    if (this.isQuorum) return 1;
    return this.use?.capacity ?? 1;
  }

  /** Bytes of the ready messages' bodies held in memory (RabbitMQ's message_bytes_ram less the unacknowledged ones). */
  get readyBytesInMemory(): number {
    return this.ready.bytesInMemory + this.returnsBytes;
  }

  /** Bytes of the unacknowledged messages' bodies (message_bytes_unacknowledged). */
  get unackedBytes(): number {
    return this.unackedSize;
  }

  /** Messages the store holds for the queue (messages_persistent), held dead-letters included. */
  get persistentCount(): number {
    return this.persistent.count + this.heldDeadLetterCount;
  }

  /** Their body bytes (message_bytes_persistent). */
  get persistentBytes(): number {
    return this.persistent.bytes + this.heldDeadLetterBytes;
  }

  /** The consumers, in registration order. */
  get consumerList(): readonly Consumer[] {
    return this.consumers.all;
  }

  /**
   * The next message a consumer or basic.get would take (not taking it), if it is in memory:
   * nothing is read back from the store for a look.
   */
  peekHead(): QueuedMessage | undefined {
    return this.ready.peekWindow();
  }

  /** The set of queues a message published to this queue alone reaches (VHost.publish through the default exchange). */
  get alone(): ReadonlySet<Queue> {
    return (this.aloneSet ??= new Set<Queue>([this]));
  }

  get isQuorum(): boolean {
    return this.settings.queueType === 'quorum';
  }

  // ---- publishing ---------------------------------------------------------------------------

  /** Offers a routed message to the queue. */
  enqueue(msg: Message): EnqueueResult {
    if (this.deleted) return EnqueueResult.Transient;
    let offer: KeyedOffer | undefined;
    if (this.keyed !== undefined) {
      offer = this.keyed.offer(msg);
      // A duplicate or a stale version is not enqueued (and is confirmed: README, duplicates).
      if (offer.kind === 'drop') return EnqueueResult.Transient;
      if (offer.kind === 'replace') return this.replaceReady(msg, offer);
    }
    const { settings } = this;
    if (settings.overflow !== 'drop-head' && !this.admits(msg.size)) {
      if (settings.overflow === 'reject-publish-dlx') {
        this.deps.deadLetter(this, [this.entryFor(msg, false)], 'maxlen');
      }
      return EnqueueResult.Rejected;
    }
    const persisted = this.keeps(msg);
    const entry = this.entryFor(msg, persisted);
    // Written before it is placed: an entry beyond the window may stay only in the store.
    if (persisted) {
      this.deps.store.enqueue(this.storeKey, entry, msg);
      this.persistent.count++;
      this.persistent.bytes += msg.size;
    }
    this.ready.push(entry);
    if (offer !== undefined) this.keyed!.added(entry, offer as KeyedOffer & { kind: 'add' });
    if (!persisted && this.pagesTransient && this.ready.overWindow) this.pagesTransient.wake();
    // A consumer that can take the message now gets it even with a TTL of 0 (RabbitMQ ttl guide).
    if (this.consumers.length > 0) this.dispatch(entry);
    if (entry.expiresAt !== 0) this.expireHead();
    if (settings.maxLength !== undefined || settings.maxLengthBytes !== undefined) {
      this.dropHeadOverLimit();
      this.refuseWhileOverLimit();
    }
    const watcher = this.deps.hooks?.queues;
    if (watcher !== undefined) {
      watcher.enqueued(this, entry);
      watcher.changed(this);
    }
    return persisted ? EnqueueResult.Durable : EnqueueResult.Transient;
  }

  /**
   * Whether msg is written to the store: a durable queue keeps a persistent message, and a
   * quorum queue every message, whatever its delivery mode, as RabbitMQ's Raft log does
   * (rabbit_fifo): its confirm then waits for the commit, and it survives a restart (a transient
   * message in a durable classic queue does neither).
   */
  private keeps(msg: Message): boolean {
    return this.durable && (msg.persistent || this.isQuorum);
  }

  private entryFor(msg: Message, persisted: boolean): QueuedMessage {
    return new QueuedMessage(this.nextSeq++, msg, this.expiryOf(msg), persisted);
  }

  /** The absolute deadline of msg enqueued now (queue TTL or its own, the lower), 0 for none. */
  private expiryOf(msg: Message): number {
    let ttl = this.settings.messageTtl;
    if (msg.ttl !== undefined && (ttl === undefined || msg.ttl < ttl)) ttl = msg.ttl;
    return ttl === undefined ? 0 : this.deps.clock.now() + ttl;
  }

  /**
   * Last value: msg takes the place of a ready message with the same key (offer.entry), with
   * its own deadline. The replaced message leaves as if acknowledged (not dead-lettered); a
   * stored one is deleted from the store in the same call, hence the same commit, as the new
   * one is written.
   */
  private replaceReady(msg: Message, offer: KeyedOffer & { kind: 'replace' }): EnqueueResult {
    const entry = offer.entry;
    const old = entry.msg;
    if (entry.persisted) this.unstore(entry);
    const persisted = this.keeps(msg);
    this.ready.replace(entry, msg);
    entry.persisted = persisted;
    entry.expiresAt = this.expiryOf(msg);
    if (persisted) {
      this.deps.store.enqueue(this.storeKey, entry, msg);
      this.persistent.count++;
      this.persistent.bytes += msg.size;
    }
    this.keyed!.replaced(old, offer);
    if (this.settings.maxLengthBytes !== undefined) this.dropHeadOverLimit();
    this.expireHead();
    this.changed();
    return persisted ? EnqueueResult.Durable : EnqueueResult.Transient;
  }

  /** A quorum queue with x-overflow=reject-publish over its limit refuses publishes from now on (admits). */
  private refuseWhileOverLimit(): void {
    if (this.isQuorum && this.settings.overflow === 'reject-publish' && this.overLengthLimit) this.refusingPublishes = true;
  }

  /**
   * Whether a queue that refuses publishes over its limit (reject-publish, reject-publish-dlx)
   * takes a message of this size. A classic queue takes it while it fits. A quorum queue takes
   * it until an enqueue has taken it over the limit, which rabbit_fifo's evaluate_limit tells
   * its publishers (reject_publish), and again once it is down to 80 % of the limit (go):
   * RabbitMQ's quorum queue holds one message more than x-max-length.
   */
  private admits(size: number): boolean {
    const { maxLength, maxLengthBytes } = this.settings;
    if (!this.isQuorum) {
      return !((maxLength !== undefined && this.messageCount >= maxLength) || (maxLengthBytes !== undefined && this.readyBytes + size > maxLengthBytes));
    }
    if (this.refusingPublishes) {
      const below = (limit: number | undefined, n: number) => limit === undefined || n <= Math.trunc(limit * 0.8);
      if (!below(maxLength, this.limitedCount) || !below(maxLengthBytes, this.limitedBytes)) return false;
      this.refusingPublishes = false;
    }
    return true;
  }

  /**
   * No dead-letter exchange to republish to and no deduplication values to release: what the
   * queue drops (expired, or over its length limits) is not needed, and the messages only in
   * the store are not read back (PagedReadyList.dropHead, dropExpired; RabbitMQ's
   * drop/dropwhile do not read them either).
   */
  private get nothingNeedsDropped(): boolean {
    return this.settings.deadLetterExchange === undefined && this.keyed === undefined;
  }

  /** Accounts for what PagedReadyList.dropHead or dropExpired dropped, for reason. */
  private dropped(dropped: DroppedHead, reason: DeadLetterReason): void {
    if (dropped.count === 0) return;
    this.persistent.count -= dropped.persistent.messages;
    this.persistent.bytes -= dropped.persistent.bytes;
    this.deps.dropped(this, reason, dropped.count);
  }

  /**
   * x-overflow=drop-head: drop (or dead-letter, reason maxlen) from the head until within
   * limits; without anything that needs the dropped messages, a policy capping a deep queue
   * costs what it keeps, not what it drops (PagedReadyList.dropHead).
   */
  private dropHeadOverLimit(): void {
    // Checked first: below the limits (most publishes) nothing is allocated. A queue that
    // refuses publishes instead keeps what a requeue or a replacement takes over its limit
    // (rabbit_amqqueue_process:maybe_drop_head only drops for drop-head).
    if (this.settings.overflow !== 'drop-head' || !this.overLengthLimit) return;
    // The head may be a requeued message not back yet (putting them back ends here again).
    if (this.returnsLeft > 0) return this.finishReturns();
    if (this.nothingNeedsDropped) this.dropped(this.ready.dropHead(this.settings.maxLength, this.settings.maxLengthBytes), 'maxlen');
    else this.removeWhile(() => this.overLengthLimit, 'maxlen');
  }

  /** More than x-max-length(-bytes) allow. */
  private get overLengthLimit(): boolean {
    const { maxLength, maxLengthBytes } = this.settings;
    return (maxLength !== undefined && this.limitedCount > maxLength) || (maxLengthBytes !== undefined && this.limitedBytes > maxLengthBytes);
  }

  /**
   * What x-max-length counts: the ready messages and a quorum queue's held dead-letters
   * (rabbit_fifo:is_over_limit).
   */
  private get limitedCount(): number {
    return this.messageCount + this.heldDeadLetterCount;
  }

  /** What x-max-length-bytes counts: their body bytes. */
  private get limitedBytes(): number {
    return this.readyBytes + this.heldDeadLetterBytes;
  }

  /**
   * Takes ready messages from the head while take(head) says so, read back from the store when
   * paged out (dead-lettering and deduplication need them), and removes them for reason.
   */
  private removeWhile(take: (head: QueuedMessage) => boolean, reason: DeadLetterReason): void {
    // A removal under way goes on in its own turn (goOnRemoving, which ends with the checks
    // that lead here), not a chunk per publish.
    if (this.continuing) return;
    const chunked = this.spreads;
    let taken: QueuedMessage[] | undefined;
    for (let head = this.ready.peek(); head !== undefined && take(head); head = this.ready.peek()) {
      if (chunked && taken !== undefined && taken.length === REMOVE_CHUNK) {
        // More than a chunk: the rest in later turns, so other clients are served in between.
        this.removing = reason;
        this.continueLater();
        break;
      }
      (taken ??= []).push(this.ready.shift()!);
    }
    if (taken) this.remove(taken, reason);
  }

  /**
   * remove() of messages out of the ready list (rejected without requeue, or returned past the
   * delivery limit): a chunk now, the rest in later turns (a consumer with a hundred thousand
   * unacknowledged messages can nack them all at once), after any removal already under way.
   */
  private removeInTurns(entries: QueuedMessage[], reason: DeadLetterReason, unacked: boolean): void {
    if (!this.spreads || (!this.continuing && entries.length <= REMOVE_CHUNK)) {
      this.remove(entries, reason, unacked);
      return;
    }
    let at = 0;
    if (!this.continuing) {
      this.remove(entries.slice(0, REMOVE_CHUNK), reason, unacked);
      at = REMOVE_CHUNK;
    }
    this.handingOn.push({ entries, at, reason, unacked });
    this.continueLater();
  }

  /** A removal beyond REMOVE_CHUNK goes on in later turns (not in unit tests, nor in finishRemoving). */
  private get spreads(): boolean {
    return this.deps.later !== undefined && !this.finishing;
  }

  private continueLater(): void {
    if (this.continuing) return;
    this.continuing = true;
    this.deps.later!.schedule(() => this.goOnRemoving());
  }

  /**
   * The next chunk of a removal spread over turns: the head removal first (it started before
   * any rejection could be waiting: nothing is delivered meanwhile), then the messages taken
   * out by removeInTurns; once none is left, what waited for it (drop-head, expiry, dispatch).
   */
  private goOnRemoving(): void {
    if (!this.continuing) return; // finished at once by basic.get (finishRemoving)
    this.continuing = false;
    if (this.deleted) {
      this.removing = undefined;
      this.handingOn.length = 0;
      return;
    }
    const reason = this.removing;
    this.removing = undefined;
    // Under the limits and deadlines in force now (a policy may have changed them meanwhile).
    if (reason === 'maxlen') this.dropHeadOverLimit();
    else if (reason === 'expired') this.expireHead();
    if (this.continuing) return this.changed();
    const budget = this.finishing ? Number.POSITIVE_INFINITY : reason === undefined ? REMOVE_CHUNK : 0;
    takeParts(this.handingOn, budget, (part, h) => this.remove(part, h.reason, h.unacked));
    if (this.handingOn.length > 0) {
      this.continueLater();
      return this.changed();
    }
    // Publishes meanwhile may have taken a drop-head queue over its limit.
    if (!this.continuing && this.settings.overflow === 'drop-head') this.dropHeadOverLimit();
    if (!this.continuing) this.expireHead();
    if (!this.continuing) this.maybeDispatch();
    this.changed();
  }

  /** A removal spread over turns is done now (basic.get must not take a message it removes). */
  private finishRemoving(): void {
    if (!this.continuing) return;
    this.finishing = true;
    try {
      this.goOnRemoving();
    } finally {
      this.finishing = false;
    }
  }

  /**
   * After a restart: the queue's stored entries become its ready messages. Only the first
   * window is read now; the rest is paged in as consumers need it. What the queue's limits
   * and TTLs drop waits for recovered().
   */
  recover(crashed: boolean): void {
    if (this.isQuorum && this.deps.store.lastSeq(HeldDeadLetters.storeKeyOf(this.storeKey)) >= 0) {
      this.held = this.newHeldDeadLetters();
      this.held.recover();
    }
    const last = this.deps.store.lastSeq(this.storeKey);
    if (last < 0) return;
    this.nextSeq = last + 1;
    this.ready.recover(crashed ? last : 0, !this.pageable);
    // Every recovered entry is a stored one.
    this.persistent = { count: this.ready.length, bytes: this.ready.byteSize };
    if (this.keyed !== undefined) for (const entry of this.ready.entries()) this.keyed.recovered(entry);
  }

  /**
   * After a restart, once every exchange, queue and binding is back (RabbitMQ starts its queue
   * processes after rabbit_binding:recover, and each applies its arguments and policy then): a
   * drop-head queue over its length limits drops from the head (a crash can bring back what a
   * lowered limit dropped), and expired messages go, dead-lettered through the bindings of the
   * dead-letter exchange.
   */
  recovered(): void {
    if (this.settings.overflow === 'drop-head' && this.hasLengthLimit) this.dropHeadOverLimit();
    this.expireHead();
    // A new dead-letter worker forwards what the queue held (or the held ones go, if at-least-once is no longer in force).
    if (this.held !== undefined && this.deadLettersAtLeastOnce) this.held.start();
    else this.updateHeldDeadLetters();
  }

  /**
   * Memory pressure: writes transient messages held in memory beyond the window to the store,
   * until their cost (pageOutCost) reaches budget, at least one, and returns the cost written:
   * less than budget when none is left. Priority queues write nothing (see pageable).
   */
  pageOut(budget: number): number {
    return this.deleted ? 0 : this.ready.pageOut(budget);
  }

  /** PagedReadyList asks: a new entry beyond the window may stay in the store only (it is written there already). */
  mayStayInStore(entry: QueuedMessage): boolean {
    return this.pagesPersistent && entry.persisted && this.consumers.length === 0;
  }

  /**
   * Priority queues keep every message in memory: a paged-out one could outrank the window.
   * Last-value queues too: a new message replaces a ready one in place (one per key at most).
   */
  private get pageable(): boolean {
    return this.durable && this.settings.maxPriority === undefined && this.declared.lastValue === undefined;
  }

  // ---- taking and settling ------------------------------------------------------------------

  /**
   * basic.get: takes the head message, or undefined when the queue is empty. The caller goes on
   * with delivered() or settle(), which tell the toolkit's watcher.
   */
  take(): QueuedMessage | undefined {
    this.touch();
    this.finishReturns();
    this.finishRemoving();
    this.expireHead();
    const m = this.ready.shift();
    // Messages that expired behind the head go now, so get-ok's message-count is exact.
    this.expireHead();
    if (!m) this.changed();
    return m;
  }

  /**
   * Records that a message left the ready list for a delivery that needs an ack. Nothing is
   * written: a requeue stores the redelivered mark, and after a crash every recovered message
   * counts as redelivered (see Broker.recover).
   */
  delivered(entry: QueuedMessage): void {
    if (this.keyed !== undefined) this.keyed.delivered(entry);
    this.unackedCount++;
    this.unackedSize += entry.msg.size;
    this.changed();
  }

  /** A message was delivered with no-ack (to a consumer or by basic.get): it is gone. */
  settle(entry: QueuedMessage): void {
    this.forget(entry);
    this.changed();
  }

  /** entry leaves the queue for good; `unacked`: it was delivered and not yet acknowledged. */
  private forget(entry: QueuedMessage, unacked = false): void {
    if (this.keyed !== undefined) this.keyed.gone(entry, unacked);
    if (entry.persisted && !this.deleted) this.unstore(entry);
  }

  /** A delivered message was acknowledged. */
  ack(entry: QueuedMessage, dispatch = true): void {
    this.unackedCount--;
    this.unackedSize -= entry.msg.size;
    this.forget(entry, true);
    // dispatch false: the caller settles all the messages of one ack, then calls maybeDispatch().
    if (dispatch) this.maybeDispatch();
    this.changed();
  }

  /** basic.reject / basic.nack with requeue=false: dead-letter (reason rejected) or drop. */
  discard(entries: QueuedMessage[]): void {
    this.undelivered(entries);
    if (!this.deleted) this.removeInTurns(entries, 'rejected', true);
    this.maybeDispatch();
    this.changed();
  }

  /** Delivered messages that are no longer unacknowledged (requeued or discarded); returns their body bytes. */
  private undelivered(entries: QueuedMessage[]): number {
    let bytes = 0;
    for (const e of entries) bytes += e.msg.size;
    this.unackedCount -= entries.length;
    this.unackedSize -= bytes;
    return bytes;
  }

  /** A persisted entry leaves the queue for good: out of the store. */
  private unstore(entry: QueuedMessage): void {
    this.deps.store.remove(this.storeKey, entry.seq);
    this.persistent.count--;
    this.persistent.bytes -= entry.msg.size;
  }

  /**
   * Puts delivered messages back at their original positions with redelivered=true. A quorum
   * queue counts the return and dead-letters a message past its x-delivery-limit.
   */
  requeue(entries: QueuedMessage[]): void {
    const bytes = this.undelivered(entries);
    if (this.deleted) return;
    if (this.returnsLeft > 0 || (entries.length > RETURN_CHUNK && this.returnsSpread)) {
      this.returnInTurns(entries, bytes);
      return;
    }
    this.putBack(entries);
    this.afterReturns();
  }

  /**
   * A classic queue puts back a requeue of more than RETURN_CHUNK a chunk a turn, so that a
   * channel closed with a hundred thousand unacknowledged does not hold the event loop: they go
   * back by seq, so the list ends as if all went back at once, and nothing leaves the queue
   * meanwhile. Not a quorum queue (a return may take a new seq, behind what is published
   * meanwhile) nor one with deduplication or last values (what is published meanwhile is
   * checked against the messages in the queue). Not in unit tests (no later turns).
   */
  private get returnsSpread(): boolean {
    return this.deps.later !== undefined && !this.isQuorum && this.keyed === undefined;
  }

  /** Requeued messages go back a chunk now and the rest in later turns (returnOn). */
  private returnInTurns(entries: QueuedMessage[], bytes: number): void {
    this.returning.push({ entries, at: 0 });
    this.returnsLeft += entries.length;
    this.returnsBytes += bytes;
    if (this.returnScheduled) this.changed();
    else this.returnOn(RETURN_CHUNK);
  }

  /** Puts back up to `budget` requeued messages; then the next chunk's turn, or what waited for them all. */
  private returnOn(budget: number): void {
    takeParts(this.returning, budget, (part) => {
      this.returnsLeft -= part.length;
      for (const e of part) this.returnsBytes -= e.msg.size;
      this.putBack(part);
    });
    if (this.returnsLeft > 0) {
      if (!this.returnScheduled) {
        this.returnScheduled = true;
        this.deps.later!.schedule(this.nextReturns);
      }
      this.changed();
      return;
    }
    this.afterReturns();
  }

  private readonly nextReturns = (): void => {
    this.returnScheduled = false;
    // (All put back at once meanwhile by finishReturns, or the queue deleted: nothing left.)
    if (this.returnsLeft > 0) this.returnOn(RETURN_CHUNK);
  };

  /** Every requeued message not back in the list yet goes back now. */
  private finishReturns(): void {
    if (this.returnsLeft > 0) this.returnOn(Number.POSITIVE_INFINITY);
  }

  /** Requeued messages go back to their positions, redelivered (requeue). */
  private putBack(entries: QueuedMessage[]): void {
    if (this.keyed !== undefined) for (const entry of entries) this.keyed.returned(entry);
    const limit = this.settings.deliveryLimit;
    const overLimit: QueuedMessage[] = [];
    const back: QueuedMessage[] = [];
    let marks: QueuedMessage[] | undefined;
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
          this.deps.store.enqueue(this.storeKey, entry, entry.msg);
        }
        this.ready.push(entry);
        continue;
      }
      // The redelivered mark survives a restart.
      if (entry.persisted && firstReturn) (marks ??= []).push(entry);
      back.push(entry);
    }
    // All at once: one merge, not an insert (that may move the whole list) per message.
    this.ready.insertAllSorted(back);
    if (marks !== undefined) this.storeMarks(marks);
    if (overLimit.length > 0) this.removeInTurns(overLimit, 'delivery_limit', false);
  }

  /** Once requeued messages are back: the limits and deadlines, then deliveries. */
  private afterReturns(): void {
    // Requeued messages count against x-max-length again: the head goes first.
    if (this.hasLengthLimit) this.dropHeadOverLimit();
    this.expireHead();
    this.maybeDispatch();
    this.changed();
  }

  /**
   * Writes the redelivered marks of requeued messages to the store: MARK_CHUNK now and the
   * rest a chunk per later turn (markOn), so a channel closed with a hundred thousand persistent
   * messages unacknowledged does not hold the event loop for the store's reads and writes. The
   * messages are back in the queue at once either way; a mark is only what a restart reads (a
   * crash marks every recovered message redelivered anyway), and an entry acknowledged before
   * its mark is written is skipped by the store.
   */
  private storeMarks(entries: QueuedMessage[]): void {
    if (this.marks !== undefined) {
      for (const e of entries) this.marks.push(e);
      return;
    }
    const now = this.spreads ? Math.min(entries.length, MARK_CHUNK) : entries.length;
    for (let i = 0; i < now; i++) this.deps.store.update(this.storeKey, entries[i]!);
    if (now === entries.length) return;
    this.marks = entries;
    this.marked = now;
    this.deps.later!.schedule(() => this.markOn());
  }

  /** The next chunk of storeMarks. */
  private markOn(): void {
    const marks = this.marks;
    if (marks === undefined) return;
    if (!this.deleted) {
      const end = Math.min(marks.length, this.marked + MARK_CHUNK);
      for (let i = this.marked; i < end; i++) this.deps.store.update(this.storeKey, marks[i]!);
      if (end < marks.length) {
        this.marked = end;
        this.deps.later!.schedule(() => this.markOn());
        return;
      }
    }
    this.marks = undefined;
    this.marked = 0;
  }

  /**
   * Takes entries out of the queue for good: dead-lettered when the queue has a DLX (deadLetter
   * is told either way: RabbitMQ counts messages dropped for want of a DLX too).
   */
  private remove(entries: QueuedMessage[], reason: DeadLetterReason, unacked = false): void {
    // Released first: a dead-letter cycle back into this queue must find the values free.
    if (this.keyed !== undefined) for (const entry of entries) this.keyed.gone(entry, unacked);
    // rabbit_fifo drops over its limit one message at a time, prepending each one's
    // dead-lettering to the effects of the others: the newest dropped goes first.
    this.deps.deadLetter(this, reason === 'maxlen' && this.isQuorum && entries.length > 1 ? entries.slice().reverse() : entries, reason);
    for (const entry of entries) if (entry.persisted) this.unstore(entry);
  }

  /**
   * queue.purge: removes every ready message, without reading any back from the store: with
   * none delivered and unacknowledged, every stored entry of the queue is a ready one and the
   * store drops them all at once (MessageStore.deleteQueue); with some, the delivered ones are
   * stored again under the queue's key before the rest are dropped
   * (PagedReadyList.clearKeepingDelivered), or, when no entry is only in the store, the ready
   * ones are taken one by one from memory. A queue with deduplication or last values forgets
   * what its ready messages held in one step (KeyedMessages.purged: only the unacknowledged
   * ones still hold values), so it takes the same paths (before, it read every paged-out
   * message back to release its value: 5.8 s of a held event loop for 300,000).
   */
  purge(): number {
    this.finishReturns();
    const count = this.ready.length;
    this.keyed?.purged();
    if (this.unackedCount === 0) {
      this.ready.clear();
      if (this.persistent.count > 0) {
        this.deps.store.deleteQueue(this.storeKey);
        this.persistent = { count: 0, bytes: 0 };
      }
      this.changed();
      return count;
    }
    const left = this.ready.clearKeepingDelivered();
    if (left) {
      this.persistent = { count: left.messages, bytes: left.bytes };
      this.changed();
      return count;
    }
    let taken = 0;
    for (let entry = this.ready.shift(); entry; entry = this.ready.shift()) {
      if (entry.persisted) this.unstore(entry);
      taken++;
    }
    this.changed();
    return taken;
  }

  /**
   * Every ready message in delivery order, paged-out ones included (read back from the store
   * as copies), without taking, moving or expiring any: the test toolkit's look inside.
   */
  readyEntries(): Iterable<QueuedMessage> {
    // (Requeued messages going back over turns are put back first: they count as ready.)
    this.finishReturns();
    return this.ready.entries();
  }

  // ---- TTL ----------------------------------------------------------------------------------

  /**
   * Expires messages at the head of the queue, as RabbitMQ does (a message with a long TTL
   * holds back expired ones behind it), and arms one timer for the new head's deadline.
   */
  private expireHead(): void {
    // A removal under way calls this when done (goOnRemoving), as requeued messages going back
    // do (returnOn): no timer for a head it may take, or that is not back yet.
    if (this.deleted || this.continuing || this.returnsLeft > 0) return;
    const now = this.deps.clock.now();
    // Checked first: the common case, on every basic.get, is a head that is not due (no closure).
    const first = this.ready.peek();
    if (first !== undefined && isDue(first.expiresAt, now)) {
      if (this.nothingNeedsDropped) this.dropped(this.ready.dropExpired(now), 'expired');
      else this.removeWhile((head) => isDue(head.expiresAt, now), 'expired');
      if (this.continuing) return;
    }
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
        this.changed();
      }, due - now);
    }
  }

  /**
   * The queue's timers stop (message TTL, x-expires, the held dead-letters' retry): when it is
   * deleted, and when the broker closes (Broker.close, just before its store closes, so that none
   * fires on a closed store; what they waited for is recovered and armed at the next start).
   */
  stopTimers(): void {
    this.expiryTimer?.cancel();
    this.expiryTimer = undefined;
    this.expiryDue = 0;
    this.unusedTimer?.cancel();
    this.unusedTimer = undefined;
    this.held?.stopTimer();
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
    this.consumers.add(consumer);
    this.hadConsumer = true;
    (this.use ??= new ConsumerUse(() => this.deps.clock.monotonicOncePerTask())).activate();
    this.touch();
    this.dispatch();
    this.changed();
  }

  /** Removes a consumer (basic.cancel or its channel closed); may auto-delete the queue. */
  removeConsumer(consumer: Consumer): void {
    if (!this.consumers.remove(consumer)) return;
    if (this.autoDelete && this.hadConsumer && this.consumers.length === 0 && !this.deleted) {
      this.deps.onAutoDelete(this);
      return;
    }
    this.touch();
    // Under single-active-consumer the next consumer in line takes over now.
    this.maybeDispatch();
    this.changed();
  }

  hasExclusiveConsumer(): boolean {
    return this.consumers.hasExclusive();
  }

  /** The consumer that receives under x-single-active-consumer (the longest-registered one). */
  get activeConsumer(): Consumer | undefined {
    return this.consumers.active;
  }

  /** Called by the vhost when the queue is deleted: consumers are told, entries dropped. */
  destroy(): number {
    const count = this.messageCount;
    this.deleted = true;
    this.returning.length = 0;
    this.returnsLeft = 0;
    this.returnsBytes = 0;
    this.stopTimers();
    this.ready.clear();
    this.keyed?.destroy();
    this.held?.drop();
    this.persistent = { count: 0, bytes: 0 };
    if (this.durable) this.deps.store.deleteQueue(this.storeKey);
    for (const c of this.consumers.clear()) c.host.cancelledByServer(c);
    this.changed();
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
    // While a removal is spread over turns its next chunk may take the head, and while requeued
    // messages go back over turns the head may not be back yet: nothing goes out.
    if (this.dispatching || this.deleted || this.continuing || this.returnsLeft > 0) return;
    this.dispatching = true;
    let expired = false;
    try {
      // Read the clock only once a message with a TTL reaches the head.
      let now = -1;
      for (;;) {
        const head = this.ready.peek();
        if (!head) break;
        if (head.expiresAt !== 0 && head !== fresh) {
          if (now < 0) now = this.deps.clock.now();
          if (head.expiresAt <= now) {
            this.expireHead();
            expired = true;
            // A removal spread over turns takes the rest (and dispatches when done).
            if (this.continuing) break;
            continue;
          }
        }
        const consumer = this.consumers.pick();
        if (!consumer) {
          this.use?.deactivate();
          break;
        }
        this.use?.activate();
        this.ready.shift();
        consumer.host.deliver(consumer, this, head);
      }
    } finally {
      this.dispatching = false;
    }
    // Each delivery told the watcher (delivered, settle); an expiry here has not.
    if (expired) this.changed();
  }
}
