import type { Connection } from './connection/connection.js';
import type { Queue } from './queue/queue.js';
import type { QueuedMessage } from './queue/queued-message.js';

/** What the test toolkit hears from queues (src/testing/until.ts). */
export interface QueueWatcher {
  /**
   * The queue's ready, unacknowledged or consumer counts may have changed, or it was created or
   * deleted. Called at points where the counts agree with each other (never between a message
   * leaving the ready list and its delivery being counted).
   */
  changed(queue: Queue): void;
  /** A message was routed to the queue and accepted (not refused by x-overflow). */
  enqueued(queue: Queue, entry: QueuedMessage): void;
}

/** What the test toolkit hears from connections. */
export interface ConnectionWatcher {
  /** The connection is open (past connection.open-ok). */
  opened(conn: Connection): void;
}

/**
 * The seams of the test toolkit (src/testing, docs/testing.md) in the core. The broker owns one
 * Hooks; every field is undefined unless the toolkit sets it, so where the core consults one it
 * pays a property read and a null check. Each seam, and who consults it:
 *
 * - `queues`: Queue, after each operation that changes its counts and after each enqueue
 *   (`until`: queue length, drained, consumer count, a message routed to a queue).
 * - `connections`: Broker, when a connection opens (`until.connection`).
 * - `nackPublish`: Publisher, for each publish on a channel in confirm mode, before routing
 *   (`faults.nackPublishes`): true drops the message and sends basic.nack, the client's view of
 *   a queue refusing it (x-overflow=reject-publish).
 * - `holdConfirms`: PublisherConfirms, before a channel's confirms go out (`faults.holdConfirms`):
 *   true keeps them (acks and nacks, in seq order) until `resume` is called, as a slow disk
 *   holds back the commit they wait for.
 *
 * The other faults use public operations: Connection.closeWithError and dropAfterFrames,
 * Broker.setAlarm and retryStore, Store.failNextCommit.
 */
export class Hooks {
  queues: QueueWatcher | undefined = undefined;
  connections: ConnectionWatcher | undefined = undefined;
  nackPublish: ((conn: Connection) => boolean) | undefined = undefined;
  holdConfirms: ((conn: Connection, resume: () => void) => boolean) | undefined = undefined;
}
