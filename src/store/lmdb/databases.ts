/**
 * Opening the LMDB environment and its named sub-databases, the keys of the `meta` database,
 * and the layout of the queue index (`queues`). src/store/README.md draws every layout.
 */

import fs from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import { readU64 } from '../record-codec.js';
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
}

export const TURN_KEY = Buffer.from('turn');
export const NEXT_ID_KEY = Buffer.from('nextMessageId');
const FORMAT_KEY = Buffer.from('format');
const FORMAT = 1;
export const ONE_BYTE = Buffer.from([1]);
const QUEUE_KEY_PREFIX = 0x71; // 'q': keeps the empty queue name a valid (non-empty) key
export const MAX_KEY = 1978;
const DEFAULT_MAP_SIZE = 1 << 30;

/** Opens dir's environment after checking its data file (file-check.ts); throws StoreDamagedError if it is damaged. */
export function openDatabases(dir: string, mapSize = DEFAULT_MAP_SIZE): Databases {
  fs.mkdirSync(dir, { recursive: true });
  const file = checkDataFile(dir);
  if (file.problems.length > 0) throw new StoreDamagedError(file.file, file.problems);
  const root = open<Buffer, Buffer>(dir, {
    overlappingSync: false, // commit = fsync before the write promise resolves (DESIGN.md, convention 8)
    noSync: false,
    maxDbs: 16,
    mapSize,
    encoding: 'binary',
    keyEncoding: 'binary',
  });
  const sub = (name: string, useVersions = false): Bin =>
    root.openDB<Buffer, Buffer>(name, { encoding: 'binary', keyEncoding: 'binary', useVersions });
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
  };
}

/** Marks a new environment with the store format, or refuses one written in another format. */
export function checkFormat(dbs: Databases): void {
  const format = dbs.meta.get(FORMAT_KEY);
  if (format === undefined) {
    dbs.root.transactionSync(() => {
      quiet(dbs.meta.put(FORMAT_KEY, Buffer.from([FORMAT]), 0));
      quiet(dbs.meta.put(TURN_KEY, ONE_BYTE, 0));
    });
  } else if (format[0] !== FORMAT) {
    throw new Error(`data dir ${dbs.dir} holds store format ${format[0]}, this broker reads format ${FORMAT}`);
  }
}

/** The next message id: above both the persisted high-water mark and the highest stored id. */
export function storedNextId(dbs: Databases): number {
  const storedNext = dbs.meta.get(NEXT_ID_KEY);
  let next = storedNext ? readU64(storedNext, 0) : 1;
  for (const { key } of dbs.messagesDb.getRange({ reverse: true, limit: 1 })) next = Math.max(next, readU64(key, 0) + 1);
  return Math.max(next, 1);
}

// ---- the queue index: key 'q' · name; value queue id u32 · entry count f64 · body bytes f64 ------

export interface QueueIndexRecord {
  key: Buffer;
  name: string;
  id: number;
  count: number;
  bytes: number;
}

/** Throws RangeError if the name cannot be a key. */
export function queueIndexKey(name: string): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  if (nameBytes.length + 1 > MAX_KEY) throw new RangeError(`queue key longer than ${MAX_KEY - 1} bytes`);
  return Buffer.concat([Buffer.from([QUEUE_KEY_PREFIX]), nameBytes]);
}

export function queueValue(id: number, count: number, bytes: number): Buffer {
  const v = Buffer.allocUnsafe(20);
  v.writeUInt32BE(id, 0);
  v.writeDoubleBE(count, 4);
  v.writeDoubleBE(bytes, 12);
  return v;
}

/** Every record of the committed queue index. */
export function readQueueIndex(dbs: Databases): QueueIndexRecord[] {
  const out: QueueIndexRecord[] = [];
  for (const { key, value } of dbs.queuesDb.getRange({})) {
    const k = Buffer.from(key);
    out.push({ key: k, name: k.subarray(1).toString('utf8'), id: value.readUInt32BE(0), count: value.readDoubleBE(4), bytes: value.readDoubleBE(12) });
  }
  return out;
}

/** First entry key of a queue id (entry keys start with the queue id). */
export function queueStart(id: number): Buffer {
  return Buffer.from([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff]);
}

export function queueEnd(id: number): Buffer {
  return queueStart(id + 1);
}

export function u32(n: number): Buffer {
  const b = Buffer.allocUnsafe(4);
  b.writeUInt32BE(n, 0);
  return b;
}

export function dbEntryCount(db: Bin): number {
  return (db.getStats() as { entryCount: number }).entryCount;
}

/** Marks a write's promise as handled: a failed commit is reported through the batch instead. */
export function quiet(p: unknown): void {
  if (p && typeof (p as Promise<unknown>).then === 'function') (p as Promise<unknown>).then(undefined, () => {});
}
