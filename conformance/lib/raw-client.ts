/**
 * A bare AMQP 0-9-1 peer for the cases a client library hides: handshake details, garbage,
 * broken frames, frames on unopened channels, exact wire types of headers, nowait methods.
 * The conformance suite and Warren's own tests (test/integration) share it.
 *
 * It reuses Warren's frame codec (src/frame) read-only: the codec is a pure function of bytes,
 * so using it does not make the suite any less black-box — the broker under test is only ever
 * reached through a socket. It depends on nothing under test/.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import {
  decodeMethod,
  encodeMethodFrame,
  type Method,
  type MethodArgsByName,
  type MethodArgsInput,
  type MethodName,
} from '../../src/frame/generated/methods.js';
import { decodeContentHeader, encodeContentHeaderFrame, type BasicProperties, type ContentHeader } from '../../src/frame/generated/properties.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';
import { typedTable } from './typed.js';

export interface BrokerAddress {
  host: string;
  port: number;
  user: string;
  password: string;
  vhost: string;
}

export function parseUrl(url: string): BrokerAddress {
  const u = new URL(url);
  const path = u.pathname;
  return {
    host: u.hostname || '127.0.0.1',
    port: Number(u.port || 5672),
    user: decodeURIComponent(u.username || 'guest'),
    password: decodeURIComponent(u.password || 'guest'),
    vhost: path === '' || path === '/' ? '/' : decodeURIComponent(path.slice(1)),
  };
}

export interface RawFrame {
  type: number;
  channel: number;
  payload: Buffer;
  method?: Method;
  /** Set when the frame could not be decoded by our codec (e.g. a 0-8 connection.start). */
  undecodable?: string;
}

/** A message the server sent: basic.deliver / basic.get-ok / basic.return with its content. */
export interface RawMessage {
  channel: number;
  method: Method;
  header: ContentHeader;
  headerPayload: Buffer;
  body: Buffer;
}

export interface CloseInfo {
  code: number;
  text: string;
  classId: number;
  methodId: number;
}

export interface HandshakeOptions {
  user?: string;
  password?: string;
  vhost?: string;
  mechanism?: string;
  /** SASL response; default PLAIN \0user\0password. */
  response?: Buffer;
  frameMax?: number;
  channelMax?: number;
  heartbeat?: number;
  /** Client capabilities sent in client-properties (default: the usual RabbitMQ set). */
  capabilities?: FieldTable | null;
  locale?: string;
}

export interface HandshakeResult {
  start?: MethodArgsByName['connection.start'];
  tune?: MethodArgsByName['connection.tune'];
  opened: boolean;
  close?: CloseInfo;
  socketClosed: boolean;
}

export const DEFAULT_CAPABILITIES: FieldTable = {
  publisher_confirms: F.bool(true),
  exchange_exchange_bindings: F.bool(true),
  'basic.nack': F.bool(true),
  consumer_cancel_notify: F.bool(true),
  'connection.blocked': F.bool(true),
  authentication_failure_close: F.bool(true),
};

const CONTENT_METHODS = new Set(['basic.deliver', 'basic.get-ok', 'basic.return']);

export class RawClient {
  readonly frames: RawFrame[] = [];
  readonly messages: RawMessage[] = [];
  /** Every byte received, for cases that look below frames (e.g. a protocol header reply). */
  raw = Buffer.alloc(0);
  closed = false;
  /** Answer connection.close with close-ok (as any client would). */
  autoCloseOk = true;
  /** Answer channel.close with channel.close-ok. */
  autoChannelCloseOk = true;
  /** Frames not yet taken by next()/expect(). */
  private cursor = 0;
  private parse = false;
  private reader = new FrameReader(0);
  private waiters: Array<() => void> = [];
  private assembling = new Map<number, { method: Method; header?: ContentHeader; headerPayload?: Buffer; parts: Buffer[]; got: number }>();

  private constructor(
    readonly socket: Socket,
    readonly address: BrokerAddress,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static connect(url: string): Promise<RawClient> {
    const a = parseUrl(url);
    return new Promise((resolve, reject) => {
      const socket = tcpConnect({ host: a.host, port: a.port, noDelay: true }, () => {
        socket.off('error', reject);
        resolve(new RawClient(socket, a));
      });
      socket.once('error', reject);
    });
  }

  /** Connects and completes the handshake; throws unless connection.open-ok arrives. */
  static async open(url: string, opts: HandshakeOptions = {}): Promise<RawClient> {
    const c = await RawClient.connect(url);
    const r = await c.handshake(opts);
    if (!r.opened) {
      c.destroy();
      throw new Error(`handshake failed: ${JSON.stringify(r.close ?? 'socket closed')}`);
    }
    return c;
  }

  /** Runs the handshake as far as the server lets it go. */
  async handshake(opts: HandshakeOptions = {}): Promise<HandshakeResult> {
    const result: HandshakeResult = { opened: false, socketClosed: false };
    const user = opts.user ?? this.address.user;
    const password = opts.password ?? this.address.password;
    this.sendProtocolHeader();
    const start = await this.nextMethod(['connection.start'], 5000);
    if (!start) return this.failed(result);
    result.start = start.args as MethodArgsByName['connection.start'];
    const props: FieldTable = { product: F.str('warren-conformance'), platform: F.str('Node.js') };
    if (opts.capabilities !== null) props['capabilities'] = F.table(opts.capabilities ?? DEFAULT_CAPABILITIES);
    this.method(0, 'connection.start-ok', {
      clientProperties: props,
      mechanism: opts.mechanism ?? 'PLAIN',
      response: opts.response ?? Buffer.from(`\u0000${user}\u0000${password}`),
      locale: opts.locale ?? 'en_US',
    });
    const tune = await this.nextMethod(['connection.tune', 'connection.close'], 5000);
    if (!tune || tune.name !== 'connection.tune') return this.failed(result, tune);
    result.tune = tune.args;
    this.method(0, 'connection.tune-ok', {
      channelMax: opts.channelMax ?? tune.args.channelMax,
      frameMax: opts.frameMax ?? tune.args.frameMax,
      heartbeat: opts.heartbeat ?? 0,
    });
    this.method(0, 'connection.open', { virtualHost: opts.vhost ?? this.address.vhost, reserved1: '', reserved2: false });
    const open = await this.nextMethod(['connection.open-ok', 'connection.close'], 5000);
    if (!open || open.name !== 'connection.open-ok') return this.failed(result, open);
    result.opened = true;
    return result;
  }

  private async failed(result: HandshakeResult, m?: Method): Promise<HandshakeResult> {
    if (m && m.name === 'connection.close') result.close = closeInfo(m);
    await this.waitClosed(4000);
    result.socketClosed = this.closed;
    return result;
  }

  sendProtocolHeader(header: Buffer = AMQP_0_9_1_HEADER): void {
    this.parse = true;
    this.write(header);
  }

  /** Start parsing frames without sending the protocol header (for hand-made headers). */
  startFrames(): void {
    this.parse = true;
  }

  write(buf: Buffer): void {
    if (!this.closed) this.socket.write(buf);
  }

  frame(type: number, channel: number, payload: Buffer): void {
    this.write(encodeFrame(type, channel, payload));
  }

  method<N extends MethodName>(channel: number, name: N, args: MethodArgsInput<N>): void {
    this.write(encodeMethodFrame(channel, name, args));
  }

  /** basic.publish + content header + body frames of at most frameMax - 8 octets. */
  publish(
    channel: number,
    exchange: string,
    routingKey: string,
    body: Buffer | string,
    props: BasicProperties = {},
    opts: { mandatory?: boolean; immediate?: boolean; frameMax?: number } = {},
  ): void {
    const b = typeof body === 'string' ? Buffer.from(body) : body;
    this.method(channel, 'basic.publish', { exchange, routingKey, mandatory: opts.mandatory ?? false, immediate: opts.immediate ?? false });
    this.write(encodeContentHeaderFrame(channel, 60, b.length, props));
    const max = (opts.frameMax ?? 131072) - 8;
    for (let o = 0; o < b.length; o += max) this.frame(3, channel, b.subarray(o, Math.min(b.length, o + max)));
  }

  async openChannel(channel: number): Promise<void> {
    this.method(channel, 'channel.open', { reserved1: '' });
    await this.expect('channel.open-ok');
  }

  /** Waits for the next frame after the cursor matching pred (skipping others); undefined on close/timeout. */
  async next(pred: (f: RawFrame) => boolean = () => true, timeoutMs = 3000): Promise<RawFrame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      for (let i = this.cursor; i < this.frames.length; i++) {
        const f = this.frames[i] as RawFrame;
        if (pred(f)) {
          this.cursor = i + 1;
          return f;
        }
      }
      if (this.closed || Date.now() >= deadline) return undefined;
      await this.sleepUntilInput(deadline - Date.now());
    }
  }

  /** The next method among names (or any method when names is empty). */
  async nextMethod(names: string[] = [], timeoutMs = 3000): Promise<Method | undefined> {
    const f = await this.next((fr) => fr.method !== undefined && (names.length === 0 || names.includes(fr.method.name)), timeoutMs);
    return f?.method;
  }

  /** The next method named name; throws when the connection closes or time runs out first. */
  async expect<N extends MethodName>(name: N, timeoutMs = 3000): Promise<MethodArgsByName[N]> {
    const m = await this.nextMethod([name], timeoutMs);
    if (!m) throw new Error(`expected ${name}; got ${this.describe()}`);
    return m.args as MethodArgsByName[N];
  }

  /** Waits for the predicate over the client's state. */
  async until<T>(pred: () => T | undefined | false, timeoutMs = 3000): Promise<T | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = pred();
      if (v) return v;
      if (this.closed || Date.now() >= deadline) return pred() || undefined;
      await this.sleepUntilInput(deadline - Date.now());
    }
  }

  /** Like until, but throws, naming `what` and what did arrive, when the socket closes or time runs out first. */
  async waitFor<T>(pred: () => T | undefined | false, what: string, timeoutMs = 3000): Promise<T> {
    const v = await this.until(pred, timeoutMs);
    if (!v) throw new Error(`${this.closed ? 'socket closed' : 'timed out'} waiting for ${what}; got ${this.describe()}`);
    return v;
  }

  async waitClosed(timeoutMs = 3000): Promise<boolean> {
    await this.until(() => this.closed, timeoutMs);
    return this.closed;
  }

  /**
   * What the server did about a connection-level error: the connection.close it sent (if any)
   * and whether it then closed the socket (within timeoutMs of our close-ok).
   */
  async connectionOutcome(timeoutMs = 2000): Promise<{ close: CloseInfo | null; socketClosed: boolean }> {
    const m = await this.nextMethod(['connection.close'], timeoutMs);
    if (m && this.autoCloseOk) await this.waitClosed(timeoutMs);
    else if (!m) await this.waitClosed(200);
    return { close: m ? closeInfo(m) : null, socketClosed: this.closed };
  }

  /**
   * Waits until the server closes something (a channel.close or connection.close arrives, or
   * the socket closes), then returns every frame received since the cursor and whether the
   * socket is closed. After a connection.close (answered with close-ok) it waits up to
   * socketWaitMs for the server to close the socket.
   */
  async outcome(socketWaitMs = 1000, timeoutMs = 3000): Promise<{ frames: unknown[]; socketClosed: boolean }> {
    const isClose = (f: RawFrame): boolean => f.method?.name === 'connection.close' || f.method?.name === 'channel.close';
    await this.until(() => this.frames.slice(this.cursor).some(isClose) || this.closed, timeoutMs);
    if (this.frames.slice(this.cursor).some((f) => f.method?.name === 'connection.close')) await this.waitClosed(socketWaitMs);
    return { frames: this.drain(), socketClosed: this.closed };
  }

  /** The next channel.close or connection.close, whichever comes first. */
  async nextClose(timeoutMs = 3000): Promise<{ scope: 'channel' | 'connection'; channel: number } & CloseInfo | null> {
    const m = await this.next((f) => f.method?.name === 'channel.close' || f.method?.name === 'connection.close', timeoutMs);
    if (!m || !m.method) return null;
    return { scope: m.method.name === 'channel.close' ? 'channel' : 'connection', channel: m.channel, ...closeInfo(m.method) };
  }

  /** basic.get with noAck; resolves the message or null for get-empty. */
  async get(channel: number, queue: string, noAck = true): Promise<RawMessage | null> {
    const before = this.messages.length;
    this.method(channel, 'basic.get', { queue, noAck });
    const m = await this.nextMethod(['basic.get-ok', 'basic.get-empty', 'channel.close', 'connection.close']);
    if (!m || m.name === 'basic.get-empty') return null;
    if (m.name !== 'basic.get-ok') throw new Error(`basic.get: ${JSON.stringify(closeInfo(m))}`);
    const msg = await this.until(() => this.messages.slice(before).find((x) => x.method === m));
    if (!msg) throw new Error('basic.get: content did not arrive');
    return msg;
  }

  /** A short account of the frames received after the cursor (for error messages). */
  describe(): string {
    return this.frames.slice(this.cursor).map((f) => f.method?.name ?? `type-${f.type}`).join(', ') || (this.closed ? '(socket closed)' : '(nothing)');
  }

  /** Received frames after the cursor as trace entries; moves the cursor to the end. */
  drain(): unknown[] {
    const out = this.frames.slice(this.cursor).map(summariseFrame);
    this.cursor = this.frames.length;
    return out;
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** Polite close: connection.close, wait briefly for close-ok, then destroy. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.method(0, 'connection.close', { replyCode: 200, replyText: 'bye', classId: 0, methodId: 0 });
    await this.nextMethod(['connection.close-ok'], 500);
    this.destroy();
  }

  private onData(chunk: Buffer): void {
    this.raw = Buffer.concat([this.raw, chunk]);
    if (!this.parse) {
      this.wake();
      return;
    }
    try {
      this.reader.feed(chunk, (type, channel, payload) => this.onFrame(type, channel, Buffer.from(payload)));
    } catch {
      // A server frame our codec rejects: keep the bytes in `raw`, stop parsing.
      this.parse = false;
    }
    this.wake();
  }

  private onFrame(type: number, channel: number, payload: Buffer): void {
    const frame: RawFrame = { type, channel, payload };
    if (type === 1) {
      try {
        frame.method = decodeMethod(payload);
      } catch (e) {
        frame.undecodable = (e as Error).message;
      }
    }
    this.frames.push(frame);
    const m = frame.method;
    if (m && CONTENT_METHODS.has(m.name)) {
      this.assembling.set(channel, { method: m, parts: [], got: 0 });
    } else if (m && m.name === 'connection.close' && this.autoCloseOk) {
      this.method(0, 'connection.close-ok', {});
    } else if (m && m.name === 'channel.close' && this.autoChannelCloseOk) {
      this.method(channel, 'channel.close-ok', {});
    } else if (type === 2) {
      const a = this.assembling.get(channel);
      if (a && !a.header) {
        a.header = decodeContentHeader(payload);
        a.headerPayload = payload;
        if (a.header.bodySize === 0) this.finish(channel);
      }
    } else if (type === 3) {
      const a = this.assembling.get(channel);
      if (a && a.header) {
        a.parts.push(payload);
        a.got += payload.length;
        if (a.got >= a.header.bodySize) this.finish(channel);
      }
    }
  }

  private finish(channel: number): void {
    const a = this.assembling.get(channel);
    if (!a || !a.header || !a.headerPayload) return;
    this.assembling.delete(channel);
    this.messages.push({ channel, method: a.method, header: a.header, headerPayload: a.headerPayload, body: Buffer.concat(a.parts) });
  }

  private sleepUntilInput(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, Math.max(1, ms));
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.waiters.push(done);
    });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }
}

export function closeInfo(m: Method): CloseInfo {
  const a = m.args as { replyCode?: number; replyText?: string; classId?: number; methodId?: number };
  return { code: a.replyCode ?? 0, text: a.replyText ?? '', classId: a.classId ?? 0, methodId: a.methodId ?? 0 };
}

/** Method arguments with Buffers as text and field tables in typed form. */
export function plainArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) {
    if (k.startsWith('reserved')) continue;
    if (Buffer.isBuffer(v)) out[k] = v.toString('utf8');
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = typedTable(v as FieldTable);
    else out[k] = v;
  }
  return out;
}

export function summariseFrame(f: RawFrame): unknown {
  if (f.method) return { ch: f.channel, method: f.method.name, args: plainArgs(f.method.args as Record<string, unknown>) };
  if (f.undecodable) return { ch: f.channel, undecodableMethod: f.payload.toString('hex') };
  if (f.type === 2) {
    const h = decodeContentHeader(f.payload);
    return { ch: f.channel, header: { bodySize: h.bodySize, properties: typedProperties(h.properties) } };
  }
  if (f.type === 3) return { ch: f.channel, body: f.payload.length };
  if (f.type === 8) return { ch: f.channel, heartbeat: true };
  return { ch: f.channel, type: f.type, payload: f.payload.toString('hex') };
}

/** Basic properties with the headers table in typed form. */
export function typedProperties(p: BasicProperties): Record<string, unknown> {
  const out: Record<string, unknown> = { ...p };
  if (p.headers) out['headers'] = typedTable(p.headers);
  return out;
}

/** A received message as a trace entry (body as text when it is printable UTF-8). */
export function summariseMessage(m: RawMessage): Record<string, unknown> {
  const args = plainArgs(m.method.args as Record<string, unknown>);
  delete args['consumerTag'];
  return { method: m.method.name, ...args, properties: typedProperties(m.header.properties), body: bodyText(m.body) };
}

export function bodyText(b: Buffer): string {
  const s = b.toString('utf8');
  // eslint-disable-next-line no-control-regex
  return Buffer.from(s, 'utf8').equals(b) && !/[\u0000-\u0008\u000e-\u001f]/.test(s) ? s : `hex:${b.toString('hex')}`;
}
