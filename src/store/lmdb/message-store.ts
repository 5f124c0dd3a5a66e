/**
 * The MessageStore facade on LMDB: entries and messages read through the overlay (batch.ts)
 * from the committed snapshot, and written through the open batch of the commit engine.
 */

import type { EntryCounts, MessageRef, MessageStore, PersistedMessage, QueueEntry, StoredEntry, StoreStats } from '../message-store.js';
import {
  checkEntry,
  checkEntryOf,
  decodeInlineMessage,
  decodeMessage,
  ENTRY_KEY_SIZE,
  entryKey,
  entryKeyInto,
  heldEntry,
  isInlineEntryValue,
  messageKeyInto,
  messageSize,
  msgIdOfEntryValue,
  publicEntry,
  readEntryValue,
  sameMessage,
  seqOfEntryKey,
  sharedRewriteError,
  sizeOfEntryValue,
  type HeldEntry,
} from '../record-codec.js';
import { newQueueState, type Overlay, type QueueState } from './batch.js';
import { intact, unsealed } from './checksum.js';
import type { CommitEngine } from './commit.js';
import { dbEntryCount, indexLabel, queueEnd, queueIndexKey, queueStart, sweepKey, type Databases } from './databases.js';

/** About 8 ms of the event loop at ~2 µs per entry, and one commit's worth of removals. */
const SWEEP_CHUNK = 4096;

export class LmdbMessageStore implements MessageStore {
  private readonly dbs: Databases;
  private readonly overlay: Overlay;
  private readonly keyScratch = Buffer.alloc(ENTRY_KEY_SIZE);
  private readonly msgKeyScratch = Buffer.alloc(8);
  /**
   * The entries the latest readEntries returned, and how many batches had been written then: a
   * damaged message found by the readMessage that follows (a queue paging in) is traced to its
   * queue and its entry dropped, and while no batch has been written since, the readMessage of
   * one of them takes the record's value from here instead of looking it up again (`next`: where
   * the next one is looked for first, as a queue reads its page's messages in order).
   */
  private lastRead: { qs: QueueState; entries: HeldEntry[]; batches: number; next: number } | undefined;

  /** Entries a sweep removes per commit (LmdbStoreOptions.sweepChunk). */
  private readonly sweepChunk: number;
  /** A sweep() is under way. */
  private sweeping = false;
  private readonly sweptWaiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];

  constructor(
    private readonly engine: CommitEngine,
    opts: { sweepChunk?: number } = {},
  ) {
    this.dbs = engine.dbs;
    this.overlay = engine.overlay;
    this.sweepChunk = Math.max(1, opts.sweepChunk ?? SWEEP_CHUNK);
    this.sweep(); // deleted queues an earlier run left unswept
  }

  nextMessageId(): number {
    return this.engine.nextId++;
  }

  enqueue(queue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntryOf('enqueue', entry, msg);
    if (!this.engine.writable()) return;
    this.addEntry(this.queueStateOrNew(queue), entry, msg);
  }

  remove(queue: string, seq: number): void {
    if (!this.engine.writable()) return;
    const qs = this.queueState(queue);
    if (!qs || !Number.isSafeInteger(seq) || seq < 0) return;
    const existing = this.getEntry(qs, seq);
    if (existing) this.removeEntry(qs, existing);
  }

  update(queue: string, entry: QueueEntry): void {
    checkEntry(entry);
    if (!this.engine.writable()) return;
    const qs = this.queueState(queue);
    if (!qs) return;
    // An inline entry is written again whole, with its message.
    const existing = this.getWholeEntry(qs, entry.seq);
    if (!existing) return;
    const next: HeldEntry = {
      ...existing,
      redelivered: entry.redelivered,
      deliveryCount: entry.deliveryCount,
      expiresAt: entry.expiresAt,
    };
    this.overlay.setEntry(qs, entry.seq, next, true, existing.inline);
  }

  move(fromQueue: string, seq: number, toQueue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntryOf('move', entry, msg);
    if (!this.engine.writable()) return;
    const from = this.queueState(fromQueue);
    const old = from ? this.getEntry(from, seq) : null;
    // (An inline entry's message is its own: it goes with the old entry, msg into the new one.)
    if (old && old.msgId === msg.id && !old.inline) {
      const m = this.overlay.msgItem(msg.id, true);
      if (m.refs === 1) {
        m.msg = msg;
        m.size = messageSize(msg);
        m.write = true;
      } else if (m.refs > 1) {
        const stored = this.loadMessage(msg.id);
        if (!stored || !sameMessage(stored, msg)) throw sharedRewriteError(msg.id, m.refs);
      }
    }
    this.addEntry(this.queueStateOrNew(toQueue), entry, msg); // first, so a shared message never drops to zero refs
    // (a move onto its own queue and seq was a replacement, already done by addEntry)
    if (from && old && !(fromQueue === toQueue && seq === entry.seq)) this.removeEntry(from, old);
  }

  /**
   * The queue's entries go at once for every read (its name is free for a new queue at once),
   * and from the file in chunks: the first now, in this batch, and the rest a chunk per commit
   * (sweep()), so deleting or purging a queue of millions does not hold the event loop. While
   * entries are left, the index keeps a sweep record (sweepKey) that counts them, so a restart
   * goes on with the sweep and the counters agree on every commit.
   */
  deleteQueue(queue: string): void {
    if (!this.engine.writable()) return;
    const qs = this.queueState(queue);
    if (!qs) return;
    const b = this.engine.batch();
    // Entries in the overlay go now (they are counted; removals in flight are not).
    for (const item of [...qs.overlay.values()]) {
      if (!item.entry) continue;
      qs.count--;
      qs.bytes -= item.entry.size;
      if (!item.entry.inline) this.dropRef(item.entry.msgId);
      this.overlay.setEntry(qs, item.seq, null, true);
    }
    this.overlay.queues.delete(qs.name);
    b.removedQueueKeys.push(qs.key);
    // What is left are the file's entries outside the overlay, counted by the sweep record.
    qs.key = sweepKey(qs.id);
    qs.sweepFrom = 0;
    this.overlay.sweeps.set(qs.id, qs);
    if (!this.sweepSome(qs)) this.sweep();
  }

  /**
   * Removes up to a chunk of a deleted queue's entries from the file, and the messages only
   * they referred to, in the open batch. True when none is left: the queue is then gone.
   */
  private sweepSome(qs: QueueState): boolean {
    const b = this.engine.batch();
    // Usually no message is shared: then one outside the overlay is freed by its one entry,
    // without a refcount item per message (a deep queue would need one for each).
    const single = this.engine.sharesNoMessage;
    const msgs = this.overlay.msgs;
    const bulkBefore = b.bulkMessageDeletes.length;
    let visited = 0;
    let more = false;
    for (const { key, value } of this.dbs.entriesDb.getRange({ start: entryKey(qs.id, qs.sweepFrom!), end: queueEnd(qs.id) })) {
      const seq = seqOfEntryKey(key);
      if (visited++ === this.sweepChunk) {
        qs.sweepFrom = seq;
        more = true;
        break;
      }
      if (qs.overlay.has(seq)) continue; // a removal in flight
      // A damaged entry's message id and size are unknown: the full check of the next open settles them.
      if (intact(key, value)) {
        const id = msgIdOfEntryValue(value);
        if (isInlineEntryValue(value)) b.bulkInlineDeletes++;
        else if (single && !msgs.has(id)) b.bulkMessageDeletes.push(id);
        else this.dropRef(id);
        qs.bytes -= sizeOfEntryValue(value);
      } else this.engine.damaged(`entry ${describe(qs, seq)}`, { db: this.dbs.entriesDb, key, value });
      qs.count--;
      b.bulkDeletes.push(qs.id, seq);
    }
    if (b.bulkMessageDeletes.length > bulkBefore) this.engine.addBulkMessageDeletes(b);
    if (more) {
      b.dirtyQueues.add(qs);
      return false;
    }
    qs.deleted = true;
    qs.count = 0;
    qs.bytes = 0;
    this.overlay.sweeps.delete(qs.id);
    b.dirtyQueues.delete(qs);
    b.removedQueueKeys.push(qs.key);
    return true;
  }

  /**
   * Sweeps the deleted queues, a chunk in each turn after the previous chunk committed (so the
   * sweep goes at the disk's pace and never queues batches up), until none is left. Stops when
   * the store closes or a commit fails; the sweep records keep what is left for the next open
   * (or for resume(), which calls this again).
   */
  sweep(): void {
    if (this.sweeping || this.overlay.sweeps.size === 0) return;
    this.sweeping = true;
    const stop = (): void => {
      this.sweeping = false;
      this.settleSwept();
    };
    const next = (): void => {
      this.engine.sync().then(() => setImmediate(step), stop);
    };
    const step = (): void => {
      const qs = this.overlay.sweeps.values().next().value as QueueState | undefined;
      if (this.engine.isClosed || this.engine.failure || !qs) return stop();
      this.sweepSome(qs);
      next();
    };
    next();
  }

  swept(): Promise<void> {
    if (this.overlay.sweeps.size === 0) return this.engine.sync();
    return new Promise((resolve, reject) => {
      this.sweptWaiters.push({ resolve, reject });
      this.sweep();
    });
  }

  /** Deleted queues whose entries are not all swept yet. */
  get sweepsLeft(): number {
    return this.overlay.sweeps.size;
  }

  private settleSwept(): void {
    const waiters = this.sweptWaiters.splice(0);
    const left = this.overlay.sweeps.size;
    for (const w of waiters) {
      if (left === 0) w.resolve();
      else w.reject(this.engine.failure ?? new Error(`store ${this.dbs.dir} closed with ${left} deleted queue(s) still to sweep`));
    }
  }

  sync(): Promise<void> {
    return this.engine.sync();
  }

  beforeCommit(write: () => void): void {
    this.engine.beforeFlush(write);
  }

  readEntries(queue: string, fromSeq: number, limit: number): StoredEntry[] {
    return this.read(queue, limit, Math.max(0, Math.ceil(fromSeq)), false);
  }

  readLastEntries(queue: string, limit: number): StoredEntry[] {
    return this.read(queue, limit, 0, true).reverse();
  }

  /** readEntries and readLastEntries (`last`: from the last entry back, in reverse seq order). */
  private read(queue: string, limit: number, fromSeq: number, last: boolean): StoredEntry[] {
    const qs = this.queueState(queue);
    const out: StoredEntry[] = [];
    this.lastRead = undefined;
    if (!qs || limit <= 0) return out;
    const read: HeldEntry[] = [];
    for (const e of this.visibleEntries(qs, fromSeq, last)) {
      out.push(publicEntry(e));
      read.push(e);
      if (out.length >= limit) break;
    }
    this.lastRead = { qs, entries: read, batches: this.engine.counters.batches, next: 0 };
    return out;
  }

  readMessage(queue: string, entry: MessageRef): PersistedMessage | undefined {
    const { seq, msgId } = entry;
    if (!Number.isSafeInteger(msgId) || msgId < 0) return undefined;
    const qs = this.queueState(queue);
    if (qs !== undefined && Number.isSafeInteger(seq) && seq >= 0) {
      // A message of one entry is usually inside it: the entry, from the overlay or the file.
      const item = qs.overlay.get(seq);
      if (item !== undefined) {
        const e = item.entry;
        if (e !== null && e.inline && e.msgId === msgId) return e.inlineMsg ?? this.readInline(qs, seq, msgId) ?? undefined;
      } else {
        const read = this.justRead(qs, seq);
        if (read !== undefined) return read.inline && read.msgId === msgId ? decodeInlineMessage(msgId, unsealed(read.value!)) : this.loadMessage(msgId);
        const inline = this.readInline(qs, seq, msgId);
        if (inline !== null) return inline;
      }
    }
    return this.loadMessage(msgId);
  }

  /** The file's entry at seq as the latest readEntries of qs read it, if no batch was written since. */
  private justRead(qs: QueueState, seq: number): HeldEntry | undefined {
    const last = this.lastRead;
    if (last === undefined || last.qs !== qs || last.batches !== this.engine.counters.batches) return undefined;
    const entries = last.entries;
    let i = last.next;
    if (entries[i]?.seq !== seq) i = indexOfSeq(entries, seq);
    const e = entries[i];
    // Only a value read from the file: an entry from the overlay was written by a batch.
    if (e === undefined || e.value === null) return undefined;
    last.next = i + 1;
    return e;
  }

  countEntries(queue: string): EntryCounts {
    const qs = this.queueState(queue);
    return { messages: qs?.count ?? 0, bytes: qs?.bytes ?? 0 };
  }

  lastSeq(queue: string): number {
    const qs = this.queueState(queue);
    if (!qs || qs.count === 0) return -1;
    let max = -1;
    for (const item of qs.overlay.values()) if (item.entry && item.seq > max) max = item.seq;
    for (const key of this.dbs.entriesDb.getKeys({ start: queueEnd(qs.id), end: queueStart(qs.id), reverse: true })) {
      const seq = seqOfEntryKey(key);
      if (seq <= max) break;
      if (!qs.overlay.has(seq)) return seq;
    }
    return max;
  }

  queues(): string[] {
    return [...this.overlay.queues.values()].filter((qs) => qs.count > 0).map((qs) => qs.name);
  }

  stats(): StoreStats {
    // Stored bodies: message records, and the messages inside their entries.
    return { messages: dbEntryCount(this.dbs.messagesDb) + this.engine.inlineEntryCount, entries: dbEntryCount(this.dbs.entriesDb) };
  }

  close(): Promise<void> {
    return this.engine.close();
  }

  // ---- entries and messages through the overlay --------------------------------------------------

  private queueState(name: string): QueueState | undefined {
    return this.overlay.queues.get(name);
  }

  /** The queue's state, created (with a new queue id) on its first entry. */
  private queueStateOrNew(name: string): QueueState {
    let qs = this.overlay.queues.get(name);
    if (!qs) {
      qs = newQueueState(name, queueIndexKey(name), this.overlay.nextQueueId++);
      qs.knownMaxSeq = -1;
      this.overlay.queues.set(name, qs);
      this.engine.batch().dirtyQueues.add(qs);
    }
    return qs;
  }

  private getEntry(qs: QueueState, seq: number): HeldEntry | null {
    const item = qs.overlay.get(seq);
    if (item) return item.entry;
    const key = entryKeyInto(this.keyScratch, qs.id, seq);
    const v = this.dbs.entriesDb.getBinaryFast(key);
    if (!v) return null;
    if (intact(key, v)) return readEntryValue(seq, v);
    this.quarantineEntry(qs, seq, key, v);
    return null;
  }

  /**
   * The entry at seq with its message if it holds one inline (inlineMsg set): from the overlay,
   * or read from the file once, as the caller's own copy. Null if there is none or it is damaged
   * (then quarantined).
   */
  private getWholeEntry(qs: QueueState, seq: number): HeldEntry | null {
    const item = qs.overlay.get(seq);
    if (item) {
      const e = item.entry;
      if (e === null || !e.inline || e.inlineMsg !== null) return e;
      const inlineMsg = this.readInline(qs, seq, e.msgId);
      return inlineMsg ? { ...e, inlineMsg } : null;
    }
    const v = this.readEntryRecord(qs, seq);
    if (!v) return null;
    const e = readEntryValue(seq, v);
    if (e.inline) e.inlineMsg = decodeInlineMessage(e.msgId, unsealed(v));
    return e;
  }

  /**
   * Message msgId inside the file's entry at seq (its own copy); null if the entry is gone or
   * does not hold it, undefined if the entry is damaged (then quarantined).
   */
  private readInline(qs: QueueState, seq: number, msgId: number): PersistedMessage | null | undefined {
    const v = this.readEntryRecord(qs, seq);
    if (!v) return v;
    return isInlineEntryValue(v) && msgIdOfEntryValue(v) === msgId ? decodeInlineMessage(msgId, unsealed(v)) : null;
  }

  /** The file's entry record at seq, as the caller's own copy; null if none, undefined if damaged (then quarantined). */
  private readEntryRecord(qs: QueueState, seq: number): Buffer | null | undefined {
    const key = entryKeyInto(this.keyScratch, qs.id, seq);
    const v = this.dbs.entriesDb.getBinary(key);
    if (v === undefined) return null;
    if (intact(key, v)) return v;
    this.quarantineEntry(qs, seq, key, v);
    return undefined;
  }

  /** A damaged entry: quarantined, and gone from its queue (its body size is unknown: the next open recounts). */
  private quarantineEntry(qs: QueueState, seq: number, key: Buffer, value: Buffer): void {
    this.engine.damaged(`entry ${describe(qs, seq)}`, { db: this.dbs.entriesDb, key, value });
    if (!this.engine.canWrite) return;
    this.overlay.setEntry(qs, seq, null, true);
    qs.count--;
    this.engine.batch().dirtyQueues.add(qs);
  }

  private addRef(msg: PersistedMessage): void {
    const m = this.overlay.msgItem(msg.id, false);
    if (m.refs === 0) {
      m.msg = msg;
      m.size = messageSize(msg);
      m.write = true;
    }
    m.refs++;
  }

  /** Drops a reference of an entry that refers to message id (so the message is stored). */
  private dropRef(id: number): void {
    const m = this.overlay.msgItem(id, true);
    if (m.refs > 0 && --m.refs === 0) {
      m.msg = null;
      m.write = false;
    }
  }

  /** Adds an entry and a reference to its message (CommitEngine.operations may put the message inside the entry when it flushes). */
  private addEntry(qs: QueueState, entry: QueueEntry, msg: PersistedMessage): void {
    if (qs.knownMaxSeq === undefined) qs.knownMaxSeq = this.diskMaxSeq(qs);
    if (entry.seq <= qs.knownMaxSeq) {
      const existing = this.getEntry(qs, entry.seq);
      if (existing) this.removeEntry(qs, existing);
    } else qs.knownMaxSeq = entry.seq;
    this.addRef(msg);
    const stored = heldEntry(entry, msg);
    this.overlay.setEntry(qs, entry.seq, stored, false);
    qs.count++;
    qs.bytes += stored.size;
    this.engine.batch().dirtyQueues.add(qs);
  }

  /** Removes an entry, and its reference to its message unless that is inside it (then it goes with it). */
  private removeEntry(qs: QueueState, existing: HeldEntry): void {
    this.overlay.setEntry(qs, existing.seq, null, true, existing.inline);
    qs.count--;
    qs.bytes -= existing.size;
    this.engine.batch().dirtyQueues.add(qs);
    if (!existing.inline) this.dropRef(existing.msgId);
  }

  private diskMaxSeq(qs: QueueState): number {
    let max = -1;
    for (const key of this.dbs.entriesDb.getKeys({ start: queueEnd(qs.id), end: queueStart(qs.id), reverse: true, limit: 1 })) {
      max = seqOfEntryKey(key);
    }
    for (const seq of qs.overlay.keys()) if (seq > max) max = seq;
    return max;
  }

  /**
   * Entries of the queue in seq order from fromSeq, or with `last`, from the last one back in
   * reverse seq order: the file merged with the overlay.
   */
  private *visibleEntries(qs: QueueState, fromSeq: number, last = false): Generator<HeldEntry> {
    const pending: HeldEntry[] = [];
    // Not a look at every item when all are removals (a queue being consumed or dropped).
    if (qs.overlayEntries > 0) for (const { entry } of qs.overlay.values()) if (entry !== null && entry.seq >= fromSeq) pending.push(entry);
    pending.sort(last ? (a, b) => b.seq - a.seq : (a, b) => a.seq - b.seq);
    let i = 0;
    const range = last
      ? this.dbs.entriesDb.getRange({ start: queueEnd(qs.id), end: queueStart(qs.id), reverse: true })
      : this.dbs.entriesDb.getRange({ start: entryKey(qs.id, fromSeq), end: queueEnd(qs.id) });
    for (const { key, value } of range) {
      const seq = seqOfEntryKey(key);
      while (i < pending.length && (last ? pending[i]!.seq > seq : pending[i]!.seq < seq)) yield pending[i++]!;
      if (qs.overlay.has(seq)) continue; // the overlay holds the newer state (updated or removed)
      if (!intact(key, value)) {
        this.quarantineEntry(qs, seq, Buffer.from(key), value);
        continue;
      }
      const e = readEntryValue(seq, value, true); // a range's values are copies of their own
      if (!e.inline && this.overlay.quarantinedMessages.has(e.msgId)) {
        this.engine.log(`store ${this.dbs.dir}: entry ${describe(qs, seq)} refers to quarantined message ${e.msgId}; dropped`);
        if (this.engine.canWrite) this.removeEntry(qs, e);
        continue;
      }
      yield e;
    }
    while (i < pending.length) yield pending[i++]!;
  }

  private loadMessage(id: number): PersistedMessage | undefined {
    const m = this.overlay.msgs.get(id);
    if (m) {
      if (m.refs === 0) return undefined;
      if (m.msg) return m.msg;
    }
    if (this.overlay.quarantinedMessages.has(id)) return undefined; // (until its removal commits, the file still has it)
    if (this.engine.bulkDeleted(id)) return undefined; // likewise a record deleteQueue removes in bulk
    const key = messageKeyInto(this.msgKeyScratch, id);
    const v = this.dbs.messagesDb.getBinary(key);
    if (!v) return undefined;
    if (intact(key, v)) return decodeMessage(id, unsealed(v));
    // Damaged: quarantined, and the entry that led here (if a readEntries just handed it out) dropped.
    this.overlay.quarantinedMessages.add(id);
    const qs = this.lastRead?.qs;
    const entry = this.lastRead?.entries.find((e) => e.msgId === id);
    this.engine.damaged(`message ${id}${qs && entry ? ` (${describe(qs, entry.seq)})` : ''}`, { db: this.dbs.messagesDb, key, value: v });
    if (qs && entry && this.engine.canWrite && !qs.deleted && this.getEntry(qs, entry.seq)?.msgId === id) this.removeEntry(qs, entry);
    return undefined;
  }
}

/** Where seq is in entries, which are in seq order, ascending or (readLastEntries) descending; -1 if not there. */
function indexOfSeq(entries: HeldEntry[], seq: number): number {
  const down = entries.length > 1 && entries[0]!.seq > entries[1]!.seq;
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const at = entries[mid]!.seq;
    if (at === seq) return mid;
    if (down ? at > seq : at < seq) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

function describe(qs: QueueState, seq: number): string {
  return `${indexLabel(qs.key)} seq ${seq}`;
}
