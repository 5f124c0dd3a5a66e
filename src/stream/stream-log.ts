/**
 * A stream's append-only log, kept in the message store behind its contract (src/store): every
 * message is an entry of the stream's store key whose seq is its offset; the log is cut into
 * chunks (what was appended in one event-loop turn: osiris' write batches) and segments (chunks
 * up to the segment size: the unit retention deletes). Chunk and segment summaries are small
 * records under two more keys. Only the segment summaries are held in memory; messages and
 * chunk records are read from the store when a reader needs them, from the offset it asks for
 * (an LMDB range read), never from the start.
 *
 * Layout (store key → entries):
 *   K            seq = offset         → the message as delivered (x-stream-offset header added)
 *   K \0 chunks  seq = first offset   → ChunkRecord (count, bytes, timestamp)
 *   K \0 segs    seq = first offset   → SegmentRecord (first, last, count, bytes, timestamps)
 */
import type { Clock } from '../clock.js';
import type { MessageStore, PersistedMessage } from '../store/message-store.js';

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
const CHUNK_RECORD_SIZE = 3 * 8;

/** Counts what a log read from the store (tests prove reads start where they are asked to). */
export interface StreamReadCounter {
  entries: number;
  messages: number;
}

export class StreamLog {
  private readonly chunksKey: string;
  private readonly segmentsKey: string;
  /** Oldest first; the last one is the active segment. */
  private segments: Segment[] = [];
  /** Offset the next appended message gets. */
  private next = 0;
  /** The chunk being appended to in this turn (closed by closeChunk). */
  private open: { first: number; count: number; bytes: number; ts: number } | undefined;
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
   * header as delivered, with the x-stream-offset header for that offset. The first append of a
   * turn opens a chunk; closeChunk ends it.
   */
  append(exchange: string, routingKey: string, header: Buffer, body: Buffer): number {
    const offset = this.next++;
    const size = body.length;
    let open = this.open;
    if (open === undefined) open = this.open = { first: offset, count: 0, bytes: 0, ts: this.clock.now() };
    open.count++;
    open.bytes += size;
    const id = this.store.nextMessageId();
    this.store.enqueue(this.key, { seq: offset, msgId: id, redelivered: false, deliveryCount: 0, expiresAt: 0 }, { id, exchange, routingKey, header, body });
    return offset;
  }

  get chunkOpen(): boolean {
    return this.open !== undefined;
  }

  /**
   * Ends the open chunk: writes its record and its segment's summary. A full active segment is
   * closed first, which is when retention runs (osiris evaluates it on segment roll-over).
   * Returns the offsets retention deleted (0 when none).
   */
  closeChunk(): number {
    const c = this.open;
    if (!c) return 0;
    this.open = undefined;
    let removed = 0;
    let seg = this.segments.at(-1);
    if (!seg || seg.bytes >= this.retention.maxSegmentSize) {
      seg = { first: c.first, last: c.first, count: 0, bytes: 0, firstTs: c.ts, lastTs: c.ts, lastChunk: c.first };
      this.segments.push(seg);
      removed = this.applyRetention();
    }
    seg.last = c.first + c.count - 1;
    seg.count += c.count;
    seg.bytes += c.bytes;
    seg.lastTs = c.ts;
    seg.lastChunk = c.first;
    this.total.count += c.count;
    this.total.bytes += c.bytes;
    this.writeRecord(this.chunksKey, c.first, encodeChunk(c.count, c.bytes, c.ts));
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

  /** Removes stored messages and chunk records below the log's first offset, a batch per turn. */
  private trim(): void {
    if (this.trimming) return;
    const below = this.firstOffset;
    let left = this.trimBatch;
    for (const key of [this.key, this.chunksKey]) {
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
   * start). The store is asked for that range only.
   */
  read(offset: number, limit: number): Array<{ offset: number; message: PersistedMessage }> {
    const entries = this.store.readEntries(this.key, Math.max(offset, this.firstOffset), limit);
    this.reads.entries += entries.length;
    const out: Array<{ offset: number; message: PersistedMessage }> = [];
    for (const e of entries) {
      const message = this.store.readMessage(e.msgId);
      this.reads.messages++;
      if (message) out.push({ offset: e.seq, message });
    }
    return out;
  }

  /** The first offset of the first chunk written at or after ms (osiris' timestamp spec); nextOffset if none. */
  offsetAt(ms: number): number {
    const seg = this.segments.find((s) => s.lastTs >= ms);
    if (!seg) return this.next;
    if (seg.firstTs >= ms) return seg.first;
    for (let from = seg.first; ;) {
      const chunks = this.store.readEntries(this.chunksKey, from, 256);
      if (chunks.length === 0) return this.next;
      for (const c of chunks) {
        const rec = this.store.readMessage(c.msgId);
        if (rec && decodeChunk(rec.body).ts >= ms) return c.seq;
      }
      from = chunks.at(-1)!.seq + 1;
    }
  }

  /** Rebuilds the segment summaries after a restart; messages written after the last summary form one chunk. */
  recover(): void {
    this.segments = [];
    for (let from = 0; ;) {
      const recs = this.store.readEntries(this.segmentsKey, from, 1024);
      if (recs.length === 0) break;
      for (const r of recs) {
        const m = this.store.readMessage(r.msgId);
        if (m) this.segments.push(decodeSegment(m.body));
      }
      from = recs.at(-1)!.seq + 1;
    }
    this.total = { count: 0, bytes: 0 };
    for (const s of this.segments) {
      this.total.count += s.count;
      this.total.bytes += s.bytes;
    }
    const indexedNext = this.segments.length > 0 ? this.segments.at(-1)!.last + 1 : 0;
    this.next = indexedNext;
    // A crash between a message's commit and its chunk summary's: those messages form one chunk.
    const last = this.store.lastSeq(this.key);
    if (last >= indexedNext) {
      this.open = { first: indexedNext, count: 0, bytes: 0, ts: this.clock.now() };
      for (let from = indexedNext; ;) {
        const entries = this.store.readEntries(this.key, from, 1024);
        if (entries.length === 0) break;
        for (const e of entries) {
          const m = this.store.readMessage(e.msgId);
          this.open.count++;
          this.open.bytes += m?.body.length ?? 0;
        }
        from = entries.at(-1)!.seq + 1;
      }
      this.next = last + 1;
      this.closeChunk();
    }
    if (this.segments.length === 0) {
      // An empty log whose messages were all deleted: offsets go on from the highest stored.
      this.next = Math.max(this.next, last + 1);
    }
    // Records of segments deleted before a crash, if their removal had not finished.
    this.trim();
  }

  /** Drops everything (queue.delete). */
  destroy(): void {
    this.destroyed = true;
    this.store.deleteQueue(this.key);
    this.store.deleteQueue(this.chunksKey);
    this.store.deleteQueue(this.segmentsKey);
    this.segments = [];
    this.total = { count: 0, bytes: 0 };
  }
}

const EMPTY = Buffer.alloc(0);

function encodeChunk(count: number, bytes: number, ts: number): Buffer {
  const b = Buffer.alloc(CHUNK_RECORD_SIZE);
  b.writeDoubleBE(count, 0);
  b.writeDoubleBE(bytes, 8);
  b.writeDoubleBE(ts, 16);
  return b;
}

function decodeChunk(b: Buffer): { count: number; bytes: number; ts: number } {
  return { count: b.readDoubleBE(0), bytes: b.readDoubleBE(8), ts: b.readDoubleBE(16) };
}

function encodeSegment(s: Segment): Buffer {
  const b = Buffer.alloc(SEGMENT_RECORD_SIZE);
  [s.first, s.last, s.count, s.bytes, s.firstTs, s.lastTs, s.lastChunk].forEach((v, i) => b.writeDoubleBE(v, i * 8));
  return b;
}

function decodeSegment(b: Buffer): Segment {
  const v = (i: number) => b.readDoubleBE(i * 8);
  return { first: v(0), last: v(1), count: v(2), bytes: v(3), firstTs: v(4), lastTs: v(5), lastChunk: v(6) };
}
