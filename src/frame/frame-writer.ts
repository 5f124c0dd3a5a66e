/**
 * Queues outbound frames and writes everything queued in one tick with a single sink.write.
 *
 * Scheduling: by default the flush runs from `setImmediate`, i.e. after the event loop's poll
 * phase has run every I/O callback that is ready. Frames produced while handling all the socket
 * reads of one loop turn (deliveries to one consumer caused by many publishers, confirms, acks)
 * thus leave in one syscall, and latency stays under one loop turn. A microtask (queueMicrotask)
 * would flush after each single 'data' callback and batch less under load. Pass `schedule` to
 * change it (tests pass a manual scheduler).
 *
 * Copies: encoded frames and body bytes are copied once, into one buffer per flush; the
 * header and body frames of writeContent are built directly in it (no intermediate frames).
 */

export interface FrameSink {
  write(chunk: Buffer): boolean;
}

const FRAME_END = 0xce;

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

/** Pending output: whole frames, or header/body payloads still to be framed. */
type Item =
  | { kind: 'frame'; buf: Buffer }
  | { kind: 'wrap'; type: number; channel: number; payload: Buffer }
  | { kind: 'body'; channel: number; body: Buffer; max: number };

export class FrameWriter {
  /** Largest frame to send, including its 8 octets of overhead; 0 = no limit. */
  frameMax: number;
  /** Called after each flush with sink.write's result (false: wait for 'drain'). */
  onFlush?: () => void;
  /** Called with what a scheduled flush threw (the flush's caller is the event loop). */
  onError?: (err: unknown) => void;
  private discarded = false;

  /** Writes handed to the sink so far (RabbitMQ's send_cnt). */
  writes = 0;
  private items: Item[] = [];
  private bytes = 0;
  private flushed = 0;
  private scheduled = false;
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

  /** Bytes queued and not yet handed to the sink. */
  get pendingBytes(): number {
    return this.bytes;
  }

  /** All bytes ever queued (flushed or pending): unchanged means nothing was sent meanwhile. */
  get bytesWritten(): number {
    return this.flushed + this.bytes;
  }

  /** Drops everything queued (the connection is gone); later writes are ignored. */
  discard(): void {
    this.discarded = true;
    this.items = [];
    this.bytes = 0;
  }

  /** Queues an encoded frame. */
  write(frame: Buffer): void {
    if (this.discarded) return;
    this.items.push({ kind: 'frame', buf: frame });
    this.bytes += frame.length;
    this.kick();
  }

  /**
   * Queues a method frame with content: the method frame as given, a header frame around
   * `headerPayload`, then `body` in frames of at most frameMax - 8 octets (none when empty),
   * contiguous (spec 4.2.6: content frames follow their method with nothing between on the
   * channel).
   */
  writeContent(channel: number, methodFrame: Buffer, headerPayload: Buffer, body: Buffer): void {
    if (this.discarded) return;
    this.items.push({ kind: 'frame', buf: methodFrame });
    this.items.push({ kind: 'wrap', type: 2, channel, payload: headerPayload });
    this.bytes += methodFrame.length + headerPayload.length + 8;
    if (body.length > 0) {
      const max = this.frameMax > 8 ? this.frameMax - 8 : body.length;
      const frames = Math.ceil(body.length / max);
      this.items.push({ kind: 'body', channel, body, max });
      this.bytes += body.length + frames * 8;
    }
    this.kick();
  }

  /** Writes everything queued now; returns sink.write's result (true when nothing was queued). */
  flush(): boolean {
    if (this.discarded || this.items.length === 0) return true;
    const out = Buffer.allocUnsafe(this.bytes);
    let o = 0;
    for (const it of this.items) {
      switch (it.kind) {
        case 'frame':
          it.buf.copy(out, o);
          o += it.buf.length;
          break;
        case 'wrap':
          o = writeFrame(out, o, it.type, it.channel, it.payload, 0, it.payload.length);
          break;
        case 'body':
          for (let s = 0; s < it.body.length; s += it.max) {
            o = writeFrame(out, o, 3, it.channel, it.body, s, Math.min(s + it.max, it.body.length));
          }
          break;
      }
    }
    this.items = [];
    this.flushed += this.bytes;
    this.bytes = 0;
    this.writes++;
    const ok = this.sink.write(out);
    this.onFlush?.();
    return ok;
  }

  private kick(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      this.schedule(this.flushNow);
    }
  }
}

function writeFrame(out: Buffer, o: number, type: number, channel: number, src: Buffer, start: number, end: number): number {
  out[o] = type;
  out.writeUInt16BE(channel, o + 1);
  out.writeUInt32BE(end - start, o + 3);
  src.copy(out, o + 7, start, end);
  out[o + 7 + end - start] = FRAME_END;
  return o + 8 + end - start;
}
