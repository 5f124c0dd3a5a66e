/**
 * The durable store on LMDB (lmdb-js). src/store/README.md has the full design; in short:
 *
 * - Mutations change in-memory state at once (an overlay of not-yet-committed entries, message
 *   refcounts and metadata records, over the committed LMDB snapshot) and join the current
 *   batch. One setImmediate per event-loop turn flushes the batch: every write of that turn,
 *   from every connection, goes to LMDB in one conditional block, so one transaction and one
 *   fsync. The overlay entries of a batch are dropped once its commit resolves.
 * - Durability: the environment is opened with `overlappingSync: false` (and the default
 *   `noSync: false`), so LMDB fsyncs inside mdb_txn_commit and lmdb-js resolves the write
 *   promise only after that commit returned ("Once the promise resolves, the transaction will
 *   have been fully written to the physical storage medium", lmdb README, `put`). sync()
 *   resolves on exactly that promise of the batch holding the caller's writes.
 * - Crash consistency: the writes of one logical operation are always in one batch, and every
 *   batch is conditional on a chain counter (`meta/turn` version) that the previous batch
 *   advanced. If a commit fails (disk full), every batch queued behind it fails its condition
 *   and writes nothing, so the file always holds a prefix of the batches: refcounts, entry
 *   counts and entries agree after any crash or failure.
 */

import fs from 'node:fs';
import path from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { EntryCounts, MessageStore, PersistedMessage, QueueEntry, StoreStats } from './message-store.js';
import type {
  BindingRecord,
  DelayedMessage,
  DelayedRecord,
  ExchangeRecord,
  MetadataLoad,
  MetadataStore,
  QueueRecord,
} from './metadata-store.js';
import {
  bindingKey,
  decodeBinding,
  decodeDelayedKey,
  decodeDelayedMessage,
  decodeExchange,
  decodeQueue,
  delayedKey,
  encodeBinding,
  encodeDelayedMessage,
  encodeExchange,
  encodeQueue,
  nameKey,
} from './metadata-codec.js';
import {
  checkEntry,
  checkMessage,
  decodeMessage,
  ENTRY_KEY_SIZE,
  ENTRY_VALUE_SIZE,
  encodeMessage,
  entryKey,
  entryKeyInto,
  messageKey,
  messageKeyInto,
  msgIdOfEntryValue,
  publicEntry,
  queueIdOfEntryKey,
  readEntryValue,
  readU64,
  sameMessage,
  seqOfEntryKey,
  sharedRewriteError,
  sizeOfEntryValue,
  writeEntryValue,
  writeU64,
  type StoredEntry,
} from './record-codec.js';
import type { Store } from './store.js';

export interface LmdbStoreOptions {
  /** Initial map size in bytes (address space, not disk). lmdb-js grows the map by itself when it fills. */
  mapSize?: number;
  log?: (msg: string) => void;
  /** Called once when a commit fails; the broker should block publishers (connection.blocked). */
  onError?: (err: StoreFailedError) => void;
  /** 'auto' (default): full consistency check and repair on open only if cheap counters disagree. */
  verify?: 'auto' | 'always';
}

/** A commit failed: what happened, where, and what it means. */
export class StoreFailedError extends Error {
  override readonly name = 'StoreFailedError';
  constructor(
    readonly dataDir: string,
    readonly detail: unknown,
  ) {
    super(describeFailure(dataDir, detail), { cause: detail });
  }
}

function describeFailure(dataDir: string, detail: unknown): string {
  const text = detail instanceof Error ? detail.message : String(detail);
  let space = '';
  try {
    const st = fs.statfsSync(dataDir);
    const free = st.bavail * st.bsize;
    space = `; ${(free / 2 ** 20).toFixed(1)} MiB free on its file system`;
    if (free < 64 * 2 ** 20 || free < st.blocks * st.bsize * 0.01) space += ' (the disk is full)';
  } catch {
    // the file system cannot tell; say nothing about space
  }
  const full = /MDB_MAP_FULL|No space left|ENOSPC|File too large|EFBIG|quota|EDQUOT/i.test(text);
  return (
    `LMDB commit failed in data dir ${dataDir}: ${text}${space}` +
    (full ? ' (the disk, a file-size limit or a quota is full)' : '') +
    (/Input\/output error/.test(text) ? ' (LMDB reports a short write as an I/O error: disk full, file-size limit or device error)' : '') +
    '. Writes since the last successful sync() are not durable until the store can write again; ' +
    'free space (or fix the cause): the broker retries once the disk has room, or restart it (recovery reloads the last committed state).'
  );
}

/** Result of a full consistency check (verify()). Empty `problems` means consistent. */
export interface StoreCheck {
  problems: string[];
  entries: number;
  messages: number;
}

type Bin = Database<Buffer, Buffer>;

interface QueueState {
  name: string;
  key: Buffer;
  id: number;
  count: number;
  bytes: number;
  /** Upper bound of any seq stored (undefined until first needed): enqueue above it needs no read. */
  knownMaxSeq: number | undefined;
  overlay: Map<number, EntryItem>;
  deleted: boolean;
}

/** An entry written by a batch not yet committed; `entry` null = removed. */
interface EntryItem {
  qs: QueueState;
  seq: number;
  entry: StoredEntry | null;
  /** Present in the file as of the batches already flushed. */
  onDisk: boolean;
  batch: Batch;
}

/** A message whose refcount was changed by a batch not yet committed. */
interface MsgItem {
  id: number;
  refs: number;
  /** Kept for readMessage until committed, when written by a batch in flight. */
  msg: PersistedMessage | null;
  /** The message record must be (re)written by the open batch. */
  write: boolean;
  onDisk: boolean;
  batch: Batch;
}

interface MetaItem {
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

class Batch {
  readonly entries: EntryItem[] = [];
  readonly msgs: MsgItem[] = [];
  readonly metas: MetaItem[] = [];
  readonly dirtyQueues = new Set<QueueState>();
  readonly deletedQueues: QueueState[] = [];
  /** Entry keys of deleted queues that are in the file and not in the overlay. */
  readonly bulkDeletes: Buffer[] = [];
  state: 'open' | 'flushed' | 'done' | 'failed' = 'open';
  error: Error | undefined;
  private waiter: Waiter | undefined;

  wait(): Promise<void> {
    if (this.state === 'done') return RESOLVED;
    if (this.state === 'failed') return Promise.reject(this.error!);
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
}

const RESOLVED = Promise.resolve();

/** The puts (value) and removes (null) of one batch, in order. */
interface Operations {
  dbs: Bin[];
  keys: Buffer[];
  values: Array<Buffer | null>;
}

/** A batch whose commit failed (or that came after a failed one), kept for resume(). */
interface Unwritten {
  turn: number;
  batch: Batch;
  ops: Operations;
}
const TURN_KEY = Buffer.from('turn');
const NEXT_ID_KEY = Buffer.from('nextMessageId');
const FORMAT_KEY = Buffer.from('format');
const FORMAT = 1;
const ONE_BYTE = Buffer.from([1]);
const QUEUE_KEY_PREFIX = 0x71; // 'q': keeps the empty queue name a valid (non-empty) key
const MAX_KEY = 1978;
const DEFAULT_MAP_SIZE = 1 << 30;

/** The shared engine behind LmdbMessageStore and LmdbMetadataStore. */
class LmdbCore {
  readonly root: RootDatabase<Buffer, Buffer>;
  readonly meta: Bin;
  readonly entriesDb: Bin;
  readonly messagesDb: Bin;
  readonly refsDb: Bin;
  readonly queuesDb: Bin;
  readonly exchangesDb: Bin;
  readonly queueRecordsDb: Bin;
  readonly bindingsDb: Bin;
  readonly delayedDb: Bin;

  readonly queueMap = new Map<string, QueueState>();
  readonly msgOverlay = new Map<number, MsgItem>();
  readonly metaOverlay = new Map<string, MetaItem>();
  nextId = 1;
  private persistedNextId = 0;
  private nextQueueId = 1;
  private turn = 0;
  private current: Batch | undefined;
  private lastFlushed: Batch | undefined;
  private flushTimer: NodeJS.Immediate | undefined;
  failure: StoreFailedError | undefined;
  /** Batches flushed since a commit failed, not written: resume() writes them in turn order. */
  private unwritten: Unwritten[] = [];
  private resuming: Promise<void> | undefined;
  private closed = false;
  /** Batches handed to LMDB, and LMDB write transactions committed (each one fsync). */
  readonly counters = { batches: 0, transactions: 0 };
  private readonly keyScratch = Buffer.alloc(ENTRY_KEY_SIZE);
  private readonly msgKeyScratch = Buffer.alloc(8);

  constructor(
    readonly dir: string,
    private readonly opts: LmdbStoreOptions,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    this.root = open<Buffer, Buffer>(dir, {
      overlappingSync: false, // commit = fsync before the write promise resolves (DESIGN.md, convention 8)
      noSync: false,
      maxDbs: 16,
      mapSize: opts.mapSize ?? DEFAULT_MAP_SIZE,
      encoding: 'binary',
      keyEncoding: 'binary',
    });
    const sub = (name: string, useVersions = false): Bin =>
      this.root.openDB<Buffer, Buffer>(name, { encoding: 'binary', keyEncoding: 'binary', useVersions });
    this.meta = sub('meta', true);
    this.entriesDb = sub('entries');
    this.messagesDb = sub('messages');
    this.refsDb = sub('refs');
    this.queuesDb = sub('queues');
    this.exchangesDb = sub('exchanges');
    this.queueRecordsDb = sub('queue-records');
    this.bindingsDb = sub('bindings');
    this.delayedDb = sub('delayed');
    // lmdb-js also reports its initial (empty) instruction block once, with txnId 0.
    this.root.on('aftercommit', (e: { txnId?: number }) => {
      if (e.txnId) this.counters.transactions++;
    });
    try {
      this.load();
    } catch (err) {
      void this.root.close();
      throw err;
    }
  }

  log(msg: string): void {
    this.opts.log?.(msg);
  }

  // ---- open & recovery -------------------------------------------------------------------------

  private load(): void {
    const started = Date.now();
    const format = this.meta.get(FORMAT_KEY);
    if (format === undefined) {
      this.root.transactionSync(() => {
        quiet(this.meta.put(FORMAT_KEY, Buffer.from([FORMAT]), 0));
        quiet(this.meta.put(TURN_KEY, ONE_BYTE, 0));
      });
    } else if (format[0] !== FORMAT) {
      throw new Error(`data dir ${this.dir} holds store format ${format[0]}, this broker reads format ${FORMAT}`);
    }
    this.turn = this.meta.getEntry(TURN_KEY)?.version ?? 0;
    this.readQueueIndex();

    const check = this.opts.verify === 'always' ? undefined : this.quickCheck();
    if (check !== 'ok') {
      const result = this.fullCheck(true);
      if (result.problems.length > 0) {
        this.log(`store ${this.dir}: repaired ${result.problems.length} problem(s): ${result.problems.slice(0, 20).join('; ')}`);
        this.readQueueIndex();
      }
    }

    const storedNext = this.meta.get(NEXT_ID_KEY);
    let next = storedNext ? readU64(storedNext, 0) : 1;
    for (const { key } of this.messagesDb.getRange({ reverse: true, limit: 1 })) next = Math.max(next, readU64(key, 0) + 1);
    this.nextId = Math.max(next, 1);
    this.persistedNextId = this.nextId;
    let entries = 0;
    for (const qs of this.queueMap.values()) entries += qs.count;
    this.log(`store ${this.dir}: opened with ${this.queueMap.size} queue(s), ${entries} entries in ${Date.now() - started} ms`);
  }

  private readQueueIndex(): void {
    this.queueMap.clear();
    let maxId = 0;
    for (const { key, value } of this.queuesDb.getRange({})) {
      const qs = newQueueState(Buffer.from(key).subarray(1).toString('utf8'), Buffer.from(key), value.readUInt32BE(0));
      qs.count = value.readDoubleBE(4);
      qs.bytes = value.readDoubleBE(12);
      this.queueMap.set(qs.name, qs);
      maxId = Math.max(maxId, qs.id);
    }
    this.nextQueueId = maxId + 1;
  }

  /** O(1): do the B-tree entry counts agree with the persisted counters? */
  private quickCheck(): 'ok' | 'mismatch' {
    let counted = 0;
    for (const qs of this.queueMap.values()) counted += qs.count;
    const entries = dbEntryCount(this.entriesDb);
    const messages = dbEntryCount(this.messagesDb);
    const refs = dbEntryCount(this.refsDb);
    // Every message has a refcount record, every entry is counted by its queue, and entries
    // need messages. (A refcount record with a wrong value passes this; verify: 'always' finds it.)
    if (entries === counted && messages === refs && (messages > 0 || entries === 0)) return 'ok';
    this.log(`store ${this.dir}: counters disagree (entries ${entries} vs ${counted}, messages ${messages}, refs ${refs}); running a full check`);
    return 'mismatch';
  }

  /**
   * Recomputes refcounts and per-queue counts from the entries and compares them with what is
   * stored: entries of unknown queues or of missing messages, orphan messages (no entry), wrong
   * refcounts and wrong counters. With repair, fixes all of it in one synchronous transaction.
   * Reads the committed state only.
   */
  fullCheck(repair: boolean): StoreCheck {
    const problems: string[] = [];
    const fixes: Array<() => void> = [];
    const queues = new Map<number, { key: Buffer; name: string; count: number; bytes: number; storedCount: number; storedBytes: number }>();
    for (const { key, value } of this.queuesDb.getRange({})) {
      queues.set(value.readUInt32BE(0), {
        key: Buffer.from(key),
        name: Buffer.from(key).subarray(1).toString('utf8'),
        count: 0,
        bytes: 0,
        storedCount: value.readDoubleBE(4),
        storedBytes: value.readDoubleBE(12),
      });
    }
    const existing = new Set<number>();
    for (const key of this.messagesDb.getKeys({})) existing.add(readU64(key, 0));
    const refcounts = new Map<number, number>();
    let entries = 0;
    for (const { key, value } of this.entriesDb.getRange({})) {
      const qid = queueIdOfEntryKey(key);
      const msgId = msgIdOfEntryValue(value);
      const q = queues.get(qid);
      if (!q || !existing.has(msgId)) {
        problems.push(q ? `entry ${q.name}#${seqOfEntryKey(key)} refers to missing message ${msgId}` : `entry of unknown queue id ${qid}`);
        const k = Buffer.from(key);
        fixes.push(() => quiet(this.entriesDb.remove(k)));
        continue;
      }
      entries++;
      q.count++;
      q.bytes += sizeOfEntryValue(value);
      refcounts.set(msgId, (refcounts.get(msgId) ?? 0) + 1);
    }
    const haveRefs = new Set<number>();
    for (const { key, value } of this.refsDb.getRange({})) {
      const id = readU64(key, 0);
      const stored = value.readUInt32BE(0);
      const actual = refcounts.get(id) ?? 0;
      haveRefs.add(id);
      if (actual === 0) {
        problems.push(`refcount ${stored} of message ${id} that no entry refers to`);
        const k = Buffer.from(key);
        fixes.push(() => quiet(this.refsDb.remove(k)));
      } else if (stored !== actual) {
        problems.push(`message ${id} refcount ${stored}, entries say ${actual}`);
        const k = Buffer.from(key);
        fixes.push(() => quiet(this.refsDb.put(k, u32(actual))));
      }
    }
    for (const id of existing) {
      const actual = refcounts.get(id) ?? 0;
      if (actual === 0) {
        problems.push(`orphan message ${id} (no entry refers to it)`);
        fixes.push(() => quiet(this.messagesDb.remove(messageKey(id))));
      } else if (!haveRefs.has(id)) {
        problems.push(`message ${id} has no refcount (entries say ${actual})`);
        fixes.push(() => quiet(this.refsDb.put(messageKey(id), u32(actual))));
      }
    }
    for (const [id, q] of queues) {
      if (q.count !== q.storedCount || q.bytes !== q.storedBytes) {
        problems.push(`queue ${q.name} counters ${q.storedCount}/${q.storedBytes} bytes, entries say ${q.count}/${q.bytes}`);
        const value = queueValue(id, q.count, q.bytes);
        fixes.push(() => quiet(this.queuesDb.put(q.key, value)));
      }
    }
    if (repair && fixes.length > 0) {
      this.root.transactionSync(() => {
        for (const fix of fixes) fix();
      });
    }
    return { problems, entries, messages: refcounts.size };
  }

  // ---- batches -----------------------------------------------------------------------------------

  /** The open batch of this turn (created, and its flush scheduled, on first use). */
  batch(): Batch {
    let b = this.current;
    if (!b) {
      b = this.current = new Batch();
      this.flushTimer = setImmediate(() => this.flush());
    }
    return b;
  }

  /**
   * Throws once the store is closed. After a failed commit mutations are still taken (they
   * change what the store's reads see) and written by resume().
   */
  writable(): boolean {
    if (this.closed) throw new Error(`store ${this.dir} is closed`);
    return true;
  }

  sync(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const b = this.current ?? this.lastFlushed;
    return b ? b.wait() : RESOLVED;
  }

  flush(): void {
    const b = this.current;
    if (this.flushTimer) clearImmediate(this.flushTimer);
    this.flushTimer = undefined;
    this.current = undefined;
    if (!b) return;
    const ops = this.operations(b);
    const turn = this.turn++;
    if (this.failure) {
      // Not written now; resume() writes it, after the batches before it.
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
   * them cannot throw half-way and commit part of a batch.
   */
  private operations(b: Batch): Operations {
    const dbs: Bin[] = [];
    const keys: Buffer[] = [];
    const values: Array<Buffer | null> = [];
    const op = (db: Bin, key: Buffer, value: Buffer | null): void => {
      dbs.push(db);
      keys.push(key);
      values.push(value);
    };
    for (const qs of b.deletedQueues) op(this.queuesDb, qs.key, null);
    let slab: Buffer | undefined;
    let slabPos = 0;
    for (const item of b.entries) {
      if (item.entry) {
        if (!slab || slabPos + ENTRY_VALUE_SIZE > slab.length) {
          slab = Buffer.allocUnsafeSlow(ENTRY_VALUE_SIZE * Math.min(4096, b.entries.length));
          slabPos = 0;
        }
        writeEntryValue(slab, slabPos, item.entry);
        op(this.entriesDb, entryKey(item.qs.id, item.seq), slab.subarray(slabPos, slabPos + ENTRY_VALUE_SIZE));
        slabPos += ENTRY_VALUE_SIZE;
        item.onDisk = true;
      } else if (item.onDisk) {
        op(this.entriesDb, entryKey(item.qs.id, item.seq), null);
        item.onDisk = false;
      }
    }
    for (const key of b.bulkDeletes) op(this.entriesDb, key, null);
    for (const m of b.msgs) {
      const key = messageKey(m.id);
      if (m.refs > 0) {
        if (m.write) op(this.messagesDb, key, encodeMessage(m.msg!));
        op(this.refsDb, key, u32(m.refs));
        m.write = false;
        m.onDisk = true;
      } else if (m.onDisk) {
        op(this.messagesDb, key, null);
        op(this.refsDb, key, null);
        m.onDisk = false;
      }
    }
    for (const item of b.metas) op(item.db, item.key, item.value);
    for (const qs of b.dirtyQueues) if (!qs.deleted) op(this.queuesDb, qs.key, queueValue(qs.id, qs.count, qs.bytes));
    if (this.nextId !== this.persistedNextId) {
      const v = Buffer.allocUnsafe(8);
      writeU64(v, 0, this.nextId);
      op(this.meta, NEXT_ID_KEY, v);
      this.persistedNextId = this.nextId;
    }
    return { dbs, keys, values };
  }

  /**
   * Issues the operation lists in order as one LMDB transaction, conditional on the chain
   * counter being `turn` and setting it to `next`; `done` learns whether the condition held. A
   * commit that fails goes to fail(), with what resume() must write again (`parked`).
   */
  private write(b: Batch, turn: number, next: number, lists: Operations[], parked: Unwritten | undefined, done: (applied: boolean) => void): void {
    let written: Promise<boolean>;
    try {
      written = this.meta.ifVersion(TURN_KEY, turn, () => {
        // Each write inside the block returns the block's commit promise too; its failure is
        // handled once, on `written`, so these must not surface as unhandled rejections.
        quiet(this.meta.put(TURN_KEY, ONE_BYTE, next));
        for (const { dbs, keys, values } of lists) {
          for (let i = 0; i < dbs.length; i++) {
            const v = values[i];
            if (v) quiet(dbs[i]!.put(keys[i]!, v));
            else quiet(dbs[i]!.remove(keys[i]!));
          }
        }
      });
    } catch (err) {
      this.fail(b, err, parked);
      return;
    }
    b.state = 'flushed';
    this.lastFlushed = b;
    this.counters.batches++;
    written.then(done, (err: unknown) => {
      // lmdb-js rejects with a generic error and puts LMDB's own error on commitError.
      const detail = (err as { commitError?: Promise<unknown> } | undefined)?.commitError;
      if (detail && typeof detail.then === 'function') {
        const fallback = setTimeout(() => this.fail(b, err, parked), 200);
        detail.then(
          () => {
            clearTimeout(fallback);
            this.fail(b, err, parked);
          },
          (e: unknown) => {
            clearTimeout(fallback);
            this.fail(b, e, parked);
          },
        );
      } else this.fail(b, err, parked);
    });
  }

  /**
   * After a failed commit (say the disk was full and has room again): writes every batch not
   * written since, in order, as one transaction; once it commits the store takes writes again.
   * Rejects if that commit fails too, if a failed commit is still in flight, or if the file is
   * no longer as this store left it (another process wrote to it). Resolves at once when
   * nothing failed.
   */
  resume(): Promise<void> {
    if (this.resuming) return this.resuming;
    if (!this.failure) return RESOLVED;
    if (this.closed) return Promise.reject(new Error(`store ${this.dir} is closed`));
    this.flush();
    const parked = [...this.unwritten].sort((a, b) => a.turn - b.turn);
    const diskTurn = this.meta.getEntry(TURN_KEY)?.version ?? 0;
    if (!parked.every((p, i) => p.turn === diskTurn + i) || diskTurn + parked.length !== this.turn) {
      return Promise.reject(new Error(`store ${this.dir} cannot resume: a failed commit is still in flight or another process wrote to the file`, { cause: this.failure }));
    }
    // Later batches chain on behind this one as usual (and fail their condition if it fails).
    const upTo = this.turn;
    const b = new Batch();
    this.failure = undefined;
    this.write(b, diskTurn, upTo, parked.map((p) => p.ops), undefined, (applied) => {
      if (!applied) {
        this.fail(b, new Error(`resume found the chain counter moved: is another process writing to this data dir?`));
        return;
      }
      this.unwritten = this.unwritten.filter((p) => p.turn >= upTo);
      for (const p of parked) this.committed(p.batch);
      this.committed(b);
    });
    const resuming = b.wait().finally(() => {
      if (this.resuming === resuming) this.resuming = undefined;
    });
    this.resuming = resuming;
    return resuming;
  }

  private committed(b: Batch): void {
    for (const item of b.entries) {
      if (item.batch === b && item.qs.overlay.get(item.seq) === item) item.qs.overlay.delete(item.seq);
    }
    for (const m of b.msgs) {
      if (m.batch === b && this.msgOverlay.get(m.id) === m) this.msgOverlay.delete(m.id);
    }
    for (const item of b.metas) {
      if (item.batch === b && this.metaOverlay.get(item.id) === item) this.metaOverlay.delete(item.id);
    }
    b.settle();
  }

  private fail(b: Batch, detail: unknown, parked?: Unwritten): void {
    if (parked) this.unwritten.push(parked);
    if (!this.failure) {
      this.failure = new StoreFailedError(this.dir, detail);
      this.log(this.failure.message);
      if (this.current) this.current.settle(this.failure);
      try {
        this.opts.onError?.(this.failure);
      } catch (err) {
        this.log(`store ${this.dir}: onError threw: ${String(err)}`);
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
      await this.root.close();
    }
    if (this.failure) throw this.failure;
  }

  // ---- entries and messages ------------------------------------------------------------------------

  queueState(name: string, create: true): QueueState;
  queueState(name: string, create: false): QueueState | undefined;
  queueState(name: string, create: boolean): QueueState | undefined {
    let qs = this.queueMap.get(name);
    if (!qs && create) {
      const nameBytes = Buffer.from(name, 'utf8');
      if (nameBytes.length + 1 > MAX_KEY) throw new RangeError(`queue key longer than ${MAX_KEY - 1} bytes`);
      qs = newQueueState(name, Buffer.concat([Buffer.from([QUEUE_KEY_PREFIX]), nameBytes]), this.nextQueueId++);
      qs.knownMaxSeq = -1;
      this.queueMap.set(name, qs);
      this.batch().dirtyQueues.add(qs);
    }
    return qs;
  }

  getEntry(qs: QueueState, seq: number): StoredEntry | null {
    const item = qs.overlay.get(seq);
    if (item) return item.entry;
    const v = this.entriesDb.getBinaryFast(entryKeyInto(this.keyScratch, qs.id, seq));
    return v ? readEntryValue(seq, v) : null;
  }

  setEntry(qs: QueueState, seq: number, entry: StoredEntry | null, onDiskIfNew: boolean): void {
    const b = this.batch();
    let item = qs.overlay.get(seq);
    if (!item) {
      item = { qs, seq, entry, onDisk: onDiskIfNew, batch: b };
      qs.overlay.set(seq, item);
      b.entries.push(item);
      return;
    }
    item.entry = entry;
    if (item.batch !== b) {
      item.batch = b;
      b.entries.push(item);
    }
  }

  /** The message's refcount item, loaded from the file if not in the overlay. */
  msgItem(id: number): MsgItem {
    let m = this.msgOverlay.get(id);
    if (!m) {
      const v = this.refsDb.getBinaryFast(messageKeyInto(this.msgKeyScratch, id));
      const refs = v ? v.readUInt32BE(0) : 0;
      m = { id, refs, msg: null, write: false, onDisk: refs > 0, batch: this.batch() };
      this.msgOverlay.set(id, m);
      m.batch.msgs.push(m);
    } else this.touchMsg(m);
    return m;
  }

  private touchMsg(m: MsgItem): void {
    const b = this.batch();
    if (m.batch !== b) {
      m.batch = b;
      b.msgs.push(m);
    }
  }

  addRef(msg: PersistedMessage): void {
    const m = this.msgItem(msg.id);
    if (m.refs === 0) {
      m.msg = msg;
      m.write = true;
    }
    m.refs++;
  }

  dropRef(id: number): void {
    const m = this.msgItem(id);
    if (m.refs > 0 && --m.refs === 0) {
      m.msg = null;
      m.write = false;
    }
  }

  addEntry(qs: QueueState, entry: QueueEntry, msg: PersistedMessage): void {
    if (qs.knownMaxSeq === undefined) qs.knownMaxSeq = this.diskMaxSeq(qs);
    if (entry.seq <= qs.knownMaxSeq) {
      const existing = this.getEntry(qs, entry.seq);
      if (existing) this.removeEntry(qs, existing);
    } else qs.knownMaxSeq = entry.seq;
    this.addRef(msg);
    const stored: StoredEntry = { ...publicEntry(entry), size: msg.body.length };
    this.setEntry(qs, entry.seq, stored, false);
    qs.count++;
    qs.bytes += stored.size;
    this.batch().dirtyQueues.add(qs);
  }

  removeEntry(qs: QueueState, existing: StoredEntry): void {
    this.setEntry(qs, existing.seq, null, true);
    qs.count--;
    qs.bytes -= existing.size;
    this.batch().dirtyQueues.add(qs);
    this.dropRef(existing.msgId);
  }

  private diskMaxSeq(qs: QueueState): number {
    let max = -1;
    for (const key of this.entriesDb.getKeys({ start: queueEnd(qs.id), end: queueStart(qs.id), reverse: true, limit: 1 })) {
      max = seqOfEntryKey(key);
    }
    for (const seq of qs.overlay.keys()) if (seq > max) max = seq;
    return max;
  }

  /** Entries of the queue in seq order from fromSeq: the file merged with the overlay. */
  *visibleEntries(qs: QueueState, fromSeq: number): Generator<StoredEntry> {
    const pending = [...qs.overlay.values()]
      .filter((item) => item.entry !== null && item.seq >= fromSeq)
      .sort((a, b) => a.seq - b.seq);
    let i = 0;
    const start = entryKey(qs.id, fromSeq);
    for (const { key, value } of this.entriesDb.getRange({ start, end: queueEnd(qs.id) })) {
      const seq = seqOfEntryKey(key);
      while (i < pending.length && pending[i]!.seq < seq) yield pending[i++]!.entry!;
      if (qs.overlay.has(seq)) continue; // the overlay holds the newer state (updated or removed)
      yield readEntryValue(seq, value);
    }
    while (i < pending.length) yield pending[i++]!.entry!;
  }

  deleteQueueEntries(qs: QueueState): void {
    const b = this.batch();
    for (const item of [...qs.overlay.values()]) {
      if (!item.entry) continue;
      this.dropRef(item.entry.msgId);
      this.setEntry(qs, item.seq, null, true);
    }
    for (const { key, value } of this.entriesDb.getRange({ start: queueStart(qs.id), end: queueEnd(qs.id) })) {
      if (qs.overlay.has(seqOfEntryKey(key))) continue;
      this.dropRef(msgIdOfEntryValue(value));
      b.bulkDeletes.push(Buffer.from(key));
    }
    qs.deleted = true;
    qs.count = 0;
    qs.bytes = 0;
    this.queueMap.delete(qs.name);
    b.dirtyQueues.delete(qs);
    b.deletedQueues.push(qs);
  }

  readMessage(id: number): PersistedMessage | undefined {
    const m = this.msgOverlay.get(id);
    if (m) {
      if (m.refs === 0) return undefined;
      if (m.msg) return m.msg;
    }
    const v = this.messagesDb.getBinary(messageKeyInto(this.msgKeyScratch, id));
    return v ? decodeMessage(id, v) : undefined;
  }

  // ---- metadata -----------------------------------------------------------------------------------

  setMeta(db: Bin, tag: string, key: Buffer, value: Buffer | null): void {
    const b = this.batch();
    const id = tag + key.toString('latin1');
    let item = this.metaOverlay.get(id);
    if (!item) {
      item = { id, db, key, value, batch: b };
      this.metaOverlay.set(id, item);
      b.metas.push(item);
      return;
    }
    item.value = value;
    if (item.batch !== b) {
      item.batch = b;
      b.metas.push(item);
    }
  }

  /** Every record of db (file merged with overlay), in key order. */
  metaRecords(db: Bin, tag: string): Buffer[] {
    const byKey = new Map<string, Buffer>();
    for (const { key, value } of db.getRange({})) byKey.set(Buffer.from(key).toString('latin1'), value);
    for (const item of this.metaOverlay.values()) {
      if (item.db !== db) continue;
      const k = item.id.slice(tag.length);
      if (item.value) byKey.set(k, item.value);
      else byKey.delete(k);
    }
    return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
  }
}

function newQueueState(name: string, key: Buffer, id: number): QueueState {
  return { name, key, id, count: 0, bytes: 0, knownMaxSeq: undefined, overlay: new Map(), deleted: false };
}

function queueValue(id: number, count: number, bytes: number): Buffer {
  const v = Buffer.allocUnsafe(20);
  v.writeUInt32BE(id, 0);
  v.writeDoubleBE(count, 4);
  v.writeDoubleBE(bytes, 12);
  return v;
}

function queueStart(id: number): Buffer {
  return Buffer.from([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff]);
}

function queueEnd(id: number): Buffer {
  return queueStart(id + 1);
}

function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

function dbEntryCount(db: Bin): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

class LmdbMessageStore implements MessageStore {
  constructor(private readonly core: LmdbCore) {}

  nextMessageId(): number {
    return this.core.nextId++;
  }

  enqueue(queue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntry(entry);
    checkMessage(msg);
    if (entry.msgId !== msg.id) throw new Error(`enqueue: entry.msgId ${entry.msgId} is not msg.id ${msg.id}`);
    if (!this.core.writable()) return;
    this.core.addEntry(this.core.queueState(queue, true), entry, msg);
  }

  remove(queue: string, seq: number): void {
    if (!this.core.writable()) return;
    const qs = this.core.queueState(queue, false);
    if (!qs || !Number.isSafeInteger(seq) || seq < 0) return;
    const existing = this.core.getEntry(qs, seq);
    if (existing) this.core.removeEntry(qs, existing);
  }

  update(queue: string, entry: QueueEntry): void {
    checkEntry(entry);
    if (!this.core.writable()) return;
    const qs = this.core.queueState(queue, false);
    if (!qs) return;
    const existing = this.core.getEntry(qs, entry.seq);
    if (!existing) return;
    const next: StoredEntry = {
      ...existing,
      redelivered: entry.redelivered,
      deliveryCount: entry.deliveryCount,
      expiresAt: entry.expiresAt,
    };
    this.core.setEntry(qs, entry.seq, next, true);
  }

  move(fromQueue: string, seq: number, toQueue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntry(entry);
    checkMessage(msg);
    if (entry.msgId !== msg.id) throw new Error(`move: entry.msgId ${entry.msgId} is not msg.id ${msg.id}`);
    if (!this.core.writable()) return;
    const core = this.core;
    const from = core.queueState(fromQueue, false);
    const old = from ? core.getEntry(from, seq) : null;
    if (old && old.msgId === msg.id) {
      const m = core.msgItem(msg.id);
      if (m.refs === 1) {
        m.msg = msg;
        m.write = true;
      } else if (m.refs > 1) {
        const stored = core.readMessage(msg.id);
        if (!stored || !sameMessage(stored, msg)) throw sharedRewriteError(msg.id, m.refs);
      }
    }
    core.addEntry(core.queueState(toQueue, true), entry, msg); // first, so a shared message never drops to zero refs
    // (a move onto its own queue and seq was a replacement, already done by addEntry)
    if (from && old && !(fromQueue === toQueue && seq === entry.seq)) core.removeEntry(from, old);
  }

  deleteQueue(queue: string): void {
    if (!this.core.writable()) return;
    const qs = this.core.queueState(queue, false);
    if (qs) this.core.deleteQueueEntries(qs);
  }

  sync(): Promise<void> {
    return this.core.sync();
  }

  readEntries(queue: string, fromSeq: number, limit: number): QueueEntry[] {
    const qs = this.core.queueState(queue, false);
    const out: QueueEntry[] = [];
    if (!qs || limit <= 0) return out;
    for (const e of this.core.visibleEntries(qs, Math.max(0, Math.ceil(fromSeq)))) {
      out.push(publicEntry(e));
      if (out.length >= limit) break;
    }
    return out;
  }

  readMessage(msgId: number): PersistedMessage | undefined {
    if (!Number.isSafeInteger(msgId) || msgId < 0) return undefined;
    return this.core.readMessage(msgId);
  }

  countEntries(queue: string): EntryCounts {
    const qs = this.core.queueState(queue, false);
    return { messages: qs?.count ?? 0, bytes: qs?.bytes ?? 0 };
  }

  lastSeq(queue: string): number {
    const qs = this.core.queueState(queue, false);
    if (!qs || qs.count === 0) return -1;
    let max = -1;
    for (const item of qs.overlay.values()) if (item.entry && item.seq > max) max = item.seq;
    for (const key of this.core.entriesDb.getKeys({ start: queueEnd(qs.id), end: queueStart(qs.id), reverse: true })) {
      const seq = seqOfEntryKey(key);
      if (seq <= max) break;
      if (!qs.overlay.has(seq)) return seq;
    }
    return max;
  }

  queues(): string[] {
    return [...this.core.queueMap.values()].filter((qs) => qs.count > 0).map((qs) => qs.name);
  }

  stats(): StoreStats {
    return { messages: dbEntryCount(this.core.messagesDb), entries: dbEntryCount(this.core.entriesDb) };
  }

  close(): Promise<void> {
    return this.core.close();
  }
}

class LmdbMetadataStore implements MetadataStore {
  constructor(private readonly core: LmdbCore) {}

  putExchange(r: ExchangeRecord): void {
    const key = nameKey(r.vhost, r.name);
    const value = encodeExchange(r);
    if (this.core.writable()) this.core.setMeta(this.core.exchangesDb, 'x', key, value);
  }
  deleteExchange(vhost: string, name: string): void {
    if (this.core.writable()) this.core.setMeta(this.core.exchangesDb, 'x', nameKey(vhost, name), null);
  }
  putQueue(r: QueueRecord): void {
    const key = nameKey(r.vhost, r.name);
    const value = encodeQueue(r);
    if (this.core.writable()) this.core.setMeta(this.core.queueRecordsDb, 'q', key, value);
  }
  deleteQueue(vhost: string, name: string): void {
    if (this.core.writable()) this.core.setMeta(this.core.queueRecordsDb, 'q', nameKey(vhost, name), null);
  }
  putBinding(r: BindingRecord): void {
    const value = encodeBinding(r);
    if (this.core.writable()) this.core.setMeta(this.core.bindingsDb, 'b', bindingKey(r), value);
  }
  deleteBinding(r: BindingRecord): void {
    if (this.core.writable()) this.core.setMeta(this.core.bindingsDb, 'b', bindingKey(r), null);
  }
  putDelayed(r: DelayedRecord, msg: PersistedMessage): void {
    checkMessage(msg);
    const key = delayedKey(r);
    if (key.length > MAX_KEY) throw new RangeError('delayed message key too long (vhost + exchange name)');
    const value = encodeDelayedMessage(msg);
    if (this.core.writable()) this.core.setMeta(this.core.delayedDb, 'd', key, value);
  }
  deleteDelayed(r: DelayedRecord): void {
    if (this.core.writable()) this.core.setMeta(this.core.delayedDb, 'd', delayedKey(r), null);
  }
  loadDelayed(): DelayedMessage[] {
    const out: DelayedMessage[] = [];
    for (const { key, value } of this.core.delayedDb.getRange({})) {
      if (this.core.metaOverlay.has('d' + Buffer.from(key).toString('latin1'))) continue;
      out.push({ record: decodeDelayedKey(Buffer.from(key)), message: decodeDelayedMessage(value) });
    }
    for (const item of this.core.metaOverlay.values()) {
      if (item.db === this.core.delayedDb && item.value) {
        out.push({ record: decodeDelayedKey(item.key), message: decodeDelayedMessage(item.value) });
      }
    }
    return out.sort((a, b) => a.record.dueAt - b.record.dueAt || a.record.seq - b.record.seq);
  }
  load(): MetadataLoad {
    const c = this.core;
    return {
      exchanges: c.metaRecords(c.exchangesDb, 'x').map(decodeExchange),
      queues: c.metaRecords(c.queueRecordsDb, 'q').map(decodeQueue),
      bindings: c.metaRecords(c.bindingsDb, 'b').map(decodeBinding),
    };
  }
  sync(): Promise<void> {
    return this.core.sync();
  }
}

/** The LMDB-backed Store, with a few extras for tests and diagnostics. */
export class LmdbStore implements Store {
  readonly messages: LmdbMessageStore;
  readonly metadata: LmdbMetadataStore;
  private readonly core: LmdbCore;

  constructor(dir: string, opts: LmdbStoreOptions = {}) {
    this.core = new LmdbCore(path.resolve(dir), opts);
    this.messages = new LmdbMessageStore(this.core);
    this.metadata = new LmdbMetadataStore(this.core);
  }

  get dataDir(): string {
    return this.core.dir;
  }

  /** The commit failure this store stopped on, if any. */
  get failure(): StoreFailedError | undefined {
    return this.core.failure;
  }

  resume(): Promise<void> {
    return this.core.resume();
  }

  /** Batches flushed and LMDB transactions committed since open (one fsync each). */
  get counters(): { batches: number; transactions: number } {
    return { ...this.core.counters };
  }

  /** Full consistency check of the committed state (call after `await sync()`); repairs nothing. */
  verify(): StoreCheck {
    return this.core.fullCheck(false);
  }

  close(): Promise<void> {
    return this.core.close();
  }
}

export function openLmdbStore(dir: string, opts: LmdbStoreOptions = {}): LmdbStore {
  return new LmdbStore(dir, opts);
}

/** Marks a write's promise as handled: a failed commit is reported through the batch instead. */
function quiet(p: unknown): void {
  if (p && typeof (p as Promise<unknown>).then === 'function') (p as Promise<unknown>).then(undefined, () => {});
}
