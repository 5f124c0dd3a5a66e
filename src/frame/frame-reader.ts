/**
 * Splits a byte stream into AMQP frames (spec 2.3.5 / 4.2.3): type (octet), channel (short),
 * size (long), payload, frame-end 0xCE.
 *
 * Behaviour follows rabbit_reader:handle_input/3 and rabbit_command_assembler:analyze_frame/3 of
 * RabbitMQ 3.10.8:
 * - as soon as the 7-octet header is in, a size above frameMax (RabbitMQ allows frame_max + 0
 *   octets of payload, i.e. 8 octets of slack) is a FatalFrameError
 *   `FRAME_ERROR - type 1, all octets = <<>>: {frame_too_large,N,frameMax-8}`;
 * - a frame-end octet other than 0xCE is a FatalFrameError
 *   `FRAME_ERROR - type 1, all octets = <<...>>: {invalid_frame_end_marker,N}`;
 * - then (when `validate` is on, the default) frames RabbitMQ cannot analyze — an unknown type, a
 *   method payload under 4 octets, a header payload under 12, a heartbeat with a payload — are a
 *   501 `... : unknown_frame` ConnectionError. RabbitMQ goes on reading after that one (it is in
 *   its closing state), and so can this reader: feed it again and it continues with the next frame.
 *   (RabbitMQ answers frames on channels other than 0 before connection.open with 505 whatever
 *   their shape; a connection that wants that exactness turns `validate` off and calls
 *   `analyzeFrame` itself.)
 *
 * After a FatalFrameError the reader ignores all further input (`failed` is set): RabbitMQ stops
 * reading and closes the socket 3 seconds later.
 *
 * Payloads are zero-copy subarrays of the chunk when the whole frame lies in one chunk; a frame
 * split across chunks is assembled with a single concatenation when its last byte arrives.
 *
 * `pause()` (from inside onFrame) stops delivery after the current frame: the rest of the chunk
 * and anything fed meanwhile is kept unread until `resume()`. A connection uses it to stop
 * reading in the middle of a chunk of pipelined requests once its output is full.
 */
import { badFrameEndError, frameTooLargeError, unknownFrameError } from './frame-errors.js';
import { readU16, readU32 } from './wire.js';

export const FRAME_METHOD = 1;
export const FRAME_HEADER = 2;
export const FRAME_BODY = 3;
export const FRAME_HEARTBEAT = 8;
export const FRAME_END = 0xce;

const EMPTY = Buffer.alloc(0);

export type FrameHandler = (type: number, channel: number, payload: Buffer) => void;

/**
 * Offered each frame before onFrame, its payload as buf[start, end) (no Buffer of its own):
 * returns true when it handled the frame, false to have it delivered to onFrame as usual. It
 * may only take frames analyzeFrame accepts.
 */
export type RawFrameHandler = (type: number, channel: number, buf: Buffer, start: number, end: number) => boolean;

/** Throws RabbitMQ's 501 unknown_frame error for frames analyze_frame rejects. */
export function analyzeFrame(type: number, payload: Buffer): void {
  switch (type) {
    case FRAME_METHOD:
      if (payload.length < 4) throw unknownFrameError(type, payload);
      return;
    case FRAME_HEADER:
      if (payload.length < 12) throw unknownFrameError(type, payload);
      return;
    case FRAME_BODY:
      return;
    case FRAME_HEARTBEAT:
      if (payload.length !== 0) throw unknownFrameError(type, payload);
      return;
    default:
      throw unknownFrameError(type, payload);
  }
}

export class FrameReader {
  /** Largest frame accepted, including the 8 octets of header and frame-end; 0 = no limit. */
  frameMax: number;
  /** Check frame types and minimum payload sizes (see analyzeFrame). */
  validate = true;
  /** Set after a FatalFrameError: the stream is out of sync and further input is ignored. */
  failed = false;
  /** Tried first for every frame (see RawFrameHandler); errors it throws are onFrame's. */
  rawHandler: RawFrameHandler | undefined;

  /**
   * Bytes of an incomplete frame: fewer than 7 octets of its header, or (need > 0) less than all
   * of it. They are references to the fed chunks (not copies): do not modify a chunk after
   * feeding it.
   */
  private parts: Buffer[] = [];
  private partBytes = 0;
  /** Total size (payload + 8) of the frame being assembled, once its header is known. */
  private need = 0;
  /** After a throw or pause mid-chunk, `parts` holds the unread rest, which may hold several frames. */
  private backlog = false;
  private paused = false;
  /** feed() is running (resume() from inside onFrame must not start a second one). */
  private feeding = false;

  constructor(frameMax: number) {
    this.frameMax = frameMax;
  }

  /** Bytes held back waiting for the rest of a frame. */
  get bufferedBytes(): number {
    return this.partBytes;
  }

  /**
   * Feeds bytes and calls onFrame for each complete frame, synchronously. When onFrame or the
   * frame checks throw, the bytes after that frame are kept: feed again (even an empty Buffer)
   * to go on from there.
   */
  feed(chunk: Buffer, onFrame: FrameHandler): void {
    if (this.failed) return;
    if (this.paused) {
      this.keep(chunk);
      return;
    }
    this.feeding = true;
    try {
      this.read(chunk, onFrame);
    } finally {
      this.feeding = false;
    }
  }

  /** Called from onFrame: no frame after the current one is delivered until resume(). */
  pause(): void {
    this.paused = true;
  }

  get isPaused(): boolean {
    return this.paused;
  }

  /** Delivers the frames kept since pause(), then reads on as before. */
  resume(onFrame: FrameHandler): void {
    if (!this.paused) return;
    this.paused = false;
    // Inside onFrame, the feed() that delivered it simply goes on.
    if (!this.feeding) this.feed(EMPTY, onFrame);
  }

  /** Holds input unread while paused. */
  private keep(chunk: Buffer): void {
    if (chunk.length === 0) return;
    // The bytes of a frame in progress are the start of the backlog: parts are raw input.
    this.backlog = true;
    this.parts.push(chunk);
    this.partBytes += chunk.length;
  }

  private read(chunk: Buffer, onFrame: FrameHandler): void {
    let buf = chunk;
    let off = 0;
    if (this.backlog) {
      buf = this.parts.length === 0 ? chunk : Buffer.concat([...this.parts, chunk]);
      this.reset();
    } else if (this.partBytes > 0) {
      // Finish the frame in progress first.
      if (this.need === 0) {
        const take = Math.min(7 - this.partBytes, buf.length);
        this.parts.push(buf.subarray(0, take));
        this.partBytes += take;
        off = take;
        if (this.partBytes < 7) return;
        const head = Buffer.concat(this.parts, 7);
        this.parts = [head];
        this.checkSize(head, 0);
        this.need = readU32(head, 3) + 8;
      }
      const take = Math.min(this.need - this.partBytes, buf.length - off);
      if (take > 0) {
        this.parts.push(buf.subarray(off, off + take));
        this.partBytes += take;
        off += take;
      }
      if (this.partBytes < this.need) return;
      const frame = Buffer.concat(this.parts, this.need);
      this.reset();
      if (!this.deliver(frame, 0, frame.length, buf, off, onFrame)) return;
    }
    const len = buf.length;
    while (off + 7 <= len) {
      this.checkSize(buf, off);
      const end = off + 8 + readU32(buf, off + 3);
      if (end > len) break;
      const start = off;
      off = end;
      if (!this.deliver(buf, start, end, buf, off, onFrame)) return;
    }
    if (off < len) {
      this.parts = [buf.subarray(off)];
      this.partBytes = len - off;
      this.need = this.partBytes >= 7 ? readU32(buf, off + 3) + 8 : 0;
    }
  }

  private reset(): void {
    this.parts = [];
    this.partBytes = 0;
    this.need = 0;
    this.backlog = false;
  }

  private checkSize(buf: Buffer, off: number): void {
    const size = readU32(buf, off + 3);
    if (this.frameMax !== 0 && size > this.frameMax) {
      this.failed = true;
      this.reset();
      throw frameTooLargeError(buf[off]!, size, this.frameMax);
    }
  }

  /**
   * Checks the frame in buf[start, end) and hands it over; if that throws or pauses the reader,
   * keeps rest[restOff..] and returns false.
   */
  private deliver(buf: Buffer, start: number, end: number, rest: Buffer, restOff: number, onFrame: FrameHandler): boolean {
    const type = buf[start]!;
    const marker = buf[end - 1]!;
    if (marker !== FRAME_END) {
      this.failed = true;
      this.reset();
      throw badFrameEndError(type, buf.subarray(start + 7, end - 1), marker);
    }
    try {
      const channel = readU16(buf, start + 1);
      const raw = this.rawHandler;
      if (raw === undefined || !raw(type, channel, buf, start + 7, end - 1)) {
        const payload = buf.subarray(start + 7, end - 1);
        if (this.validate) analyzeFrame(type, payload);
        onFrame(type, channel, payload);
      }
    } catch (e) {
      if (!this.failed) this.keepRest(rest, restOff);
      throw e;
    }
    if (!this.paused) return true;
    this.keepRest(rest, restOff);
    return false;
  }

  private keepRest(rest: Buffer, restOff: number): void {
    if (restOff >= rest.length) return;
    this.parts = [rest.subarray(restOff)];
    this.partBytes = rest.length - restOff;
    this.need = 0;
    this.backlog = true;
  }
}
