import { preconditionFailed, unexpectedFrame, type ConnectionError } from '../errors.js';
import { readBodySize } from '../frame/generated/properties.js';
import { keepBody, type BodyRange } from '../queue/kept-body.js';

/** What publishing needs of a basic.publish method (BasicPublishArgs has these and more). */
export interface PublishMethod {
  readonly exchange: string;
  readonly routingKey: string;
  readonly mandatory: boolean;
}

/**
 * A content method with its header and whole body (bodyMemory[bodyOffset, bodyOffset +
 * bodySize), kept: see kept-body.ts). The assembler hands out the same object for each content
 * it completes: read it before the next frame.
 */
export interface Content extends BodyRange {
  classId: number;
  methodId: number;
  /** basic.publish's arguments; undefined for a content method clients may not send. */
  args: PublishMethod | undefined;
  header: Buffer;
}

/** The basic.publish in progress, when startPublish gave its fields (reused: see Content). */
interface MutablePublish {
  exchange: string;
  routingKey: string;
  mandatory: boolean;
}

const EMPTY = Buffer.alloc(0);

/** The smallest body buffer allocated for a body that arrives in several frames. */
const MIN_CAPACITY = 4096;

/**
 * One channel's content assembly (rabbit_command_assembler): a content-bearing method, then a
 * content header, then body frames up to the size the header announced. The frames arrive one
 * by one; header() and body() return the content once it is complete.
 *
 * A body that arrives in one frame is passed on as that frame (zero-copy) unless it is small
 * beside the chunk it arrived in: then it is copied out (keepBody), so a kept message never pins
 * a large chunk; every body it hands out is kept already. A body in several
 * frames is copied into one buffer that grows by doubling, up to the announced size but never
 * beyond twice what has arrived: memory stays within a small factor of the bytes received,
 * however small the frames (no Buffer is kept per frame) and whatever size the header announced.
 */
export class ContentAssembler {
  private classId = 0;
  private methodId = 0;
  private args: PublishMethod | undefined;
  private readonly publishMethod: MutablePublish = { exchange: '', routingKey: '', mandatory: false };
  private readonly completed: Content = {
    classId: 0, methodId: 0, args: undefined, header: EMPTY, bodyMemory: EMPTY, bodyOffset: 0, bodySize: 0,
  };
  private started = false;
  private header: Buffer | null = null;
  private bodySize = 0;
  private received = 0;
  /** The body so far when it takes more than one frame; received bytes are filled. */
  private buffer: Buffer | null = null;
  /** The body is over maxMessageSize: its frames are counted, not kept. */
  private oversized = false;

  constructor(private readonly maxMessageSize: number) {}

  /** A content method was seen: its header and body frames are expected next. */
  get pending(): boolean {
    return this.started;
  }

  /** Bytes of body held while the content is incomplete. */
  get bufferedBytes(): number {
    return this.buffer ? this.buffer.length : 0;
  }

  /** A content method arrived; args is undefined when the content will be refused once whole. */
  start(classId: number, methodId: number, args: PublishMethod | undefined): void {
    this.reset();
    this.started = true;
    this.classId = classId;
    this.methodId = methodId;
    this.args = args;
  }

  /** A basic.publish arrived (start(60, 40, args) without an args object of its own). */
  startPublish(exchange: string, routingKey: string, mandatory: boolean): void {
    const m = this.publishMethod;
    m.exchange = exchange;
    m.routingKey = routingKey;
    m.mandatory = mandatory;
    this.start(60, 40, m);
  }

  /** Lets go of the completed content's buffers once it has been handled (the message holds its own). */
  release(): void {
    const c = this.completed;
    c.header = EMPTY;
    c.bodyMemory = EMPTY;
    c.args = undefined;
  }

  /** Forgets any content in progress (the channel closes). */
  reset(): void {
    this.started = false;
    this.args = undefined;
    this.header = null;
    this.bodySize = 0;
    this.received = 0;
    this.buffer = null;
    this.oversized = false;
  }

  /** rabbit_command_assembler's 505 for a frame that does not continue the pending content. */
  unexpectedFrame(): ConnectionError {
    const text = this.header
      ? 'expected content body, got non content body frame instead'
      : `expected content header for class ${this.classId}, got non content header frame instead`;
    return unexpectedFrame(text).at(this.classId, this.methodId);
  }

  /** A content header frame; returns the content when the body is empty. */
  onHeader(payload: Buffer): Content | undefined {
    if (!this.started) throw noContentExpected();
    if (this.header) throw this.unexpectedFrame();
    const classId = payload.readUInt16BE(0);
    const weight = payload.readUInt16BE(2);
    // rabbit_command_assembler: a non-zero weight is not a content header at all.
    if (weight !== 0) throw this.unexpectedFrame();
    if (classId !== this.classId) {
      throw unexpectedFrame(`expected content header for class ${this.classId}, got one for class ${classId} instead`).at(this.classId, this.methodId);
    }
    const bodySize = readBodySize(payload);
    this.header = payload;
    this.bodySize = bodySize;
    // rabbit_channel:check_msg_size runs on the whole content, as basic.publish is handled: an
    // oversized body is awaited as any other (a method meanwhile is 505), but never kept.
    this.oversized = bodySize > this.maxMessageSize;
    return bodySize === 0 ? this.completeWith(EMPTY, 0) : undefined;
  }

  /** A content body frame; returns the content when this frame completes the body. */
  onBody(payload: Buffer): Content | undefined {
    return this.onBodyAt(payload, 0, payload.length);
  }

  /**
   * A content body frame whose payload is buf[start, end) (the connection hands it over without
   * a Buffer of its own); returns the content when this frame completes the body.
   */
  onBodyAt(buf: Buffer, start: number, end: number): Content | undefined {
    if (!this.started) throw noContentExpected();
    if (!this.header) throw this.unexpectedFrame();
    const n = end - start;
    const received = this.received + n;
    // More body than the header announced: RabbitMQ 3.10 answers as for any stray frame.
    if (received > this.bodySize) throw this.unexpectedFrame();
    if (this.oversized) {
      this.received = received;
      if (received < this.bodySize) return undefined;
      const { classId: c, methodId: m } = this;
      this.reset();
      throw preconditionFailed(`message size ${received} is larger than configured max size ${this.maxMessageSize}`).at(c, m);
    }
    if (received === this.bodySize && this.buffer === null) {
      keepBody(buf, start, end, this.completed);
      return this.complete();
    }
    if (n > 0) {
      const buffer = this.reserve(received);
      buf.copy(buffer, this.received, start, end);
    }
    this.received = received;
    return received === this.bodySize ? this.completeWith(this.buffer as Buffer, received) : undefined;
  }

  /**
   * The body buffer, grown to hold `needed` bytes: doubled (at least MIN_CAPACITY), capped at
   * the announced size, so it is exactly bodySize long once the last frame fits.
   */
  private reserve(needed: number): Buffer {
    const old = this.buffer;
    if (old && old.length >= needed) return old;
    const capacity = Math.min(this.bodySize, Math.max(needed, 2 * (old?.length ?? 0), MIN_CAPACITY));
    // Its own memory (not a slice of the shared pool), so the finished body pins nothing else.
    const grown = Buffer.allocUnsafeSlow(capacity);
    if (old) old.copy(grown, 0, 0, this.received);
    this.buffer = grown;
    return grown;
  }

  /** The content, its body the first bodySize octets of bodyMemory. */
  private completeWith(bodyMemory: Buffer, bodySize: number): Content {
    const content = this.completed;
    content.bodyMemory = bodyMemory;
    content.bodyOffset = 0;
    content.bodySize = bodySize;
    return this.complete();
  }

  /** The content, its body set already (keepBody or completeWith). */
  private complete(): Content {
    const content = this.completed;
    content.classId = this.classId;
    content.methodId = this.methodId;
    content.args = this.args;
    content.header = this.header as Buffer;
    this.reset();
    return content;
  }
}

function noContentExpected(): ConnectionError {
  return unexpectedFrame('expected method frame, got non method frame instead');
}
