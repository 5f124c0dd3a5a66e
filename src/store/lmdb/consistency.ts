/**
 * Consistency checks of the committed state: a cheap one on every open (B-tree counts against
 * the persisted counters) and a full one that verifies record checksums and recomputes
 * refcounts and counters from the entries and, on request, repairs what disagrees in one
 * transaction: damaged records go to the quarantine, the rest is rewritten or removed.
 */

import { isInlineEntryValue, messageKey, msgIdOfEntryValue, queueIdOfEntryKey, readU64, seqOfEntryKey, sizeOfEntryValue } from '../record-codec.js';
import { intact } from './checksum.js';
import { FORMAT } from './format.js';
import {
  CHECK_KEY,
  counterValue,
  dbEntryCount,
  INLINE_ENTRIES_KEY,
  quarantineKey,
  indexLabel,
  queueValue,
  quiet,
  readCounter,
  readQueueIndex,
  readRefs,
  readSharedRefs,
  refsValue,
  SHARED_REFS_KEY,
  sharedRefsOf,
  type Bin,
  type Databases,
} from './databases.js';

/**
 * Result of a full consistency check (verify()). Empty `problems` means consistent; each
 * problem ends with what the repair does about it ("→ quarantine", "→ remove", "→ rewrite").
 * `messages` counts stored messages: records that an entry refers to, and those inside entries.
 */
export interface StoreCheck {
  problems: string[];
  entries: number;
  messages: number;
}

export interface FullCheckOptions {
  /**
   * The layout to check against (default: the current one). Format 2 had a refcount record
   * for every message; format 3 only for messages of several entries, plus the shared counter.
   */
  format?: number;
  /** Fix what is found, in one transaction (and clear the `check` flag). */
  repair: boolean;
  /** Also verify the checksum of every message (reads every body; `warren check`). */
  deep?: boolean;
}

/** O(1): do the B-tree entry counts agree with the persisted counters (the sum of `counted`)? */
export function quickCheck(dbs: Databases, counted: number, log: (msg: string) => void): 'ok' | 'mismatch' {
  const entries = dbEntryCount(dbs.entriesDb);
  const messages = dbEntryCount(dbs.messagesDb);
  const refs = dbEntryCount(dbs.refsDb);
  const shared = readSharedRefs(dbs);
  const inline = readCounter(dbs, INLINE_ENTRIES_KEY);
  // Every entry is counted by its queue and holds its message inline (counted) or refers to a
  // message record; a message of one entry has no refcount record, one of n > 1 has one and
  // adds n − 1 to the shared counter. (Refcount records whose values are wrong but sum right
  // pass this; verify: 'always' finds them.)
  if (entries === counted && entries === messages + shared + inline && refs <= messages) return 'ok';
  log(
    `store ${dbs.dir}: counters disagree (entries ${entries} vs ${counted}, messages ${messages} + shared references ${shared} + inline ${inline}, ` +
      `refcount records ${refs}); running a full check`,
  );
  return 'mismatch';
}

/** Whether a run quarantined records and left the counters to the next open. */
export function checkRequested(dbs: Databases): boolean {
  return dbs.meta.get(CHECK_KEY) !== undefined;
}

/**
 * Verifies checksums (of messages only if deep) and recomputes refcounts and per-queue counts
 * from the entries: damaged records, entries of unknown queues or of missing messages, orphan
 * messages (no entry), wrong refcounts and wrong counters. Reads the committed state only.
 */
export function fullCheck(dbs: Databases, opts: FullCheckOptions): StoreCheck {
  const problems: string[] = [];
  const fixes: Array<() => void> = [];
  const quarantine = (db: Bin, key: Uint8Array, value: Uint8Array): void => {
    const k = Buffer.from(key);
    const v = Buffer.from(value);
    fixes.push(() => {
      quiet(dbs.quarantineDb.put(quarantineKey(dbs, db, k), v));
      quiet(db.remove(k));
    });
  };
  const queues = new Map<number, { key: Buffer; label: string; count: number; bytes: number; storedCount: number; storedBytes: number }>();
  const index = readQueueIndex(dbs);
  for (const r of index.records) {
    queues.set(r.id, { key: r.key, label: indexLabel(r.key), count: 0, bytes: 0, storedCount: r.count, storedBytes: r.bytes });
  }
  for (const r of index.damaged) {
    problems.push(`the queue index record of ${indexLabel(r.key)} is damaged → quarantine it and its entries`);
    quarantine(r.db, r.key, r.value);
  }
  const existing = new Set<number>();
  const damagedMessages = new Set<number>();
  if (opts.deep) {
    for (const { key, value } of dbs.messagesDb.getRange({})) {
      const id = readU64(key, 0);
      if (intact(key, value)) existing.add(id);
      else {
        problems.push(`message ${id} is damaged → quarantine`);
        damagedMessages.add(id);
        quarantine(dbs.messagesDb, key, value);
      }
    }
  } else {
    for (const key of dbs.messagesDb.getKeys({})) existing.add(readU64(key, 0));
  }
  const refcounts = new Map<number, number>();
  let entries = 0;
  let inline = 0;
  for (const { key, value } of dbs.entriesDb.getRange({})) {
    const qid = queueIdOfEntryKey(key);
    const q = queues.get(qid);
    const where = q ? `${q.label} seq ${seqOfEntryKey(key)}` : `seq ${seqOfEntryKey(key)} of unknown queue id ${qid}`;
    if (!intact(key, value)) {
      problems.push(`entry ${where} is damaged → quarantine`);
      quarantine(dbs.entriesDb, key, value);
      continue;
    }
    if (!q) {
      problems.push(`entry ${where} → quarantine`);
      quarantine(dbs.entriesDb, key, value);
      continue;
    }
    if (isInlineEntryValue(value)) {
      // Its message is inside it, covered by its checksum.
      entries++;
      inline++;
      q.count++;
      q.bytes += sizeOfEntryValue(value);
      continue;
    }
    const msgId = msgIdOfEntryValue(value);
    if (!existing.has(msgId)) {
      const state = damagedMessages.has(msgId)
        ? 'damaged'
        : dbs.quarantineDb.get(quarantineKey(dbs, dbs.messagesDb, messageKey(msgId))) !== undefined
          ? 'quarantined'
          : 'missing';
      problems.push(`entry ${where} refers to ${state} message ${msgId} → remove`);
      const k = Buffer.from(key);
      fixes.push(() => quiet(dbs.entriesDb.remove(k)));
      continue;
    }
    entries++;
    q.count++;
    q.bytes += sizeOfEntryValue(value);
    refcounts.set(msgId, (refcounts.get(msgId) ?? 0) + 1);
  }
  // The refcount record a message of `actual` entries must have (0 = none).
  const everyMessage = (opts.format ?? FORMAT) < 3;
  const recorded = (actual: number): number => (everyMessage || actual > 1 ? actual : 0);
  const haveRefs = new Set<number>();
  for (const { key, value } of dbs.refsDb.getRange({})) {
    const id = readU64(key, 0);
    const stored = readRefs(key, value);
    const actual = refcounts.get(id) ?? 0;
    const want = recorded(actual);
    const k = Buffer.from(key);
    haveRefs.add(id);
    if (stored === undefined) {
      problems.push(`the refcount record of message ${id} is damaged, entries say ${actual} → ${want === 0 ? 'remove' : 'rewrite'}`);
      fixes.push(() => quiet(want === 0 ? dbs.refsDb.remove(k) : dbs.refsDb.put(k, refsValue(k, want))));
    } else if (actual === 0) {
      problems.push(`refcount ${stored} of message ${id} that no entry refers to → remove`);
      fixes.push(() => quiet(dbs.refsDb.remove(k)));
    } else if (want === 0) {
      problems.push(`refcount record ${stored} of message ${id} that one entry refers to (one entry needs none) → remove`);
      fixes.push(() => quiet(dbs.refsDb.remove(k)));
    } else if (stored !== want) {
      problems.push(`message ${id} refcount ${stored}, entries say ${actual} → rewrite`);
      fixes.push(() => quiet(dbs.refsDb.put(k, refsValue(k, want))));
    }
  }
  let shared = 0;
  for (const id of existing) {
    const actual = refcounts.get(id) ?? 0;
    shared += sharedRefsOf(actual);
    if (actual === 0) {
      problems.push(`orphan message ${id} (no entry refers to it) → remove`);
      fixes.push(() => quiet(dbs.messagesDb.remove(messageKey(id))));
    } else if (!haveRefs.has(id) && recorded(actual) > 0) {
      problems.push(`message ${id} has no refcount, entries say ${actual} → write it`);
      const k = messageKey(id);
      fixes.push(() => quiet(dbs.refsDb.put(k, refsValue(k, actual))));
    }
  }
  const storedShared = readSharedRefs(dbs);
  if (!everyMessage && storedShared !== shared) {
    problems.push(`the shared reference counter is ${storedShared}, entries say ${shared} → rewrite`);
    fixes.push(() => quiet(dbs.meta.put(SHARED_REFS_KEY, counterValue(shared))));
  }
  const storedInline = readCounter(dbs, INLINE_ENTRIES_KEY);
  if (storedInline !== inline) {
    problems.push(`the inline entry counter is ${storedInline}, entries say ${inline} → rewrite`);
    fixes.push(() => quiet(dbs.meta.put(INLINE_ENTRIES_KEY, counterValue(inline))));
  }
  for (const [id, q] of queues) {
    if (q.count !== q.storedCount || q.bytes !== q.storedBytes) {
      problems.push(`${q.label} counters ${q.storedCount}/${q.storedBytes} bytes, entries say ${q.count}/${q.bytes} → rewrite`);
      const value = queueValue(q.key, id, q.count, q.bytes);
      fixes.push(() => quiet(dbs.queuesDb.put(q.key, value)));
    }
  }
  for (const db of [dbs.exchangesDb, dbs.queueRecordsDb, dbs.bindingsDb, dbs.delayedDb, dbs.definitionsDb, dbs.stateDb]) {
    for (const { key, value } of db.getRange({})) {
      if (intact(key, value)) continue;
      problems.push(`a record of '${dbs.names.get(db)}' is damaged → quarantine`);
      quarantine(db, key, value);
    }
  }
  if (opts.repair && (fixes.length > 0 || checkRequested(dbs))) {
    dbs.root.transactionSync(() => {
      for (const fix of fixes) fix();
      quiet(dbs.meta.remove(CHECK_KEY));
    });
  }
  return { problems, entries, messages: refcounts.size + inline };
}
