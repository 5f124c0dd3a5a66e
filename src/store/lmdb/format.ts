/**
 * The store format in `meta/format`. Format 2 ended every record (all databases except `meta`
 * and `quarantine`) with a checksum (checksum.ts). Format 3 keeps a refcount record only for a
 * message that several entries refer to (one entry implies refcount 1: two puts per enqueue
 * instead of three) and the shared-reference counter `meta/sharedRefs` (databases.ts) that the
 * O(1) check on open needs instead. Format 4 lets a message record carry the BCC routing keys
 * it was published with (record-codec.ts, message format 2); no record changes, but a broker
 * that reads format 3 must not open a store that holds such records. Format 5 lets an entry
 * hold its message inside it (record-codec.ts, the inline flag: a new message of one entry is
 * one record, not two) and adds the inline-entries counter `meta/inlineEntries` that the O(1)
 * check on open counts with; a broker of format 4 would take such entries for ones whose
 * message is missing. An older store is
 * migrated on open, every step from its
 * format up to FORMAT in one transaction; a newer or unknown format is refused.
 *
 * To change the layout: bump FORMAT, add a step from the previous format to MIGRATIONS, and
 * teach the full check (consistency.ts, `format` option) the old layout if `warren check`
 * should still check a store of it read-only.
 */

import { sealed } from './checksum.js';
import {
  FORMAT_KEY,
  ONE_BYTE,
  quiet,
  readRefs,
  SHARED_REFS_KEY,
  counterValue,
  CHECK_KEY,
  TURN_KEY,
  type Bin,
  type Databases,
} from './databases.js';

export const FORMAT = 5;
const CHUNK = 10_000;

interface Migration {
  /** What the step does, for the log. */
  what: string;
  /** Migrates a store of the format before to the one after (inside the caller's transaction); returns the records it changed. */
  run(dbs: Databases): number;
}

/** MIGRATIONS[n] migrates format n to n + 1. */
const MIGRATIONS: Record<number, Migration> = {
  1: { what: 'record checksums', run: (dbs) => checksummed(dbs).reduce((n, db) => n + addChecksums(db), 0) },
  2: { what: 'refcount records only for shared messages', run: dropSingleRefs },
  3: { what: 'message records may carry BCC keys', run: () => 0 },
  4: { what: 'entries may hold their message', run: () => 0 },
};

/** Whether this broker reads (or migrates) format n. */
export function knownFormat(n: number | undefined): boolean {
  return n !== undefined && (n === FORMAT || MIGRATIONS[n] !== undefined);
}

/** Marks a new environment with the store format, migrates an older one, or refuses any other. */
export function checkFormat(dbs: Databases, log: (msg: string) => void): void {
  const format = dbs.meta.get(FORMAT_KEY);
  if (format === undefined) {
    dbs.root.transactionSync(() => {
      quiet(dbs.meta.put(FORMAT_KEY, Buffer.from([FORMAT]), 0));
      quiet(dbs.meta.put(TURN_KEY, ONE_BYTE, 0));
    });
    return;
  }
  const from = format[0]!;
  if (from === FORMAT) return;
  if (!knownFormat(from)) {
    const known = Object.keys(MIGRATIONS);
    const older = known.length > 1 ? `${known.slice(0, -1).join(', ')} and ${known.at(-1)}` : known.join('');
    throw new Error(`data dir ${dbs.dir} holds store format ${from}; this broker reads format ${FORMAT} (and migrates formats ${older})`);
  }
  const started = Date.now();
  const done: string[] = [];
  dbs.root.transactionSync(() => {
    for (let f = from; f < FORMAT; f++) {
      const step = MIGRATIONS[f]!;
      done.push(`${f} to ${f + 1} (${step.what}): ${step.run(dbs)} records`);
    }
    quiet(dbs.meta.put(FORMAT_KEY, Buffer.from([FORMAT])));
  });
  log(`store ${dbs.dir}: migrated store format ${done.join(', ')} in ${Date.now() - started} ms`);
}

/**
 * Format 2 to 3: removes the refcount records of value 1 and writes the shared-reference
 * counter. A damaged refcount record is left for the full check, which the `check` flag asks for.
 */
function dropSingleRefs(dbs: Databases): number {
  let changed = 0;
  let shared = 0;
  let damaged = false;
  let after: Buffer | undefined;
  for (;;) {
    const chunk: Array<[Buffer, number | undefined]> = [];
    for (const { key, value } of dbs.refsDb.getRange(after ? { start: after, limit: CHUNK + 1 } : { limit: CHUNK })) {
      const k = Buffer.from(key);
      if (after && k.equals(after)) continue;
      chunk.push([k, readRefs(k, value)]);
    }
    if (chunk.length === 0) break;
    for (const [k, refs] of chunk) {
      if (refs === undefined) damaged = true;
      else if (refs > 1) shared += refs - 1;
      else {
        quiet(dbs.refsDb.remove(k));
        changed++;
      }
    }
    after = chunk[chunk.length - 1]![0];
  }
  quiet(dbs.meta.put(SHARED_REFS_KEY, counterValue(shared)));
  if (damaged) quiet(dbs.meta.put(CHECK_KEY, ONE_BYTE));
  return changed;
}

/** The databases whose records carry a checksum. */
export function checksummed(dbs: Databases): Bin[] {
  return [dbs.entriesDb, dbs.messagesDb, dbs.refsDb, dbs.queuesDb, dbs.exchangesDb, dbs.queueRecordsDb, dbs.bindingsDb, dbs.delayedDb, dbs.definitionsDb, dbs.stateDb];
}

/** Appends the checksum to every value of db, CHUNK records at a time (inside the caller's transaction). */
function addChecksums(db: Bin): number {
  let count = 0;
  let after: Buffer | undefined;
  for (;;) {
    const chunk: Array<[Buffer, Buffer]> = [];
    for (const { key, value } of db.getRange(after ? { start: after, limit: CHUNK + 1 } : { limit: CHUNK })) {
      const k = Buffer.from(key);
      if (after && k.equals(after)) continue;
      chunk.push([k, sealed(k, value)]);
    }
    if (chunk.length === 0) return count;
    for (const [k, v] of chunk) quiet(db.put(k, v));
    count += chunk.length;
    after = chunk[chunk.length - 1]![0];
  }
}
