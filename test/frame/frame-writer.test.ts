import { expect } from 'chai';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { COPY_LIMIT, encodeFrame, FrameWriter, HEARTBEAT_FRAME, KEEP_TAIL, MAX_TAIL, SINK_LIMIT, type FrameSink } from '../../src/frame/frame-writer.js';
import { basicDeliverPrefix, encodeBasicDeliver } from '../../src/frame/fast.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';

/** Records writes; `holds` makes it keep what it is given unsent, like a socket whose peer does not read. */
class Sink implements FrameSink {
  writes: Buffer[] = [];
  holds = false;
  writableLength = 0;
  corked = 0;
  /** Whether the sink was corked at each write. */
  whileCorked: boolean[] = [];
  write(chunk: Buffer): boolean {
    this.writes.push(chunk);
    this.whileCorked.push(this.corked > 0);
    if (this.holds) this.writableLength += chunk.length;
    return this.writableLength < 16384;
  }
  cork(): void {
    this.corked++;
  }
  uncork(): void {
    this.corked--;
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
  it('coalesces every frame written in one tick into one batch, and a tick like the last into one sink.write', () => {
    const sink = new Sink();
    const tick = manual();
    const w = new FrameWriter(sink, 4096, tick.schedule);
    const queueTick = (): void => {
      for (let i = 0; i < 100; i++) w.write(HEARTBEAT_FRAME);
      w.writeContent(1, deliver, header, Buffer.from('0123456789'));
    };
    queueTick();
    expect(sink.writes).to.have.length(0);
    expect(tick.pending()).to.equal(1);
    expect(w.pendingBytes).to.equal(800 + deliver.length + header.length + 8 + 18);
    tick.run();
    // The coalescing buffers grew from a small one: one corked batch (one writev).
    expect(w.writes).to.equal(1);
    expect(sink.whileCorked.slice(1)).to.deep.equal(sink.writes.slice(1).map(() => true));
    expect(w.pendingBytes).to.equal(0);
    const frames = parse(sink.all);
    expect(frames).to.have.length(103);
    expect(frames[101]).to.deep.include({ type: 2, channel: 1 });
    expect(frames[101]!.payload).to.deep.equal(header);
    expect(frames[102]!.payload.toString()).to.equal('0123456789');
    // The next tick starts with a buffer the size of the last flush.
    sink.writes = [];
    queueTick();
    tick.run();
    expect(sink.writes).to.have.length(1);
    expect(parse(sink.writes[0]!)).to.have.length(103);
  });

  it("takes a few octets of Node's buffer pool per heartbeat of an idle connection, not a coalescing buffer", () => {
    // Pools are freed only when every buffer cut from them is collected, which an idle broker
    // seldom does: 10,000 idle connections took 18.5 KiB of RSS each with 1 KiB per heartbeat.
    const sink = new Sink();
    const w = new FrameWriter(sink, 4096, () => {});
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 20000; i++) {
      w.write(HEARTBEAT_FRAME);
      w.flush();
    }
    sink.writes = [];
    // 16 octets each: 320 KB of pools at most (1 KiB each took 20 MB).
    expect(process.memoryUsage().arrayBuffers - before).to.be.below(4 * 1024 * 1024);
  });

  it('writes a flush of one buffer uncorked, and one of several inside a single cork (one writev)', () => {
    const sink = new Sink();
    const tick = manual();
    const w = new FrameWriter(sink, 131072, tick.schedule);
    w.write(HEARTBEAT_FRAME);
    w.write(HEARTBEAT_FRAME);
    tick.run();
    expect(sink.writes).to.have.length(1);
    expect(sink.whileCorked).to.deep.equal([false]);
    expect(w.writes).to.equal(1);
    // A body over COPY_LIMIT goes by reference: the coalesced frames before it, its frame
    // header, the body, the frame end and the next frames: several writes, all corked.
    const body = Buffer.alloc(20000, 7);
    w.write(HEARTBEAT_FRAME);
    w.writeContent(1, deliver, header, body);
    w.write(HEARTBEAT_FRAME);
    tick.run();
    expect(sink.writes.length).to.be.above(2);
    expect(sink.whileCorked.slice(1)).to.deep.equal(sink.writes.slice(1).map(() => true));
    expect(sink.corked).to.equal(0);
    expect(w.writes).to.equal(2);
    const frames = parse(Buffer.concat(sink.writes.slice(1)));
    expect(frames.map((f) => f.type)).to.deep.equal([8, 1, 2, 3, 8]);
    expect(frames[3]!.payload).to.deep.equal(body);
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
    // One batch: the coalescing buffers it filled go to the sink corked (one writev).
    expect(w.writes).to.equal(1);
    expect(sink.whileCorked.slice(1)).to.deep.equal(sink.writes.slice(1).map(() => true));
    expect(parse(sink.all).map((f) => `${f.type}/${f.channel}`)).to.deep.equal(['8/0', '1/1', '2/1', '3/1', '3/1', '3/1', '1/2']);
    // Large payloads are referenced, and the frames around them keep their order too.
    w.frameMax = 131072;
    w.write(HEARTBEAT_FRAME);
    w.writeContent(1, deliver, header, Buffer.alloc(300000, 7));
    w.write(HEARTBEAT_FRAME);
    sink.writes = [];
    w.flush();
    const frames = parse(sink.all);
    expect(frames.map((f) => `${f.type}/${f.payload.length}`)).to.deep.equal(
      ['8/0', `1/${deliver.length - 8}`, `2/${header.length}`, '3/131064', '3/131064', `3/${300000 - 2 * 131064}`, '8/0']);
    expect(sink.corked).to.equal(0);
  });

  it('writeDeliver sends exactly what writeContent with encodeBasicDeliver sends, and counts the same octets', () => {
    const cases: Array<[string, number, boolean, string, string, number, number]> = [
      ['c', 1, false, '', 'q', 0, 4096],
      ['amq.ctag-ÄÖ-ü', 2 ** 40 + 3, true, 'ex.ünï', 'rk.€', 10, 4096],
      ['t', 7, false, 'fanout', '', 4088, 4096],
      ['t', 8, false, 'fanout', 'k', 4089, 4096],
      ['x'.repeat(255), 9, true, 'e'.repeat(255), 'r'.repeat(255), 300000, 131072],
      ['t', 10, false, '', 'q', COPY_LIMIT + 1, 0],
    ];
    for (const [tag, dtag, redelivered, exchange, key, size, frameMax] of cases) {
      const body = Buffer.alloc(size);
      for (let i = 0; i < size; i++) body[i] = (i * 7) & 0xff;
      const viaContent = new Sink();
      const a = new FrameWriter(viaContent, frameMax, () => {});
      const viaDeliver = new Sink();
      const b = new FrameWriter(viaDeliver, frameMax, () => {});
      // The body as a range of shared memory (a message's slab): the same frames.
      const viaRange = new Sink();
      const c = new FrameWriter(viaRange, frameMax, () => {});
      const memory = Buffer.concat([Buffer.alloc(13, 0xaa), body, Buffer.alloc(5, 0xbb)]);
      for (const w of [a, b, c]) w.write(HEARTBEAT_FRAME);
      a.writeContent(5, encodeBasicDeliver(5, tag, dtag, redelivered, exchange, key), header, body);
      b.writeDeliver(5, basicDeliverPrefix(5, tag), dtag, redelivered, exchange, key, header, body);
      c.writeDeliver(5, basicDeliverPrefix(5, tag), dtag, redelivered, exchange, key, header, memory, 13, 13 + size);
      expect(b.pendingBytes, tag).to.equal(a.pendingBytes);
      expect(c.pendingBytes, tag).to.equal(a.pendingBytes);
      expect(b.bytesWritten).to.equal(a.bytesWritten);
      for (const w of [a, b, c]) {
        w.write(HEARTBEAT_FRAME);
        w.flush();
      }
      expect(viaDeliver.all.equals(viaContent.all), `${tag} ${size}`).to.equal(true);
      expect(viaRange.all.equals(viaContent.all), `${tag} ${size} (range)`).to.equal(true);
      expect(b.pendingBytes).to.equal(0);
      expect(b.bytesWritten).to.equal(a.bytesWritten);
    }
    // A string longer than a shortstr is refused before anything is queued.
    const w = new FrameWriter(new Sink(), 4096, () => {});
    expect(() => basicDeliverPrefix(1, 'x'.repeat(256))).to.throw(/shortstr longer than 255/);
    expect(() => w.writeDeliver(1, basicDeliverPrefix(1, 'c'), 1, false, 'x'.repeat(256), 'q', header, Buffer.alloc(1))).to.throw(/shortstr longer than 255/);
    expect(() => w.writeDeliver(1, basicDeliverPrefix(1, 'c'), 1, false, '', 'r'.repeat(256), header, Buffer.alloc(1))).to.throw(/shortstr longer than 255/);
    expect(w.pendingBytes).to.equal(0);
  });

  it('writeDeliver keeps a content\'s frames only when asked (KEEP_TAIL) and only up to MAX_TAIL octets, and sends the same octets from them', () => {
    const plain = new Sink();
    const p = new FrameWriter(plain, 4096, () => {});
    const cached = new Sink();
    const c = new FrameWriter(cached, 4096, () => {});
    const slot = (wireTail: Buffer | undefined) => ({ wireTail, keepTail(tail: Buffer | undefined) { this.wireTail = tail; } });
    const small = slot(KEEP_TAIL);
    const large = slot(KEEP_TAIL);
    const once = slot(undefined);
    const smallBody = Buffer.from('sixteen octets!!');
    const largeBody = Buffer.alloc(MAX_TAIL, 7);
    for (let i = 1; i <= 4; i++) {
      for (const [cache, body, channel] of [[small, smallBody, i], [large, largeBody, 1], [once, smallBody, 2]] as const) {
        p.writeDeliver(channel, basicDeliverPrefix(channel, `c${i}`), i, i % 2 === 0, 'fan', 'rk', header, body);
        c.writeDeliver(channel, basicDeliverPrefix(channel, `c${i}`), i, i % 2 === 0, 'fan', 'rk', header, body, 0, body.length, cache);
      }
      if (i === 1) {
        // The method frame's octets after the exchange's shortstr: exchange, key, frame-end, header frame, body frame.
        expect(small.wireTail!.length).to.equal(1 + 3 + 1 + 2 + 1 + header.length + 8 + smallBody.length + 8);
        expect(large.wireTail).to.equal(undefined);
        expect(once.wireTail).to.equal(undefined);
      }
    }
    expect(c.pendingBytes).to.equal(p.pendingBytes);
    p.flush();
    c.flush();
    expect(cached.all.equals(plain.all)).to.equal(true);
  });

  it('writeDeliver stops at SINK_LIMIT inside a large body and goes on when the sink drains', () => {
    const sink = new Sink();
    sink.holds = true;
    const w = new FrameWriter(sink, 131072, () => {});
    const body = Buffer.alloc(3 * SINK_LIMIT, 9);
    w.writeDeliver(1, basicDeliverPrefix(1, 'c'), 1, false, '', 'q', header, body);
    w.flush();
    expect(w.pendingBytes).to.be.above(0);
    while (w.pendingBytes > 0) {
      sink.writableLength = 0;
      w.flush();
    }
    const frames = parse(sink.all);
    expect(frames[0]!.payload.equals(encodeBasicDeliver(1, 'c', 1, false, '', 'q').subarray(7, -1))).to.equal(true);
    expect(frames[1]!.payload.equals(header)).to.equal(true);
    expect(Buffer.concat(frames.slice(2).map((f) => f.payload)).equals(body)).to.equal(true);
  });

  it('writes large bodies by reference: 40 deliveries of a 127 MiB body (over 4 GiB) copy no body octet', () => {
    // issue 10: basic.get + basic.reject(requeue) pipelined 40 times on a 127 MiB message queued
    // more than 4 GiB in one tick, and copying it into one buffer threw a RangeError that killed
    // the broker.
    const body = Buffer.alloc(127 * 1024 * 1024, 0x61);
    let total = 0;
    let largest = 0;
    let copiedBody = 0;
    const sink: FrameSink = {
      writableLength: 0,
      write(chunk) {
        total += chunk.length;
        largest = Math.max(largest, chunk.length);
        if (chunk.length > COPY_LIMIT && chunk.buffer !== body.buffer) copiedBody += chunk.length;
        return true;
      },
    };
    const w = new FrameWriter(sink, 131072, () => {});
    for (let i = 0; i < 40; i++) w.writeContent(1, deliver, header, body);
    const expected = w.pendingBytes;
    expect(expected).to.be.above(4 * 1024 ** 3);
    w.flush();
    expect(total).to.equal(expected);
    expect(w.pendingBytes).to.equal(0);
    expect(w.bytesWritten).to.equal(expected);
    expect(copiedBody).to.equal(0);
    expect(largest).to.be.at.most(131072);
  });

  it('hands the sink at most SINK_LIMIT unsent octets per flush and goes on when it drains', () => {
    const sink = new Sink();
    sink.holds = true;
    const w = new FrameWriter(sink, 131072, () => {});
    let flushes = 0;
    w.onFlush = () => flushes++;
    const body = Buffer.alloc(5 * 1024 * 1024);
    for (let i = 0; i < body.length; i += 4) body.writeUInt32BE(i, i);
    w.writeContent(1, deliver, header, body);
    w.write(HEARTBEAT_FRAME);
    const total = w.pendingBytes;
    w.flush();
    expect(sink.writableLength).to.be.at.least(SINK_LIMIT).and.below(SINK_LIMIT + 512 * 1024);
    expect(w.pendingBytes).to.equal(total - sink.writableLength);
    w.flush();
    expect(w.pendingBytes, 'a full sink gets nothing more').to.equal(total - sink.writableLength);
    let rounds = 0;
    while (w.pendingBytes > 0) {
      sink.writableLength = 0; // drained
      w.flush();
      rounds++;
    }
    expect(rounds).to.be.within(3, 6);
    expect(flushes).to.equal(rounds + 2);
    const frames = parse(sink.all);
    expect(frames.map((f) => f.type)).to.deep.equal([1, 2, ...new Array(Math.ceil(body.length / 131064)).fill(3), 8]);
    expect(Buffer.concat(frames.filter((f) => f.type === 3).map((f) => f.payload))).to.deep.equal(body);
    expect(w.bytesWritten).to.equal(total);
  });

  it('reports an error thrown by a scheduled flush to onError instead of the event loop', () => {
    const tick = manual();
    const sink: FrameSink = {
      writableLength: 0,
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
