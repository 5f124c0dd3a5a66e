/**
 * Record checksums of the LMDB store (issue 10, "Damaged files"): a damaged record is found
 * when read, quarantined (moved to the `quarantine` database and logged), never handed out,
 * and the next open settles refcounts and counters; the rest keeps working. Also: the CRC
 * itself, the migration of format-1 stores, and bindings that differ only by a NUL's place.
 */

import path from 'node:path';
import zlib from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { open } from 'lmdb';
import { checkStore } from '../../src/store/lmdb/check.js';
import { crc32 } from '../../src/store/lmdb/checksum.js';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import type { BindingRecord } from '../../src/store/metadata-store.js';
import { makeEntry, makeMessage } from './store-contract.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const Q = '/\u0000orders';

/** Opens the environment behind the store's back, as a damaged disk or an old version would leave it. */
async function tamper(dataDir: string, fn: (db: (name: string) => ReturnType<typeof rawDb>) => void): Promise<void> {
  const raw = open<Buffer, Buffer>(dataDir, { maxDbs: 16, overlappingSync: false, encoding: 'binary', keyEncoding: 'binary' });
  const db = (name: string) => rawDb(raw, name);
  raw.transactionSync(() => fn(db));
  await raw.close();
}

function rawDb(raw: ReturnType<typeof open<Buffer, Buffer>>, name: string) {
  return raw.openDB<Buffer, Buffer>(name, { encoding: 'binary', keyEncoding: 'binary', useVersions: name === 'meta' });
}

function flipBit(db: ReturnType<typeof rawDb>, key: Buffer, byte = 0): void {
  const value = Buffer.from(db.getBinary(key)!);
  value[byte]! ^= 0x10;
  db.putSync(key, value);
}

function u64(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeUInt32BE(n, 4);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}

/** A value as format 2 and later store it: the payload, then the CRC-32 of key and payload. */
function sealedValue(key: Buffer, payload: Buffer): Buffer {
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(payload, crc32(key)), 0);
  return Buffer.concat([payload, sum]);
}

/** The entry key of the only queue (id 1) at seq. */
function entryKey(seq: number): Buffer {
  return Buffer.concat([Buffer.from([0, 0, 0, 1]), u64(seq)]);
}

describe('LMDB store: damaged records', () => {
  let dir: string;
  let dataDir: string;
  let store: LmdbStore | undefined;
  let logs: string[];
  /**
   * The damaged-record tests below store every message in a record of its own (inlineMax 0),
   * the layout they tamper with; those of inline entries set this to the default (undefined).
   */
  let inlineMax: number | undefined;
  const reopen = async (): Promise<LmdbStore> => {
    await store?.close();
    logs = [];
    store = openLmdbStore(dataDir, { log: (m) => logs.push(m), inlineMax });
    return store;
  };
  const quarantined = async (): Promise<string[]> => {
    await store?.close();
    store = undefined;
    const names: string[] = [];
    await tamper(dataDir, (db) => {
      for (const key of db('quarantine').getKeys({})) names.push(Buffer.from(key).subarray(1, 1 + key[0]!).toString());
    });
    return names;
  };

  beforeEach(() => {
    dir = makeTmpDir();
    dataDir = path.join(dir, 'store');
    logs = [];
    inlineMax = 0;
  });
  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    removeDir(dir);
  });

  /** Three messages at seqs 0..2, each in every queue of `queues`; returns their ids. */
  async function fill(queues = [Q]): Promise<number[]> {
    const s = await reopen();
    const ids: number[] = [];
    for (let seq = 0; seq < 3; seq++) {
      const msg = makeMessage(s.messages.nextMessageId());
      ids.push(msg.id);
      for (const q of queues) s.messages.enqueue(q, makeEntry(seq, msg.id), msg); // a body stored once
    }
    await s.close();
    store = undefined;
    return ids;
  }

  it('computes CRC-32 as zlib does, for short inputs (own loop, 8 octets a step and the rest) and long ones', () => {
    expect(crc32(Buffer.from('123456789'))).to.equal(0xcbf43926);
    // Nothing to sum leaves the CRC as it was (zlib.crc32 of no octets gives 0 whatever it is given).
    expect(crc32(Buffer.alloc(4), 0x1234567, 2, 2)).to.equal(0x1234567);
    for (let len = 1; len < 300; len++) {
      const data = randomBytes(len);
      expect(crc32(data, 0x1234567), `length ${len}`).to.equal(zlib.crc32(data, 0x1234567));
      for (const start of [1, 3, 7, 8, 9]) {
        if (start >= len) continue;
        expect(crc32(data, 0, start, len), `length ${len} from ${start}`).to.equal(zlib.crc32(data.subarray(start, len)));
        expect(crc32(data, 0xffffffff, start, len), `length ${len} from ${start}, continued`).to.equal(zlib.crc32(data.subarray(start, len), 0xffffffff));
      }
    }
  });

  it('a damaged entry is quarantined and skipped; the others are read', async () => {
    const ids = await fill();
    await tamper(dataDir, (db) => flipBit(db('entries'), entryKey(1), 20));
    const s = await reopen();
    expect(s.messages.readEntries(Q, 0, 10).map((e) => e.seq)).to.deep.equal([0, 2]);
    expect(logs.join('\n')).to.match(/entry queue 'orders' in vhost '\/' seq 1 is damaged \(checksum mismatch\); quarantined/);
    expect(s.messages.countEntries(Q).messages).to.equal(2);
    expect(s.messages.readMessage(Q, { seq: 2, msgId: ids[2]! })!.body.toString()).to.equal(`body-${ids[2]}`);
    await s.messages.sync();
    await reopen();
    expect(logs.join('\n')).to.match(/quarantined in the last run; running a full check/);
    expect(logs.join('\n')).to.match(new RegExp(`orphan message ${ids[1]}`)); // the damaged entry's message, freed now
    expect(store!.verify().problems).to.deep.equal([]);
    expect(store!.messages.stats()).to.deep.equal({ messages: 2, entries: 2 });
    expect(store!.messages.countEntries(Q)).to.deep.equal({ messages: 2, bytes: 2 * `body-${ids[0]}`.length });
    expect(await quarantined()).to.deep.equal(['entries']);
  });

  it('a damaged entry that holds its message is quarantined with it; the others are read', async () => {
    inlineMax = undefined; // the default: each message of one entry inside it
    const ids = await fill();
    await tamper(dataDir, (db) => {
      expect((db('messages').getStats() as { entryCount: number }).entryCount).to.equal(0);
      flipBit(db('entries'), entryKey(1), 40); // in the message's octets
    });
    const s = await reopen();
    expect(s.messages.readEntries(Q, 0, 10).map((e) => e.seq)).to.deep.equal([0, 2]);
    expect(logs.join('\n')).to.match(/entry queue 'orders' in vhost '\/' seq 1 is damaged \(checksum mismatch\); quarantined/);
    expect(s.messages.readMessage(Q, { seq: 1, msgId: ids[1]! })).to.equal(undefined);
    expect(s.messages.readMessage(Q, { seq: 2, msgId: ids[2]! })!.body.toString()).to.equal(`body-${ids[2]}`);
    await s.messages.sync();
    await reopen();
    expect(logs.join('\n')).to.match(/quarantined in the last run; running a full check/);
    expect(store!.verify().problems).to.deep.equal([]);
    expect(store!.messages.stats()).to.deep.equal({ messages: 2, entries: 2 });
    expect(await quarantined()).to.deep.equal(['entries']);
  });

  it('an update (a redelivered mark) of an entry that holds its message keeps the message; of a damaged one quarantines it', async () => {
    inlineMax = undefined;
    const ids = await fill();
    await tamper(dataDir, (db) => flipBit(db('entries'), entryKey(1), 40));
    let s = await reopen();
    s.messages.update(Q, makeEntry(0, ids[0]!, { redelivered: true, deliveryCount: 1 }));
    s.messages.update(Q, makeEntry(1, ids[1]!, { redelivered: true, deliveryCount: 1 }));
    expect(logs.join('\n')).to.match(/entry queue 'orders' in vhost '\/' seq 1 is damaged \(checksum mismatch\); quarantined/);
    await s.messages.sync();
    s = await reopen();
    expect(s.messages.readEntries(Q, 0, 10).map((e) => [e.seq, e.redelivered, e.deliveryCount])).to.deep.equal([[0, true, 1], [2, false, 0]]);
    expect(s.messages.readMessage(Q, { seq: 0, msgId: ids[0]! })!.body.toString()).to.equal(`body-${ids[0]}`);
    expect(await quarantined()).to.deep.equal(['entries']);
  });

  it('a damaged message is quarantined and never read; entries of other queues that hold it are dropped', async () => {
    const ids = await fill([Q, '/\u0000audit']);
    await tamper(dataDir, (db) => flipBit(db('messages'), u64(ids[1]!), 12));

    let s = await reopen();
    const read = (queue: string): string[] => {
      const out: string[] = [];
      for (const e of s.messages.readEntries(queue, 0, 10)) {
        const m = s.messages.readMessage(queue, e);
        if (m) out.push(m.body.toString());
      }
      return out;
    };
    expect(read(Q)).to.deep.equal([`body-${ids[0]}`, `body-${ids[2]}`]);
    expect(s.messages.readMessage(Q, { seq: 1, msgId: ids[1]! })).to.equal(undefined); // again, before the quarantine commits: not logged twice
    expect(logs.filter((l) => l.includes(`message ${ids[1]} `))).to.have.length(1);
    expect(logs.join('\n')).to.match(new RegExp(`message ${ids[1]} \\(queue 'orders' in vhost '/' seq 1\\) is damaged \\(checksum mismatch\\); quarantined`));
    expect(s.messages.countEntries(Q).messages).to.equal(2);
    expect(read('/\u0000audit')).to.deep.equal([`body-${ids[0]}`, `body-${ids[2]}`]);
    expect(logs.join('\n')).to.match(new RegExp(`queue 'audit' in vhost '/' seq 1 refers to quarantined message ${ids[1]}; dropped`));
    expect(s.messages.countEntries('/\u0000audit').messages).to.equal(2);
    await s.messages.sync();

    s = await reopen();
    expect(s.verify().problems).to.deep.equal([]);
    expect(s.messages.stats()).to.deep.equal({ messages: 2, entries: 4 });
    expect(await quarantined()).to.deep.equal(['messages']);
  });

  it('a message whose refcount record is damaged is kept until the next open recounts', async () => {
    // Only a message of several entries has a refcount record (format 3).
    const ids = await fill([Q, '/\u0000audit']);
    await tamper(dataDir, (db) => flipBit(db('refs'), u64(ids[0]!), 3));
    let s = await reopen();
    s.messages.remove(Q, 0);
    s.messages.remove('/\u0000audit', 0);
    await s.messages.sync();
    expect(logs.join('\n')).to.match(new RegExp(`the refcount of message ${ids[0]} is damaged`));
    expect(s.messages.stats().messages).to.equal(3); // not freed on a guess
    s = await reopen();
    expect(logs.join('\n')).to.match(/running a full check/);
    expect(s.verify().problems).to.deep.equal([]);
    expect(s.messages.stats()).to.deep.equal({ messages: 2, entries: 4 });
  });

  it('a damaged topology record is quarantined; the other records load', async () => {
    let s = await reopen();
    const binding = (routingKey: string): BindingRecord => ({
      vhost: '/',
      source: 'amq.direct',
      destination: 'orders',
      destinationKind: 'queue',
      routingKey,
      arguments: Buffer.alloc(0),
    });
    s.metadata.putBinding(binding('a'));
    s.metadata.putBinding(binding('b'));
    s.metadata.putExchange({ vhost: '/', name: 'ex', type: 'topic', durable: true, autoDelete: false, internal: false, arguments: Buffer.alloc(0) });
    await s.close();
    store = undefined;
    await tamper(dataDir, (db) => {
      const bindings = db('bindings');
      for (const { key, value } of bindings.getRange({})) {
        if (value.includes(Buffer.from([0, 1, 0x61]))) flipBit(bindings, Buffer.from(key), 5); // routing key 'a'
      }
    });
    s = await reopen();
    const loaded = s.metadata.load();
    expect(loaded.bindings.map((b) => b.routingKey)).to.deep.equal(['b']);
    expect(loaded.exchanges.map((e) => e.name)).to.deep.equal(['ex']);
    expect(logs.join('\n')).to.match(/a record of 'bindings' \(a binding\) is damaged \(checksum mismatch\); quarantined/);
    await s.metadata.sync();
    s = await reopen();
    expect(s.metadata.load().bindings.map((b) => b.routingKey)).to.deep.equal(['b']);
    expect(s.verify().problems).to.deep.equal([]);
    expect(await quarantined()).to.deep.equal(['bindings']);
  });

  it('migrates a format-1 store (no checksums) on open', async () => {
    const ids = await fill();
    const s0 = await reopen();
    s0.metadata.putQueue({ vhost: '/', name: 'orders', durable: true, autoDelete: false, arguments: Buffer.alloc(0) });
    await s0.close();
    store = undefined;
    // Format 1 is format 2 without the 4-byte checksum at the end of each value; format 2 had a
    // refcount record for every message.
    await tamper(dataDir, (db) => {
      for (const name of ['entries', 'messages', 'refs', 'queues', 'exchanges', 'queue-records', 'bindings', 'delayed']) {
        const d = db(name);
        for (const { key, value } of d.getRange({})) d.putSync(Buffer.from(key), Buffer.from(value).subarray(0, value.length - 4));
      }
      for (const id of ids) db('refs').putSync(u64(id), u32(1));
      db('meta').removeSync(Buffer.from('sharedRefs'));
      db('meta').putSync(Buffer.from('format'), Buffer.from([1]));
    });
    const s = await reopen();
    // 3 entries, 3 messages, 3 refcounts, the queue index record and the queue record; then
    // the refcount records of value 1 go
    expect(logs.join('\n')).to.match(/migrated store format 1 to 2 \(record checksums\): 11 records, 2 to 3 \(refcount records only for shared messages\): 3 records, 3 to 4 \(message records may carry BCC keys\): 0 records, 4 to 5 \(entries may hold their message\): 0 records/);
    expect(s.messages.readEntries(Q, 0, 10).map((e) => s.messages.readMessage(Q, e)!.body.toString())).to.deep.equal(ids.map((id) => `body-${id}`));
    expect(s.metadata.load().queues.map((q) => q.name)).to.deep.equal(['orders']);
    expect(s.verify().problems).to.deep.equal([]);
    await reopen();
    expect(logs.join('\n')).not.to.match(/migrated/);
  });

  it('migrates a format-2 store (a refcount record for every message) on open', async () => {
    const ids = await fill();
    let s = await reopen();
    const shared = makeMessage(s.messages.nextMessageId());
    s.messages.enqueue(Q, makeEntry(3, shared.id), shared);
    s.messages.enqueue('/\u0000audit', makeEntry(0, shared.id), shared);
    await s.close();
    store = undefined;
    await tamper(dataDir, (db) => {
      expect([...db('refs').getKeys({})].map((k) => Buffer.from(k))).to.deep.equal([u64(shared.id)]);
      for (const id of ids) db('refs').putSync(u64(id), sealedValue(u64(id), u32(1)));
      db('meta').removeSync(Buffer.from('sharedRefs'));
      db('meta').putSync(Buffer.from('format'), Buffer.from([2]));
    });
    // `warren check` without --repair checks it in its own layout (and changes nothing).
    const report = await checkStore(dataDir, { repair: false });
    expect([report.format, report.verdict, report.problems, report.entries, report.messages]).to.deep.equal([2, 'clean', [], 5, 4]);
    s = await reopen();
    expect(logs.join('\n')).to.match(/migrated store format 2 to 3 \(refcount records only for shared messages\): 3 records, 3 to 4 \(message records may carry BCC keys\): 0 records/);
    expect(logs.join('\n')).not.to.match(/full check/);
    expect(s.verify().problems).to.deep.equal([]);
    expect(s.messages.stats()).to.deep.equal({ messages: 4, entries: 5 });
    // The shared message is freed with its last entry; the others with their only one.
    s.messages.remove(Q, 3);
    for (let seq = 0; seq < 3; seq++) s.messages.remove(Q, seq);
    await s.messages.sync();
    expect(s.messages.stats()).to.deep.equal({ messages: 1, entries: 1 });
    s.messages.remove('/\u0000audit', 0);
    await s.messages.sync();
    expect(s.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
    s = await reopen();
    expect(logs.join('\n')).not.to.match(/migrated|full check/);
    expect(s.verify().problems).to.deep.equal([]);
  });

  it('refuses a store format it does not know', async () => {
    await fill();
    await tamper(dataDir, (db) => db('meta').putSync(Buffer.from('format'), Buffer.from([9])));
    expect(() => openLmdbStore(dataDir)).to.throw(/holds store format 9; this broker reads format 5 \(and migrates formats 1, 2, 3 and 4\)/);
  });

  it('keeps two bindings that differ only by where a NUL sits, across a reopen', async () => {
    // Joined with NUL separators both would read "x\0queue\0q\0a\0b": the store keys bindings by all fields, length-prefixed.
    const a: BindingRecord = { vhost: '/', source: 'x', destination: 'q\u0000a', destinationKind: 'queue', routingKey: 'b', arguments: Buffer.alloc(0) };
    const b: BindingRecord = { ...a, destination: 'q', routingKey: 'a\u0000b' };
    let s = await reopen();
    s.metadata.putBinding(a);
    s.metadata.putBinding(b);
    await s.metadata.sync();
    s = await reopen();
    const loaded = s.metadata.load().bindings.map((r) => [r.destination, r.routingKey]);
    expect(loaded).to.have.deep.members([
      ['q\u0000a', 'b'],
      ['q', 'a\u0000b'],
    ]);
    s.metadata.deleteBinding(b);
    await s.metadata.sync();
    s = await reopen();
    expect(s.metadata.load().bindings.map((r) => [r.destination, r.routingKey])).to.deep.equal([['q\u0000a', 'b']]);
  });
});
