/**
 * The durable store on LMDB (lmdb-js). src/store/README.md has the full design; the parts:
 *
 * - databases.ts: the environment, its sub-databases, meta keys and the queue index layout
 * - batch.ts: the batch (one turn's writes, or every turn's while a commit is in flight) and the
 *   overlay of writes not yet committed
 * - commit.ts: the commit engine (one transaction per batch, group commit, sync(), beforeCommit
 *   writers, failure handling)
 * - operations.ts: the puts and removes of one batch, its records' keys and values in one slab
 * - format.ts: the store format (5) and the migrations from older ones
 * - consistency.ts: the checks run on open (cheap) and on demand (full, with repair)
 * - message-store.ts, metadata-store.ts: the two facades of the Store contract
 * - failure.ts: StoreFailedError
 * - space-reserve.ts: space kept allocated past the data file's end, so a full disk fails a
 *   commit before LMDB writes it
 */

import path from 'node:path';
import type { Store } from '../store.js';
import { CommitEngine, type CommitHold } from './commit.js';
import { checkRequested, fullCheck, quickCheck, type StoreCheck } from './consistency.js';
import { openDatabases, readQueueIndex, storedNextId, type Databases } from './databases.js';
import type { StoreFailedError } from './failure.js';
import { checkFormat } from './format.js';
import { LmdbMessageStore } from './message-store.js';
import { LmdbMetadataStore } from './metadata-store.js';
import { dataFilePath } from './file-check.js';
import { RESERVE_BYTES, SpaceReserve } from './space-reserve.js';

export { StoreFailedError } from './failure.js';
export type { StoreCheck } from './consistency.js';
export type { CommitHold } from './commit.js';

export interface LmdbStoreOptions {
  /** Initial map size in bytes (address space, not disk). lmdb-js grows the map by itself when it fills. */
  mapSize?: number;
  log?: (msg: string) => void;
  /** Called once when a commit fails; the broker should block publishers (connection.blocked). */
  onError?: (err: StoreFailedError) => void;
  /** 'auto' (default): full consistency check and repair on open only if cheap counters disagree. */
  verify?: 'auto' | 'always';
  /**
   * Entries a deleted queue's sweep removes per commit (default 4096): deleting a queue removes
   * this many at once and the rest in the background, a chunk per commit (MessageStore.deleteQueue).
   */
  sweepChunk?: number;
  /**
   * A new message that one entry refers to, of at most this many bytes as stored (header, body,
   * exchange and routing key), is written inside its entry: one record instead of two (default
   * 4096, as RabbitMQ's queue_index_embed_msgs_below; 0: never, every message in a record of
   * its own, for tests of that layout).
   */
  inlineMax?: number;
  /**
   * Bytes kept allocated past the data file's end (default RESERVE_BYTES, 64 MiB; 0: none), so
   * that a disk filling up fails a commit before LMDB writes it (space-reserve.ts). The reserve
   * is first made RESERVE_START_MS after open (reserveSpace() makes it at once).
   */
  reserveBytes?: number;
  /** Hold a batch past the commit in flight while publishers stream (commit.ts); none if absent. */
  commitHold?: CommitHold;
}

/** The reserve is made this long after open, so that it does not delay a broker's start (spawning its helper takes milliseconds). */
const RESERVE_START_MS = 100;

/** The LMDB-backed Store, with a few extras for tests and diagnostics. */
export class LmdbStore implements Store {
  readonly messages: LmdbMessageStore;
  readonly metadata: LmdbMetadataStore;
  /** The environment and its databases. */
  private readonly core: Databases;
  private readonly engine: CommitEngine;
  private readonly reserve: SpaceReserve | undefined;

  constructor(dir: string, opts: LmdbStoreOptions = {}) {
    this.core = openDatabases(path.resolve(dir), { mapSize: opts.mapSize });
    const reserveBytes = opts.reserveBytes ?? RESERVE_BYTES;
    if (reserveBytes > 0) {
      const reserve = (this.reserve = new SpaceReserve(dataFilePath(this.core.dir), reserveBytes, (msg) => opts.log?.(msg)));
      setTimeout(() => void reserve.renew(), RESERVE_START_MS).unref();
    }
    this.engine = new CommitEngine(this.core, { ...opts, reserve: this.reserve });
    try {
      recover(this.engine, opts);
    } catch (err) {
      this.reserve?.close();
      void this.core.root.close();
      throw err;
    }
    this.messages = new LmdbMessageStore(this.engine, { sweepChunk: opts.sweepChunk });
    this.metadata = new LmdbMetadataStore(this.engine);
  }

  /** After a failed commit: writes what was not written, and takes writes again (Store.resume). */
  resume(): Promise<void> {
    return this.engine.retry().then(() => this.messages.sweep());
  }

  failNextCommit(armed: boolean): void {
    this.engine.failNextCommit = armed;
  }

  /** The commit failure this store stopped on, if any. */
  get failure(): StoreFailedError | undefined {
    return this.engine.failure;
  }

  /** Batches flushed and LMDB transactions committed since open (one fsync each). */
  get counters(): { batches: number; transactions: number } {
    return { ...this.engine.counters };
  }

  /**
   * Full consistency check of the committed state (call after `await sync()`); repairs nothing.
   * `deep` (the default) verifies every message's checksum too; without it this is the check an
   * open runs when counters disagree.
   */
  verify(opts: { deep?: boolean } = {}): StoreCheck {
    return fullCheck(this.core, { repair: false, deep: opts.deep ?? true });
  }

  /**
   * Makes the reserve past the data file's end now (it is otherwise made shortly after open):
   * resolves true once it is in place, false where none can be made (or reserveBytes is 0).
   */
  async reserveSpace(): Promise<boolean> {
    await this.reserve?.renew(0, true);
    return this.reserve?.active ?? false;
  }

  close(): Promise<void> {
    this.reserve?.close();
    return this.engine.close();
  }
}

export function openLmdbStore(dir: string, opts: LmdbStoreOptions = {}): LmdbStore {
  return new LmdbStore(dir, opts);
}

/** Open and recovery: format, queue index, consistency (repaired if needed), id counter. */
function recover(engine: CommitEngine, opts: LmdbStoreOptions): void {
  const started = Date.now();
  const dbs = engine.dbs;
  const log = (msg: string): void => engine.log(msg);
  checkFormat(dbs, log);
  const index = readQueueIndex(dbs);
  engine.overlay.loadQueues(index.records);
  const counted = (): number => engine.overlay.countedEntries();
  let check: 'ok' | 'mismatch' | undefined;
  if (checkRequested(dbs)) log(`store ${dbs.dir}: damaged records were quarantined in the last run; running a full check`);
  else if (index.damaged.length > 0) log(`store ${dbs.dir}: ${index.damaged.length} damaged queue index record(s); running a full check`);
  else if (opts.verify !== 'always') check = quickCheck(dbs, counted(), log);
  if (check !== 'ok') {
    const result = fullCheck(dbs, { repair: true });
    if (result.problems.length > 0) {
      log(`store ${dbs.dir}: repaired ${result.problems.length} problem(s): ${result.problems.slice(0, 20).join('; ')}`);
      engine.overlay.loadQueues(readQueueIndex(dbs).records);
    }
  }
  engine.resume(storedNextId(dbs));
  const sweeps = engine.overlay.sweeps.size;
  const swept = sweeps > 0 ? ` (${sweeps} deleted queue(s) still to sweep)` : '';
  log(`store ${dbs.dir}: opened with ${engine.overlay.queues.size} queue(s), ${counted()} entries${swept} in ${Date.now() - started} ms`);
}
