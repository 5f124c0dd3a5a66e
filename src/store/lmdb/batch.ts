/**
 * The batch of one event-loop turn and the overlay it writes into. A mutation changes the
 * overlay at once (so the store reads its own writes) and joins the open batch; the commit
 * engine (commit.ts) turns the batch into one LMDB transaction and, once that commit resolved,
 * releases the overlay items the batch was the last to touch.
 */

import type { PersistedMessage } from '../message-store.js';
import { messageKeyInto, type HeldEntry } from '../record-codec.js';
import { readRefs, type Bin, type Databases, type DamagedRecord, type QueueIndexRecord } from './databases.js';
import { lowerBound } from '../../sorted.js';

export interface QueueState {
  name: string;
  key: Buffer;
  id: number;
  count: number;
  bytes: number;
  /** Upper bound of any seq stored (undefined until first needed): enqueue above it needs no read. */
  knownMaxSeq: number | undefined;
  overlay: Map<number, EntryItem>;
  /** How many of the overlay's items hold an entry (the others are removals). */
  overlayEntries: number;
  /** Deleted, and its entries (and index record) gone or going with the batches flushed. */
  deleted: boolean;
  /**
   * Deleted, with entries left in the file: the seq the sweep goes on from (its index record is
   * then sweepKey(id), databases.ts). Undefined for a live queue.
   */
  sweepFrom: number | undefined;
}

export function newQueueState(name: string, key: Buffer, id: number): QueueState {
  return { name, key, id, count: 0, bytes: 0, knownMaxSeq: undefined, overlay: new Map(), overlayEntries: 0, deleted: false, sweepFrom: undefined };
}

/** An entry written by a batch not yet committed; `entry` null = removed. */
export interface EntryItem {
  qs: QueueState;
  seq: number;
  entry: HeldEntry | null;
  /** Present in the file as of the batches already flushed. */
  onDisk: boolean;
  /** ...and holding its message there (inline: counted by the inline-entries counter). */
  diskInline: boolean;
  batch: Batch;
}

/** A message whose refcount was changed by a batch not yet committed. */
export interface MsgItem {
  id: number;
  refs: number;
  /** Kept for readMessage until committed, when written by a batch in flight. */
  msg: PersistedMessage | null;
  /** The message record must be (re)written by the open batch. */
  write: boolean;
  /** messageSize(msg) while write is set: measured once, when msg is set. */
  size: number;
  /**
   * The refcount as the file holds it once the batches already flushed commit: 0 = no message
   * record, 1 = a message record and no refcount record, n > 1 = both (refcount record n).
   */
  diskRefs: number;
  batch: Batch;
}

export interface MetaItem {
  id: string;
  db: Bin;
  key: Buffer;
  value: Buffer | null;
  batch: Batch;
}

interface Waiter {
  promise: Promise<void>;
  resolve: () => void;
  reject: (err: Error) => void;
}

export const RESOLVED = Promise.resolve();

export class Batch {
  readonly entries: EntryItem[] = [];
  readonly msgs: MsgItem[] = [];
  readonly metas: MetaItem[] = [];
  readonly dirtyQueues = new Set<QueueState>();
  /** Queue index records to remove (issued before the dirty queues' records are written). */
  readonly removedQueueKeys: Buffer[] = [];
  /** Entries of deleted queues that are in the file and not in the overlay: queue id, seq, queue id, seq, ... */
  readonly bulkDeletes: number[] = [];
  /** How many of those hold their message inline. */
  bulkInlineDeletes = 0;
  /**
   * Message records those entries were the only reference to, known without a refcount item
   * (CommitEngine.sharesNoMessage): their ids. Until the batch commits, reads must not find
   * them in the file: hasBulkMessageDelete answers from a sorted copy made when first asked.
   */
  readonly bulkMessageDeletes: number[] = [];
  private bulkSorted: Float64Array | undefined;
  /** Damaged records to move to the quarantine. */
  readonly quarantine: DamagedRecord[] = [];
  /** Set the `check` flag: the next open runs the full check (counters, refcounts). */
  needsCheck = false;
  state: 'open' | 'flushed' | 'done' | 'failed' = 'open';
  error: Error | undefined;
  private waiter: Waiter | undefined;

  wait(): Promise<void> {
    if (this.state === 'done') return RESOLVED;
    if (this.state === 'failed') return Promise.reject(this.error!); // settle() sets both
    if (!this.waiter) {
      let resolve!: () => void;
      let reject!: (err: Error) => void;
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.waiter = { promise, resolve, reject };
    }
    return this.waiter.promise;
  }

  settle(error?: Error): void {
    if (this.state === 'done' || this.state === 'failed') return;
    if (error) {
      this.state = 'failed';
      this.error = error;
      this.waiter?.reject(error);
    } else {
      this.state = 'done';
      this.waiter?.resolve();
    }
  }

  /** Ids were added to bulkMessageDeletes (MessageStore.deleteQueue): the sorted copy is stale. */
  bulkMessageDeletesAdded(): void {
    this.bulkSorted = undefined;
  }

  /** id is in bulkMessageDeletes (a binary search of the sorted copy). */
  hasBulkMessageDelete(id: number): boolean {
    let sorted = this.bulkSorted;
    if (sorted === undefined) sorted = this.bulkSorted = Float64Array.from(this.bulkMessageDeletes).sort();
    const i = lowerBound(sorted, id);
    return i < sorted.length && sorted[i] === id;
  }
}

/** What the overlay needs from the commit engine. */
export interface BatchSource {
  /** The open batch of this turn (created on first use). */
  batch(): Batch;
  /** A batch not committed yet deletes message id without a refcount item (Batch.bulkMessageDeletes). */
  bulkDeleted(id: number): boolean;
  /** Reports a damaged record, quarantines it if given, and has the next open run the full check. */
  damaged(what: string, record?: DamagedRecord): void;
}

/** Refcount assumed for a message whose refcount record is damaged: it is not freed this run. */
const UNKNOWN_REFS = 0x4000_0000;

/**
 * What is written but not committed yet, over LMDB's committed snapshot: per queue, changed
 * entries (in each QueueState, with the in-memory queue index); per message, its refcount (and
 * the message until committed); per metadata record, its value. Reads look here first.
 */
export class Overlay {
  /** The queue index: every queue that has (or had, this run) entries, by name. */
  readonly queues = new Map<string, QueueState>();
  /** Deleted queues whose entries are still being swept from the file, by queue id, oldest first. */
  readonly sweeps = new Map<number, QueueState>();
  nextQueueId = 1;
  readonly msgs = new Map<number, MsgItem>();
  readonly metas = new Map<string, MetaItem>();
  /**
   * Message ids from here on had no message (nor refcount) record when the store opened (set by
   * CommitEngine.resume; until then every id is looked up)...
   */
  freshFrom = Number.POSITIVE_INFINITY;
  /** ...and ids above this one have had none written since (CommitEngine.operations raises it). */
  maxWrittenId = 0;
  /** The same two bounds for refcount records: a message of one entry above both has none. */
  refsFreshFrom = Number.POSITIVE_INFINITY;
  maxRefsWrittenId = 0;
  private readonly msgKeyScratch = Buffer.alloc(8);

  /** Messages found damaged (and quarantined) this run: entries that refer to them are dropped when read. */
  readonly quarantinedMessages = new Set<number>();

  constructor(
    private readonly dbs: Databases,
    private readonly source: BatchSource,
  ) {}

  private batch(): Batch {
    return this.source.batch();
  }

  /** Replaces the queue index with the committed one (on open, and after a repair). */
  loadQueues(records: QueueIndexRecord[]): void {
    this.queues.clear();
    this.sweeps.clear();
    let maxId = 0;
    for (const r of records) {
      const qs = newQueueState(r.name, r.key, r.id);
      qs.count = r.count;
      qs.bytes = r.bytes;
      if (r.sweeping) {
        qs.sweepFrom = 0;
        this.sweeps.set(qs.id, qs);
      } else this.queues.set(qs.name, qs);
      maxId = Math.max(maxId, qs.id);
    }
    this.nextQueueId = maxId + 1;
  }

  /** Entries counted by the queue index: live queues and those being swept. */
  countedEntries(): number {
    let n = 0;
    for (const qs of this.queues.values()) n += qs.count;
    for (const qs of this.sweeps.values()) n += qs.count;
    return n;
  }

  /**
   * `onDiskIfNew`, `inlineIfNew`: what the file holds at seq, if the overlay has nothing there
   * (an entry the caller read from the file, and whether its message is inline).
   */
  setEntry(qs: QueueState, seq: number, entry: HeldEntry | null, onDiskIfNew: boolean, inlineIfNew = false): void {
    const b = this.batch();
    let item = qs.overlay.get(seq);
    if (!item) {
      item = { qs, seq, entry, onDisk: onDiskIfNew, diskInline: onDiskIfNew && inlineIfNew, batch: b };
      qs.overlay.set(seq, item);
      if (entry !== null) qs.overlayEntries++;
      b.entries.push(item);
      return;
    }
    qs.overlayEntries += (entry !== null ? 1 : 0) - (item.entry !== null ? 1 : 0);
    item.entry = entry;
    joinBatch(item, b, b.entries);
  }

  /**
   * The message's refcount item, loaded from the file if not in the overlay. `stored`: the
   * caller knows that the message is stored (an entry it read refers to it), so a missing
   * refcount record means 1 without looking for the message record.
   */
  msgItem(id: number, stored: boolean): MsgItem {
    let m = this.msgs.get(id);
    if (!m) {
      // A message new to this run (ids only grow) cannot be in the file yet: no read.
      let refs: number | undefined = 0;
      // A record a batch in flight deletes as unshared is gone already for everything after it.
      if ((id < this.freshFrom || id <= this.maxWrittenId) && !this.source.bulkDeleted(id)) {
        const key = messageKeyInto(this.msgKeyScratch, id);
        // Likewise a refcount record (only shared messages have one) for ids above those.
        const v = id < this.refsFreshFrom || id <= this.maxRefsWrittenId ? this.dbs.refsDb.getBinaryFast(key) : undefined;
        // No refcount record: one entry refers to the message if it is stored, none if not.
        refs = v ? readRefs(key, v) : stored || this.dbs.messagesDb.doesExist(key) ? 1 : 0;
      }
      if (refs === undefined) {
        this.source.damaged(`the refcount of message ${id}`);
        refs = UNKNOWN_REFS;
      }
      m = { id, refs, msg: null, write: false, size: 0, diskRefs: refs, batch: this.batch() };
      this.msgs.set(id, m);
      m.batch.msgs.push(m);
    } else {
      const b = this.batch();
      joinBatch(m, b, b.msgs);
    }
    return m;
  }

  setMeta(db: Bin, tag: string, key: Buffer, value: Buffer | null): void {
    const b = this.batch();
    const id = tag + key.toString('latin1');
    let item = this.metas.get(id);
    if (!item) {
      item = { id, db, key, value, batch: b };
      this.metas.set(id, item);
      b.metas.push(item);
      return;
    }
    item.value = value;
    joinBatch(item, b, b.metas);
  }

  /** Drops the items that b, now committed, was the last batch to touch. */
  release(b: Batch): void {
    for (const item of b.entries) {
      if (item.batch === b && item.qs.overlay.get(item.seq) === item) {
        item.qs.overlay.delete(item.seq);
        if (item.entry !== null) item.qs.overlayEntries--;
      }
    }
    for (const m of b.msgs) {
      if (m.batch === b && this.msgs.get(m.id) === m) this.msgs.delete(m.id);
    }
    for (const item of b.metas) {
      if (item.batch === b && this.metas.get(item.id) === item) this.metas.delete(item.id);
    }
  }
}

/** An item written again joins the open batch b (its list of such items) unless it is in it. */
function joinBatch<T extends { batch: Batch }>(item: T, b: Batch, list: T[]): void {
  if (item.batch === b) return;
  item.batch = b;
  list.push(item);
}
