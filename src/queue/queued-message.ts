import type { Message } from './message.js';

/** Whether a deadline (absolute ms, 0 for none: a QueuedMessage's or a stored entry's expiresAt) has come at now. */
export function isDue(expiresAt: number, now: number): boolean {
  return expiresAt !== 0 && expiresAt <= now;
}

/**
 * A message's place in one queue. The Message itself may sit in several queues at once.
 *
 * Every ready message of every queue has one, so it is kept small: the two flags and the
 * delivery count share one number (a queue of small messages is mostly these objects and the
 * messages, and each one's size is what the young generation copies as it fills).
 */
export class QueuedMessage {
  /**
   * redelivered (bit 0), persisted (bit 1), the delivery count above them. Changed by
   * arithmetic, not bitwise operators (which cut to 32 bits), and read with `&` (which keeps the
   * low bits of any integer), so the count stays exact up to the store's 2^32.
   */
  private bits: number;

  constructor(
    /** Position in the queue; a requeued message keeps it, so it goes back where it was. */
    public seq: number,
    public msg: Message,
    /** Absolute expiry (ms since epoch), 0 for none. */
    public expiresAt: number,
    persisted: boolean,
    redelivered = false,
    deliveryCount = 0,
  ) {
    this.bits = (redelivered ? REDELIVERED : 0) + (persisted ? PERSISTED : 0) + deliveryCount * COUNT_UNIT;
  }

  /** The message's store id: with it, a QueuedMessage is the store's QueueEntry (MessageStore.enqueue copies it). */
  get msgId(): number {
    return this.msg.id;
  }

  get redelivered(): boolean {
    return (this.bits & REDELIVERED) !== 0;
  }

  set redelivered(on: boolean) {
    if (on !== this.redelivered) this.bits += on ? REDELIVERED : -REDELIVERED;
  }

  /** True when the message store holds this entry (durable queue, persistent message). */
  get persisted(): boolean {
    return (this.bits & PERSISTED) !== 0;
  }

  set persisted(on: boolean) {
    if (on !== this.persisted) this.bits += on ? PERSISTED : -PERSISTED;
  }

  /** Deliveries so far (x-delivery-count of quorum queues). */
  get deliveryCount(): number {
    return Math.floor(this.bits / COUNT_UNIT);
  }

  set deliveryCount(n: number) {
    this.bits = (this.bits & FLAGS) + n * COUNT_UNIT;
  }
}

const REDELIVERED = 1;
const PERSISTED = 2;
const FLAGS = REDELIVERED | PERSISTED;
/** The delivery count is bits / 4. */
const COUNT_UNIT = 4;
