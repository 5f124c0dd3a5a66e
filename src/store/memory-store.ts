/**
 * The in-memory store: same contract and semantics as the LMDB store, nothing durable. Used by
 * brokers that run without a data directory, and by tests. Messages are kept by reference (the
 * broker decides when a body must stop being a view of a socket chunk).
 */

import type { EntryCounts, MessageRef, MessageStore, PersistedMessage, QueueEntry, StoredEntry, StoreStats } from './message-store.js';
import type {
  BindingRecord,
  DefinitionKind,
  DefinitionRecord,
  DelayedMessage,
  DelayedRecord,
  ExchangeRecord,
  MetadataLoad,
  MetadataStore,
  QueueRecord,
} from './metadata-store.js';
import { CommitWriters } from './commit-writers.js';
import { bindingKey, definitionKey, delayedKey, MAX_STATE_KEY, nameKey, stateKeyFits } from './metadata-codec.js';
import { checkEntry, checkEntryOf, checkMessage, publicEntry, sameMessage, sharedRewriteError, storedEntry } from './record-codec.js';
import type { Store } from './store.js';
import { lowerBound } from '../sorted.js';

interface MemQueue {
  entries: Map<number, StoredEntry>;
  /** Seqs in order, rebuilt lazily when an insertion breaks the append order. */
  sorted: number[] | null;
  maxSeq: number;
  bytes: number;
}

interface MemMessage {
  msg: PersistedMessage;
  refs: number;
}

const RESOLVED = Promise.resolve();

/** What the in-memory store reports (the LMDB store's onError, for the test fault). */
export interface MemoryStoreOptions {
  /** Called once when a commit fails (only ever by Store.failNextCommit). */
  onError?: (err: Error) => void;
  /** Where a beforeCommit writer that threw is reported. */
  log?: (msg: string) => void;
}

class MemoryMessageStore implements MessageStore {
  private nextId = 1;
  /** Store.failNextCommit: the next sync() fails, and every one after it until resume(). */
  failNext = false;
  failure: Error | undefined;

  constructor(
    private readonly onError: ((err: Error) => void) | undefined,
    private readonly log: ((msg: string) => void) | undefined,
  ) {}
  private readonly queueMap = new Map<string, MemQueue>();
  private readonly messageMap = new Map<number, MemMessage>();

  nextMessageId(): number {
    return this.nextId++;
  }

  enqueue(queue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntryOf('enqueue', entry, msg);
    this.add(queue, entry, msg);
  }

  remove(queue: string, seq: number): void {
    const q = this.queueMap.get(queue);
    const e = q?.entries.get(seq);
    if (!q || !e) return;
    this.drop(q, e);
  }

  update(queue: string, entry: QueueEntry): void {
    checkEntry(entry);
    const e = this.queueMap.get(queue)?.entries.get(entry.seq);
    if (!e) return;
    e.redelivered = entry.redelivered;
    e.deliveryCount = entry.deliveryCount;
    e.expiresAt = entry.expiresAt;
  }

  move(fromQueue: string, seq: number, toQueue: string, entry: QueueEntry, msg: PersistedMessage): void {
    checkEntryOf('move', entry, msg);
    const from = this.queueMap.get(fromQueue);
    const old = from?.entries.get(seq);
    const stored = this.messageMap.get(msg.id);
    if (old && old.msgId === msg.id && stored) {
      if (stored.refs === 1) stored.msg = msg;
      else if (!sameMessage(stored.msg, msg)) throw sharedRewriteError(msg.id, stored.refs);
    }
    this.add(toQueue, entry, msg); // first, so a shared message never drops to zero refs
    if (from && old && from.entries.get(seq) === old) this.drop(from, old);
  }

  deleteQueue(queue: string): void {
    const q = this.queueMap.get(queue);
    if (!q) return;
    for (const e of [...q.entries.values()]) this.drop(q, e);
    this.queueMap.delete(queue);
  }

  /** beforeCommit's writers, run at the end of the turn they were registered in or by a sync() before. */
  private readonly writers = new CommitWriters();
  private readonly runWriters = (): void => {
    this.writers.run((err) => this.log?.(`memory store: a write held for the commit failed: ${String(err)}`));
  };

  beforeCommit(write: () => void): void {
    if (this.writers.add(write)) queueMicrotask(this.runWriters);
  }

  sync(): Promise<void> {
    this.runWriters();
    if (this.failNext) {
      this.failNext = false;
      this.failure = Object.assign(new Error('commit failed: ENOSPC: no space left on device (faults.failNextCommit)'), { code: 'ENOSPC' });
      this.onError?.(this.failure);
    }
    return this.failure ? Promise.reject(this.failure) : RESOLVED;
  }

  readEntries(queue: string, fromSeq: number, limit: number): StoredEntry[] {
    const q = this.queueMap.get(queue);
    if (!q || limit <= 0) return [];
    const seqs = this.sortedSeqs(q);
    return this.entriesAt(q, seqs, lowerBound(seqs, fromSeq), limit);
  }

  readLastEntries(queue: string, limit: number): StoredEntry[] {
    const q = this.queueMap.get(queue);
    if (!q || limit <= 0) return [];
    const seqs = this.sortedSeqs(q);
    return this.entriesAt(q, seqs, Math.max(0, seqs.length - limit), limit);
  }

  /** Copies of at most limit entries of q from seqs[from] on (seqs: q's keys, sorted: sortedSeqs). */
  private entriesAt(q: MemQueue, seqs: readonly number[], from: number, limit: number): StoredEntry[] {
    const out: StoredEntry[] = [];
    for (let i = from; i < seqs.length && out.length < limit; i++) out.push(publicEntry(q.entries.get(seqs[i]!)!));
    return out;
  }

  readMessage(_queue: string, entry: MessageRef): PersistedMessage | undefined {
    return this.messageMap.get(entry.msgId)?.msg;
  }

  countEntries(queue: string): EntryCounts {
    const q = this.queueMap.get(queue);
    return { messages: q?.entries.size ?? 0, bytes: q?.bytes ?? 0 };
  }

  lastSeq(queue: string): number {
    const q = this.queueMap.get(queue);
    if (!q || q.entries.size === 0) return -1;
    const seqs = this.sortedSeqs(q);
    return seqs[seqs.length - 1]!;
  }

  queues(): string[] {
    return [...this.queueMap].filter(([, q]) => q.entries.size > 0).map(([name]) => name);
  }

  swept(): Promise<void> {
    return RESOLVED; // deleteQueue removed everything at once
  }

  stats(): StoreStats {
    let entries = 0;
    for (const q of this.queueMap.values()) entries += q.entries.size;
    return { messages: this.messageMap.size, entries };
  }

  close(): Promise<void> {
    return RESOLVED;
  }

  private add(queue: string, entry: QueueEntry, msg: PersistedMessage): void {
    let q = this.queueMap.get(queue);
    if (!q) {
      q = { entries: new Map(), sorted: [], maxSeq: -1, bytes: 0 };
      this.queueMap.set(queue, q);
    }
    const stored = this.messageMap.get(msg.id);
    if (stored) stored.refs++;
    else this.messageMap.set(msg.id, { msg, refs: 1 });
    const existing = q.entries.get(entry.seq);
    if (existing) this.drop(q, existing);
    const e = storedEntry(entry, msg);
    q.entries.set(e.seq, e);
    q.bytes += e.size;
    if (e.seq > q.maxSeq) {
      q.maxSeq = e.seq;
      q.sorted?.push(e.seq);
    } else q.sorted = null;
  }

  private drop(q: MemQueue, e: StoredEntry): void {
    q.entries.delete(e.seq);
    q.bytes -= e.size;
    if (q.sorted) {
      if (q.sorted[0] === e.seq) q.sorted.shift();
      else q.sorted = null;
    }
    const m = this.messageMap.get(e.msgId);
    if (m && --m.refs === 0) this.messageMap.delete(e.msgId);
  }

  private sortedSeqs(q: MemQueue): number[] {
    if (!q.sorted) q.sorted = [...q.entries.keys()].sort((a, b) => a - b);
    return q.sorted;
  }
}

class MemoryMetadataStore implements MetadataStore {
  /** The message store, whose sync() this one shares (one group commit, as with LMDB). */
  constructor(private readonly messages: MemoryMessageStore) {}

  private readonly exchanges = new Map<string, ExchangeRecord>();
  private readonly queueRecords = new Map<string, QueueRecord>();
  private readonly bindings = new Map<string, BindingRecord>();
  private readonly delayed = new Map<string, DelayedMessage>();
  private readonly definitions = new Map<string, DefinitionRecord>();
  /** State spaces: space → key (latin1) → value. */
  private readonly state = new Map<string, Map<string, Buffer>>();

  putExchange(r: ExchangeRecord): void {
    this.exchanges.set(nameKey(r.vhost, r.name).toString('latin1'), { ...r });
  }
  deleteExchange(vhost: string, name: string): void {
    this.exchanges.delete(nameKey(vhost, name).toString('latin1'));
  }
  putQueue(r: QueueRecord): void {
    this.queueRecords.set(nameKey(r.vhost, r.name).toString('latin1'), { ...r });
  }
  deleteQueue(vhost: string, name: string): void {
    this.queueRecords.delete(nameKey(vhost, name).toString('latin1'));
  }
  putBinding(r: BindingRecord): void {
    this.bindings.set(bindingKey(r).toString('latin1'), { ...r });
  }
  deleteBinding(r: BindingRecord): void {
    this.bindings.delete(bindingKey(r).toString('latin1'));
  }
  putDelayed(r: DelayedRecord, msg: PersistedMessage): void {
    checkMessage(msg);
    this.delayed.set(delayedKey(r).toString('latin1'), { record: { ...r }, message: msg });
  }
  deleteDelayed(r: DelayedRecord): void {
    this.delayed.delete(delayedKey(r).toString('latin1'));
  }
  loadDelayed(): DelayedMessage[] {
    return [...this.delayed]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, d]) => ({ record: { ...d.record }, message: d.message }));
  }
  putDefinition(r: DefinitionRecord): void {
    this.definitions.set(definitionKey(r.kind, r.key).toString('latin1'), { kind: r.kind, key: r.key, value: structuredClone(r.value) });
  }
  deleteDefinition(kind: DefinitionKind, key: string): void {
    this.definitions.delete(definitionKey(kind, key).toString('latin1'));
  }
  loadDefinitions(): DefinitionRecord[] {
    return [...this.definitions]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, r]) => ({ kind: r.kind, key: r.key, value: structuredClone(r.value) }));
  }
  putState(space: string, key: Buffer, value: Buffer): void {
    if (!stateKeyFits(space, key)) throw new RangeError(`state key longer than ${MAX_STATE_KEY} bytes`);
    let keys = this.state.get(space);
    if (!keys) this.state.set(space, (keys = new Map()));
    keys.set(key.toString('latin1'), Buffer.from(value));
  }
  deleteState(space: string, key: Buffer): void {
    const keys = this.state.get(space);
    keys?.delete(key.toString('latin1'));
    if (keys?.size === 0) this.state.delete(space);
  }
  loadState(space: string): Array<[Buffer, Buffer]> {
    return [...(this.state.get(space) ?? [])]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]): [Buffer, Buffer] => [Buffer.from(k, 'latin1'), Buffer.from(v)]);
  }
  deleteStateSpace(space: string): void {
    this.state.delete(space);
  }
  load(): MetadataLoad {
    return {
      exchanges: [...this.exchanges.values()].map((r) => ({ ...r })),
      queues: [...this.queueRecords.values()].map((r) => ({ ...r })),
      bindings: [...this.bindings.values()].map((r) => ({ ...r })),
    };
  }
  sync(): Promise<void> {
    return this.messages.sync();
  }
}

export function openMemoryStore(options: MemoryStoreOptions = {}): Store {
  const messages = new MemoryMessageStore(options.onError, options.log);
  const metadata = new MemoryMetadataStore(messages);
  return {
    messages,
    metadata,
    resume: () => {
      messages.failure = undefined;
      return RESOLVED;
    },
    failNextCommit: (armed) => {
      messages.failNext = armed;
    },
    close: () => messages.close(),
  };
}
