import { expect } from 'chai';
import { AmqpError, ChannelError, ConnectionError } from '../../src/errors.js';
import type { BasicPublishArgs } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { ContentAssembler, type Content } from '../../src/connection/content-assembler.js';

const MiB = 1024 * 1024;
const args: BasicPublishArgs = { reserved1: 0, exchange: 'x', routingKey: 'k', mandatory: false, immediate: false };

function header(bodySize: number, change: { classId?: number; weight?: number } = {}): Buffer {
  const h = encodeContentHeaderPayload(60, bodySize, { contentType: 'text/plain' });
  if (change.classId !== undefined) h.writeUInt16BE(change.classId, 0);
  if (change.weight !== undefined) h.writeUInt16BE(change.weight, 2);
  return h;
}

/** The body of a completed content, as a view. */
function bodyOf(c: Content | undefined): Buffer | undefined {
  return c?.bodyMemory.subarray(c.bodyOffset, c.bodyOffset + c.bodySize);
}

function started(maxMessageSize = 128 * MiB): ContentAssembler {
  const a = new ContentAssembler(maxMessageSize);
  a.start(60, 40, args);
  return a;
}

/** The AMQP error fn throws, as the fields a close frame would carry. */
function thrown(fn: () => unknown): { kind: string; replyCode: number; replyText: string; classId: number; methodId: number } {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof AmqpError)) throw err;
    const { replyCode, replyText, classId, methodId } = err;
    return { kind: err instanceof ChannelError ? 'channel' : err instanceof ConnectionError ? 'connection' : '?', replyCode, replyText, classId, methodId };
  }
  throw new Error('nothing thrown');
}

describe('ContentAssembler: method → header → body (rabbit_command_assembler)', () => {
  it('completes content with an empty body at the header, and with the body at its last frame', () => {
    const a = started();
    const empty = a.onHeader(header(0));
    expect(empty?.bodySize).to.equal(0);
    expect(empty?.args).to.equal(args);
    expect(a.pending).to.equal(false);

    a.start(60, 40, args);
    expect(a.onHeader(header(5))).to.equal(undefined);
    expect(a.onBody(Buffer.from('he'))).to.equal(undefined);
    expect(a.pending).to.equal(true);
    const c = a.onBody(Buffer.from('llo'));
    expect(bodyOf(c)?.toString()).to.equal('hello');
    expect(c).to.include({ classId: 60, methodId: 40 });
    expect(a.pending).to.equal(false);
  });

  it('passes a body that arrives in one frame on as that frame (zero-copy)', () => {
    const a = started();
    const h = header(3);
    a.onHeader(h);
    const frame = Buffer.allocUnsafeSlow(3).fill('abc');
    const c = a.onBody(frame);
    expect(c).to.include({ bodyMemory: frame, bodyOffset: 0, bodySize: 3 });
    expect(c?.header).to.equal(h);
    // Most of the chunk it arrived in: that range of it.
    const chunk = Buffer.alloc(1000, 'b');
    a.start(60, 40, args);
    a.onHeader(header(600));
    expect(a.onBodyAt(chunk, 300, 900)).to.include({ bodyMemory: chunk, bodyOffset: 300, bodySize: 600 });
  });

  it('copies a body small beside the chunk it arrived in out of it (keepBody), small ones into a shared slab', () => {
    const a = started();
    const chunk = Buffer.alloc(65536, 'c');
    chunk.write('0123456789abcdef', 1000);
    chunk.write('ghijklmnopqrstuv', 2000);
    a.onHeader(header(16));
    const first = a.onBodyAt(chunk, 1000, 1016)!;
    const { bodyMemory: memory, bodyOffset: offset } = first;
    a.start(60, 40, args);
    a.onHeader(header(16));
    const { bodyMemory: memory2, bodyOffset: offset2 } = a.onBodyAt(chunk, 2000, 2016)!;
    chunk.fill(0);
    expect(memory.toString('latin1', offset, offset + 16)).to.equal('0123456789abcdef');
    expect(memory2.toString('latin1', offset2, offset2 + 16)).to.equal('ghijklmnopqrstuv');
    // A shared 8 KiB slab, not a buffer per body nor the chunk.
    for (const m of [memory, memory2]) {
      expect(m.buffer).to.not.equal(chunk.buffer);
      expect(m.length).to.equal(8192);
    }
    // A body of half a slab or more gets memory of its own, exactly its size.
    a.start(60, 40, args);
    a.onHeader(header(5000));
    const large = a.onBodyAt(chunk, 10000, 15000)!;
    expect(large.bodyMemory.buffer).to.not.equal(chunk.buffer);
    expect(large).to.include({ bodyOffset: 0, bodySize: 5000 });
    expect(large.bodyMemory.length).to.equal(5000);
  });

  it('answers frames that do not continue the content with 505, naming the content method', () => {
    expect(thrown(() => new ContentAssembler(1000).onHeader(header(1)))).to.deep.equal({
      kind: 'connection', replyCode: 505, replyText: 'UNEXPECTED_FRAME - expected method frame, got non method frame instead', classId: 0, methodId: 0,
    });
    expect(thrown(() => new ContentAssembler(1000).onBody(Buffer.from('x')))).to.include({
      replyCode: 505, replyText: 'UNEXPECTED_FRAME - expected method frame, got non method frame instead',
    });
    const noHeader = { kind: 'connection', replyCode: 505, replyText: 'UNEXPECTED_FRAME - expected content header for class 60, got non content header frame instead', classId: 60, methodId: 40 };
    expect(thrown(() => started().onBody(Buffer.from('x')))).to.deep.equal(noHeader);
    expect(thrown(() => { throw started().unexpectedFrame(); })).to.deep.equal(noHeader);
    expect(thrown(() => started().onHeader(header(1, { weight: 1 })))).to.deep.equal(noHeader);
    expect(thrown(() => started().onHeader(header(1, { classId: 50 })))).to.deep.equal({
      ...noHeader, replyText: 'UNEXPECTED_FRAME - expected content header for class 60, got one for class 50 instead',
    });

    const noBody = { ...noHeader, replyText: 'UNEXPECTED_FRAME - expected content body, got non content body frame instead' };
    const a = started();
    a.onHeader(header(2));
    expect(thrown(() => { throw a.unexpectedFrame(); })).to.deep.equal(noBody);
    expect(thrown(() => a.onHeader(header(2)))).to.deep.equal(noBody);
    a.onBody(Buffer.from('x'));
    // More body than the header announced.
    expect(thrown(() => a.onBody(Buffer.from('yz')))).to.deep.equal(noBody);
  });

  it('names the content method it was started with (a content method clients may not send)', () => {
    const a = new ContentAssembler(1000);
    a.start(60, 50, undefined);
    expect(thrown(() => a.onBody(Buffer.from('x')))).to.include({ classId: 60, methodId: 50 });
    const b = new ContentAssembler(1000);
    b.start(60, 50, undefined);
    const c = b.onHeader(header(0));
    expect(c).to.include({ classId: 60, methodId: 50, args: undefined });
  });

  it('refuses a body over maxMessageSize with 406 once it has all arrived (RabbitMQ checks the whole content), keeping none of it', () => {
    const a = started(1000);
    expect(a.onHeader(header(1001))).to.equal(undefined);
    expect(a.onBody(Buffer.alloc(600))).to.equal(undefined);
    expect(a.bufferedBytes).to.equal(0);
    expect(thrown(() => a.onBody(Buffer.alloc(401)))).to.deep.equal({
      kind: 'channel', replyCode: 406, replyText: 'PRECONDITION_FAILED - message size 1001 is larger than configured max size 1000', classId: 60, methodId: 40,
    });
    expect(a.pending).to.equal(false);
    // A method before the body is whole is the 505 of any unfinished content.
    const b = started(1000);
    b.onHeader(header(5000));
    expect(thrown(() => { throw b.unexpectedFrame(); })).to.include({ replyCode: 505 });
    const d = started(1000);
    expect(d.onHeader(header(1000))).to.equal(undefined);
  });
});

describe('ContentAssembler memory (issue 10: one Buffer per body frame)', () => {
  /**
   * Sends body as frames of frameSize bytes, each a view into one reused "socket chunk" that is
   * overwritten after every frame, as a FrameReader's input would be if its chunks were recycled.
   * A frame the assembler kept by reference would come out corrupted.
   */
  function sendInFrames(a: ContentAssembler, body: Buffer, frameSize: number, check: (received: number) => void): Buffer | undefined {
    const chunk = Buffer.alloc(64 * 1024);
    let result: Buffer | undefined;
    for (let off = 0; off < body.length; off += frameSize) {
      const n = Math.min(frameSize, body.length - off);
      body.copy(chunk, 100, off, off + n);
      const c = a.onBody(chunk.subarray(100, 100 + n));
      chunk.fill(0xee, 100, 100 + n);
      if (c) result = bodyOf(c);
      check(off + n);
    }
    return result;
  }

  for (const frameSize of [1, 7, 1000]) {
    it(`holds a 1 MiB body sent in ${frameSize}-byte frames in at most twice its bytes so far, keeping no frame`, () => {
      const body = Buffer.alloc(MiB);
      for (let i = 0; i < body.length; i++) body[i] = (i * 31 + (i >> 8)) & 0xff;
      const a = started();
      a.onHeader(header(body.length));
      let most = 0;
      const result = sendInFrames(a, body, frameSize, (received) => {
        if (received === body.length) return;
        const held = a.bufferedBytes;
        most = Math.max(most, held);
        if (held > 2 * received + 4096) expect.fail(`${held} bytes held after ${received} received`);
      });
      expect(result && result.equals(body), 'assembled body').to.equal(true);
      expect(most, 'bytes held just before the end').to.be.at.least(MiB / 2);
      // Its own memory of exactly the body's size: it pins nothing else and needs no compaction.
      expect(result!.buffer.byteLength).to.equal(MiB);
      expect(a.bufferedBytes).to.equal(0);
    });
  }

  it('does not allocate the announced size for a 128 MiB header followed by a few bytes', () => {
    const a = started();
    a.onHeader(header(128 * MiB));
    for (let i = 0; i < 10; i++) a.onBody(Buffer.from([i]));
    expect(a.bufferedBytes).to.be.at.most(4096);
    a.reset();
    expect(a.bufferedBytes).to.equal(0);
    expect(a.pending).to.equal(false);
  });
});
