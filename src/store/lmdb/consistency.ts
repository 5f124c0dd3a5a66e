/**
 * Consistency checks of the committed state: a cheap one on every open (B-tree counts against
 * the persisted counters) and a full one that recomputes refcounts and counters from the
 * entries and, on request, repairs what disagrees in one transaction.
 */

import { messageKey, msgIdOfEntryValue, queueIdOfEntryKey, readU64, seqOfEntryKey, sizeOfEntryValue } from '../record-codec.js';
import { dbEntryCount, queueValue, quiet, readQueueIndex, u32, type Databases } from './databases.js';

/** Result of a full consistency check (verify()). Empty `problems` means consistent. */
export interface StoreCheck {
  problems: string[];
  entries: number;
  messages: number;
}

/** O(1): do the B-tree entry counts agree with the persisted counters (the sum of `counted`)? */
export function quickCheck(dbs: Databases, counted: number, log: (msg: string) => void): 'ok' | 'mismatch' {
  const entries = dbEntryCount(dbs.entriesDb);
  const messages = dbEntryCount(dbs.messagesDb);
  const refs = dbEntryCount(dbs.refsDb);
  // Every message has a refcount record, every entry is counted by its queue, and entries
  // need messages. (A refcount record with a wrong value passes this; verify: 'always' finds it.)
  if (entries === counted && messages === refs && (messages > 0 || entries === 0)) return 'ok';
  log(`store ${dbs.dir}: counters disagree (entries ${entries} vs ${counted}, messages ${messages}, refs ${refs}); running a full check`);
  return 'mismatch';
}

/**
 * Recomputes refcounts and per-queue counts from the entries and compares them with what is
 * stored: entries of unknown queues or of missing messages, orphan messages (no entry), wrong
 * refcounts and wrong counters. With repair, fixes all of it in one synchronous transaction.
 * Reads the committed state only.
 */
export function fullCheck(dbs: Databases, repair: boolean): StoreCheck {
  const problems: string[] = [];
  const fixes: Array<() => void> = [];
  const queues = new Map<number, { key: Buffer; name: string; count: number; bytes: number; storedCount: number; storedBytes: number }>();
  for (const r of readQueueIndex(dbs)) {
    queues.set(r.id, { key: r.key, name: r.name, count: 0, bytes: 0, storedCount: r.count, storedBytes: r.bytes });
  }
  const existing = new Set<number>();
  for (const key of dbs.messagesDb.getKeys({})) existing.add(readU64(key, 0));
  const refcounts = new Map<number, number>();
  let entries = 0;
  for (const { key, value } of dbs.entriesDb.getRange({})) {
    const qid = queueIdOfEntryKey(key);
    const msgId = msgIdOfEntryValue(value);
    const q = queues.get(qid);
    if (!q || !existing.has(msgId)) {
      problems.push(q ? `entry ${q.name}#${seqOfEntryKey(key)} refers to missing message ${msgId}` : `entry of unknown queue id ${qid}`);
      const k = Buffer.from(key);
      fixes.push(() => quiet(dbs.entriesDb.remove(k)));
      continue;
    }
    entries++;
    q.count++;
    q.bytes += sizeOfEntryValue(value);
    refcounts.set(msgId, (refcounts.get(msgId) ?? 0) + 1);
  }
  const haveRefs = new Set<number>();
  for (const { key, value } of dbs.refsDb.getRange({})) {
    const id = readU64(key, 0);
    const stored = value.readUInt32BE(0);
    const actual = refcounts.get(id) ?? 0;
    haveRefs.add(id);
    if (actual === 0) {
      problems.push(`refcount ${stored} of message ${id} that no entry refers to`);
      const k = Buffer.from(key);
      fixes.push(() => quiet(dbs.refsDb.remove(k)));
    } else if (stored !== actual) {
      problems.push(`message ${id} refcount ${stored}, entries say ${actual}`);
      const k = Buffer.from(key);
      fixes.push(() => quiet(dbs.refsDb.put(k, u32(actual))));
    }
  }
  for (const id of existing) {
    const actual = refcounts.get(id) ?? 0;
    if (actual === 0) {
      problems.push(`orphan message ${id} (no entry refers to it)`);
      fixes.push(() => quiet(dbs.messagesDb.remove(messageKey(id))));
    } else if (!haveRefs.has(id)) {
      problems.push(`message ${id} has no refcount (entries say ${actual})`);
      fixes.push(() => quiet(dbs.refsDb.put(messageKey(id), u32(actual))));
    }
  }
  for (const [id, q] of queues) {
    if (q.count !== q.storedCount || q.bytes !== q.storedBytes) {
      problems.push(`queue ${q.name} counters ${q.storedCount}/${q.storedBytes} bytes, entries say ${q.count}/${q.bytes}`);
      const value = queueValue(id, q.count, q.bytes);
      fixes.push(() => quiet(dbs.queuesDb.put(q.key, value)));
    }
  }
  if (repair && fixes.length > 0) {
    dbs.root.transactionSync(() => {
      for (const fix of fixes) fix();
    });
  }
  return { problems, entries, messages: refcounts.size };
}
