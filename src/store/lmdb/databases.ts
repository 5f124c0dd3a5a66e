/**
 * Opening the LMDB environment and its named sub-databases, the keys of the `meta` database,
 * and the layout of the queue index (`queues`). src/store/README.md draws every layout.
 */

import fs from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { wholeAsSmi } from '../../frame/wire.js';
import { readU64 } from '../record-codec.js';
import { intact, seal, sealIn, SUM_SIZE } from './checksum.js';
import { checkDataFile, StoreDamagedError } from './file-check.js';

export type Bin = Database<Buffer, Buffer>;

/** The environment of one data dir and its sub-databases. */
export interface Databases {
  readonly dir: string;
  readonly root: RootDatabase<Buffer, Buffer>;
  /** Versioned: `turn` carries the chain counter of the commit engine in its version. */
  readonly meta: Bin;
  readonly entriesDb: Bin;
  readonly messagesDb: Bin;
  readonly refsDb: Bin;
  readonly queuesDb: Bin;
  readonly exchangesDb: Bin;
  readonly queueRecordsDb: Bin;
  readonly bindingsDb: Bin;
  readonly delayedDb: Bin;
  /** Vhosts, users, permissions, policies, parameters (metadata-store.ts: DefinitionRecord). */
  readonly definitionsDb: Bin;
  /** State spaces of features (metadata-store.ts: putState): key = stateKey(space, key). */
  readonly stateDb: Bin;
  /** Damaged records set aside: key = quarantineKey(db name, original key), value as found. */
  readonly quarantineDb: Bin;
  /** The name each database was opened under. */
  readonly names: ReadonlyMap<Bin, string>;
}

/** A record found damaged (its checksum does not match). */
export interface DamagedRecord {
  db: Bin;
  key: Buffer;
  value: Buffer;
}

export const TURN_KEY = Buffer.from('turn');
export const NEXT_ID_KEY = Buffer.from('nextMessageId');
export const FORMAT_KEY = Buffer.from('format');
/** Set by the batch that quarantined a record: the next open runs the full check. */
export const CHECK_KEY = Buffer.from('check');
/**
 * Format 3: Σ (refcount − 1) over the refcount records (only messages of several entries have
 * one), so that entries = messages + this on every commit: the O(1) check on open.
 */
export const SHARED_REFS_KEY = Buffer.from('sharedRefs');
/**
 * Format 5: how many entries hold their message inline (and so refer to no message record), so
 * that entries = messages + shared references + this on every commit.
 */
export const INLINE_ENTRIES_KEY = Buffer.from('inlineEntries');
export const ONE_BYTE = Buffer.from([1]);

/** A persisted counter of `meta` (SHARED_REFS_KEY, INLINE_ENTRIES_KEY; 0 when absent). */
export function readCounter(dbs: Databases, key: Buffer): number {
  const v = dbs.meta.get(key);
  return v && v.length === 8 ? wholeAsSmi(v.readDoubleBE(0)) : 0;
}

/** The persisted shared-reference counter (0 when absent). */
export function readSharedRefs(dbs: Databases): number {
  return readCounter(dbs, SHARED_REFS_KEY);
}

export function counterValue(n: number): Buffer {
  const v = Buffer.allocUnsafe(8);
  v.writeDoubleBE(n, 0);
  return v;
}

/** What a message of `refs` entries adds to the shared-reference counter. */
export function sharedRefsOf(refs: number): number {
  return refs > 1 ? refs - 1 : 0;
}
const QUEUE_KEY_PREFIX = 0x71; // 'q': keeps the empty queue name a valid (non-empty) key
const SWEEP_KEY_PREFIX = 0x73; // 's': a deleted queue whose entries are still being swept
export const MAX_KEY = 1978;
const DEFAULT_MAP_SIZE = 1 << 30;

/**
 * Opens dir's environment after checking its data file (file-check.ts); throws StoreDamagedError
 * if it is damaged. `readOnly` is for `warren check` without --repair.
 */
export function openDatabases(dir: string, opts: { mapSize?: number; readOnly?: boolean } = {}): Databases {
  if (!opts.readOnly) fs.mkdirSync(dir, { recursive: true });
  const file = checkDataFile(dir);
  if (file.problems.length > 0) throw new StoreDamagedError(file.file, file.problems);
  const root = open<Buffer, Buffer>(dir, {
    overlappingSync: false, // commit = fsync before the write promise resolves (DESIGN.md, convention 8)
    noSync: false,
    maxDbs: 16,
    mapSize: opts.mapSize ?? DEFAULT_MAP_SIZE,
    encoding: 'binary',
    keyEncoding: 'binary',
    readOnly: opts.readOnly ?? false,
  });
  const names = new Map<Bin, string>();
  const sub = (name: string, useVersions = false): Bin => {
    const db = root.openDB<Buffer, Buffer>(name, { encoding: 'binary', keyEncoding: 'binary', useVersions });
    names.set(db, name);
    return db;
  };
  return {
    dir,
    root,
    meta: sub('meta', true),
    entriesDb: sub('entries'),
    messagesDb: sub('messages'),
    refsDb: sub('refs'),
    queuesDb: sub('queues'),
    exchangesDb: sub('exchanges'),
    queueRecordsDb: sub('queue-records'),
    bindingsDb: sub('bindings'),
    delayedDb: sub('delayed'),
    definitionsDb: sub('definitions'),
    stateDb: sub('state'),
    quarantineDb: sub('quarantine'),
    names,
  };
}

/** The quarantine key of a record: db name (u8 length + bytes), then the record's own key. */
export function quarantineKey(dbs: Databases, db: Bin, key: Uint8Array): Buffer {
  const name = Buffer.from(dbs.names.get(db) ?? '?');
  return Buffer.concat([Buffer.from([name.length]), name, key]);
}

/** The next message id: above both the persisted high-water mark and the highest stored id. */
export function storedNextId(dbs: Databases): number {
  const storedNext = dbs.meta.get(NEXT_ID_KEY);
  let next = storedNext ? readU64(storedNext, 0) : 1;
  for (const { key } of dbs.messagesDb.getRange({ reverse: true, limit: 1 })) next = Math.max(next, readU64(key, 0) + 1);
  return Math.max(next, 1);
}

// ---- the queue index: key 'q' · name; value queue id u32 · entry count f64 · body bytes f64 ------
// A deleted queue whose entries are not all removed yet has key 's' · queue id u32 instead
// (same value): its entries still count, and the sweep goes on after a restart.

export interface QueueIndexRecord {
  key: Buffer;
  /** The queue's name ('' for a deleted queue being swept). */
  name: string;
  id: number;
  count: number;
  bytes: number;
  /** A deleted queue whose entries are still being swept (key 's' · id). */
  sweeping: boolean;
}

/** Throws RangeError if the name cannot be a key. */
export function queueIndexKey(name: string): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length + 1 > MAX_KEY) throw new RangeError(`queue key longer than ${MAX_KEY - 1} bytes`);
  return Buffer.concat([Buffer.from([QUEUE_KEY_PREFIX]), nameBytes]);
}

/** The stored value (checksummed) of a queue index record. */
export function queueValue(key: Buffer, id: number, count: number, bytes: number): Buffer {
  const v = Buffer.allocUnsafe(20 + SUM_SIZE);
  v.writeUInt32BE(id, 0);
  v.writeDoubleBE(count, 4);
  v.writeDoubleBE(bytes, 12);
  seal(key, v);
  return v;
}

/** The index key of a deleted queue whose entries are being swept. */
export function sweepKey(id: number): Buffer {
  const key = Buffer.allocUnsafe(5);
  key[0] = SWEEP_KEY_PREFIX;
  key.writeUInt32BE(id, 1);
  return key;
}

function isSweepKey(key: Buffer): boolean {
  return key.length === 5 && key[0] === SWEEP_KEY_PREFIX;
}

export function queueName(key: Buffer): string {
  return isSweepKey(key) ? '' : key.subarray(1).toString('utf8');
}

/** The queue of an index key, for the log and `warren check`. */
export function indexLabel(key: Buffer): string {
  return isSweepKey(key) ? `the deleted queue of store id ${key.readUInt32BE(1)} (being swept)` : queueLabel(queueName(key));
}

/** A queue for the log and `warren check`: the broker names queues `${vhost}\0${name}`. */
export function queueLabel(name: string): string {
  const nul = name.indexOf('\u0000');
  return nul < 0 ? `queue '${name}'` : `queue '${name.slice(nul + 1)}' in vhost '${name.slice(0, nul)}'`;
}

/** Every record of the committed queue index; damaged ones (checksum mismatch) apart. */
export function readQueueIndex(dbs: Databases): { records: QueueIndexRecord[]; damaged: DamagedRecord[] } {
  const records: QueueIndexRecord[] = [];
  const damaged: DamagedRecord[] = [];
  for (const { key, value } of dbs.queuesDb.getRange({})) {
    const k = Buffer.from(key);
    if (!intact(k, value)) damaged.push({ db: dbs.queuesDb, key: k, value: Buffer.from(value) });
    else records.push({ key: k, name: queueName(k), id: value.readUInt32BE(0), count: wholeAsSmi(value.readDoubleBE(4)), bytes: wholeAsSmi(value.readDoubleBE(12)), sweeping: isSweepKey(k) });
  }
  return { records, damaged };
}

/** First entry key of a queue id (entry keys start with the queue id). */
export function queueStart(id: number): Buffer {
  return Buffer.from([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff]);
}

export function queueEnd(id: number): Buffer {
  return queueStart(id + 1);
}

// ---- refcounts: key msgId u64; value refcount u32, only for refcounts > 1 (format 3) --------------

export const REFS_VALUE_SIZE = 4 + SUM_SIZE;

export function refsValue(key: Uint8Array, refs: number): Buffer {
  const v = Buffer.allocUnsafe(REFS_VALUE_SIZE);
  v.writeUInt32BE(refs, 0);
  seal(key, v);
  return v;
}

/** Writes a refcount value at buf[at...], its key being the 8 bytes at buf[keyAt...]. */
export function writeRefsValue(buf: Buffer, keyAt: number, at: number, refs: number): void {
  buf.writeUInt32BE(refs, at);
  sealIn(buf, keyAt, keyAt + 8, at, at + REFS_VALUE_SIZE);
}

/** The stored refcount, or undefined if the record is damaged. */
export function readRefs(key: Uint8Array, value: Buffer): number | undefined {
  return intact(key, value) ? value.readUInt32BE(0) : undefined;
}

export function dbEntryCount(db: Bin): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/** Marks a write's promise as handled: a failed commit is reported through the batch instead. */
export function quiet(p: unknown): void {
  if (p && typeof (p as Promise<unknown>).then === 'function') (p as Promise<unknown>).then(undefined, () => {});
}
