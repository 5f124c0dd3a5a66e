import { expect } from 'chai';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { encodeFrame, FrameWriter, HEARTBEAT_FRAME, type FrameSink } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';

/** Records writes. */
class Sink implements FrameSink {
  writes: Buffer[] = [];
  write(chunk: Buffer): boolean {
    this.writes.push(chunk);
    return true;
  }
  /** Everything written so far, as one buffer. */
  get all(): Buffer {
    return Buffer.concat(this.writes);
  }
}

/** A scheduler the test runs by hand: one "tick" = run(). */
function manual(): { schedule: (fn: () => void) => void; run: () => void; pending: () => number } {
  let q: Array<() => void> = [];
  return {
    schedule: (fn) => void q.push(fn),
    run: () => {
      const fns = q;
      q = [];
      for (const f of fns) f();
    },
    pending: () => q.length,
  };
}

function parse(buf: Buffer): Array<{ type: number; channel: number; payload: Buffer }> {
  const out: Array<{ type: number; channel: number; payload: Buffer }> = [];
  new FrameReader(0).feed(buf, (type, channel, payload) => out.push({ type, channel, payload }));
  return out;
}

const deliver = encodeMethodFrame(1, 'basic.deliver', { consumerTag: 'c', deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'q' });
const header = encodeContentHeaderPayload(60, 10, { contentType: 'text/plain' });

describe('FrameWriter', () => {
  it('coalesces every frame written in one tick into one sink.write', () => {
    const sink = new Sink();
    const tick = manual();
    const w = new FrameWriter(sink, 4096, tick.schedule);
    for (let i = 0; i < 100; i++) w.write(HEARTBEAT_FRAME);
    w.writeContent(1, deliver, header, Buffer.from('0123456789'));
    expect(sink.writes).to.have.length(0);
    expect(tick.pending()).to.equal(1);
    expect(w.pendingBytes).to.equal(800 + deliver.length + header.length + 8 + 18);
    tick.run();
    expect(sink.writes).to.have.length(1);
    expect(w.pendingBytes).to.equal(0);
    const frames = parse(sink.writes[0]!);
    expect(frames).to.have.length(103);
    expect(frames[101]).to.deep.include({ type: 2, channel: 1 });
    expect(frames[101]!.payload).to.deep.equal(header);
    expect(frames[102]!.payload.toString()).to.equal('0123456789');
  });

  it('flushes by default on setImmediate', async () => {
    const sink = new Sink();
    const w = new FrameWriter(sink, 4096);
    w.write(HEARTBEAT_FRAME);
    w.write(HEARTBEAT_FRAME);
    await Promise.resolve();
    expect(sink.writes).to.have.length(0);
    await new Promise((r) => setImmediate(r));
    expect(sink.writes).to.have.length(1);
    expect(sink.writes[0]).to.have.length(16);
  });

  it('splits bodies into frames of at most frameMax - 8 octets (spec 4.2.6.2), none for an empty body', () => {
    for (const frameMax of [4096, 131072]) {
      const max = frameMax - 8;
      for (const size of [0, 1, max - 1, max, max + 1, 2 * max, 2 * max + 1, 5 * max + 17]) {
        const sink = new Sink();
        const w = new FrameWriter(sink, frameMax, () => {});
        const body = Buffer.alloc(size);
        for (let i = 0; i < size; i++) body[i] = i & 0xff;
        w.writeContent(3, deliver, header, body);
        w.flush();
        const frames = parse(sink.all);
        const bodies = frames.slice(2);
        expect(bodies.length, `size ${size}`).to.equal(Math.ceil(size / max));
        for (const b of bodies) {
          expect(b.type).to.equal(3);
          expect(b.channel).to.equal(3);
          expect(b.payload.length).to.be.at.most(max);
        }
        expect(Buffer.concat(bodies.map((b) => b.payload))).to.deep.equal(body);
      }
    }
  });

  it('keeps the frames of one content contiguous and in order with other writes', () => {
    const sink = new Sink();
    const w = new FrameWriter(sink, 4096, () => {});
    w.write(HEARTBEAT_FRAME);
    w.writeContent(1, deliver, header, Buffer.alloc(10000));
    w.write(encodeFrame(1, 2, Buffer.from([0, 20, 0, 11, 0, 0, 0, 0])));
    w.flush();
    expect(sink.writes).to.have.length(1);
    expect(parse(sink.all).map((f) => `${f.type}/${f.channel}`)).to.deep.equal(['8/0', '1/1', '2/1', '3/1', '3/1', '3/1', '1/2']);
    // Bodies of several frames of a larger frame_max keep their order with the frames around them.
    w.frameMax = 131072;
    w.write(HEARTBEAT_FRAME);
    w.writeContent(1, deliver, header, Buffer.alloc(300000, 7));
    w.write(HEARTBEAT_FRAME);
    sink.writes = [];
    w.flush();
    const frames = parse(sink.all);
    expect(frames.map((f) => `${f.type}/${f.payload.length}`)).to.deep.equal(
      ['8/0', `1/${deliver.length - 8}`, `2/${header.length}`, '3/131064', '3/131064', `3/${300000 - 2 * 131064}`, '8/0']);
  });

  it('reports an error thrown by a scheduled flush to onError instead of the event loop', () => {
    const tick = manual();
    const sink: FrameSink = {
      write() {
        throw new Error('sink broke');
      },
    };
    const w = new FrameWriter(sink, 4096, tick.schedule);
    const errors: unknown[] = [];
    w.onError = (err) => errors.push(err);
    w.write(HEARTBEAT_FRAME);
    expect(() => tick.run()).not.to.throw();
    expect(errors.map((e) => (e as Error).message)).to.deep.equal(['sink broke']);
  });

  it('drops queued output on discard() and ignores later writes', () => {
    const sink = new Sink();
    const w = new FrameWriter(sink, 4096, () => {});
    w.writeContent(1, deliver, header, Buffer.alloc(100));
    w.discard();
    w.write(HEARTBEAT_FRAME);
    w.flush();
    expect(w.pendingBytes).to.equal(0);
    expect(sink.writes).to.have.length(0);
  });

  it('encodeFrame wraps a payload', () => {
    expect(encodeFrame(3, 258, Buffer.from('ab'))).to.deep.equal(Buffer.from([3, 1, 2, 0, 0, 0, 2, 0x61, 0x62, 0xce]));
    expect(HEARTBEAT_FRAME).to.deep.equal(Buffer.from([8, 0, 0, 0, 0, 0, 0, 0xce]));
  });
});
