/**
 * Queues outbound frames and hands them to the sink (the socket) without ever building one
 * buffer for everything queued.
 *
 * Scheduling: by default the flush runs from `setImmediate`, i.e. after the event loop's poll
 * phase has run every I/O callback that is ready. Frames produced while handling all the socket
 * reads of one loop turn (deliveries to one consumer caused by many publishers, confirms, acks)
 * thus leave together, and latency stays under one loop turn. A microtask (queueMicrotask)
 * would flush after each single 'data' callback and batch less under load. Pass `schedule` to
 * change it (tests pass a manual scheduler).
 *
 * Copies: a frame of up to COPY_LIMIT octets of payload (methods, content headers, small body
 * frames) is copied whole — header, payload, frame-end — into a coalescing buffer when it is
 * queued (a delivery is encoded there straight away: no descriptor per frame), so small frames
 * leave in few writes. A larger payload (the body of a big message) is never copied: its
 * frame goes out as a 7-octet frame header, a view into the message body and the frame-end
 * octet. A batch of several writes is made while the sink is corked, so the socket sends it
 * with one writev; a batch of one buffer (a turn's few small frames, the common case) is
 * written as it is, without cork() and uncork() (the stream's buffering of a corked write).
 *
 * Pacing: a flush hands the sink output until the sink holds SINK_LIMIT octets unsent (or its
 * high-water mark if that is larger: then a write has returned false and 'drain' will come); the
 * rest stays queued (as references) until the next flush, which the owner runs on 'drain'.
 * A queued payload over COPY_LIMIT (a body, or a content header) costs a small descriptor, not
 * its size in new memory, so pipelined requests for a large message cannot make the writer
 * allocate gigabytes. Bounding how much a connection may queue is the owner's job
 * (`pendingBytes` + the sink's `writableLength`): what is copied into coalescing buffers is at
 * most that, plus one buffer. Coalescing buffers grow from
 * MIN_SCRATCH, each twice the last in a busy turn, up to SCRATCH_SIZE; the next turn starts at
 * the size of the last flush, and an idle writer holds none.
 *
 * The sink must not call back into the writer from write(), cork() or uncork() (net.Socket and
 * tls.TLSSocket defer their callbacks and events to a later tick): a frame queued during a flush
 * could otherwise be written before the items queued ahead of it.
 */
import { objectArray } from '../object-array.js';
import { basicDeliverFrameSize, writeBasicDeliver, writeBasicDeliverHead } from './fast.js';
import { FRAME_END } from './frame-reader.js';
import { copyBytes, shortstrLength } from './wire.js';

export interface FrameSink {
  write(chunk: Buffer): boolean;
  /** Octets the sink holds and has not sent yet (net.Socket's writableLength). */
  readonly writableLength: number;
  /** From this many octets held, write() returns false and 'drain' follows (net.Socket's). */
  readonly writableHighWaterMark?: number;
  cork?(): void;
  uncork?(): void;
}

/** Payloads up to this size are copied into the coalescing buffer; larger ones are referenced. */
export const COPY_LIMIT = 16 * 1024;
/** Size of a coalescing buffer; consecutive small frames share one until it is full. */
const SCRATCH_SIZE = 64 * 1024;
/** A flush stops handing over output once the sink holds this much unsent. */
export const SINK_LIMIT = 1024 * 1024;
/** Octets handed over between cork() and uncork(): one writev each. */
const BATCH_SIZE = 256 * 1024;

const NO_SCRATCH = Buffer.alloc(0);

/** A complete frame: type, channel, size, payload, frame-end. */
export function encodeFrame(type: number, channel: number, payload: Buffer): Buffer {
  const b = Buffer.allocUnsafe(payload.length + 8);
  b[0] = type;
  b.writeUInt16BE(channel, 1);
  b.writeUInt32BE(payload.length, 3);
  payload.copy(b, 7);
  b[payload.length + 7] = FRAME_END;
  return b;
}

export const HEARTBEAT_FRAME: Buffer = Buffer.from([8, 0, 0, 0, 0, 0, 0, FRAME_END]);

/**
 * Pending output in the queue: octets to hand over as they are (a view of a filled part of a
 * coalescing buffer, or a large frame queued by reference), or a payload to be cut into frames
 * of at most `max` octets at flush (`offset`: how much of it has been handed over). Frames that
 * are small or copied go into the coalescing buffer as they are queued, not in the queue.
 */
type Item = Buffer | PayloadItem;

/**
 * A payload larger than COPY_LIMIT (a body, or a content header: one frame): framed at flush,
 * referenced (never copied). Framed then, each frame leaves whole in one batch: a flush that
 * stops at the sink's limit stops between frames, never between a frame's payload and its
 * frame-end, so a connection discarded meanwhile was sent whole frames only.
 */
class PayloadItem {
  constructor(
    readonly type: number,
    readonly channel: number,
    readonly payload: Buffer,
    readonly max: number,
    public offset: number,
    readonly end: number,
  ) {}
}

/**
 * A content that may keep its encoded frames (Message is one). For a content that will be
 * delivered several times (a message routed to several queues) wireTail is KEEP_TAIL: the next
 * delivery that encodes it whole then hands keepTail() its octets from the exchange's shortstr
 * to the last frame-end (its *tail*, at most MAX_TAIL octets), and while the content keeps it,
 * wireTail returns it and every delivery copies it in one call instead of encoding it again.
 * undefined: nothing is kept. The content must not change while it holds a tail (a Message
 * never does).
 */
export interface WireCache {
  readonly wireTail: Buffer | undefined;
  /** Called once, while wireTail is KEEP_TAIL: the tail to keep, or undefined (too long). */
  keepTail(tail: Buffer | undefined): void;
}

/** WireCache.wireTail of a content whose tail is to be kept. */
export const KEEP_TAIL: Buffer = Buffer.alloc(0);

/**
 * The longest tail kept: only small contents, for which encoding costs most per octet, keep
 * theirs (and how many tails are kept at once is bounded by the content's owner: Message).
 */
export const MAX_TAIL = 512;

/**
 * Where kept tails are copied: slabs of their own, not Node's Buffer pool, whose 8 KiB slabs
 * small message bodies share (kept-body.ts). A tail cut from a slab that also holds the body of
 * a message waiting in a lagging queue would stay in memory as long as that body, after its
 * message dropped it; tails dropped oldest first (Message's TAILS_KEPT) free their own slabs.
 */
const TAIL_SLAB = 64 * 1024;
let tailSlab: ArrayBuffer = new ArrayBuffer(0);
let tailSlabUsed = 0;

/** src[start, end) copied into a tail slab. */
function copyOf(src: Buffer, start: number, end: number): Buffer {
  const n = end - start;
  if (tailSlabUsed + n > tailSlab.byteLength) {
    tailSlab = new ArrayBuffer(TAIL_SLAB);
    tailSlabUsed = 0;
  }
  const b = Buffer.from(tailSlab, tailSlabUsed, n);
  tailSlabUsed += n;
  copyBytes(src, start, end, b, 0);
  return b;
}

/** Stands in for an item already handed over, so the queue holds no reference to it. */
const DONE: Item = NO_SCRATCH;

/**
 * The smallest coalescing buffer (from Node's shared 8 KiB pool). Small on purpose: a pool is
 * freed only when the garbage collector frees every buffer cut from it, which an idle broker
 * seldom does, so an idle connection's heartbeat that took 1 KiB of it each held 1 KiB of memory
 * for minutes (10,000 idle connections: 4.6 -> 18.5 KiB of RSS each).
 */
const MIN_SCRATCH = 16;

export class FrameWriter {
  /** Largest frame to send, including its 8 octets of overhead; 0 = no limit. */
  frameMax: number;
  /** Called after each flush that had output to hand over. */
  onFlush?: () => void;
  /** Called with what a scheduled flush threw (the flush's caller is the event loop). */
  onError?: (err: unknown) => void;

  /** Batches handed to the sink so far, one writev each (RabbitMQ's send_cnt). */
  writes = 0;
  /** Output queued before the open segment (scratch[start, pos)), in order. */
  private items: Item[] = objectArray<Item>();
  /** Index of the first item not completely handed over. */
  private head = 0;
  private bytes = 0;
  private flushed = 0;
  private scheduled = false;
  private discarded = false;
  private flushing = false;
  /**
   * The coalescing buffer: [start, pos) is filled and not yet queued (the open segment, which
   * follows every item). Octets before start were queued or handed to the sink as a view and are
   * never touched again; a full buffer is replaced, not reused.
   */
  private scratch: Buffer = NO_SCRATCH;
  private start = 0;
  private pos = 0;
  /** Size of the next coalescing buffer: what the last flush handed over (so an idle connection allocates little). */
  private nextScratch = MIN_SCRATCH;
  /** Octets handed to the sink in the current batch. */
  private batched = 0;
  /** The batch's first write, held back: written uncorked if no second one follows. */
  private held: Buffer | undefined;
  /** The sink is corked for the current batch (it has a second write). */
  private corked = false;
  private readonly schedule: (fn: () => void) => void;
  private readonly flushNow = (): void => {
    this.scheduled = false;
    try {
      this.flush();
    } catch (err) {
      if (!this.onError) throw err;
      this.onError(err);
    }
  };

  constructor(
    private readonly sink: FrameSink,
    frameMax: number,
    schedule?: (fn: () => void) => void,
  ) {
    this.frameMax = frameMax;
    this.schedule = schedule ?? ((fn) => void setImmediate(fn));
  }

  /** Octets queued and not yet handed to the sink. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** All octets ever queued (flushed or pending): unchanged means nothing was sent meanwhile. */
  get bytesWritten(): number {
    return this.flushed + this.bytes;
  }

  /** Drops everything queued (the connection is gone); later writes are ignored. */
  discard(): void {
    this.discarded = true;
    this.items.length = 0;
    this.head = 0;
    this.bytes = 0;
    this.releaseScratch();
  }

  /** Queues an encoded frame (referenced when large: do not modify it afterwards). */
  write(frame: Buffer): void {
    if (this.discarded) return;
    const n = frame.length;
    if (n <= COPY_LIMIT + 8) {
      const at = this.reserve(n);
      copyBytes(frame, 0, n, this.scratch, at);
    } else {
      this.ref(frame);
    }
    this.bytes += n;
    this.kick();
  }

  /**
   * Queues a method frame with content: the method frame as given, a header frame around
   * `headerPayload`, then `body` in frames of at most frameMax - 8 octets (none when empty),
   * contiguous (spec 4.2.6: content frames follow their method with nothing between on the
   * channel). A body or header over COPY_LIMIT is referenced, not copied: do not modify it afterwards.
   */
  writeContent(channel: number, methodFrame: Buffer, headerPayload: Buffer, body: Buffer): void {
    if (this.discarded) return;
    this.write(methodFrame);
    this.content(channel, headerPayload, body, 0, body.length);
    this.kick();
  }

  /**
   * Queues basic.deliver with its content: the same frames as writeContent(channel,
   * encodeBasicDeliver(channel, consumerTag, ...), headerPayload, body), encoded straight into
   * the coalescing buffer, from `prefix` (basicDeliverPrefix(channel, consumerTag), made once
   * per consumer). The body is body[bodyStart, bodyEnd) (a message's range of shared memory: no
   * view per delivery). Throws (as encodeBasicDeliver does) before queuing anything when a
   * string is longer than a shortstr.
   */
  writeDeliver(
    channel: number, prefix: Buffer, deliveryTag: number, redelivered: boolean, exchange: string, routingKey: string,
    headerPayload: Buffer, body: Buffer, bodyStart = 0, bodyEnd = body.length, cache?: WireCache,
  ): void {
    if (this.discarded) return;
    const size = bodyEnd - bodyStart;
    const h = headerPayload.length;
    // The common case: method, header and one body frame (none for an empty body), all copied
    // into one reservation; otherwise the method frame here and the content as writeContent's.
    const whole = h <= COPY_LIMIT && size <= COPY_LIMIT && (size <= this.frameMax - 8 || this.frameMax <= 8);
    const tail = cache?.wireTail;
    if (whole && tail !== undefined && tail !== KEEP_TAIL) {
      this.deliverWithTail(channel, prefix, deliveryTag, redelivered, h, size, tail);
      return;
    }
    const le = shortstrLength(exchange);
    const lr = shortstrLength(routingKey);
    const n = basicDeliverFrameSize(prefix.length, le, lr);
    const reserved = whole ? n + h + 8 + (size > 0 ? size + 8 : 0) : n;
    let at = this.reserve(reserved);
    const out = this.scratch;
    try {
      at = writeBasicDeliver(out, at, prefix, deliveryTag, redelivered, exchange, le, routingKey, lr);
    } catch (err) {
      this.pos -= reserved; // nothing queued
      throw err;
    }
    this.bytes += reserved;
    if (whole) {
      const headerAt = at;
      at = frameInto(out, at, 2, channel, headerPayload, 0, h);
      if (size > 0) at = frameInto(out, at, 3, channel, body, bodyStart, bodyEnd);
      if (tail === KEEP_TAIL) {
        const tailAt = headerAt - le - lr - 3;
        cache!.keepTail(at - tailAt <= MAX_TAIL ? copyOf(out, tailAt, at) : undefined);
      }
    } else {
      this.content(channel, headerPayload, body, bodyStart, bodyEnd);
    }
    this.kick();
  }

  /**
   * writeDeliver's frames from a content's kept tail (WireCache): the method frame's first
   * octets are this delivery's, the rest is copied, with this channel written into the header
   * and body frames.
   */
  private deliverWithTail(channel: number, prefix: Buffer, deliveryTag: number, redelivered: boolean, h: number, size: number, tail: Buffer): void {
    const reserved = prefix.length + 9 + tail.length;
    const at = this.reserve(reserved);
    const out = this.scratch;
    // The exchange's and the routing key's lengths, from the tail's two shortstrs.
    const le = tail[0]!;
    const strings = le + tail[le + 1]!;
    let tailAt: number;
    try {
      tailAt = writeBasicDeliverHead(out, at, prefix, deliveryTag, redelivered, strings);
    } catch (err) {
      this.pos -= reserved; // nothing queued
      throw err;
    }
    out.set(tail, tailAt);
    const headerAt = tailAt + strings + 3;
    out[headerAt + 1] = channel >>> 8;
    out[headerAt + 2] = channel & 0xff;
    if (size > 0) {
      out[headerAt + h + 9] = channel >>> 8;
      out[headerAt + h + 10] = channel & 0xff;
    }
    this.bytes += reserved;
    this.kick();
  }

  /**
   * Hands queued output to the sink, in order, until everything is handed over or the sink
   * holds SINK_LIMIT octets unsent; call again when the sink drains.
   */
  flush(): void {
    if (this.flushing || this.discarded) return;
    this.close();
    if (this.head === this.items.length) return;
    this.flushing = true;
    const limit = Math.max(SINK_LIMIT, this.sink.writableHighWaterMark ?? 0);
    const before = this.flushed;
    try {
      while (this.head < this.items.length && this.sink.writableLength < limit) {
        this.batched = 0;
        try {
          while (this.head < this.items.length && this.batched < BATCH_SIZE) this.emitItem();
          this.cut();
          this.writes++;
        } finally {
          this.endBatch();
        }
      }
      // What is left is bounded by the connection's output limit: drop what was handed over.
      if (this.head === this.items.length) this.items.length = 0;
      else this.items = this.items.slice(this.head);
      this.head = 0;
    } finally {
      this.flushing = false;
      // An idle connection keeps no coalescing buffer; the next write starts one as large as
      // this flush was.
      if (this.items.length === 0) {
        this.releaseScratch();
        this.nextScratch = Math.max(MIN_SCRATCH, Math.min(SCRATCH_SIZE, this.flushed - before));
      }
    }
    this.onFlush?.();
  }

  private releaseScratch(): void {
    this.scratch = NO_SCRATCH;
    this.start = this.pos = 0;
  }

  private kick(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.flushNow);
    }
  }

  /** The header frame and body frames of a content (counted in bytes): copied when small, else framed at flush. */
  private content(channel: number, headerPayload: Buffer, body: Buffer, bodyStart: number, bodyEnd: number): void {
    const h = headerPayload.length;
    this.bytes += h + 8;
    if (h > COPY_LIMIT) this.later(2, channel, headerPayload, h, 0, h);
    else this.frame(2, channel, headerPayload, 0, h);
    const size = bodyEnd - bodyStart;
    if (size === 0) return;
    const max = this.frameMax > 8 ? this.frameMax - 8 : size;
    this.bytes += size + Math.ceil(size / max) * 8;
    if (size > COPY_LIMIT) {
      this.later(3, channel, body, max, bodyStart, bodyEnd);
      return;
    }
    for (let o = bodyStart; o < bodyEnd; o += max) this.frame(3, channel, body, o, Math.min(o + max, bodyEnd));
  }

  /** Queues payload[start, end) to be framed at flush, in frames of at most max octets (PayloadItem). */
  private later(type: number, channel: number, payload: Buffer, max: number, start: number, end: number): void {
    this.close();
    this.items.push(new PayloadItem(type, channel, payload, max, start, end));
  }

  /** Hands over the item at head (< items.length), or (for a long body) part of it. */
  private emitItem(): void {
    const it = this.items[this.head]!;
    if (it instanceof PayloadItem) {
      // Up to one batch of frames per call, so a flush can stop inside a large body.
      while (it.offset < it.end && this.batched < BATCH_SIZE) {
        const end = Math.min(it.offset + it.max, it.end);
        this.frame(it.type, it.channel, it.payload, it.offset, end);
        this.bytes -= end - it.offset + 8;
        this.flushed += end - it.offset + 8;
        it.offset = end;
      }
      if (it.offset === it.end) this.items[this.head++] = DONE;
      return;
    }
    this.cut();
    this.put(it);
    this.batched += it.length;
    this.bytes -= it.length;
    this.flushed += it.length;
    this.items[this.head++] = DONE;
  }

  /**
   * One frame around src[start, end): copied whole into the coalescing buffer when small;
   * otherwise its header, a view of the payload and its frame-end are written in that order.
   */
  private frame(type: number, channel: number, src: Buffer, start: number, end: number): void {
    const size = end - start;
    if (size <= COPY_LIMIT) {
      // Reserve first, then take this.scratch: reserve() may replace the buffer.
      const at = this.reserve(size + 8);
      frameInto(this.scratch, at, type, channel, src, start, end);
      return;
    }
    const at = this.reserve(7);
    writeFrameHeader(this.scratch, at, type, channel, size);
    this.ref(src.subarray(start, end));
    const endAt = this.reserve(1);
    this.scratch[endAt] = FRAME_END;
  }

  /**
   * Room for n octets at the end of the coalescing buffer; returns where they go. When they do
   * not fit, what the buffer holds is queued (or, in a flush, written) and a new buffer replaces
   * it: callers must read this.scratch only after calling this.
   */
  private reserve(n: number): number {
    if (this.pos + n > this.scratch.length) {
      this.cut();
      const size = Math.max(n, this.nextScratch);
      this.scratch = Buffer.allocUnsafe(size);
      this.start = this.pos = 0;
      // Each buffer of a busy turn twice the last, up to SCRATCH_SIZE.
      this.nextScratch = Math.min(SCRATCH_SIZE, Math.max(this.nextScratch, size * 2));
    }
    const at = this.pos;
    this.pos += n;
    return at;
  }

  /** Queues (or, in a flush, writes) a referenced buffer, after whatever was coalesced before it. */
  private ref(buf: Buffer): void {
    this.cut();
    if (this.flushing) {
      this.put(buf);
      this.batched += buf.length;
    } else {
      this.items.push(buf);
    }
  }

  /** Queues the open segment: what is coalesced and not queued yet (a view: the buffer goes on being filled after it). */
  private close(): void {
    if (this.pos === this.start) return;
    this.items.push(this.scratch.subarray(this.start, this.pos));
    this.start = this.pos;
  }

  /**
   * Ends the open segment: queued behind the items outside a flush; in a flush (where it holds
   * the frames of a body being framed, all items before it handed over) written at once.
   */
  private cut(): void {
    if (this.pos === this.start) return;
    if (!this.flushing) {
      this.close();
      return;
    }
    this.put(this.scratch.subarray(this.start, this.pos));
    this.batched += this.pos - this.start;
    this.start = this.pos;
  }

  /**
   * Hands buf to the sink within the current batch: the first is held back; a second corks the
   * sink and follows it, so a batch of several leaves in one writev.
   */
  private put(buf: Buffer): void {
    if (this.corked) {
      this.sink.write(buf);
      return;
    }
    const first = this.held;
    if (first === undefined) {
      this.held = buf;
      return;
    }
    this.held = undefined;
    this.corked = true;
    this.sink.cork?.();
    this.sink.write(first);
    this.sink.write(buf);
  }

  /** Ends a batch: a lone write goes out as it is, a corked batch is uncorked. */
  private endBatch(): void {
    const lone = this.held;
    if (lone !== undefined) {
      this.held = undefined;
      this.sink.write(lone);
    }
    if (this.corked) {
      this.corked = false;
      this.sink.uncork?.();
    }
  }
}

/** A whole frame around src[start, end) at out[at...] (size + 8 octets); returns the offset after it. */
function frameInto(out: Buffer, at: number, type: number, channel: number, src: Buffer, start: number, end: number): number {
  const size = end - start;
  writeFrameHeader(out, at, type, channel, size);
  copyBytes(src, start, end, out, at + 7);
  out[at + 7 + size] = FRAME_END;
  return at + 8 + size;
}

/** Octet stores: channel and size come from the writer itself, so Buffer's range checks are not needed. */
function writeFrameHeader(out: Buffer, at: number, type: number, channel: number, size: number): void {
  out[at] = type;
  out[at + 1] = channel >>> 8;
  out[at + 2] = channel & 0xff;
  out[at + 3] = size >>> 24;
  out[at + 4] = (size >>> 16) & 0xff;
  out[at + 5] = (size >>> 8) & 0xff;
  out[at + 6] = size & 0xff;
}
