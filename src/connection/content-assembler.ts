import { preconditionFailed, unexpectedFrame, type ConnectionError } from '../errors.js';
import type { BasicPublishArgs } from '../frame/generated/methods.js';
import { readBodySize } from '../frame/generated/properties.js';

/** A content method with its header and whole body. */
export interface Content {
  classId: number;
  methodId: number;
  /** basic.publish's arguments; undefined for a content method clients may not send. */
  args: BasicPublishArgs | undefined;
  header: Buffer;
  body: Buffer;
}

/**
 * One channel's content assembly (rabbit_command_assembler): a content-bearing method, then a
 * content header, then body frames up to the size the header announced. The frames arrive one
 * by one; header() and body() return the content once it is complete.
 */
export class ContentAssembler {
  private classId = 0;
  private methodId = 0;
  private args: BasicPublishArgs | undefined;
  private started = false;
  private header: Buffer | null = null;
  private bodySize = 0;
  private received = 0;
  private chunks: Buffer[] = [];

  constructor(private readonly maxMessageSize: number) {}

  /** A content method was seen: its header and body frames are expected next. */
  get pending(): boolean {
    return this.started;
  }

  /** A content method arrived; args is undefined when the content will be refused once whole. */
  start(classId: number, methodId: number, args: BasicPublishArgs | undefined): void {
    this.reset();
    this.started = true;
    this.classId = classId;
    this.methodId = methodId;
    this.args = args;
  }

  /** Forgets any content in progress (the channel closes). */
  reset(): void {
    this.started = false;
    this.args = undefined;
    this.header = null;
    this.bodySize = 0;
    this.received = 0;
    this.chunks = [];
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
    if (bodySize > this.maxMessageSize) {
      // rabbit_channel:check_msg_size, checked as soon as the size is known so an oversized
      // body is never buffered; its frames then arrive on a closing channel and are dropped.
      const { classId: c, methodId: m } = this;
      this.reset();
      throw preconditionFailed(`message size ${bodySize} is larger than configured max size ${this.maxMessageSize}`).at(c, m);
    }
    this.header = payload;
    this.bodySize = bodySize;
    return bodySize === 0 ? this.complete(Buffer.alloc(0)) : undefined;
  }

  /** A content body frame; returns the content when this frame completes the body. */
  onBody(payload: Buffer): Content | undefined {
    if (!this.started) throw noContentExpected();
    if (!this.header) throw this.unexpectedFrame();
    const received = this.received + payload.length;
    // More body than the header announced: RabbitMQ 3.10 answers as for any stray frame.
    if (received > this.bodySize) throw this.unexpectedFrame();
    this.received = received;
    if (received === this.bodySize && this.chunks.length === 0) return this.complete(payload);
    this.chunks.push(payload);
    return received === this.bodySize ? this.complete(Buffer.concat(this.chunks, received)) : undefined;
  }

  private complete(body: Buffer): Content {
    const content: Content = { classId: this.classId, methodId: this.methodId, args: this.args, header: this.header as Buffer, body };
    this.reset();
    return content;
  }
}

function noContentExpected(): ConnectionError {
  return unexpectedFrame('expected method frame, got non method frame instead');
}
