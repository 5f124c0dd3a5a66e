/**
 * One AMQP 0-9-1 connection of the load generator, with one channel (number 1): a minimal
 * handshake (start-ok PLAIN, tune-ok without heartbeats, open), set-up RPCs, then either a
 * publisher pump or a consumer counter. No per-message allocation or promise on either path.
 *
 * Publisher: writes runs of a pre-encoded message ring (PublishRing), one socket write per batch
 * (about `batchBytes`), bounded by the confirm window, the "ahead of the consumers" limit and
 * maxMessages; waits for 'drain' when the socket says so.
 * Consumer: counts basic.deliver and, unless no-ack, acknowledges with multiple=true once at least
 * `ackEvery` deliveries are unacknowledged, at the end of the chunk that brought them (so one
 * ack per chunk at most).
 */
import { connect, type Socket } from 'node:net';
import { decodeMethod, encodeMethodFrame, type Method } from '../../src/frame/generated/methods.js';
import { encodeBasicAck } from '../../src/frame/fast.js';
import { F } from '../../src/frame/field-table.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';
import { CM, FrameScanner, type PublishRing, type ScanHandler } from './wire.js';

const CH = 1;

export interface ClientOptions {
  url: string;
  /**
   * Raw mode, for the TCP sink that only reads: no handshake and no replies expected; the
   * connection writes the protocol header and then publishes.
   */
  raw?: boolean;
}

interface Waiter {
  cm: number;
  resolve: (m: Method) => void;
  reject: (e: Error) => void;
}

export class LoadClient implements ScanHandler {
  readonly socket: Socket;
  private readonly scanner = new FrameScanner(this);
  private waiters: Waiter[] = [];
  /** Why the connection failed (a close from the broker, a socket error), if it did. */
  failure: string | undefined;
  closing = false;
  private closed: Promise<void>;

  // publisher state
  published = 0;
  confirmed = 0;
  nacked = 0;
  /** Highest tag up to which every publish is settled (confirm mode). */
  private settledUpTo = 0;
  private settledAbove = new Set<number>();
  confirmWindow = 0;
  /** Messages the consumers got (sum over consumers, divided by deliveries per message). */
  consumedMessages = 0;
  aheadLimit = 0;
  maxMessages = Number.MAX_SAFE_INTEGER;
  private ring: PublishRing | undefined;
  private ringPos = 0;
  private batchMessages = 1;
  private running = false;
  private waitingDrain = false;
  private scheduled = false;
  /** Called when the publisher stops by itself (maxMessages reached). */
  onLimit: (() => void) | undefined;

  // consumer state
  delivered = 0;
  private lastTag = 0;
  private acked = 0;
  ackEvery = 0;
  /** The broker's connection.blocked, if any. */
  blocked = false;
  /** Called after each chunk read (deliveries, confirms counted): for tests that wait on counts. */
  onRead: (() => void) | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      try {
        this.scanner.feed(chunk);
      } catch (err) {
        this.fail(`bad input: ${(err as Error).message}`);
        socket.destroy();
        return;
      }
      if (this.ackEvery > 0 && this.delivered - this.acked >= this.ackEvery) {
        this.acked = this.delivered;
        socket.write(encodeBasicAck(CH, this.lastTag, true));
      }
      this.onRead?.();
    });
    socket.on('drain', () => {
      if (!this.waitingDrain) return;
      this.waitingDrain = false;
      this.kick();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => {
      if (!this.closing) this.fail('connection closed by the peer');
      const ws = this.waiters;
      this.waiters = [];
      for (const w of ws) w.reject(new Error(this.failure ?? 'connection closed'));
      resolve();
    }));
    socket.on('error', (err) => this.fail(`socket: ${err.message}`));
  }

  private fail(why: string): void {
    if (!this.failure) this.failure = why;
  }

  /** Connects and (unless raw) runs the handshake and opens channel 1. */
  static async open(o: ClientOptions): Promise<LoadClient> {
    const url = new URL(o.url);
    const socket = connect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 5672) });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const c = new LoadClient(socket);
    if (o.raw) {
      socket.write(AMQP_0_9_1_HEADER);
      return c;
    }
    const start = c.expect(CM.connectionStart);
    socket.write(AMQP_0_9_1_HEADER);
    await start;
    const user = decodeURIComponent(url.username || 'guest');
    const pass = decodeURIComponent(url.password || 'guest');
    const tune = c.expect(CM.connectionTune);
    socket.write(encodeMethodFrame(0, 'connection.start-ok', {
      clientProperties: { product: F.str('warren-loadgen'), capabilities: F.table({ 'connection.blocked': F.bool(true) }) },
      mechanism: 'PLAIN', response: `\0${user}\0${pass}`, locale: 'en_US',
    }));
    const t = (await tune) as Extract<Method, { name: 'connection.tune' }>;
    const frameMax = t.args.frameMax === 0 ? 131072 : Math.min(t.args.frameMax, 131072);
    const vhost = decodeURIComponent(url.pathname.replace(/^\//, '')) || '/';
    const openOk = c.expect(CM.connectionOpenOk);
    socket.write(Buffer.concat([
      encodeMethodFrame(0, 'connection.tune-ok', { channelMax: t.args.channelMax || 2047, frameMax, heartbeat: 0 }),
      encodeMethodFrame(0, 'connection.open', { virtualHost: vhost }),
    ]));
    await openOk;
    await c.rpc(encodeMethodFrame(CH, 'channel.open', {}), CM.channelOpenOk);
    return c;
  }

  private expect(cm: number): Promise<Method> {
    if (this.failure) return Promise.reject(new Error(this.failure));
    return new Promise((resolve, reject) => this.waiters.push({ cm, resolve, reject }));
  }

  /** Writes a method frame and waits for the reply method `replyCm`. */
  rpc(frame: Buffer, replyCm: number): Promise<Method> {
    const p = this.expect(replyCm);
    this.socket.write(frame);
    return p;
  }

  async confirmSelect(window: number): Promise<void> {
    await this.rpc(encodeMethodFrame(CH, 'confirm.select', { nowait: false }), CM.confirmSelectOk);
    this.confirmWindow = window;
  }

  async qos(prefetch: number): Promise<void> {
    await this.rpc(encodeMethodFrame(CH, 'basic.qos', { prefetchSize: 0, prefetchCount: prefetch, global: false }), CM.basicQosOk);
  }

  async consume(queue: string, consumerTag: string, noAck: boolean, ackEvery: number): Promise<void> {
    this.ackEvery = noAck ? 0 : Math.max(1, ackEvery);
    await this.rpc(encodeMethodFrame(CH, 'basic.consume', {
      queue, consumerTag, noLocal: false, noAck, exclusive: false, noWait: false,
    }), CM.basicConsumeOk);
  }

  // ---- ScanHandler ----------------------------------------------------------------------------

  onDeliver(_channel: number, deliveryTag: number): void {
    this.delivered++;
    this.lastTag = deliveryTag;
  }

  onAck(_channel: number, tag: number, multiple: boolean): void {
    this.confirmed += this.settle(tag, multiple);
    if (this.running) this.kick();
  }

  onNack(_channel: number, tag: number, multiple: boolean): void {
    this.nacked += this.settle(tag, multiple);
    if (this.running) this.kick();
  }

  /** Marks publishes settled; returns how many were newly settled. */
  private settle(tag: number, multiple: boolean): number {
    if (tag <= this.settledUpTo) return 0;
    let n = 0;
    if (multiple) {
      n = tag - this.settledUpTo;
      if (this.settledAbove.size > 0) {
        for (const t of this.settledAbove) {
          if (t <= tag) {
            this.settledAbove.delete(t);
            n--;
          }
        }
      }
      this.settledUpTo = tag;
    } else {
      if (this.settledAbove.has(tag)) return 0;
      this.settledAbove.add(tag);
      n = 1;
    }
    while (this.settledAbove.has(this.settledUpTo + 1)) this.settledAbove.delete(++this.settledUpTo);
    return n;
  }

  onPublish(): void {
    this.fail('unexpected basic.publish from the broker');
  }

  onMethod(_channel: number, cm: number, payload: Buffer): void {
    if (cm === CM.connectionBlocked) {
      this.blocked = true;
      return;
    }
    if (cm === CM.connectionUnblocked) {
      this.blocked = false;
      return;
    }
    if (cm === CM.connectionClose || cm === CM.channelClose || cm === CM.basicCancel) {
      let text = '';
      try {
        const m = decodeMethod(payload);
        if (m.name === 'connection.close' || m.name === 'channel.close') text = `${m.name} ${m.args.replyCode} ${m.args.replyText}`;
        else text = m.name;
      } catch {
        text = `method ${cm.toString(16)}`;
      }
      this.fail(`broker sent ${text}`);
      if (cm === CM.connectionClose) this.socket.end(encodeMethodFrame(0, 'connection.close-ok', {}));
      const ws = this.waiters;
      this.waiters = [];
      for (const w of ws) w.reject(new Error(this.failure));
      return;
    }
    const w = this.waiters[0];
    if (w && w.cm === cm) {
      this.waiters.shift();
      try {
        w.resolve(decodeMethod(payload));
      } catch (err) {
        w.reject(err as Error);
      }
    }
  }

  onHeartbeat(): void {
    // heartbeats are off (tune-ok heartbeat 0); a peer that sends them anyway is ignored
  }

  // ---- publisher ------------------------------------------------------------------------------

  /** Sets what to publish: runs of this ring, about batchBytes per socket write. */
  setRing(ring: PublishRing, batchBytes: number): void {
    this.ring = ring;
    const per = ring.buf.length / ring.count;
    this.batchMessages = Math.max(1, Math.min(ring.count, Math.floor(batchBytes / per)));
  }

  startPublishing(): void {
    this.running = true;
    this.kick();
  }

  stopPublishing(): void {
    this.running = false;
  }

  /** Schedules a pump on the next turn of the event loop (so reads and IPC go on meanwhile). */
  kick(): void {
    if (this.scheduled || !this.running || this.waitingDrain) return;
    this.scheduled = true;
    setImmediate(this.pump);
  }

  private readonly pump = (): void => {
    this.scheduled = false;
    const ring = this.ring as PublishRing;
    // A few batches per turn, then let the event loop read confirms and IPC.
    for (let turn = 0; turn < 8; turn++) {
      if (!this.running || this.waitingDrain || this.failure) return;
      let n = Math.min(this.batchMessages, ring.count - this.ringPos, this.maxMessages - this.published);
      if (this.confirmWindow > 0) n = Math.min(n, this.confirmWindow - (this.published - this.confirmed - this.nacked));
      if (this.aheadLimit > 0) n = Math.min(n, Math.floor(this.aheadLimit - (this.published - this.consumedMessages)));
      if (n <= 0) {
        if (this.published >= this.maxMessages) {
          this.running = false;
          this.onLimit?.();
        }
        return; // an ack, a credit or stop() goes on from here
      }
      const from = ring.offsets[this.ringPos] as number;
      this.ringPos += n;
      const to = ring.offsets[this.ringPos] as number;
      if (this.ringPos === ring.count) this.ringPos = 0;
      this.published += n;
      if (!this.socket.write(ring.buf.subarray(from, to))) {
        this.waitingDrain = true;
        return;
      }
    }
    this.kick();
  };

  /** Resolves once everything written has left the process's buffers (or the socket is gone). */
  async flushed(): Promise<void> {
    while (this.socket.writableLength > 0 && !this.socket.destroyed) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          this.socket.off('drain', done);
          resolve();
        };
        const t = setTimeout(done, 50);
        this.socket.on('drain', done);
      });
    }
  }

  /**
   * After stopPublishing: waits until the broker has every publish (all confirms in confirm
   * mode; a basic.qos round trip on the channel otherwise), at most timeoutMs.
   */
  async settleAll(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.flushed();
    if (this.failure) return;
    if (this.confirmWindow > 0) {
      while (this.confirmed + this.nacked < this.published && Date.now() < deadline && !this.failure) {
        await new Promise((r) => setTimeout(r, 5));
      }
      return;
    }
    await Promise.race([
      this.rpc(encodeMethodFrame(CH, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false }), CM.basicQosOk).catch(() => {}),
      new Promise((r) => setTimeout(r, Math.max(0, deadline - Date.now()))),
    ]);
  }

  /** connection.close, waiting (at most timeoutMs) for close-ok; then the socket is ended. */
  async close(timeoutMs = 3000): Promise<void> {
    this.closing = true;
    this.running = false;
    if (!this.socket.destroyed && !this.failure) {
      await Promise.race([
        this.rpc(encodeMethodFrame(0, 'connection.close', { replyCode: 200, replyText: 'bye', classId: 0, methodId: 0 }), CM.connectionCloseOk).catch(() => {}),
        new Promise((r) => setTimeout(r, timeoutMs)),
      ]);
    }
    this.socket.end();
    const t = setTimeout(() => this.socket.destroy(), timeoutMs);
    await this.closed;
    clearTimeout(t);
  }

  /** Raw mode: ends the socket after what was written (there is no handshake to close). */
  endRaw(): void {
    this.closing = true;
    this.running = false;
    this.socket.end();
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.closing = true;
    this.running = false;
    this.socket.destroy();
  }
}
