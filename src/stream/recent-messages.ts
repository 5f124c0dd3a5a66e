/**
 * Messages recently read from a stream's log, kept for the other consumers reading the same part
 * of it: 10 consumers replaying from first read each message from the store once, not ten times.
 * A fixed ring indexed by offset (slot = offset mod capacity, capacity a power of two): a lookup
 * is an array read, an insert overwrites what the slot held. Bounded by count (the capacity) and
 * by bytes (body, header and an estimate of the objects around them): over the byte bound, slots are emptied in ring order from a moving cursor (the
 * oldest insertions first, as long as offsets are read in order) until it holds no more.
 */
import type { Message } from '../queue/message.js';

/** Bytes counted per message besides its body and header: the Message and Buffer objects. */
const OVERHEAD = 160;

/** What a held message counts against the byte bound. */
function bytesOf(m: Message): number {
  return m.bodySize + m.header.length + OVERHEAD;
}

export class RecentMessages {
  private readonly offsets: Float64Array;
  /** The last offset of each held message's chunk (readers deliver whole chunks). */
  private readonly chunkEnds: Float64Array;
  private readonly messages: Array<Message | undefined>;
  private readonly mask: number;
  private bytes = 0;
  /** The next slot emptied when over the byte bound. */
  private cursor = 0;

  constructor(
    count: number,
    private readonly maxBytes: number,
  ) {
    let capacity = 1;
    while (capacity < count) capacity *= 2;
    this.mask = capacity - 1;
    this.offsets = new Float64Array(capacity).fill(-1);
    this.chunkEnds = new Float64Array(capacity);
    this.messages = new Array<Message | undefined>(capacity).fill(undefined);
  }

  get(offset: number): Message | undefined {
    const i = offset & this.mask;
    return this.offsets[i] === offset ? this.messages[i] : undefined;
  }

  /** The last offset of the chunk of the message at offset (which get(offset) has just returned). */
  chunkEnd(offset: number): number {
    return this.chunkEnds[offset & this.mask]!;
  }

  /** Holds msg, the message at offset, whose chunk ends at chunkEnd. */
  set(offset: number, msg: Message, chunkEnd: number): void {
    const i = offset & this.mask;
    const old = this.messages[i];
    if (old !== undefined) {
      if (this.offsets[i] === offset) return;
      this.bytes -= bytesOf(old);
    }
    this.offsets[i] = offset;
    this.chunkEnds[i] = chunkEnd;
    this.messages[i] = msg;
    this.bytes += bytesOf(msg);
    while (this.bytes > this.maxBytes) {
      const j = this.cursor;
      this.cursor = (j + 1) & this.mask;
      const m = this.messages[j];
      if (m === undefined) continue;
      this.bytes -= bytesOf(m);
      this.messages[j] = undefined;
      this.offsets[j] = -1;
    }
  }

  /** Bytes held, as counted against the bound (tests, diagnostics). */
  get heldBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.offsets.fill(-1);
    this.messages.fill(undefined);
    this.bytes = 0;
  }
}
