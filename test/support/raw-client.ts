import { connect, type Socket } from 'node:net';
import { F } from '../../src/frame/field-table.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { decodeMethod, encodeMethodFrame, type Method, type MethodArgsByName, type MethodArgsInput, type MethodName } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderFrame, type BasicProperties } from '../../src/frame/generated/properties.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';

export interface RawFrame {
  type: number;
  channel: number;
  payload: Buffer;
  method?: Method;
}

/**
 * A bare-bones AMQP peer for tests that need to send what a client library never would:
 * garbage, bad frame ends, frames on unopened channels, content without a publish.
 */
export class RawClient {
  readonly frames: RawFrame[] = [];
  raw = Buffer.alloc(0);
  closed = false;
  private waiters: Array<() => void> = [];
  private readonly reader = new FrameReader(0);
  private parseFrames = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.raw = Buffer.concat([this.raw, chunk]);
      if (this.parseFrames) {
        this.reader.feed(chunk, (type, channel, payload) => {
          const frame: RawFrame = { type, channel, payload: Buffer.from(payload) };
          if (type === 1) frame.method = decodeMethod(frame.payload);
          this.frames.push(frame);
        });
      }
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  /** Connects and completes the handshake (PLAIN guest/guest, vhost /); capabilities are added to consumer_cancel_notify. */
  static async open(port: number, tune: { frameMax?: number; heartbeat?: number; vhost?: string; capabilities?: string[] } = {}): Promise<RawClient> {
    const c = await RawClient.connect(port);
    c.write(AMQP_0_9_1_HEADER);
    c.parseFrames = true;
    await c.expectMethod('connection.start');
    c.method(0, 'connection.start-ok', {
      clientProperties: {
        product: F.str('raw-client'),
        capabilities: F.table(Object.fromEntries(['consumer_cancel_notify', ...(tune.capabilities ?? [])].map((c) => [c, F.bool(true)]))),
      },
      mechanism: 'PLAIN', response: Buffer.from('\u0000guest\u0000guest'), locale: 'en_US',
    });
    const tuneFrame = await c.expectMethod('connection.tune');
    const t = tuneFrame.args as MethodArgsByName['connection.tune'];
    c.method(0, 'connection.tune-ok', { channelMax: t.channelMax, frameMax: tune.frameMax ?? t.frameMax, heartbeat: tune.heartbeat ?? 0 });
    c.method(0, 'connection.open', { virtualHost: tune.vhost ?? '/', reserved1: '', reserved2: false });
    if (tune.vhost === undefined) await c.expectMethod('connection.open-ok');
    return c;
  }

  /** Starts parsing frames after a hand-written protocol header. */
  startFrames(): void {
    this.parseFrames = true;
  }

  write(buf: Buffer): void {
    this.socket.write(buf);
  }

  method<N extends MethodName>(channel: number, name: N, args: MethodArgsInput<N>): void {
    this.write(encodeMethodFrame(channel, name, args));
  }

  /** basic.publish + header + one body frame. */
  publish(channel: number, exchange: string, routingKey: string, body: Buffer, props: BasicProperties = {}): void {
    this.method(channel, 'basic.publish', { reserved1: 0, exchange, routingKey, mandatory: false, immediate: false });
    this.write(encodeContentHeaderFrame(channel, 60, body.length, props));
    if (body.length) this.write(encodeFrame(3, channel, body));
  }

  async openChannel(channel: number): Promise<void> {
    this.method(channel, 'channel.open', { reserved1: '' });
    await this.expectMethod('channel.open-ok');
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Waits until predicate holds (checked on every input and on close). */
  async until<T>(predicate: () => T | undefined | false, what: string, timeoutMs = 5000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = predicate();
      if (v) return v;
      if (this.closed) {
        const again = predicate();
        if (again) return again;
        throw new Error(`connection closed while waiting for ${what}; got ${this.frames.map((f) => f.method?.name ?? f.type).join(', ')}`);
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, timeoutMs);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  private consumed = 0;

  /** Waits for the next method frame named name (skipping earlier frames). */
  async expectMethod<N extends MethodName>(name: N): Promise<Extract<Method, { name: N }>> {
    return this.until(() => {
      for (let i = this.consumed; i < this.frames.length; i++) {
        const f = this.frames[i] as RawFrame;
        if (f.method?.name === name) {
          this.consumed = i + 1;
          return f.method as Extract<Method, { name: N }>;
        }
      }
      return undefined;
    }, name);
  }

  waitClosed(): Promise<true> {
    return this.until(() => this.closed || undefined, 'socket close');
  }

  close(): void {
    this.socket.destroy();
  }
}
