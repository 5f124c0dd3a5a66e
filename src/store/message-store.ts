/**
 * The message half of the store contract (src/store/README.md explains the LMDB layout).
 *
 * Every mutation is synchronous and takes effect at once for the reads of this store
 * (read-your-writes); it becomes durable with the next group commit. `sync()` is how a caller
 * learns that: the broker sends publisher confirms only once the `sync()` it called right
 * after its writes has resolved (DESIGN.md, convention 8).
 */

/** A message as persisted: its body is stored once however many queues hold it. */
export interface PersistedMessage {
  /** Broker-assigned, unique and increasing across restarts (see MessageStore.nextMessageId). */
  id: number;
  /** At most 255 UTF-8 bytes (an AMQP shortstr). */
  exchange: string;
  /** At most 255 UTF-8 bytes (an AMQP shortstr). */
  routingKey: string;
  /** Raw AMQP content-header frame payload (properties), kept as received. */
  header: Buffer;
  body: Buffer;
  /**
   * The body as a range of a larger buffer, bodyMemory[bodyOffset, bodyOffset + bodySize), given
   * where reading `body` makes a view each time (a Message keeps a small body in a shared slab):
   * the stores measure and copy the body through these when present (record-codec.ts).
   */
  readonly bodyMemory?: Buffer;
  readonly bodyOffset?: number;
  readonly bodySize?: number;
  /**
   * The keys of the BCC header the message was published with, which routing removed from its
   * header (RabbitMQ keeps them in basic_message.routing_keys: trace deliveries list them).
   */
  bccRoutingKeys?: string[] | undefined;
}

export interface QueueEntry {
  /** Position in its queue: an integer in [0, 2^53); requeue keeps the seq. */
  seq: number;
  msgId: number;
  /** Delivered at least once. */
  redelivered: boolean;
  /** For quorum x-delivery-count; an integer in [0, 2^32). */
  deliveryCount: number;
  /** Absolute ms epoch, 0 = never (per-message/queue TTL must hold across restarts). */
  expiresAt: number;
}

/** Where a message is found: the entry that refers to it (a store may keep it inside the entry). */
export type MessageRef = Pick<QueueEntry, 'seq' | 'msgId'>;

/**
 * An entry as a store holds it and readEntries returns it: with its message's body size, so a
 * queue can count what it drops without reading the message back.
 */
export interface StoredEntry extends QueueEntry {
  size: number;
}

/** What a queue holds, for queue.declare-ok after recovery. `bytes` counts body bytes. */
export interface EntryCounts {
  messages: number;
  bytes: number;
}

/** Whole-store counts, for tests and diagnostics (`messages` counts stored bodies). */
export interface StoreStats {
  messages: number;
  entries: number;
}

export interface MessageStore {
  /** Next message id (persisted high-water mark, so ids of stored messages never repeat after a restart). */
  nextMessageId(): number;
  /**
   * Records entry in queue; writes msg (header+body) once if this id is not stored yet;
   * refcounts it. `entry.msgId` must equal `msg.id`. An entry already at that seq is replaced.
   * The store copies the entry's fields and keeps neither object (the caller may pass its own,
   * and change it later, as the queue does with its QueuedMessage: no copy per message).
   */
  enqueue(queue: string, entry: QueueEntry, msg: PersistedMessage): void;
  /**
   * Removes an entry (ack, reject/nack without requeue, purge, expiry); frees the message when
   * no entry refers to it. Removing a missing entry does nothing.
   */
  remove(queue: string, seq: number): void;
  /**
   * Updates redelivered, deliveryCount and expiresAt of an entry (called when delivered; cheap,
   * batched, need not be awaited). The stored msgId is kept; a missing entry is ignored.
   */
  update(queue: string, entry: QueueEntry): void;
  /**
   * Moves an entry between queues atomically in one transaction (dead-lettering, which may also
   * rewrite the header). If `msg.id` is the entry's current message and no other entry shares
   * it, the stored message is rewritten with `msg`; if it is shared, `msg` must be unchanged
   * (give a rewritten message a new id from nextMessageId(), or this throws). The entries of a
   * deleted queue the store has not swept yet still count as sharing it (deleteQueue). A missing
   * source entry makes this a plain enqueue into toQueue.
   */
  move(fromQueue: string, seq: number, toQueue: string, entry: QueueEntry, msg: PersistedMessage): void;
  /**
   * Drops every entry of a queue (queue.delete of a durable queue; also the fast way to purge):
   * at once for every read of the queue, whose name is free for a new queue at once. The LMDB
   * store removes the entries from the file, and the messages only they held, a chunk per
   * commit in the background (so a queue of millions does not hold the event loop); until then
   * readMessage may still find such a message, and stats() counts what is left.
   */
  deleteQueue(queue: string): void;
  /**
   * Resolves when every write issued before the call is durable on disk (group commit: writes
   * from all connections in one turn share one commit). Rejects if a commit failed; after a
   * failed commit every later sync() rejects too, until Store.resume() has written what was left.
   */
  sync(): Promise<void>;
  /**
   * Has `write` run once before the writes issued so far become durable, its own writes joining
   * theirs: for a writer that holds its writes back to make one record of many (a stream's open
   * chunk), for as long as the store lets it. A sync() called after this call resolves only once
   * what `write` wrote is durable too. The LMDB store runs it as it flushes the batch (a batch of
   * one turn, or of every turn while the commit before it was in flight or held after it: a
   * chunk a commit); the memory store at the end of the turn, or in a sync() before that.
   */
  beforeCommit(write: () => void): void;
  /** Reads a queue's entries in seq order starting at seq >= fromSeq, at most limit of them, without bodies. */
  readEntries(queue: string, fromSeq: number, limit: number): StoredEntry[];
  /** Reads a queue's last entries, at most limit of them, in seq order, without bodies. */
  readLastEntries(queue: string, limit: number): StoredEntry[];
  /**
   * Loads the message (header + body) of the queue's entry `entry.seq`, whose message is
   * `entry.msgId`, for lazy paging of bodies. The LMDB store keeps a small message of one entry
   * inside that entry, so a message is found through an entry of a queue that holds it.
   */
  readMessage(queue: string, entry: MessageRef): PersistedMessage | undefined;
  /** Counts (for declare-ok after recovery). */
  countEntries(queue: string): EntryCounts;
  /** Highest seq present in the queue, or -1 if it is empty (the broker numbers on from it after recovery). */
  lastSeq(queue: string): number;
  /** Names of queues that have entries (for recovery cleanup of queues no longer in metadata). */
  queues(): string[];
  /** Stored bodies and entries (LMDB: as committed, so call after `await sync()`). */
  stats(): StoreStats;
  /**
   * Resolves once the entries of every deleted queue are gone from the store and that is
   * committed (LMDB sweeps them in the background); rejects if the sweep stopped first (the
   * store closed, or a commit failed: resume() goes on with it). For tests and benchmarks.
   */
  swept(): Promise<void>;
  close(): Promise<void>;
}

export type { Store } from './store.js';
