import { expect } from 'chai';
import { ConnectionError, ReplyCode } from '../../src/errors.js';
import { FatalFrameError } from '../../src/frame/frame-errors.js';
import { analyzeFrame, FRAME_BODY, FRAME_HEARTBEAT, FRAME_METHOD, FrameReader } from '../../src/frame/frame-reader.js';
import { encodeFrame, HEARTBEAT_FRAME } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { int, rng } from './helpers.js';

interface Got {
  type: number;
  channel: number;
  payload: string;
}

function collect(reader: FrameReader, chunks: Buffer[]): Got[] {
  const got: Got[] = [];
  for (const c of chunks) reader.feed(c, (type, channel, payload) => got.push({ type, channel, payload: payload.toString('hex') }));
  return got;
}

const frames = [
  encodeMethodFrame(1, 'basic.publish', { exchange: 'ex', routingKey: 'rk', mandatory: true, immediate: false }),
  encodeFrame(2, 1, Buffer.alloc(14, 1)),
  encodeFrame(3, 1, Buffer.from('hello body')),
  encodeFrame(3, 1, Buffer.alloc(0)),
  HEARTBEAT_FRAME,
  encodeFrame(3, 65535, Buffer.alloc(300, 0xab)),
];
const stream = Buffer.concat(frames);
const expected: Got[] = frames.map((f) => ({ type: f[0]!, channel: f.readUInt16BE(1), payload: f.subarray(7, f.length - 1).toString('hex') }));

function thrown(fn: () => unknown): ConnectionError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(ConnectionError);
    return e as ConnectionError;
  }
  throw new Error('did not throw');
}

describe('FrameReader (spec 4.2.3 general frame format)', () => {
  it('reads many frames from one chunk', () => {
    expect(collect(new FrameReader(0), [stream])).to.deep.equal(expected);
  });

  it('reads the stream split at every byte position (also inside the 7-octet header)', () => {
    for (let i = 0; i <= stream.length; i++) {
      expect(collect(new FrameReader(4096), [stream.subarray(0, i), stream.subarray(i)]), `split at ${i}`).to.deep.equal(expected);
    }
  });

  it('reads the stream split at every pair of positions, and byte by byte', () => {
    for (let i = 0; i < stream.length; i += 3) {
      for (let j = i; j <= stream.length; j += 5) {
        const got = collect(new FrameReader(0), [stream.subarray(0, i), stream.subarray(i, j), stream.subarray(j)]);
        expect(got, `split at ${i},${j}`).to.deep.equal(expected);
      }
    }
    const bytes = [...stream].map((b) => Buffer.from([b]));
    expect(collect(new FrameReader(0), bytes)).to.deep.equal(expected);
  });

  it('reads random chunkings of a long stream (fuzz)', () => {
    const r = rng(3);
    const many = Buffer.concat(Array.from({ length: 200 }, (_, i) => frames[i % frames.length]!));
    const want = Array.from({ length: 200 }, (_, i) => expected[i % expected.length]!);
    for (let round = 0; round < 50; round++) {
      const chunks: Buffer[] = [];
      for (let o = 0; o < many.length; ) {
        const n = 1 + int(r, 700);
        chunks.push(many.subarray(o, o + n));
        o += n;
      }
      expect(collect(new FrameReader(0), chunks)).to.deep.equal(want);
    }
  });

  it('hands out zero-copy payloads for frames inside one chunk', () => {
    const chunk = Buffer.concat([stream]);
    const reader = new FrameReader(0);
    reader.feed(chunk, (_t, _c, payload) => {
      expect(payload.buffer).to.equal(chunk.buffer);
    });
  });

  it('assembles a frame split across chunks with one copy', () => {
    const f = encodeFrame(3, 1, Buffer.alloc(100000, 7));
    const reader = new FrameReader(0);
    const got: Buffer[] = [];
    reader.feed(f.subarray(0, 3), (_t, _c, p) => got.push(p));
    reader.feed(f.subarray(3, 50000), (_t, _c, p) => got.push(p));
    expect(reader.bufferedBytes).to.equal(50000);
    reader.feed(f.subarray(50000), (_t, _c, p) => got.push(p));
    expect(got).to.have.length(1);
    expect(got[0]).to.deep.equal(Buffer.alloc(100000, 7));
    expect(reader.bufferedBytes).to.equal(0);
  });

  describe('frame errors, worded as RabbitMQ 3.10.8', () => {
    it("rejects a bad frame-end octet as a fatal 501 'invalid_frame_end_marker'", () => {
      const f = encodeFrame(1, 1, Buffer.from([0, 60, 0, 10, 0, 0, 0, 0, 0, 10, 0]));
      f[f.length - 1] = 0;
      const reader = new FrameReader(4096);
      const e = thrown(() => reader.feed(f, () => {}));
      expect(e).to.be.instanceOf(FatalFrameError);
      expect(e.replyCode).to.equal(ReplyCode.FRAME_ERROR);
      expect(e.replyText).to.equal(
        'FRAME_ERROR - type 1, all octets = <<0,60,0,10,0,0,0,0,0,10,0>>: {invalid_frame_end_marker,\n' + ' '.repeat(52) + '0}',
      );
      expect(reader.failed).to.equal(true);
      let called = false;
      reader.feed(HEARTBEAT_FRAME, () => (called = true));
      expect(called, 'input after a fatal error is ignored').to.equal(false);
    });

    it('detects a bad frame-end in a frame split across chunks', () => {
      const f = encodeFrame(3, 1, Buffer.from('abcdefghijklmnopqrstuvwxyz'));
      f[f.length - 1] = 0x41;
      const reader = new FrameReader(0);
      reader.feed(f.subarray(0, 10), () => {});
      const e = thrown(() => reader.feed(f.subarray(10), () => {}));
      expect(e.replyText).to.equal('FRAME_ERROR - type 3, first 16 octets = <<"abcdefghijklmnop">>: {invalid_frame_end_marker,\n' + ' '.repeat(51) + '65}');
    });

    it("rejects a frame larger than frame-max as soon as its header arrives ('frame_too_large')", () => {
      const reader = new FrameReader(131072);
      const e = thrown(() => reader.feed(Buffer.from([1, 0, 1, 0, 3, 0x0d, 0x40]), () => {}));
      expect(e).to.be.instanceOf(FatalFrameError);
      expect(e.replyText).to.equal('FRAME_ERROR - type 1, all octets = <<>>: {frame_too_large,200000,131064}');
    });

    it('allows a payload of up to frame-max octets (RabbitMQ allows 8 octets of slack)', () => {
      const reader = new FrameReader(4096);
      expect(collect(reader, [encodeFrame(3, 1, Buffer.alloc(4096))])).to.have.length(1);
      const e = thrown(() => reader.feed(encodeFrame(3, 1, Buffer.alloc(4097)), () => {}));
      expect(e.replyText).to.equal('FRAME_ERROR - type 3, all octets = <<>>: {frame_too_large,4097,4088}');
    });

    it('checks the size of a header split across chunks', () => {
      const reader = new FrameReader(4096);
      reader.feed(Buffer.from([3, 0, 1]), () => {});
      expect(() => reader.feed(Buffer.from([0, 1, 0, 0]), () => {})).to.throw(FatalFrameError, 'frame_too_large,65536,4088');
    });

    it('honours frameMax changed after tune and 0 = unlimited', () => {
      const reader = new FrameReader(0);
      expect(collect(reader, [encodeFrame(3, 1, Buffer.alloc(200000))])).to.have.length(1);
      reader.frameMax = 4096;
      expect(() => reader.feed(encodeFrame(3, 1, Buffer.alloc(5000)), () => {})).to.throw(FatalFrameError);
    });

    it("answers frames analyze_frame rejects with a 501 'unknown_frame' and reads on", () => {
      const reader = new FrameReader(0);
      const chunk = Buffer.concat([encodeFrame(5, 1, Buffer.from('abc')), encodeFrame(3, 1, Buffer.from('ok'))]);
      const got: string[] = [];
      const e = thrown(() => reader.feed(chunk, (_t, _c, p) => got.push(p.toString())));
      expect(e).not.to.be.instanceOf(FatalFrameError);
      expect(e.replyText).to.equal('FRAME_ERROR - type 5, all octets = <<"abc">>: unknown_frame');
      reader.feed(Buffer.alloc(0), (_t, _c, p) => got.push(p.toString()));
      expect(got).to.deep.equal(['ok']);
    });

    it('checks minimum payload sizes per frame type', () => {
      expect(() => analyzeFrame(FRAME_METHOD, Buffer.from([0, 60, 0]))).to.throw('type 1, all octets = <<0,60,0>>: unknown_frame');
      expect(() => analyzeFrame(2, Buffer.alloc(11))).to.throw('type 2, all octets');
      expect(() => analyzeFrame(FRAME_HEARTBEAT, Buffer.from([1]))).to.throw('FRAME_ERROR - type 8, all octets = <<1>>: unknown_frame');
      expect(() => analyzeFrame(FRAME_BODY, Buffer.alloc(0))).not.to.throw();
      const reader = new FrameReader(0);
      reader.validate = false;
      expect(collect(reader, [encodeFrame(9, 0, Buffer.alloc(0))])).to.deep.equal([{ type: 9, channel: 0, payload: '' }]);
    });

    it('keeps the rest of the chunk when the frame handler throws', () => {
      const reader = new FrameReader(0);
      const got: number[] = [];
      expect(() =>
        reader.feed(stream, (type) => {
          got.push(type);
          if (got.length === 2) throw new ConnectionError(ReplyCode.COMMAND_INVALID, 'boom');
        }),
      ).to.throw('boom');
      reader.feed(Buffer.alloc(0), (type) => got.push(type));
      expect(got).to.deep.equal(frames.map((f) => f[0]));
    });
  });

  describe('pause and resume (a connection whose output is full stops reading mid-chunk)', () => {
    it('delivers nothing after the frame that paused it until resume, at any chunking', () => {
      const r = rng(7);
      for (let round = 0; round < 200; round++) {
        const chunks: Buffer[] = [];
        for (let o = 0; o < stream.length;) {
          const n = Math.min(stream.length - o, 1 + int(r, 40));
          chunks.push(stream.subarray(o, o + n));
          o += n;
        }
        const reader = new FrameReader(0);
        const got: Got[] = [];
        const pauseAt = 1 + int(r, frames.length - 1);
        const onFrame = (type: number, channel: number, payload: Buffer): void => {
          got.push({ type, channel, payload: payload.toString('hex') });
          if (got.length === pauseAt) reader.pause();
        };
        for (const c of chunks) reader.feed(c, onFrame);
        expect(got, `round ${round}`).to.deep.equal(expected.slice(0, pauseAt));
        expect(reader.isPaused).to.equal(true);
        reader.resume(onFrame);
        expect(got, `round ${round}`).to.deep.equal(expected);
        expect(reader.bufferedBytes).to.equal(0);
      }
    });

    it('resume() inside the frame handler that paused just goes on', () => {
      const reader = new FrameReader(0);
      const got: number[] = [];
      const onFrame = (type: number): void => {
        got.push(type);
        reader.pause();
        reader.resume(onFrame);
      };
      reader.feed(stream, onFrame);
      expect(got).to.deep.equal(frames.map((f) => f[0]));
    });
  });
});

describe('FrameReader.rawHandler (frames handled from the input bytes)', () => {
  it('is offered every frame first, at any chunking; what it takes does not reach onFrame, in order with the rest', () => {
    const r = rng(7);
    for (let round = 0; round < 200; round++) {
      const reader = new FrameReader(0);
      const got: (Got & { raw: boolean })[] = [];
      // Takes body frames (type 3) only, reading them from the chunk's bytes.
      reader.rawHandler = (type, channel, buf, start, end) => {
        if (type !== FRAME_BODY) return false;
        got.push({ type, channel, payload: buf.toString('hex', start, end), raw: true });
        return true;
      };
      let off = 0;
      while (off < stream.length) {
        const n = Math.min(stream.length - off, 1 + int(r, 80));
        reader.feed(stream.subarray(off, off + n), (type, channel, payload) => got.push({ type, channel, payload: payload.toString('hex'), raw: false }));
        off += n;
      }
      expect(got.map(({ raw: _, ...g }) => g), `round ${round}`).to.deep.equal(expected);
      expect(got.filter((g) => g.raw).map((g) => g.type)).to.deep.equal([FRAME_BODY, FRAME_BODY, FRAME_BODY]);
    }
  });

  it('pauses after the frame it handled, and keeps the rest for resume', () => {
    const reader = new FrameReader(0);
    const got: number[] = [];
    reader.rawHandler = (type) => {
      if (type !== FRAME_BODY) return false;
      got.push(type);
      reader.pause();
      return true;
    };
    const onFrame = (type: number): void => {
      got.push(type);
    };
    reader.feed(stream, onFrame);
    expect(got).to.deep.equal([FRAME_METHOD, 2, FRAME_BODY]);
    reader.resume(onFrame);
    expect(got).to.deep.equal([FRAME_METHOD, 2, FRAME_BODY, FRAME_BODY]);
    reader.resume(onFrame);
    expect(got).to.deep.equal([FRAME_METHOD, 2, FRAME_BODY, FRAME_BODY, FRAME_HEARTBEAT, FRAME_BODY]);
  });
});
