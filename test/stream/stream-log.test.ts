/**
 * The stream log over the real LMDB store: appends in chunks, reads from an offset in the
 * middle without reading what precedes it (counted reads, not timing), retention segment by
 * segment, and recovery after reopening the store.
 * STREAM_MESSAGES=1000000 (npm run test:streams-million) runs the same test on a million messages.
 */
import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MessageStore } from '../../src/store/message-store.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { StreamLog, type StreamRetention } from '../../src/stream/stream-log.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const N = Number(process.env.STREAM_MESSAGES ?? 20_000);
const KEY = '/\u0000s';
const DATA_KEY = `${KEY}\u0000log`;
/** A content header as a stream delivers it (a message read back decodes its properties). */
const HEADER = encodeContentHeaderPayload(60, 0, {});
const NO_RETENTION: StreamRetention = { maxBytes: undefined, maxAgeMs: undefined, maxSegmentSize: 500_000_000 };

/** Counts what the store hands out, to prove a read starts where it is asked to. */
function counting(store: MessageStore): { store: MessageStore; reads: { entries: number; messages: number } } {
  const reads = { entries: 0, messages: 0 };
  const wrapped = Object.create(store) as MessageStore;
  wrapped.readEntries = (q, from, limit) => {
    const out = store.readEntries(q, from, limit);
    if (q === DATA_KEY) reads.entries += out.length;
    return out;
  };
  wrapped.readMessage = (queue, e) => {
    reads.messages++;
    return store.readMessage(queue, e);
  };
  return { store: wrapped, reads };
}

function fill(log: StreamLog, from: number, count: number, perChunk: number): void {
  for (let i = from; i < from + count; i++) {
    log.append('', 's', HEADER, Buffer.from(`m${i}`));
    if ((i + 1) % perChunk === 0) log.closeChunk();
  }
  log.closeChunk();
}

describe('StreamLog over LMDB', function () {
  this.timeout(Math.max(60_000, N / 5));
  let dir: string;
  let lmdb: LmdbStore;

  beforeEach(() => {
    dir = makeTmpDir('warren-stream-');
    lmdb = openLmdbStore(dir);
  });
  afterEach(async () => {
    await lmdb.close();
    removeDir(dir);
  });

  it(`reads ${N} messages' middle offset without reading what precedes it, and again after reopening`, async () => {
    const clock = new FakeClock();
    const log = new StreamLog(lmdb.messages, KEY, clock, NO_RETENTION);
    for (let from = 0; from < N; from += 10_000) {
      fill(log, from, Math.min(10_000, N - from), 100);
      await lmdb.messages.sync();
    }
    expect(log.count).to.equal(N);
    expect(log.nextOffset).to.equal(N);
    // Two stored records per chunk (100 messages: its messages, its summary) and one per segment
    // (one): a segment summary rewritten at every chunk replaces the one before.
    expect(lmdb.messages.stats()).to.deep.equal({ messages: (2 * N) / 100 + 1, entries: (2 * N) / 100 + 1 });
    const c = counting(lmdb.messages);
    const reader = new StreamLog(c.store, KEY, clock, NO_RETENTION);
    reader.recover();
    expect(reader.nextOffset).to.equal(N);
    expect(reader.count).to.equal(N);
    c.reads.entries = 0;
    c.reads.messages = 0;
    const mid = Math.floor(N / 2) + 7;
    const got = reader.read(mid, 5);
    expect(got.map((r) => r.offset)).to.deep.equal([mid, mid + 1, mid + 2, mid + 3, mid + 4]);
    expect(got.map((r) => r.msg.body.toString())).to.deep.equal([0, 1, 2, 3, 4].map((k) => `m${mid + k}`));
    // The chunk holding mid (one entry, one record) and nothing before it.
    expect(c.reads).to.deep.equal({ entries: 1, messages: 1 });
    // The rest of that chunk comes from the chunk already read.
    const chunkEnd = Math.floor(mid / 100) * 100 + 99;
    expect(reader.read(mid + 5, chunkEnd - mid - 4).at(-1)!.offset).to.equal(chunkEnd);
    expect(c.reads).to.deep.equal({ entries: 1, messages: 1 });
    // A read across chunks reads the next one.
    expect(reader.read(chunkEnd, 3).map((r) => r.offset)).to.deep.equal([chunkEnd, chunkEnd + 1, chunkEnd + 2]);
    expect(c.reads).to.deep.equal({ entries: 2, messages: 2 });

    await lmdb.close();
    lmdb = openLmdbStore(dir);
    const again = counting(lmdb.messages);
    const recovered = new StreamLog(again.store, KEY, clock, NO_RETENTION);
    recovered.recover();
    expect(recovered.nextOffset).to.equal(N);
    again.reads.entries = 0;
    again.reads.messages = 0;
    expect(recovered.read(N - 1, 10).map((r) => r.msg.body.toString())).to.deep.equal([`m${N - 1}`]);
    expect(again.reads).to.deep.equal({ entries: 1, messages: 1 });
  });

  it('deletes whole segments, oldest first, never the active one (max-length-bytes)', async () => {
    const clock = new FakeClock();
    // 10 messages of 2-3 bytes per chunk; segments roll over at 20 bytes; keep at most 60 bytes.
    const log = new StreamLog(lmdb.messages, KEY, clock, { maxBytes: 60, maxAgeMs: undefined, maxSegmentSize: 20 });
    fill(log, 0, 100, 10);
    await lmdb.messages.sync();
    // Every chunk fills a segment (20 or 30 bytes): each roll-over keeps at most 60 bytes of
    // closed segments (two of 30) besides the new active one.
    expect(log.segmentCount).to.equal(3);
    expect(log.firstOffset).to.equal(70);
    expect(log.count).to.equal(30);
    expect(log.bytes).to.equal(90);
    expect(log.read(0, 1)[0]!.offset).to.equal(log.firstOffset);
    // One chunk record per chunk of 10 left.
    expect(lmdb.messages.countEntries(DATA_KEY).messages).to.equal(log.count / 10);
  });

  it('deletes segments older than max-age on roll-over, and finds offsets by timestamp', async () => {
    const clock = new FakeClock();
    const log = new StreamLog(lmdb.messages, KEY, clock, { maxBytes: undefined, maxAgeMs: 60_000, maxSegmentSize: 20 });
    const t0 = clock.now();
    fill(log, 0, 10, 10);
    clock.stepWall(30_000);
    fill(log, 10, 10, 10);
    expect(log.offsetAt(t0 + 10_000)).to.equal(10);
    expect(log.offsetAt(t0)).to.equal(0);
    expect(log.offsetAt(t0 + 31_000)).to.equal(20);
    clock.stepWall(40_000); // the first segment is 70 s old, the second 40 s
    fill(log, 20, 10, 10);
    expect(log.firstOffset).to.equal(10);
    expect(log.count).to.equal(20);
  });

  it('removes a large deleted segment from the store a batch per turn, and finishes after a restart', async () => {
    const clock = new FakeClock();
    const retention = { maxBytes: 1, maxAgeMs: undefined, maxSegmentSize: 6_000 };
    const log = new StreamLog(lmdb.messages, KEY, clock, retention, 1000);
    const one = (): number => log.append('', '', HEADER, Buffer.from('x'));
    // 6,000 chunks of one message in the first segment.
    for (let i = 0; i < 6_000; i++) {
      one();
      log.closeChunk();
    }
    one();
    log.closeChunk(); // a new segment: the first (6,000 chunks) goes
    expect(log.firstOffset).to.equal(6_000);
    expect(log.count).to.equal(1);
    // Not all at once: the first batch is out of the store, the rest follows turn by turn.
    const left = lmdb.messages.countEntries(DATA_KEY).messages;
    expect(left).to.equal(6_001 - 1000);
    await lmdb.messages.sync();
    // A restart in the middle: recovery goes on removing what the deleted segment left.
    const reopened = new StreamLog(lmdb.messages, KEY, clock, retention, 1000);
    reopened.recover();
    expect(reopened.firstOffset).to.equal(6_000);
    expect(reopened.nextOffset).to.equal(6_001);
    await log.whenTrimmed();
    await reopened.whenTrimmed();
    expect(lmdb.messages.countEntries(DATA_KEY).messages).to.equal(1);
  });

  it('works the same over the in-memory store', () => {
    const store = openMemoryStore().messages;
    const c = counting(store);
    const log = new StreamLog(c.store, KEY, new FakeClock(), NO_RETENTION);
    fill(log, 0, 1000, 50);
    c.reads.entries = 0;
    expect(log.read(500, 3).map((r) => r.offset)).to.deep.equal([500, 501, 502]);
    expect(log.read(548, 4).map((r) => r.msg.body.toString())).to.deep.equal(['m548', 'm549', 'm550', 'm551']);
    // The chunks of 500-549 and 550-599.
    expect(c.reads.entries).to.equal(2);
  });

  it('closes a chunk early when one turn appends more than a chunk may hold', async () => {
    const log = new StreamLog(lmdb.messages, KEY, new FakeClock(), NO_RETENTION);
    fill(log, 0, 20_000, 20_000);
    await lmdb.messages.sync();
    // 8,192 messages at most per chunk record.
    expect(lmdb.messages.countEntries(DATA_KEY).messages).to.equal(3);
    expect(log.read(8191, 2).map((r) => r.msg.body.toString())).to.deep.equal(['m8191', 'm8192']);
    expect(log.read(19_999, 5).map((r) => r.offset)).to.deep.equal([19_999]);
  });

  it('rewrites a log of one record per message (Warren before chunk records) as chunks on recovery', async () => {
    const clock = new FakeClock();
    const store = lmdb.messages;
    const put = (key: string, seq: number, exchange: string, routingKey: string, body: Buffer): void => {
      const id = store.nextMessageId();
      store.enqueue(key, { seq, msgId: id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id, exchange, routingKey, header: encodeContentHeaderPayload(60, body.length, { messageId: `h${seq}` }), body });
    };
    const doubles = (...v: number[]): Buffer => {
      const b = Buffer.alloc(8 * v.length);
      v.forEach((x, i) => b.writeDoubleBE(x, i * 8));
      return b;
    };
    // The old layout: one record per offset under the stream's own key. Offsets 0-10 in chunks
    // of 4, 4 and 3 (one segment) with offset 10's record missing (one the store lost), then
    // 11-12 written without their chunk summary (a crash between the two commits).
    const t0 = clock.now();
    for (let o = 0; o < 13; o++) if (o !== 10) put(KEY, o, 'ex', `k${o}`, Buffer.from(`m${o}`));
    put(`${KEY}\u0000chunks`, 0, '', '', doubles(4, 8, t0));
    put(`${KEY}\u0000chunks`, 4, '', '', doubles(4, 8, t0 + 1000));
    put(`${KEY}\u0000chunks`, 8, '', '', doubles(3, 6, t0 + 2000));
    put(`${KEY}\u0000segs`, 0, '', '', doubles(0, 10, 11, 22, t0, t0 + 2000, 8));
    await store.sync();

    clock.stepWall(5000);
    const log = new StreamLog(store, KEY, clock, NO_RETENTION);
    log.recover();
    await store.sync();
    expect(store.countEntries(KEY).messages).to.equal(0);
    expect(log.nextOffset).to.equal(13);
    expect(log.count).to.equal(13);
    const all = log.read(0, 100);
    expect(all.map((r) => r.offset)).to.deep.equal([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12]);
    expect(all.map((r) => r.msg.body.toString())).to.deep.equal(all.map((r) => `m${r.offset}`));
    expect(all.map((r) => `${r.msg.exchange}/${r.msg.routingKey}/${r.msg.properties.messageId}`)).to.deep.equal(all.map((r) => `ex/k${r.offset}/h${r.offset}`));
    // Chunks as the summaries said (the gap at 10 splits the last one), the tail as one more.
    expect(store.readEntries(DATA_KEY, 0, 100).map((e) => e.seq)).to.deep.equal([3, 7, 9, 12]);
    expect(log.offsetAt(t0 + 1000)).to.equal(4);
    expect(log.lastChunkOffset).to.equal(11);

    // Reopened: read as chunks, nothing rewritten again.
    await lmdb.close();
    lmdb = openLmdbStore(dir);
    const again = new StreamLog(lmdb.messages, KEY, clock, NO_RETENTION);
    again.recover();
    expect(again.nextOffset).to.equal(13);
    expect(again.read(5, 3).map((r) => r.msg.body.toString())).to.deep.equal(['m5', 'm6', 'm7']);
    expect(again.append('', '', HEADER, Buffer.from('new'))).to.equal(13);
  });
});
