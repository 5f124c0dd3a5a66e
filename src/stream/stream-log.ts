/**
 * A stream's append-only log, kept in the message store behind its contract (src/store). The log is
 * cut into chunks (what was appended until the store's next commit: osiris' write batches) and
 * segments (chunks up to the segment size: the unit retention deletes). A chunk's messages are one
 * store record (stream-chunk.ts), written when the chunk closes together with its summary and its
 * segment's, so one commit holds all three. Only the segment summaries are held in memory; chunks
 * are read from the store when a reader needs them, from the offset it asks for (an LMDB range
 * read), never from the start.
 *
 * Layout (store key → entries):
 *   K \0 log     seq = last offset    → the chunk's messages as delivered (x-stream-offset header added)
 *   K \0 chunks  seq = first offset   → ChunkSummary (count, bytes, timestamp)
 *   K \0 segs    seq = first offset   → SegmentRecord (first, last, count, bytes, timestamps)
 * A chunk record is keyed by its last offset so that one range read from any offset finds the
 * chunk holding it (the first entry at or after it). Warren before chunk records kept one record
 * per message under K itself (seq = offset); recover() rewrites such a log as chunks.
 */
import type { Clock } from '../clock.js';
import { wholeAsSmi } from '../frame/wire.js';
import { objectArray } from '../object-array.js';
import type { Message } from '../queue/message.js';
import type { MessageStore } from '../store/message-store.js';
import { ChunkBuilder, DecodedChunk, type StreamEntry } from './stream-chunk.js';

export interface Segment {
  first: number;
  last: number;
  count: number;
  bytes: number;
  firstTs: number;
  lastTs: number;
  /** First offset of the segment's last chunk. */
  lastChunk: number;
}

export interface StreamRetention {
  maxBytes: number | undefined;
  maxAgeMs: number | undefined;
  maxSegmentSize: number;
}


const SEGMENT_RECORD_SIZE = 7 * 8;
/** Store records retention removes per turn. */
const TRIM_BATCH = 50_000;
const CHUNK_SUMMARY_SIZE = 3 * 8;
/**
 * A chunk closes early once it holds this many encoded bytes or messages, so that a record
 * stays small whatever comes before a commit (a large transaction, a burst from many connections).
 */
const CHUNK_MAX_BYTES = 1024 * 1024;
const CHUNK_MAX_COUNT = 8192;

/** Counts what a log read from the store (tests prove reads start where they are asked to). */
export interface StreamReadCounter {
  /** Entries of chunk records (their offsets) read. */
  entries: number;
  /** Chunk records read. */
  messages: number;
}

/** The chunk being appended to (until the store's next commit). */
interface OpenChunk {
  first: number;
  /** Body bytes (what segment sizes and max-length-bytes count). */
  bytes: number;
  ts: number;
  /** The chunk's record, its messages encoded as they are appended. */
  record: ChunkBuilder;
}

export class StreamLog {
  /** The memory every chunk is built in, one chunk at a time (ChunkBuilder.reset). */
  private readonly builder = new ChunkBuilder();
  private readonly dataKey: string;
  private readonly chunksKey: string;
  private readonly segmentsKey: string;
  /** Oldest first; the last one is the active segment. */
  private segments: Segment[] = objectArray<Segment>();
  /** Offset the next appended message gets. */
  private next = 0;
  /** The chunk being appended to (closed by closeChunk). */
  private open: OpenChunk | undefined;
  /** The chunk read last: readers go on where they stopped. */
  private cached: DecodedChunk | undefined;
  /** Messages and bytes in the log (all segments). */
  private total = { count: 0, bytes: 0 };
  readonly reads: StreamReadCounter = { entries: 0, messages: 0 };

  constructor(
    private readonly store: MessageStore,
    private readonly key: string,
    private readonly clock: Clock,
    public retention: StreamRetention,
    /** Store records retention removes per turn. */
    private readonly trimBatch = TRIM_BATCH,
  ) {
    this.dataKey = `${key}\u0000log`;
    this.chunksKey = `${key}\u0000chunks`;
    this.segmentsKey = `${key}\u0000segs`;
  }

  get firstOffset(): number {
    return this.segments.length > 0 ? this.segments[0]!.first : this.next;
  }

  /** The offset the next message gets (one past the last one appended). */
  get nextOffset(): number {
    return this.next;
  }

  get count(): number {
    return this.total.count;
  }

  get bytes(): number {
    return this.total.bytes;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  /** First offset of the last closed chunk (osiris' "last"), or undefined when empty. */
  get lastChunkOffset(): number | undefined {
    return this.segments.at(-1)?.lastChunk;
  }

  /**
   * Appends a message at the next offset (nextOffset) and returns that offset. header is the
   * header as delivered, with the x-stream-offset header for that offset. An append with no
   * chunk open opens one; closeChunk ends it (and writes it), as does an append to a full chunk.
   */
  append(exchange: string, routingKey: string, header: Buffer, body: Buffer): number {
    const open = this.chunkForAppend();
    open.record.add(exchange, routingKey, header, body);
    open.bytes += body.length;
    return this.next++;
  }

  /**
   * Appends a published message at nextOffset with the x-stream-offset header for that offset
   * added to its header bytes (stream-header.ts) and returns the offset; -1, appending nothing,
   * when its header needs the full re-encoding (it has headers): then append() that header.
   */
  appendPublished(msg: Message): number {
    const open = this.chunkForAppend();
    const offset = this.next;
    if (!open.record.addWithOffset(msg.exchange, msg.routingKey, msg.header, offset, msg.bodyMemory, msg.bodyOffset, msg.bodySize)) {
      if (open.record.count === 0) this.open = undefined;
      return -1;
    }
    open.bytes += msg.bodySize;
    return this.next++;
  }

  /** The open chunk with room for one more message (a full one is closed first). */
  private chunkForAppend(): OpenChunk {
    let open = this.open;
    if (open !== undefined && (open.record.size >= CHUNK_MAX_BYTES || open.record.count >= CHUNK_MAX_COUNT)) {
      this.closeChunk();
      open = undefined;
    }
    return open ?? (this.open = { first: this.next, bytes: 0, ts: this.clock.now(), record: this.builder.reset() });
  }

  get chunkOpen(): boolean {
    return this.open !== undefined;
  }

  /**
   * Ends the open chunk: writes its messages as one record, its summary and its segment's
   * summary (one batch of the store: one commit). A full active segment is
   * closed first, which is when retention runs (osiris evaluates it on segment roll-over).
   * Returns the offsets retention deleted (0 when none).
   */
  closeChunk(): number {
    const c = this.open;
    if (!c) return 0;
    this.open = undefined;
    const count = c.record.count;
    let removed = 0;
    let seg = this.segments.at(-1);
    if (!seg || seg.bytes >= this.retention.maxSegmentSize) {
      seg = { first: c.first, last: c.first, count: 0, bytes: 0, firstTs: c.ts, lastTs: c.ts, lastChunk: c.first };
      this.segments.push(seg);
      removed = this.applyRetention();
    }
    seg.last = c.first + count - 1;
    seg.count += count;
    seg.bytes += c.bytes;
    seg.lastTs = c.ts;
    seg.lastChunk = c.first;
    this.total.count += count;
    this.total.bytes += c.bytes;
    this.writeRecord(this.dataKey, c.first + count - 1, c.record.finish());
    this.writeRecord(this.chunksKey, c.first, encodeChunkSummary(count, c.bytes, c.ts));
    this.writeRecord(this.segmentsKey, seg.first, encodeSegment(seg));
    return removed;
  }

  /**
   * Deletes whole segments from the oldest on, never the active one: while the log is over
   * max-length-bytes, and while a segment's newest chunk is older than max-age. Returns how many
   * messages went.
   */
  applyRetention(): number {
    const { maxBytes, maxAgeMs } = this.retention;
    const cutoff = maxAgeMs === undefined ? -Infinity : this.clock.now() - maxAgeMs;
    let removed = 0;
    while (this.segments.length > 1) {
      const oldest = this.segments[0]!;
      const overBytes = maxBytes !== undefined && this.total.bytes > maxBytes;
      const tooOld = oldest.lastTs < cutoff;
      if (!overBytes && !tooOld) break;
      this.segments.shift();
      this.deleteSegment(oldest);
      removed += oldest.count;
    }
    return removed;
  }

  /**
   * A segment leaves the log at once (its summary goes, readers skip it); its messages and chunk
   * records are removed from the store trimBatch at a time, one batch per turn, so that a
   * segment of millions does not stall the broker (recover() finishes what a crash left).
   */
  private deleteSegment(seg: Segment): void {
    this.store.remove(this.segmentsKey, seg.first);
    this.total.count -= seg.count;
    this.total.bytes -= seg.bytes;
    this.trim();
  }

  /** Removes chunk records and summaries below the log's first offset, a batch per turn. */
  private trim(): void {
    if (this.trimming) return;
    const below = this.firstOffset;
    let left = this.trimBatch;
    for (const key of [this.dataKey, this.chunksKey]) {
      for (;;) {
        // From where the last batch stopped: removed entries are not read again.
        const from = this.trimFrom.get(key) ?? 0;
        const stale = this.store.readEntries(key, from, Math.min(left, 1024)).filter((e) => e.seq < below);
        for (const e of stale) this.store.remove(key, e.seq);
        if (stale.length > 0) this.trimFrom.set(key, stale.at(-1)!.seq + 1);
        left -= stale.length;
        if (stale.length === 0 || left <= 0) break;
      }
      if (left <= 0) break;
    }
    if (left > 0) {
      this.trimDone?.();
      this.trimDone = undefined;
      this.trimmedPromise = undefined;
      return;
    }
    this.trimming = true;
    setImmediate(() => {
      this.trimming = false;
      if (!this.destroyed) this.trim();
    });
  }

  private trimming = false;
  private destroyed = false;
  /** Per store key, the offset below which trim() has removed everything already. */
  private readonly trimFrom = new Map<string, number>();
  private trimDone: (() => void) | undefined;
  private trimmedPromise: Promise<void> | undefined;

  /** Resolves once what retention deleted is out of the store too (tests, diagnostics). */
  whenTrimmed(): Promise<void> {
    if (!this.trimming) return Promise.resolve();
    return (this.trimmedPromise ??= new Promise((resolve) => (this.trimDone = resolve)));
  }

  private writeRecord(key: string, seq: number, body: Buffer): void {
    const id = this.store.nextMessageId();
    // An entry already at seq is replaced (and its old record freed): a segment summary is rewritten per chunk.
    this.store.enqueue(key, { seq, msgId: id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id, exchange: '', routingKey: '', header: EMPTY, body });
  }

  /**
   * Reads up to limit messages from offset on (offsets below the log's start read from its
   * start), from the chunks written so far (closeChunk). The store is asked for the chunks
   * holding that range only.
   */
  read(offset: number, limit: number): StreamEntry[] {
    const out: StreamEntry[] = [];
    let at = Math.max(offset, this.firstOffset);
    while (out.length < limit) {
      const chunk = this.chunkAt(at);
      if (chunk === undefined) break;
      // A chunk the store lost (a damaged record set aside) is skipped.
      if (chunk.first > at) at = chunk.first;
      const end = Math.min(chunk.last, at + (limit - out.length) - 1);
      for (; at <= end; at++) out.push(chunk.message(at));
    }
    return out;
  }

  /** The written chunk holding offset, read from the store unless it was the last one read. */
  private chunkAt(offset: number): DecodedChunk | undefined {
    const cached = this.cached;
    if (cached !== undefined && cached.first <= offset && offset <= cached.last) return cached;
    // Chunk records are keyed by their last offset: the first at or after offset holds it.
    const [e] = this.store.readEntries(this.dataKey, offset, 1);
    this.reads.entries++;
    if (e === undefined) return undefined;
    const record = this.store.readMessage(this.dataKey, e);
    this.reads.messages++;
    if (record === undefined) return undefined;
    return (this.cached = new DecodedChunk(e.seq, e.msgId, record.body));
  }

  /** The first offset of the first chunk written at or after ms (osiris' timestamp spec); nextOffset if none. */
  offsetAt(ms: number): number {
    const seg = this.segments.find((s) => s.lastTs >= ms);
    if (!seg) return this.next;
    if (seg.firstTs >= ms) return seg.first;
    for (const { seq, body } of this.records(this.chunksKey, seg.first)) if (decodeChunkSummary(body).ts >= ms) return seq;
    return this.next;
  }

  /**
   * Rebuilds the segment summaries after a restart. A chunk's record and summaries are written
   * in one commit, so the summaries describe exactly the chunks in the store.
   */
  recover(): void {
    this.segments.length = 0;
    this.cached = undefined;
    for (const { body } of this.records(this.segmentsKey, 0)) this.segments.push(decodeSegment(body));
    this.total = { count: 0, bytes: 0 };
    for (const s of this.segments) {
      this.total.count += s.count;
      this.total.bytes += s.bytes;
    }
    this.next = this.segments.length > 0 ? this.segments.at(-1)!.last + 1 : 0;
    this.migrateMessageRecords();
    // Offsets go on from the highest written, whatever retention has deleted.
    this.next = Math.max(this.next, this.store.lastSeq(this.dataKey) + 1);
    // Records of segments deleted before a crash, if their removal had not finished.
    this.trim();
  }

  /** A store key's records (seq and body) from seq on, in seq order, read a batch at a time. */
  private *records(key: string, from: number): Generator<{ seq: number; body: Buffer }> {
    for (;;) {
      const entries = this.store.readEntries(key, from, 1024);
      if (entries.length === 0) return;
      for (const e of entries) {
        const m = this.store.readMessage(key, e);
        if (m) yield { seq: e.seq, body: m.body };
      }
      from = entries.at(-1)!.seq + 1;
    }
  }

  /**
   * A log written by Warren before chunk records (one record per message under the stream's
   * own key, seq = offset) is rewritten as chunk records, one per chunk summary, in the batch of
   * the recovery (one commit). The messages after the last summary, which a crash left without
   * one, become one more chunk, as that Warren's recovery made them.
   */
  private migrateMessageRecords(): void {
    const old = this.key;
    if (this.store.lastSeq(old) < 0) return;
    const firsts: number[] = [];
    for (let from = this.firstOffset; ; ) {
      const entries = this.store.readEntries(this.chunksKey, from, 1024);
      if (entries.length === 0) break;
      for (const e of entries) firsts.push(e.seq);
      from = entries.at(-1)!.seq + 1;
    }
    const indexedNext = this.next;
    let group = new ChunkBuilder();
    let groupFirst = 0;
    const flush = (): void => {
      if (group.count > 0) this.writeRecord(this.dataKey, groupFirst + group.count - 1, group.finish());
      group = new ChunkBuilder();
    };
    let chunk = 0;
    for (let from = this.firstOffset; ; ) {
      const entries = this.store.readEntries(old, from, 1024);
      if (entries.length === 0) break;
      for (const e of entries) {
        const m = this.store.readMessage(old, e);
        if (!m) continue;
        if (e.seq >= indexedNext) {
          // The crash tail: appended as new messages (offsets go on from indexedNext).
          this.next = e.seq;
          this.append(m.exchange, m.routingKey, m.header, m.body);
          continue;
        }
        // A new chunk at a summary's first offset (or after a message the store lost).
        if ((chunk < firsts.length && e.seq >= firsts[chunk]!) || e.seq !== groupFirst + group.count) {
          flush();
          groupFirst = e.seq;
          while (chunk < firsts.length && firsts[chunk]! <= e.seq) chunk++;
        }
        group.add(m.exchange, m.routingKey, m.header, m.body);
      }
      from = entries.at(-1)!.seq + 1;
    }
    flush();
    this.closeChunk();
    this.store.deleteQueue(old);
  }

  /** Drops everything (queue.delete). */
  destroy(): void {
    this.destroyed = true;
    this.cached = undefined;
    this.open = undefined;
    this.store.deleteQueue(this.dataKey);
    this.store.deleteQueue(this.chunksKey);
    this.store.deleteQueue(this.segmentsKey);
    this.segments.length = 0;
    this.total = { count: 0, bytes: 0 };
  }
}

const EMPTY = Buffer.alloc(0);

function encodeChunkSummary(count: number, bytes: number, ts: number): Buffer {
  const b = Buffer.alloc(CHUNK_SUMMARY_SIZE);
  b.writeDoubleBE(count, 0);
  b.writeDoubleBE(bytes, 8);
  b.writeDoubleBE(ts, 16);
  return b;
}

function decodeChunkSummary(b: Buffer): { count: number; bytes: number; ts: number } {
  return { count: wholeAsSmi(b.readDoubleBE(0)), bytes: wholeAsSmi(b.readDoubleBE(8)), ts: b.readDoubleBE(16) };
}

function encodeSegment(s: Segment): Buffer {
  const b = Buffer.alloc(SEGMENT_RECORD_SIZE);
  [s.first, s.last, s.count, s.bytes, s.firstTs, s.lastTs, s.lastChunk].forEach((v, i) => b.writeDoubleBE(v, i * 8));
  return b;
}

function decodeSegment(b: Buffer): Segment {
  const v = (i: number) => wholeAsSmi(b.readDoubleBE(i * 8));
  return { first: v(0), last: v(1), count: v(2), bytes: v(3), firstTs: v(4), lastTs: v(5), lastChunk: v(6) };
}
