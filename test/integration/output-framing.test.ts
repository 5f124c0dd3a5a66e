import { expect } from 'chai';
import { OUTPUT_HIGH_WATER } from '../../src/connection/connection.js';
import { encodeBasicDeliver } from '../../src/frame/fast.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { decodeMethod, encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderPayload, readBodySize } from '../../src/frame/generated/properties.js';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { channel, connect } from '../support/amqp.js';
import { serverSideOf, useBroker, waitUntil } from '../support/broker.js';

/**
 * Issue 10: a frame writer that coalesced small frames into 64 KiB buffers and referenced large
 * bodies corrupted its output under load (amqplib: 'Unknown frame type 206', the frame-end
 * octet where a frame type belongs). Here every octet three consumers receive is read by a
 * strict frame parser and every message is checked, in order, against what was published:
 * mixed sizes (empty, tiny, 10 KiB, 16 KiB ± a few octets, 100 KiB, bodies over frame_max),
 * one consumer that reads slowly (the broker's output to it fills up and is written piecemeal),
 * one that reads at once, and amqplib.
 *
 * No timing decides the outcome: all messages are queued before anyone consumes, so what the
 * broker writes after basic.consume-ok (until its output high-water mark) is one known octet
 * sequence. Small "aligner" messages are sized so that a frame of the next message ends exactly
 * on (or one octet beside) each 4 KiB boundary of that sequence: whatever power-of-two buffers a
 * writer fills, some frame fills one exactly.
 */

const FRAME_MAX = 131072;
const EXCHANGE = 'framing-fanout';
const TAG = 'c';

/** The message sizes that matter, each preceded by an aligner in the published sequence. */
function targets(): number[] {
  const small = [0, 1, 2, 3, 17, 100, 0, 5, 64, 1, 200, 9, 0, 31, 2, 1000];
  const mixed = [10 * 1024, 16384 - 8, 16384 - 1, 16384, 16384 + 1, 16384 + 8, 100 * 1024, FRAME_MAX - 8, FRAME_MAX - 7, 300 * 1024, 1, 1024 * 1024 + 5, 0];
  // Over 8 MiB in all: more than the kernel's socket buffers take from a peer that does not read.
  return [...small, ...mixed, ...small, ...mixed, 3 * 1024 * 1024 + 1, ...small, ...mixed];
}

/**
 * Body sizes in publish order: each target after an aligner whose one body frame puts the end
 * of the target's header or first body frame exactly on the next 4 KiB boundary (one octet
 * before or after it at some boundaries, never at multiples of 16 KiB) of the output that
 * follows basic.consume-ok, as the broker writes it to a consumer tagged TAG.
 */
function plan(): number[] {
  const deliver = encodeBasicDeliver(1, TAG, 1, false, EXCHANGE, '').length;
  const header = encodeContentHeaderPayload(60, 0, {}).length + 8;
  const bodyFrames = (n: number): number => n + 8 * Math.ceil(n / (FRAME_MAX - 8));
  let off = encodeMethodFrame(1, 'basic.consume-ok', { consumerTag: TAG }).length;
  const sizes: number[] = [];
  const add = (n: number): void => {
    sizes.push(n);
    off += deliver + header + bodyFrames(n);
  };
  targets().forEach((n, k) => {
    const kind = n === 0 || k % 2 === 0 ? 'header' : 'body';
    // Octets from the target's start to the end of the frame that is to end on the boundary.
    const upTo = deliver + header + (kind === 'body' ? Math.min(n, FRAME_MAX - 8) + 8 : 0);
    const alignerFixed = deliver + header + 8;
    const boundary = Math.ceil((off + alignerFixed + 2 + upTo) / 4096) * 4096;
    const shift = boundary % 16384 === 0 ? 0 : [0, -1, 1][k % 3]!;
    // The frame-end octet at offset boundary + shift: aligner of s octets, then the target.
    const s = boundary + shift + 1 - upTo - (off + alignerFixed);
    add(s);
    add(n);
  });
  return sizes;
}

/** Octets of message i: distinct per message and per position. */
function bodyOf(i: number, size: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let j = 0; j < size; j++) b[j] = (i * 7 + j * 13 + (j >> 9)) & 0xff;
  return b;
}

/**
 * Reads a consumer's output (everything after channel.open-ok) with a strict parser: frame-end
 * octets, frame types and sizes, then consume-ok and, for every message in order, deliver (tag
 * i + 1), a header with its body size, body frames of at most frame_max - 8 octets, and the
 * body octet for octet. done resolves when all arrived, rejects at the first deviation.
 */
class StrictConsumer {
  readonly done: Promise<void>;
  received = 0;
  private resolve!: () => void;
  private reject!: (err: Error) => void;
  private failed = false;
  private readonly reader = new FrameReader(FRAME_MAX);
  private octets = 0;
  private state: 'consume-ok' | 'deliver' | 'header' | 'body' = 'consume-ok';
  private parts: Buffer[] = [];
  private got = 0;

  constructor(private readonly sizes: number[]) {
    this.done = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  feed(chunk: Buffer): void {
    if (this.failed) return;
    const at = this.octets;
    this.octets += chunk.length;
    try {
      this.reader.feed(chunk, (type, ch, payload) => this.frame(type, ch, payload));
    } catch (err) {
      this.fail(`${(err as Error).message} (in ${chunk.length} octets read at octet ${at} after channel.open-ok, message ${this.received})`);
    }
  }

  fail(why: string): void {
    if (this.failed) return;
    this.failed = true;
    this.reject(new Error(why));
  }

  private frame(type: number, ch: number, payload: Buffer): void {
    const i = this.received;
    const where = `message ${i} of ${this.sizes.length} (size ${this.sizes[i]})`;
    if (ch !== 1) throw new Error(`frame type ${type} on channel ${ch} at ${where}`);
    const size = this.sizes[i]!;
    switch (this.state) {
      case 'consume-ok':
      case 'deliver': {
        if (type !== 1) throw new Error(`frame type ${type} where a method was due, at ${where}`);
        const m = decodeMethod(payload);
        if (this.state === 'consume-ok') {
          if (m.name !== 'basic.consume-ok') throw new Error(`${m.name} instead of basic.consume-ok`);
          this.state = 'deliver';
          return;
        }
        if (m.name !== 'basic.deliver') throw new Error(`${m.name} instead of basic.deliver at ${where}`);
        const args = m.args as { deliveryTag: number; consumerTag: string };
        if (args.deliveryTag !== i + 1 || args.consumerTag !== TAG) throw new Error(`deliver ${JSON.stringify(args)} at ${where}`);
        this.state = 'header';
        return;
      }
      case 'header':
        if (type !== 2) throw new Error(`frame type ${type} where a content header was due, at ${where}`);
        if (readBodySize(payload) !== size) throw new Error(`header announces ${readBodySize(payload)} octets at ${where}`);
        if (size === 0) this.complete();
        else this.state = 'body';
        return;
      case 'body':
        if (type !== 3) throw new Error(`frame type ${type} where a body frame was due, at ${where}`);
        if (payload.length > FRAME_MAX - 8) throw new Error(`a body frame of ${payload.length} octets at ${where}`);
        this.parts.push(Buffer.from(payload));
        this.got += payload.length;
        if (this.got > size) throw new Error(`${this.got} body octets at ${where}`);
        if (this.got === size) {
          const whole = Buffer.concat(this.parts);
          if (!whole.equals(bodyOf(i, size))) throw new Error(`body differs at ${where}`);
          this.complete();
        }
        return;
    }
  }

  private complete(): void {
    this.parts = [];
    this.got = 0;
    this.received++;
    this.state = 'deliver';
    if (this.received === this.sizes.length) this.resolve();
  }
}

describe('output framing under backpressure (issue 10): every octet, every message, in order', () => {
  const broker = useBroker();

  /** A raw client with channel 1 open whose every octet from now on goes to a StrictConsumer. */
  async function rawConsumer(sizes: number[]): Promise<{ client: RawClient; check: StrictConsumer }> {
    const client = await RawClient.open(broker.url, { frameMax: FRAME_MAX });
    await client.openChannel(1);
    const check = new StrictConsumer(sizes);
    // From here on every octet goes to the strict checker, not to RawClient's own parser.
    client.socket.removeAllListeners('data');
    client.socket.on('data', (chunk: Buffer) => check.feed(chunk));
    client.socket.on('close', () => check.fail(`socket closed after ${check.received} messages`));
    return { client, check };
  }

  function consume(client: RawClient, queue: string): void {
    client.method(1, 'basic.consume', { reserved1: 0, queue, consumerTag: TAG, noLocal: false, noAck: true, exclusive: false, noWait: false, arguments: {} });
  }

  it('a slow raw consumer, a fast raw consumer and amqplib get every frame intact and every body as published', async () => {
    const sizes = plan();
    const bodies = sizes.map((n, i) => bodyOf(i, n));
    const total = sizes.reduce((a, b) => a + b, 0);
    expect(total).to.be.above(8 * OUTPUT_HIGH_WATER);

    // All messages queued (to three queues through a fanout) before anyone consumes.
    const admin = await connect(broker.url);
    const queues = ['framing-slow', 'framing-fast', 'framing-amqplib'];
    try {
      const ch = await channel(admin);
      await ch.assertExchange(EXCHANGE, 'fanout', { durable: false });
      for (const q of queues) {
        await ch.assertQueue(q, { durable: false });
        await ch.bindQueue(q, EXCHANGE, '');
      }
    } finally {
      await admin.close();
    }
    const publisher = await RawClient.open(broker.url, { frameMax: FRAME_MAX });
    try {
      await publisher.openChannel(1);
      for (const b of bodies) publisher.publish(1, EXCHANGE, '', b, {}, { frameMax: FRAME_MAX });
      publisher.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
      await publisher.expect('basic.qos-ok', 20000);
    } finally {
      publisher.destroy();
    }

    const slow = await rawConsumer(sizes);
    const fast = await rawConsumer(sizes);
    const lib = await connect(broker.url);
    try {
      // The slow consumer does not read until the broker's output to it is full.
      slow.client.socket.pause();
      consume(slow.client, queues[0]!);
      const conn = serverSideOf(broker.running, slow.client);
      const slowQueue = broker.running.broker.vhosts.get('/')!.queues.get(queues[0]!)!;
      // (Unless this machine's socket buffers take it all: then the output never fills.)
      await waitUntil(() => (conn.unsentBytes >= OUTPUT_HIGH_WATER && conn.socket.writableLength > 0) || (slowQueue.messageCount === 0 && conn.unsentBytes === 0),
        'the output to the slow consumer to fill');
      expect(conn.unsentBytes).to.be.below(OUTPUT_HIGH_WATER + 3 * 1024 * 1024 + 4096);

      // The fast one and amqplib meanwhile.
      consume(fast.client, queues[1]!);
      let libError: Error | undefined;
      lib.on('error', (err: Error) => (libError = err));
      const libCh = await channel(lib);
      const libDone = new Promise<number[]>((resolve, reject) => {
        const bad: number[] = [];
        let n = 0;
        lib.on('close', () => reject(libError ?? new Error('amqplib connection closed')));
        void libCh.consume(queues[2]!, (m) => {
          if (!m) return;
          if (!m.content.equals(bodies[n]!)) bad.push(n);
          if (++n === bodies.length) resolve(bad);
        }, { noAck: true });
      });

      // Now the slow one reads, one chunk per event-loop turn, so the broker keeps writing to
      // a socket that is partly full.
      slow.client.socket.on('data', () => {
        slow.client.socket.pause();
        setImmediate(() => slow.client.socket.resume());
      });
      slow.client.socket.resume();

      const [, , differing] = await Promise.all([slow.check.done, fast.check.done, libDone]);
      expect(differing, 'messages amqplib got with a different body').to.deep.equal([]);
      expect(libError).to.equal(undefined);
      expect({ slow: slow.check.received, fast: fast.check.received }).to.deep.equal({ slow: sizes.length, fast: sizes.length });
    } finally {
      slow.client.destroy();
      fast.client.destroy();
      await lib.close().catch(() => {});
    }
  });
});
