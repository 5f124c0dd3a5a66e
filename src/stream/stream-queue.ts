/**
 * A stream queue (x-queue-type: stream) as RabbitMQ 3.10 serves it over AMQP 0-9-1
 * (rabbit_stream_queue): an append-only log (StreamLog) in the store that every consumer reads
 * on its own from the offset it asked for, with credit from its prefetch; acks only give
 * credit back, nothing is removed but by retention. It is a Queue to the rest of the broker
 * (routing, channels, management), with the Queue operations a stream refuses unused: the
 * handlers refuse basic.get, purge, nack and reject first.
 */
import type { Message } from '../queue/message.js';
import type { Consumer } from '../queue/consumer.js';
import { EnqueueResult, Queue, type QueueDeps, type QueueOptions } from '../queue/queue.js';
import type { QueueSettings } from '../queue/queue-arguments.js';
import { QueuedMessage } from '../queue/queued-message.js';
import { F } from '../frame/field-table.js';
import { internalError } from '../errors.js';
import { DEFAULT_SEGMENT_SIZE, type OffsetSpec } from './stream-arguments.js';
import { StreamLog, type StreamRetention } from './stream-log.js';
import { RecentMessages } from './recent-messages.js';

/** One consumer's place in the log. */
interface Reader {
  consumer: Consumer;
  /** The next offset to read. */
  next: number;
  /** Offsets below this are skipped (a numeric offset beyond the end, as RabbitMQ filters them). */
  start: number;
  /**
   * The last offset of the chunk being delivered (-1: none). A reader takes a whole chunk at a
   * time while its consumer has credit, as RabbitMQ's does (rabbit_stream_queue:stream_entries):
   * the rest of a chunk goes out even past the prefetch.
   */
  chunkEnd: number;
}

/** About this many messages are read from the log for one consumer at a time (whole chunks). */
const READ_BATCH = 256;
/** Messages recently read from the log, kept for the other readers (RecentMessages). */
const RECENT_COUNT = 65_536;
const RECENT_BYTES = 16 * 1024 * 1024;

export class StreamQueue extends Queue {
  readonly log: StreamLog;
  private readonly readers = new Map<Consumer, Reader>();
  /** One past the last offset whose commit has completed: readers never read beyond it. */
  private committed = 0;
  private serving = false;
  private readonly streamDeps: QueueDeps;
  /** Messages recently read from the log, for the other readers (RecentMessages). */
  private readonly recent = new RecentMessages(RECENT_COUNT, RECENT_BYTES);
  /** closeChunk, bound once (registered with the store's beforeCommit at a chunk's first append). */
  private readonly closeChunkNow = (): void => this.closeChunk();

  constructor(options: QueueOptions, deps: QueueDeps) {
    super(options, deps);
    this.streamDeps = deps;
    this.log = new StreamLog(deps.store, this.storeKey, deps.clock, retentionOf(this.settings));
  }

  private notify(): void {
    const watcher = this.streamDeps.hooks?.queues;
    if (watcher !== undefined) watcher.changed(this);
  }

  override get messageCount(): number {
    return this.log.count;
  }

  override get readyInMemory(): number {
    return 0;
  }

  override get readyBytes(): number {
    return this.log.bytes;
  }

  override get consumerCount(): number {
    return this.readers.size;
  }

  override get consumerList(): readonly Consumer[] {
    return [...this.readers.keys()];
  }

  override get readyBytesInMemory(): number {
    return 0;
  }

  override get unackedBytes(): number {
    return 0;
  }

  /** Everything a stream holds is in the store. */
  override get persistentCount(): number {
    return this.log.count;
  }

  override get persistentBytes(): number {
    return this.log.bytes;
  }

  override peekHead(): QueuedMessage | undefined {
    return undefined;
  }

  override readyEntries(): Iterable<QueuedMessage> {
    return [];
  }

  override applySettings(next: QueueSettings): void {
    if (this.deleted) return;
    this.settings = next;
    this.log.retention = retentionOf(next);
    this.notify();
  }

  // ---- publishing ---------------------------------------------------------------------------

  /**
   * Appends the message (every message a stream takes is written, whatever its delivery mode),
   * with the x-stream-offset header its deliveries carry. The open chunk is closed (and
   * written) as the store commits (MessageStore.beforeCommit): with the LMDB store, a chunk
   * holds what came while the commit before it was in flight (or held after it, CommitHold), as
   * osiris' chunks hold what came while it wrote the last. The sync its publishers' confirms
   * wait on covers it; readers see it once its commit is done.
   */
  override enqueue(msg: Message): EnqueueResult {
    if (this.deleted) return EnqueueResult.Transient;
    const props = msg.properties;
    // RabbitMQ 3.10 cannot convert a decimal header to its AMQP 1.0 record: the publishing
    // channel crashes, and its connection is closed with a bare 541. (Dead-lettered messages
    // never get here: RabbitMQ 3.10 drops them, and so does VHost.deadLetter.)
    const headers = props.headers;
    if (headers !== undefined) for (const k in headers) if (headers[k]!.type === 'D') throw internalError('').withoutMethod();
    const first = !this.log.chunkOpen;
    if (this.log.appendPublished(msg) < 0) this.log.append(msg.exchange, msg.routingKey, this.reencodedHeader(msg, this.log.nextOffset), msg.body);
    if (first) this.streamDeps.store.beforeCommit(this.closeChunkNow);
    this.notify();
    return EnqueueResult.Durable;
  }

  /** The header with x-stream-offset added, for a message with headers: decoded and encoded again. */
  private reencodedHeader(msg: Message, offset: number): Buffer {
    const props = msg.properties;
    const headers: Record<string, ReturnType<typeof F.int64>> = {};
    // RabbitMQ 3.10 stores AMQP 0-9-1 messages as AMQP 1.0 records: array and table header
    // values do not survive the conversion.
    for (const [k, v] of Object.entries(props.headers ?? {})) if (v.type !== 'A' && v.type !== 'F') headers[k] = v as never;
    headers['x-stream-offset'] = F.int64(offset);
    return msg.withProperties(0, msg.exchange, msg.routingKey, { ...props, headers }).header;
  }

  private closeChunk(): void {
    if (this.deleted || !this.log.chunkOpen) return;
    this.log.closeChunk();
    for (const r of this.readers.values()) if (r.next < this.log.firstOffset) r.next = this.log.firstOffset;
    const upto = this.log.nextOffset;
    this.streamDeps.store.sync().then(
      () => {
        if (upto > this.committed) this.committed = upto;
        this.serve();
      },
      () => {
        // A failed commit: its publishers get nacks; readers wait for the next commit.
      },
    );
    this.notify();
  }

  override recover(_crashed: boolean): void {
    this.log.recover();
    this.committed = this.log.nextOffset;
  }

  /** A stream's retention is the log's (recover), not a queue's length limits and TTLs. */
  override recovered(): void {}

  override pageOut(_budget: number): number {
    return 0;
  }

  // ---- consumers ----------------------------------------------------------------------------

  /** A consumer without an offset starts at next, RabbitMQ's default. */
  override addConsumer(consumer: Consumer): void {
    this.addStreamConsumer(consumer, { kind: 'next' });
  }

  /** Registers a consumer that reads from where spec says (osiris:init_reader). */
  addStreamConsumer(consumer: Consumer, spec: OffsetSpec): void {
    const first = this.log.firstOffset;
    const end = this.committed;
    let next: number;
    let start: number;
    switch (spec.kind) {
      case 'first': next = start = first; break;
      case 'next': next = start = end; break;
      case 'last': next = start = Math.min(this.log.lastChunkOffset ?? end, end); break;
      case 'timestamp': next = start = Math.min(this.log.offsetAt(spec.ms), end); break;
      case 'offset':
        next = Math.min(Math.max(spec.offset, first), end);
        start = spec.offset;
        break;
      case 'unreadable': // refused before a consumer is made (checkReadable)
        return;
    }
    this.readers.set(consumer, { consumer, next, start, chunkEnd: -1 });
    this.serve();
    this.notify();
  }

  override removeConsumer(consumer: Consumer): void {
    if (!this.readers.delete(consumer)) return;
    this.notify();
  }

  override hasExclusiveConsumer(): boolean {
    return false;
  }

  override get activeConsumer(): Consumer | undefined {
    return undefined;
  }

  override touch(): void {
    // Streams have no x-expires.
  }

  // ---- deliveries and settling --------------------------------------------------------------

  override maybeDispatch(): void {
    if (this.readers.size > 0) this.serve();
  }

  override dispatch(): void {
    this.serve();
  }

  /** Hands each consumer what it has credit for, read from the log at its own offset. */
  private serve(): void {
    if (this.serving || this.deleted) return;
    this.serving = true;
    try {
      for (const r of this.readers.values()) this.serveReader(r);
    } finally {
      this.serving = false;
    }
  }

  /**
   * Delivers to a consumer from its offset on: a chunk is started only while the consumer has
   * credit (its prefetch is not used up), and once started goes out whole.
   */
  private serveReader(r: Reader): void {
    const c = r.consumer;
    const recent = this.recent;
    const host = c.host;
    while (r.next < this.committed && this.readers.has(c)) {
      if (r.next > r.chunkEnd && !host.canDeliver(c)) return;
      if (r.next < this.log.firstOffset) {
        // Retention deleted what the reader was in: it goes on from the log's start.
        r.next = this.log.firstOffset;
        r.chunkEnd = -1;
        continue;
      }
      const offset = r.next;
      let msg = recent.get(offset);
      if (msg !== undefined) {
        if (offset > r.chunkEnd) r.chunkEnd = recent.chunkEnd(offset);
      } else {
        const read = this.readIntoRecent(offset);
        if (read === undefined) {
          r.next = this.committed;
          return;
        }
        msg = read.msg;
        if (offset > r.chunkEnd) r.chunkEnd = read.chunkEnd;
      }
      if (offset >= r.start) host.deliver(c, this, new QueuedMessage(offset, msg, 0, false));
      r.next = offset + 1;
    }
  }

  /**
   * Reads from offset on into the recent messages, whole chunks of about READ_BATCH messages.
   * Returns the first message read (the one at offset, or after it if the store lost offset's
   * chunk) with its chunk's end, or undefined when the log has nothing there.
   */
  private readIntoRecent(offset: number): { msg: Message; chunkEnd: number } | undefined {
    const batch = this.log.read(offset, Math.min(READ_BATCH, this.committed - offset));
    if (batch.length === 0) return undefined;
    // The rest of the last chunk too: a reader delivers chunks whole.
    const last = batch.at(-1)!;
    if (last.offset < last.chunkEnd) for (const m of this.log.read(last.offset + 1, last.chunkEnd - last.offset)) batch.push(m);
    for (const m of batch) this.recent.set(m.offset, m.msg, m.chunkEnd);
    return { msg: batch[0]!.msg, chunkEnd: batch[0]!.chunkEnd };
  }

  override take(): QueuedMessage | undefined {
    return undefined;
  }

  override delivered(_entry: QueuedMessage): void {
    this.unackedCount++;
  }

  override settle(_entry: QueuedMessage): void {}

  /** An ack gives the consumer its credit back; the message stays in the log. */
  override ack(_entry: QueuedMessage): void {
    this.unackedCount--;
    this.serve();
  }

  /** Deliveries given back by a closing channel: nothing to put back in a log. */
  override requeue(entries: QueuedMessage[]): void {
    this.unackedCount -= entries.length;
    this.serve();
  }

  override discard(entries: QueuedMessage[]): void {
    this.requeue(entries);
  }

  override purge(): number {
    return 0;
  }

  /** queue.delete: the log goes; delete-ok reports 0 messages for a stream, as RabbitMQ's does. */
  override destroy(): number {
    this.deleted = true;
    this.recent.clear();
    this.log.destroy();
    const consumers = [...this.readers.keys()];
    this.readers.clear();
    for (const c of consumers) c.host.cancelledByServer(c);
    this.notify();
    return 0;
  }
}

function retentionOf(s: QueueSettings): StreamRetention {
  return { maxBytes: s.maxLengthBytes, maxAgeMs: s.maxAge, maxSegmentSize: s.streamMaxSegmentSizeBytes ?? DEFAULT_SEGMENT_SIZE };
}
