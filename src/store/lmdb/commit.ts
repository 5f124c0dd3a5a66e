/**
 * The commit engine: the writes of an event-loop turn form a batch, flushed by one setImmediate
 * into one conditional LMDB block (one transaction, one fsync), and sync() waits on its commit.
 *
 * - Group commit: while a batch is in flight (handed to LMDB, its commit not yet resolved), the
 *   open batch is held, and the writes of every turn until that commit resolves join it; it is
 *   flushed at the end of the turn that learns of the commit. A transaction then holds all a
 *   busy broker wrote during the previous one's fsync, as one batch: one block, one set of
 *   queue index and counter records, one overlay release, one promise, instead of one of each
 *   per turn (under amqplib's confirmed publishing, a turn per read: 5 to 7 batches a
 *   transaction, lmdb-js writing them as one). A held write waits little longer than before:
 *   LMDB could not start its transaction before the one in flight committed either; what is
 *   added is the turn that learns of the commit. A batch only ever flushes in a setImmediate of
 *   its own (or in close(), retry()), never inside a caller's operation, so an operation's
 *   writes are never split between batches.
 * - Holding on while publishers stream (CommitHold; the broker's when it naps for read
 *   coalescing, none in an embedded broker): when the commit in flight resolves while
 *   publishers are still sending (a sync(), a confirm waited for, less than `quietMs` ago), the
 *   open batch does not go at once. It takes writes for as long as they keep coming, until
 *   `quietMs` pass without a sync() or it has waited twice as long as the commit that just
 *   resolved, so that a transaction carries about twice as many messages: half the fsyncs, each
 *   of which costs as much CPU as a few hundred small messages on a virtual disk (BENCHMARKS.md,
 *   thirteenth session). A publisher with a confirm window keeps sending meanwhile, so it loses
 *   nothing but the wait. Publishers that wait for each confirm before sending again (however
 *   many) have all stopped by the time a commit that took longer than `quietMs` resolves (an
 *   fsync on this machine's virtual disk takes about a millisecond), and their batch goes at
 *   once as before; on a disk that commits faster than that they can be held, for at most
 *   twice that short commit. A held turn in which no sync() came naps `napMs` (as read
 *   coalescing does) instead of spinning the event loop until the next input.
 *
 * - Durability: the environment is opened with `overlappingSync: false` (and the default
 *   `noSync: false`), so LMDB fsyncs inside mdb_txn_commit and lmdb-js resolves the write
 *   promise only after that commit returned ("Once the promise resolves, the transaction will
 *   have been fully written to the physical storage medium", lmdb README, `put`). sync()
 *   resolves on exactly that promise of the batch holding the caller's writes.
 * - Crash consistency: the writes of one logical operation are always in one batch, and every
 *   batch is conditional on a chain counter (`meta/turn` version) that the previous batch
 *   advanced. If a commit fails (disk full), every batch queued behind it fails its condition
 *   and writes nothing, so the file always holds a prefix of the batches: refcounts, entry
 *   counts and entries agree after any crash or failure. The failed batches and those behind
 *   them are kept; retry() (Store.resume(), once the disk has room) writes them all, in order,
 *   as one transaction.
 */

import { nap } from '../../nap.js';
import { CommitWriters } from '../commit-writers.js';
import { encodeMessageInto, ENTRY_KEY_SIZE, ENTRY_VALUE_SIZE, entryKeyInto, messageSize, readU64, writeEntryValue, writeInlineEntryValue, writeU64 } from '../record-codec.js';
import { Batch, Overlay, RESOLVED, type BatchSource } from './batch.js';
import { sealed, sealIn, SUM_SIZE } from './checksum.js';
import { Operations } from './operations.js';
import {
  CHECK_KEY,
  INLINE_ENTRIES_KEY,
  NEXT_ID_KEY,
  ONE_BYTE,
  quarantineKey,
  queueValue,
  quiet,
  readCounter,
  readSharedRefs,
  REFS_VALUE_SIZE,
  SHARED_REFS_KEY,
  sharedRefsOf,
  counterValue,
  writeRefsValue,
  TURN_KEY,
  type Bin,
  type DamagedRecord,
  type Databases,
} from './databases.js';
import { StoreFailedError } from './failure.js';
import { SpaceReserve } from './space-reserve.js';

export interface CommitEngineOptions {
  log?: (msg: string) => void;
  /** Called once when a commit fails; the broker should block publishers (connection.blocked). */
  onError?: (err: StoreFailedError) => void;
  /** LmdbStoreOptions.inlineMax (default INLINE_MAX). */
  inlineMax?: number;
  /** Space kept past the data file's end: a commit it cannot cover fails before LMDB sees it. */
  reserve?: SpaceReserve;
  /** Hold the open batch past the commit in flight while publishers stream (file comment); none if absent. */
  commitHold?: CommitHold;
}

/** How a batch is held past the commit in flight while publishers stream (the file comment). */
export interface CommitHold {
  /** The batch goes once no sync() came for this long (ms); nor is it held when none came this long before the commit resolved. */
  quietMs: number;
  /** A held turn without a sync() sleeps this long (ms), the event loop with it (nap). */
  napMs: number;
  /** The clock (ms; performance.now() by default). */
  now?: () => number;
  /** The nap (nap.ts's by default). */
  sleep?: (ms: number) => void;
}

/** A held batch waits at most this many times as long as the commit it waited for took. */
const HOLD_FACTOR = 2;

const STORED_ENTRY_SIZE = ENTRY_VALUE_SIZE + SUM_SIZE;
const MESSAGE_KEY_SIZE = 8;
/**
 * A new message of one entry whose layout (messageSize) is at most this many bytes is stored
 * inside its entry: one record instead of two, written and removed with the entry. RabbitMQ
 * embeds messages below 4 KiB in its queue index the same way (queue_index_embed_msgs_below).
 */
export const INLINE_MAX = 4096;

/** About how many slab bytes operations() reserves for b (entries and messages; see Operations). */
function slabBytes(b: Batch): number {
  let n = b.entries.length * (ENTRY_KEY_SIZE + STORED_ENTRY_SIZE) + (b.bulkDeletes.length / 2) * ENTRY_KEY_SIZE + b.bulkMessageDeletes.length * MESSAGE_KEY_SIZE;
  for (const m of b.msgs) n += MESSAGE_KEY_SIZE + (m.refs > 1 ? REFS_VALUE_SIZE : 0) + (m.write ? m.size + SUM_SIZE : 0);
  return n;
}

function bytesOf(lists: Operations[]): number {
  let n = 0;
  for (const ops of lists) n += ops.bytes;
  return n;
}

/** A commit the space reserved past the data file cannot cover, failed before LMDB writes it. */
function noRoom(growth: number): Error {
  return Object.assign(new Error(`ENOSPC: no space left on device (the space reserved past the data file's end cannot take a commit of up to ${Math.ceil(growth / 1024)} KiB; LMDB was not asked to write it)`), { code: 'ENOSPC' });
}

/** A batch whose commit failed (or that came after a failed one), kept for retry(). */
interface Unwritten {
  turn: number;
  batch: Batch;
  ops: Operations;
}

export class CommitEngine implements BatchSource {
  readonly overlay: Overlay;
  /** Next message id to hand out; persisted as a high-water mark with the batch that passes it. */
  nextId = 1;
  private persistedNextId = 0;
  /** The shared-reference counter (databases.ts, SHARED_REFS_KEY) as of the batches flushed, and as persisted. */
  private sharedRefs = 0;
  private persistedSharedRefs = 0;
  /** The inline-entries counter (databases.ts, INLINE_ENTRIES_KEY), likewise. */
  private inlineEntries = 0;
  private persistedInlineEntries = 0;
  private turn = 0;
  private current: Batch | undefined;
  private lastFlushed: Batch | undefined;
  private flushTimer: NodeJS.Immediate | undefined;
  /**
   * Batches handed to LMDB and not settled yet: while one is, the open batch is held (takes the
   * writes of every turn until it settles; see the file comment). More than one only when
   * close() or retry() flushes the open batch regardless.
   */
  private inFlight = 0;
  /** The hold, with its defaults filled in; undefined: a batch held in flight goes at the end of the turn that learns of the commit. */
  private readonly hold: Required<CommitHold> | undefined;
  /** hold.now() of the last sync(). */
  private lastSyncAt = -Infinity;
  /** sync() calls so far, and as many as the last held turn had seen (a turn without one naps). */
  private syncs = 0;
  private heldSyncs = 0;
  /** hold.now() when the batch in flight was handed to LMDB, and until when a held batch may wait. */
  private flushedAt = 0;
  private holdUntil = 0;
  /** Writers to run as the open batch is flushed, their writes joining it (MessageStore.beforeCommit). */
  private readonly writers = new CommitWriters();
  failure: StoreFailedError | undefined;
  /** A test fault (Store.failNextCommit): the next write fails as ENOSPC does. */
  failNextCommit = false;
  /** Batches flushed since a commit failed, not written: retry() writes them in turn order. */
  private unwritten: Unwritten[] = [];
  private retrying: Promise<void> | undefined;
  private closed = false;
  /** Batches handed to LMDB, and LMDB write transactions committed (each one fsync). */
  readonly counters = { batches: 0, transactions: 0 };

  /** Messages of one entry up to this size (messageSize) go inside their entry. */
  private readonly inlineMax: number;

  constructor(
    readonly dbs: Databases,
    private readonly opts: CommitEngineOptions,
  ) {
    this.overlay = new Overlay(dbs, this);
    this.inlineMax = opts.inlineMax ?? INLINE_MAX;
    const hold = opts.commitHold;
    this.hold = hold && { quietMs: hold.quietMs, napMs: hold.napMs, now: hold.now ?? (() => performance.now()), sleep: hold.sleep ?? nap };
    // lmdb-js also reports its initial (empty) instruction block once, with txnId 0.
    dbs.root.on('aftercommit', (e: { txnId?: number }) => {
      if (e.txnId) this.counters.transactions++;
    });
  }

  log(msg: string): void {
    this.opts.log?.(msg);
  }

  /** Goes on where the file left off: the chain counter, and message ids from `next`. */
  resume(next: number): void {
    this.turn = this.dbs.meta.getEntry(TURN_KEY)?.version ?? 0;
    this.nextId = next;
    this.persistedNextId = next;
    this.sharedRefs = this.persistedSharedRefs = readSharedRefs(this.dbs);
    this.inlineEntries = this.persistedInlineEntries = readCounter(this.dbs, INLINE_ENTRIES_KEY);
    // Ids above the highest message (and refcount) record in the file are fresh (see Overlay.msgItem).
    const above = (db: Bin): number => {
      let fresh = 0;
      for (const { key } of db.getRange({ reverse: true, limit: 1 })) fresh = readU64(key, 0) + 1;
      return fresh;
    };
    const refsFresh = above(this.dbs.refsDb);
    this.overlay.freshFrom = Math.max(next, refsFresh, above(this.dbs.messagesDb));
    this.overlay.refsFreshFrom = refsFresh;
    this.overlay.maxWrittenId = 0;
    this.overlay.maxRefsWrittenId = 0;
  }

  /**
   * No message in the file has more than one entry (the shared-reference counter of the
   * batches flushed is 0): a message outside the overlay then has exactly one, and the entry
   * being removed frees it without a refcount item (MessageStore.deleteQueue).
   */
  get sharesNoMessage(): boolean {
    return this.sharedRefs === 0;
  }

  /** Entries that hold their message inline, as of the batches flushed (MessageStore.stats). */
  get inlineEntryCount(): number {
    return this.inlineEntries;
  }

  /** Uncommitted batches (open or in flight) that delete message records in bulk, oldest first. */
  private readonly bulkPending: Batch[] = [];

  /** b deletes message records in bulk: reads see them gone until it commits (bulkDeleted). */
  addBulkMessageDeletes(b: Batch): void {
    if (this.bulkPending.at(-1) !== b) this.bulkPending.push(b);
    b.bulkMessageDeletesAdded();
  }

  bulkDeleted(id: number): boolean {
    for (const b of this.bulkPending) if (b.hasBulkMessageDelete(id)) return true;
    return false;
  }

  /** The open batch of this turn (created, and its flush scheduled, on first use). */
  batch(): Batch {
    let b = this.current;
    if (!b) {
      b = this.current = new Batch();
      if (this.inFlight === 0) this.scheduleFlush();
    }
    return b;
  }

  private scheduleFlush(): void {
    this.flushTimer = setImmediate(() => this.flush());
  }

  /**
   * A batch handed to LMDB settled: the open batch, held while it was in flight, goes at the end
   * of this turn, or is held on while publishers stream (the file comment).
   */
  private settled(): void {
    this.inFlight--;
    if (this.current === undefined || this.flushTimer !== undefined || this.inFlight !== 0) return;
    const hold = this.hold;
    if (hold !== undefined) {
      const now = hold.now();
      if (now - this.lastSyncAt < hold.quietMs) {
        this.holdUntil = now + HOLD_FACTOR * (now - this.flushedAt);
        this.heldSyncs = this.syncs;
        this.flushTimer = setImmediate(this.holding);
        return;
      }
    }
    this.scheduleFlush();
  }

  /** A turn of a held batch: it goes once publishers went quiet or it waited long enough; else naps if this turn was quiet. */
  private readonly holding = (): void => {
    const hold = this.hold!;
    const now = hold.now();
    if (now - this.lastSyncAt >= hold.quietMs || now >= this.holdUntil) {
      this.flush();
      return;
    }
    if (this.syncs === this.heldSyncs) hold.sleep(Math.min(hold.napMs, this.holdUntil - now));
    this.heldSyncs = this.syncs;
    this.flushTimer = setImmediate(this.holding);
  };

  /**
   * Throws once the store is closed. After a failed commit mutations are still taken (they
   * change what the store's reads see) and written by retry().
   */
  writable(): boolean {
    if (this.closed) throw new Error(`store ${this.dbs.dir} is closed`);
    return true;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Like writable(), for reads that write on the side (quarantine): false instead of throwing. */
  get canWrite(): boolean {
    return !this.closed && this.failure === undefined;
  }

  damaged(what: string, record?: DamagedRecord): void {
    const canWrite = this.canWrite;
    this.log(
      `store ${this.dbs.dir}: ${what} is damaged (checksum mismatch)` +
        (record ? (canWrite ? '; quarantined: moved aside, never delivered' : '; skipped') : '') +
        (canWrite ? '; the next open runs a full check' : ''),
    );
    if (!canWrite) return;
    const b = this.batch();
    if (record) b.quarantine.push({ db: record.db, key: Buffer.from(record.key), value: Buffer.from(record.value) });
    b.needsCheck = true;
  }

  sync(): Promise<void> {
    if (this.hold !== undefined) {
      this.lastSyncAt = this.hold.now();
      this.syncs++;
    }
    if (this.failure) return Promise.reject(this.failure);
    const b = this.current ?? this.lastFlushed;
    return b ? b.wait() : RESOLVED;
  }

  /** Has write run as the open batch (opened now if there is none, so that sync() waits for it) is flushed. */
  beforeFlush(write: () => void): void {
    this.writable();
    this.batch();
    this.writers.add(write);
  }

  flush(): void {
    // A writer may register another (a stream's chunk full again): every one runs into this batch.
    this.writers.run((err) => this.log(`store ${this.dbs.dir}: a write held for the commit failed: ${String(err)}`));
    const b = this.current;
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    this.current = undefined;
    if (!b) return;
    const ops = this.operations(b);
    const turn = this.turn++;
    if (this.failure) {
      // Not written now; retry() writes it, after the batches before it.
      this.unwritten.push({ turn, batch: b, ops });
      b.settle(this.failure);
      return;
    }
    const parked: Unwritten = { turn, batch: b, ops };
    this.write(b, turn, turn + 1, [ops], parked, (applied) => {
      if (applied) this.committed(b);
      else this.fail(b, new Error(this.failure ? 'a previous commit failed' : `batch ${turn} found the chain counter moved: is another process writing to this data dir?`), parked);
    });
  }

  /**
   * The puts and removes of a batch, coalesced (an entry enqueued and acked in the same turn
   * writes nothing). Every key and value is built here, so the conditional block that issues
   * them cannot throw half-way and commit part of a batch. Entry and message records go into
   * the batch's slab (operations.ts).
   */
  private operations(b: Batch): Operations {
    const dbs = this.dbs;
    const ops = new Operations(slabBytes(b), b.entries.length + b.bulkDeletes.length / 2 + b.bulkMessageDeletes.length + 2 * b.msgs.length + 8);
    for (const r of b.quarantine) {
      ops.add(dbs.quarantineDb, quarantineKey(dbs, r.db, r.key), r.value);
      ops.add(r.db, r.key, null);
    }
    if (b.needsCheck) ops.add(dbs.meta, CHECK_KEY, ONE_BYTE);
    for (const key of b.removedQueueKeys) ops.add(dbs.queuesDb, key, null);
    const msgs = this.overlay.msgs;
    for (const item of b.entries) {
      const e = item.entry;
      if (e) {
        // An entry rewritten in place keeps its message inside (MessageStore.update loads it);
        // the entry of a new message that no other entry refers to takes it in.
        let inlineMsg = e.inline ? e.inlineMsg : null;
        let inlineSize = 0;
        if (inlineMsg === null) {
          const m = msgs.get(e.msgId);
          if (m !== undefined && m.write && m.refs === 1 && m.diskRefs === 0 && m.size <= this.inlineMax) {
            inlineMsg = m.msg!;
            inlineSize = m.size;
            // No message record, and no reference counted: the message goes with its entry.
            m.refs = 0;
            m.write = false;
            m.msg = null;
            e.inline = true;
            e.inlineMsg = inlineMsg;
          }
        } else inlineSize = messageSize(inlineMsg);
        const inline = inlineMsg !== null;
        const size = STORED_ENTRY_SIZE + inlineSize;
        const at = ops.reserve(ENTRY_KEY_SIZE + size);
        const slab = ops.slab;
        const valueAt = at + ENTRY_KEY_SIZE;
        entryKeyInto(slab, item.qs.id, item.seq, at);
        if (inlineMsg !== null) writeInlineEntryValue(slab, valueAt, e, inlineMsg);
        else writeEntryValue(slab, valueAt, e);
        sealIn(slab, at, valueAt, valueAt, valueAt + size);
        ops.putInSlab(dbs.entriesDb, at, ENTRY_KEY_SIZE, valueAt, size);
        if (inline !== item.diskInline) this.inlineEntries += inline ? 1 : -1;
        item.diskInline = inline;
        item.onDisk = true;
      } else if (item.onDisk) {
        const at = ops.reserve(ENTRY_KEY_SIZE);
        entryKeyInto(ops.slab, item.qs.id, item.seq, at);
        ops.removeInSlab(dbs.entriesDb, at, ENTRY_KEY_SIZE);
        item.onDisk = false;
        if (item.diskInline) this.inlineEntries--;
        item.diskInline = false;
      }
    }
    const bulk = b.bulkDeletes;
    for (let i = 0; i < bulk.length; i += 2) {
      const at = ops.reserve(ENTRY_KEY_SIZE);
      entryKeyInto(ops.slab, bulk[i]!, bulk[i + 1]!, at);
      ops.removeInSlab(dbs.entriesDb, at, ENTRY_KEY_SIZE);
    }
    this.inlineEntries -= b.bulkInlineDeletes;
    for (const id of b.bulkMessageDeletes) {
      const at = ops.reserve(MESSAGE_KEY_SIZE);
      writeU64(ops.slab, at, id);
      ops.removeInSlab(dbs.messagesDb, at, MESSAGE_KEY_SIZE);
    }
    // A message record while any entry refers to it; a refcount record only while several do.
    for (const m of b.msgs) {
      const was = m.diskRefs;
      const now = m.refs;
      if (now > 0) {
        const size = m.write ? m.size + SUM_SIZE : 0; // write is only ever set together with msg and its size
        const refsRecord = now > 1 && now !== was;
        if (!m.write && !refsRecord && !(was > 1 && now === 1)) continue;
        const at = ops.reserve(MESSAGE_KEY_SIZE + size + (refsRecord ? REFS_VALUE_SIZE : 0));
        const slab = ops.slab;
        writeU64(slab, at, m.id);
        let p = at + MESSAGE_KEY_SIZE;
        if (m.write) {
          encodeMessageInto(slab, p, m.msg!);
          sealIn(slab, at, p, p, p + size);
          ops.putInSlab(dbs.messagesDb, at, MESSAGE_KEY_SIZE, p, size);
          p += size;
          if (m.id > this.overlay.maxWrittenId) this.overlay.maxWrittenId = m.id;
          m.write = false;
        }
        if (refsRecord) {
          if (m.id > this.overlay.maxRefsWrittenId) this.overlay.maxRefsWrittenId = m.id;
          writeRefsValue(slab, at, p, now);
          ops.putInSlab(dbs.refsDb, at, MESSAGE_KEY_SIZE, p, REFS_VALUE_SIZE);
        } else if (was > 1 && now === 1) ops.removeInSlab(dbs.refsDb, at, MESSAGE_KEY_SIZE);
      } else if (was > 0) {
        const at = ops.reserve(MESSAGE_KEY_SIZE);
        writeU64(ops.slab, at, m.id);
        ops.removeInSlab(dbs.messagesDb, at, MESSAGE_KEY_SIZE);
        if (was > 1) ops.removeInSlab(dbs.refsDb, at, MESSAGE_KEY_SIZE);
      }
      this.sharedRefs += sharedRefsOf(now) - sharedRefsOf(was);
      m.diskRefs = now;
    }
    for (const item of b.metas) ops.add(item.db, item.key, item.value && sealed(item.key, item.value));
    for (const qs of b.dirtyQueues) if (!qs.deleted) ops.add(dbs.queuesDb, qs.key, queueValue(qs.key, qs.id, qs.count, qs.bytes));
    if (this.sharedRefs !== this.persistedSharedRefs) {
      ops.add(dbs.meta, SHARED_REFS_KEY, counterValue(this.sharedRefs));
      this.persistedSharedRefs = this.sharedRefs;
    }
    if (this.inlineEntries !== this.persistedInlineEntries) {
      ops.add(dbs.meta, INLINE_ENTRIES_KEY, counterValue(this.inlineEntries));
      this.persistedInlineEntries = this.inlineEntries;
    }
    if (this.nextId !== this.persistedNextId) {
      const v = Buffer.allocUnsafe(8);
      writeU64(v, 0, this.nextId);
      ops.add(dbs.meta, NEXT_ID_KEY, v);
      this.persistedNextId = this.nextId;
    }
    return ops;
  }

  /**
   * Issues the operation lists in order as one LMDB transaction, conditional on the chain
   * counter being `turn` and setting it to `next`; `done` learns whether the condition held. A
   * commit that fails goes to fail(), with what retry() must write again (`parked`).
   */
  private write(b: Batch, turn: number, next: number, lists: Operations[], parked: Unwritten | undefined, done: (applied: boolean) => void): void {
    const dbs = this.dbs;
    const reserve = this.opts.reserve;
    const growth = reserve ? SpaceReserve.growth(bytesOf(lists)) : 0;
    let admitted = false;
    let written: Promise<boolean>;
    try {
      if (this.failNextCommit && parked) {
        this.failNextCommit = false;
        throw Object.assign(new Error('ENOSPC: no space left on device (faults.failNextCommit)'), { code: 'ENOSPC' });
      }
      if (reserve && !reserve.admit(growth)) throw noRoom(growth);
      admitted = true;
      written = dbs.meta.ifVersion(TURN_KEY, turn, () => {
        // Each write inside the block returns the block's commit promise too; its failure is
        // handled once, on `written`, so these must not surface as unhandled rejections.
        quiet(dbs.meta.put(TURN_KEY, ONE_BYTE, next));
        for (const ops of lists) ops.issue();
      });
    } catch (err) {
      if (admitted) reserve!.released(growth);
      this.fail(b, err, parked);
      return;
    }
    if (this.hold !== undefined) this.flushedAt = this.hold.now();
    b.state = 'flushed';
    this.lastFlushed = b;
    this.counters.batches++;
    this.inFlight++;
    written.then((applied) => {
      reserve?.released(growth);
      try {
        done(applied);
      } finally {
        // Whatever done did, the held batch must not wait forever.
        this.settled();
      }
    }, (err: unknown) => {
      reserve?.released(growth);
      // Once, with LMDB's own error if it comes in time; the held batch goes after (to retry()).
      let failed = false;
      const failWith = (e: unknown): void => {
        if (failed) return;
        failed = true;
        try {
          this.fail(b, e, parked);
        } finally {
          this.settled();
        }
      };
      // lmdb-js rejects with a generic error and puts LMDB's own error on commitError.
      const detail = (err as { commitError?: Promise<unknown> } | undefined)?.commitError;
      if (detail && typeof detail.then === 'function') {
        const fallback = setTimeout(() => failWith(err), 200);
        detail.then(
          () => {
            clearTimeout(fallback);
            failWith(err);
          },
          (e: unknown) => {
            clearTimeout(fallback);
            failWith(e);
          },
        );
      } else failWith(err);
    });
  }

  /**
   * After a failed commit (say the disk was full and has room again): writes every batch not
   * written since, in order, as one transaction; once it commits the store takes writes again.
   * No batch is in flight then: batches go to LMDB one at a time (group commit, above), and
   * the failed one was the last. Rejects if this commit fails too, or if the file is no longer
   * as this store left it (another process wrote to it). Resolves at once when nothing failed.
   * `renewed`: the space reserve was renewed for this retry already.
   */
  retry(renewed = false): Promise<void> {
    if (this.retrying) return this.retrying;
    if (!this.failure) return RESOLVED;
    if (this.closed) return Promise.reject(new Error(`store ${this.dbs.dir} is closed`));
    this.flush();
    const parked = [...this.unwritten].sort((a, b) => a.turn - b.turn);
    const diskTurn = this.dbs.meta.getEntry(TURN_KEY)?.version ?? 0;
    if (!parked.every((p, i) => p.turn === diskTurn + i) || diskTurn + parked.length !== this.turn) {
      return Promise.reject(new Error(`store ${this.dbs.dir} cannot resume: the file is not as this store left it (another process wrote to the file)`, { cause: this.failure }));
    }
    // The space for all of it first: the reserve renewed, now that the disk may have room.
    const reserve = this.opts.reserve;
    const growth = SpaceReserve.growth(bytesOf(parked.map((p) => p.ops)));
    if (reserve && !renewed && reserve.low) {
      const waited = reserve.renew(growth, true).then(() => {
        this.retrying = undefined;
        return this.retry(true);
      });
      this.retrying = waited;
      return waited;
    }
    if (reserve && !reserve.covers(growth)) return Promise.reject(noRoom(growth));
    // Later batches chain on behind this one as usual (and fail their condition if it fails).
    const upTo = this.turn;
    const b = new Batch();
    this.failure = undefined;
    this.write(b, diskTurn, upTo, parked.map((p) => p.ops), undefined, (applied) => {
      if (!applied) {
        this.fail(b, new Error('resume found the chain counter moved: is another process writing to this data dir?'));
        return;
      }
      this.unwritten = this.unwritten.filter((p) => p.turn >= upTo);
      for (const p of parked) this.committed(p.batch);
      this.committed(b);
    });
    const retrying = b.wait().finally(() => {
      if (this.retrying === retrying) this.retrying = undefined;
    });
    this.retrying = retrying;
    return retrying;
  }

  private committed(b: Batch): void {
    this.overlay.release(b);
    const bulk = this.bulkPending.indexOf(b);
    if (bulk >= 0) this.bulkPending.splice(bulk, 1);
    b.settle();
  }

  private fail(b: Batch, detail: unknown, parked?: Unwritten): void {
    if (parked) this.unwritten.push(parked);
    if (!this.failure) {
      this.failure = new StoreFailedError(this.dbs.dir, detail);
      this.log(this.failure.message);
      if (this.current) this.current.settle(this.failure);
      try {
        this.opts.onError?.(this.failure);
      } catch (err) {
        this.log(`store ${this.dbs.dir}: onError threw: ${String(err)}`);
      }
    }
    b.settle(this.failure);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.current) this.flush();
    const last = this.lastFlushed;
    this.closed = true;
    try {
      if (last) await last.wait();
    } finally {
      await this.dbs.root.close();
    }
    if (this.failure) throw this.failure;
  }
}
