import type { Clock, Timer } from '../clock.js';
import type { MessageStore } from '../store/message-store.js';
import { latestDeath } from './dead-letter.js';
import { Message } from './message.js';
import type { DeadLetterReason } from './queue.js';

/**
 * How many held dead-letters are out at once, forwarded and waiting for their target queues:
 * rabbit_fifo_dlx_worker's prefetch (dead_letter_worker_consumer_prefetch, 32 in 3.10.8). The
 * rest wait in the store, in order, and only the ones out are in memory.
 */
export const DEAD_LETTER_PREFETCH = 32;

/**
 * dead_letter_worker_publisher_confirm_timeout (180 s in 3.10.8; the broker's deadLetterRetryMs):
 * every so often the ones out that no queue took, or that a queue refused this long ago, are
 * forwarded again.
 */
export const DEAD_LETTER_RETRY_MS = 180_000;

/** Held dead-letters read back from the store at once after a restart (their refs only are kept). */
const RECOVER_PAGE = 4096;

/** A held dead-letter in the store: its seq under the held key, its message id and body size. */
interface HeldRef {
  readonly seq: number;
  readonly msgId: number;
  readonly size: number;
}

/** A dead-letter out (what a rabbit_fifo_dlx_worker pending record holds). */
export interface OutDeadLetter {
  /** Its record in the store; undefined until it has to be held (its first forward failed). */
  ref: HeldRef | undefined;
  /** The message as dead-lettered (x-death updated: deadLetterMessage). */
  message: Message;
  readonly reason: DeadLetterReason;
  /** Names of the target queues that took it: not offered it again. */
  settled: Set<string> | undefined;
  /** When it was last offered to a queue (Clock.now); undefined while no queue was reached. */
  lastPublishedAt: number | undefined;
}

/**
 * Routes and offers a dead-letter to the queues its dead-letter exchange reaches (those in
 * out.settled excepted); true once it need not be held any longer: every queue reached took it.
 */
export type ForwardDeadLetter = (out: OutDeadLetter) => boolean;

export interface HeldDeadLettersDeps {
  store: MessageStore;
  clock: Clock;
  forward: ForwardDeadLetter;
  /** The retry period (DEAD_LETTER_RETRY_MS unless configured). */
  retryMs: number;
}

/**
 * The dead-letters a quorum queue holds under x-dead-letter-strategy at-least-once (rabbit_fifo_dlx
 * and its worker, on one node): a message the queue dead-letters is forwarded at once, and is
 * kept, in the store under its own key, until every queue its dead-letter exchange routes it to
 * has taken it. One that no queue took (the exchange is missing or routes it nowhere) or that a
 * queue refused (x-overflow reject-publish) stays held, counts in the queue's messages and length
 * limits (messages_dlx, message_bytes_dlx), survives a restart, and is forwarded again every
 * retry period (DEAD_LETTER_RETRY_MS by default), when a policy of the queue changes (those no
 * queue took yet) and after a restart. Its removal from the store and its copies in the target
 * queues are written in one commit, so a crash loses nothing and at most repeats a forward.
 */
export class HeldDeadLetters {
  /** Held in the store, not out yet, in order: refs[at..]. */
  private waiting: HeldRef[] = [];
  private at = 0;
  /** Forwarded and held, in order, at most DEAD_LETTER_PREFETCH. */
  private readonly out: OutDeadLetter[] = [];
  private nextSeq = 0;
  private timer: Timer | undefined = undefined;
  /** Held messages and their body bytes (out and waiting). */
  count = 0;
  bytes = 0;

  constructor(
    private readonly storeKey: string,
    private readonly deps: HeldDeadLettersDeps,
  ) {}

  /** The key the store keeps a queue's held dead-letters under. */
  static storeKeyOf(queueStoreKey: string): string {
    return `${queueStoreKey}\u0000dlx`;
  }

  /**
   * A message the queue dead-lettered (made with deadLetterMessage) for reason: forwarded at once
   * while fewer than DEAD_LETTER_PREFETCH are out and none waits, and written to the store (in
   * this turn, so in the commit that removes it from the queue) unless every target took it.
   */
  hold(message: Message, reason: DeadLetterReason): void {
    if (this.at === this.waiting.length && this.out.length < DEAD_LETTER_PREFETCH) {
      const out: OutDeadLetter = { ref: undefined, message, reason, settled: undefined, lastPublishedAt: undefined };
      if (this.deps.forward(out)) return;
      out.ref = this.write(out.message);
      this.out.push(out);
      this.arm();
      return;
    }
    this.waiting.push(this.write(message));
  }

  private write(message: Message): HeldRef {
    const ref: HeldRef = { seq: this.nextSeq++, msgId: message.id, size: message.size };
    this.deps.store.enqueue(this.storeKey, { seq: ref.seq, msgId: ref.msgId, redelivered: false, deliveryCount: 0, expiresAt: 0 }, message);
    this.count++;
    this.bytes += ref.size;
    return ref;
  }

  /**
   * After a restart: the held dead-letters in the store wait in order (start() forwards them
   * once the exchanges, queues and bindings are back).
   */
  recover(): void {
    this.waiting = [];
    this.at = 0;
    this.count = 0;
    this.bytes = 0;
    // A page at a time: a range read keeps what it read (values, inline messages) until the next.
    for (let from = 0; ;) {
      const page = this.deps.store.readEntries(this.storeKey, from, RECOVER_PAGE);
      for (const e of page) {
        this.waiting.push({ seq: e.seq, msgId: e.msgId, size: e.size });
        this.count++;
        this.bytes += e.size;
      }
      if (page.length < RECOVER_PAGE) break;
      from = page[page.length - 1]!.seq + 1;
    }
    this.nextSeq = this.count > 0 ? this.waiting[this.count - 1]!.seq + 1 : 0;
  }

  /** A new rabbit_fifo_dlx_worker (after a restart): takes the first ones out and forwards them. */
  start(): void {
    this.takeOut();
    this.arm();
  }

  /**
   * redeliver_and_ack: forwards again the ones out that no queue took yet, and those a queue
   * refused at least a retry period ago; then takes out more in place of those now taken.
   * Run by the timer, and when a policy of the queue changed (the worker's lookup_topology).
   */
  retry(): void {
    const now = this.deps.clock.now();
    for (const out of [...this.out]) {
      const due = out.lastPublishedAt === undefined || out.lastPublishedAt + this.deps.retryMs <= now;
      if (due && this.deps.forward(out)) this.settle(out);
    }
    this.takeOut();
    this.arm();
  }

  /** Takes waiting ones out (read back from the store) while fewer than DEAD_LETTER_PREFETCH are, forwarding each. */
  private takeOut(): void {
    while (this.out.length < DEAD_LETTER_PREFETCH && this.at < this.waiting.length) {
      const ref = this.waiting[this.at++]!;
      const stored = this.deps.store.readMessage(this.storeKey, ref);
      if (stored === undefined) {
        // Not in the store (it cannot be: it was written with the ref): nothing to forward.
        this.forget(ref);
        continue;
      }
      const message = Message.fromStored(stored);
      const out: OutDeadLetter = { ref, message, reason: latestDeath(message).reason, settled: undefined, lastPublishedAt: undefined };
      if (this.deps.forward(out)) this.forget(ref);
      else this.out.push(out);
    }
    if (this.at === this.waiting.length && this.at > 0) {
      this.waiting = [];
      this.at = 0;
    }
  }

  /** Every target took out: it is held no longer. */
  private settle(out: OutDeadLetter): void {
    this.out.splice(this.out.indexOf(out), 1);
    this.forget(out.ref!);
  }

  private forget(ref: HeldRef): void {
    this.deps.store.remove(this.storeKey, ref.seq);
    this.count--;
    this.bytes -= ref.size;
  }

  /** The retry timer runs while any are out (maybe_set_timer, maybe_cancel_timer). */
  private arm(): void {
    if (this.out.length === 0) {
      this.timer?.cancel();
      this.timer = undefined;
      return;
    }
    this.timer ??= this.deps.clock.setTimeout(() => {
      this.timer = undefined;
      this.retry();
    }, this.deps.retryMs);
  }

  /** The broker is closing: the retry timer stops (the held ones are retried after a restart). */
  stopTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  /**
   * The queue is deleted, or dead-letters at least once no longer (rabbit_fifo_dlx:switch_from
   * deletes what it held): every held dead-letter is dropped. Returns how many there were.
   */
  drop(): number {
    const count = this.count;
    this.timer?.cancel();
    this.timer = undefined;
    if (count > 0) this.deps.store.deleteQueue(this.storeKey);
    this.out.length = 0;
    this.waiting = [];
    this.at = 0;
    this.count = 0;
    this.bytes = 0;
    return count;
  }
}
