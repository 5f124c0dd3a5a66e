import type { Message } from './message.js';

/** A message's place in one queue. The Message itself may sit in several queues at once. */
export interface QueuedMessage {
  /** Position in the queue; a requeued message keeps it, so it goes back where it was. */
  seq: number;
  msg: Message;
  redelivered: boolean;
  deliveryCount: number;
  /** Absolute expiry (ms since epoch), 0 for none. */
  expiresAt: number;
  /** True when the message store holds this entry (durable queue, persistent message). */
  persisted: boolean;
}
