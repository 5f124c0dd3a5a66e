/**
 * The store format in `meta/format`. Format 2 ends every record (all databases except `meta`
 * and `quarantine`) with a checksum (checksum.ts). A format-1 store (Warren before issue 10:
 * the same layouts without checksums) is migrated on open, in one transaction: every value
 * gets its checksum appended, then the format becomes 2. Any other format is refused.
 */

import { sealed } from './checksum.js';
import { FORMAT_KEY, ONE_BYTE, quiet, TURN_KEY, type Bin, type Databases } from './databases.js';

export const FORMAT = 2;
const CHUNK = 10_000;

/** Marks a new environment with the store format, migrates format 1, or refuses any other. */
export function checkFormat(dbs: Databases, log: (msg: string) => void): void {
  const format = dbs.meta.get(FORMAT_KEY);
  if (format === undefined) {
    dbs.root.transactionSync(() => {
      quiet(dbs.meta.put(FORMAT_KEY, Buffer.from([FORMAT]), 0));
      quiet(dbs.meta.put(TURN_KEY, ONE_BYTE, 0));
    });
  } else if (format[0] === 1) {
    const started = Date.now();
    let records = 0;
    dbs.root.transactionSync(() => {
      for (const db of checksummed(dbs)) records += addChecksums(db);
      quiet(dbs.meta.put(FORMAT_KEY, Buffer.from([FORMAT])));
    });
    log(`store ${dbs.dir}: migrated store format 1 to ${FORMAT} (record checksums): ${records} records in ${Date.now() - started} ms`);
  } else if (format[0] !== FORMAT) {
    throw new Error(`data dir ${dbs.dir} holds store format ${format[0]}; this broker reads format ${FORMAT} (and migrates format 1)`);
  }
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
