/**
 * The stateful fuzz target: a whole in-process broker (memory store, FakeClock) with up to two
 * client connections on fake sockets, driven by a script of records:
 *
 *   record := op:u8 arg:u8 [arg bytes of data when op is a feed]
 *
 *   op & 7    0-3  feed the next `arg` bytes to the connection's socket (one 'data' event)
 *             4    advance the clock (timers: heartbeats, TTLs, x-expires, delays, close, handshake
 *                  and consumer timeouts) by arg × 250 ms up to 200, then by (arg − 200) minutes
 *             5    let the event loop turn (output flushes, confirms, store commits)
 *             6    toggle the socket's back-pressure (write() returns false; 'drain' when lifted)
 *             7    the client drops its socket and connects again
 *   op & 8         which connection (0 or 1)
 *
 * With `handshake`, the harness is a well-behaved client around the script: it opens each
 * connection itself (protocol header, start-ok with PLAIN guest/guest, tune-ok, open '/',
 * channel.open on channels 1-6),
 * answers connection.close with close-ok and channel.close with close-ok and a new channel.open,
 * so a script goes on past its errors (on a new connection after a connection error) and the
 * broker's state builds up. Without it the script must do all that itself, from the first octet.
 *
 * Oracles (besides the runner's time and memory bounds):
 * - no exception escapes the socket's 'data'/'close' handlers, no uncaught exception or
 *   unhandled rejection, nothing logged at error level (Connection.fail logs every thrown
 *   non-AmqpError as 'internal error' and answers 541 — a crash, in other words);
 * - everything the broker writes is well-framed, within the negotiated frame-max, and decodes;
 * - after the script, once the handshake and close timeouts have passed, no connection is left
 *   half-open or half-closed; once every client has gone, no queue has consumers and no
 *   exclusive queue of a gone connection remains.
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Broker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { Connection } from '../../src/connection/connection.js';
import { F } from '../../src/frame/field-table.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { decodeMethod, encodeMethodFrame, type Method } from '../../src/frame/generated/methods.js';
import { decodeContentHeader } from '../../src/frame/generated/properties.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';
import { createLogger } from '../../src/log.js';
import { AmqpError } from '../../src/errors.js';
import { invariant, OracleFailure } from './oracles.js';

export const OP = { feed: 0, clock: 4, turn: 5, backpressure: 6, reconnect: 7, second: 8 } as const;

/** A socket as far as Connection uses one: events in, writes out, pause/resume, destroy. */
class FakeSocket extends EventEmitter {
  readonly remoteAddress = '127.0.0.1';
  readonly remotePort = 50000;
  destroyed = false;
  reset = false;
  paused = false;
  full = false;
  /** Octets written while full, as a real socket's writableLength counts them; 0 once drained. */
  writableLength = 0;
  private pending: Buffer[] = [];

  constructor(private readonly onOutput: (chunk: Buffer) => void) {
    super();
  }

  write(chunk: Buffer): boolean {
    if (!this.destroyed) this.onOutput(chunk);
    if (this.full) this.writableLength += chunk.length;
    return !this.full;
  }

  end(chunk?: Buffer): this {
    if (chunk) this.write(chunk);
    return this.destroy();
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    process.nextTick(() => this.emit('close', false));
    return this;
  }

  resetAndDestroy(): this {
    this.reset = true;
    return this.destroy();
  }

  setNoDelay(): this {
    return this;
  }

  pause(): this {
    this.paused = true;
    return this;
  }

  resume(): this {
    this.paused = false;
    const pending = this.pending;
    this.pending = [];
    for (const chunk of pending) this.deliver(chunk);
    return this;
  }

  /** Client → broker bytes; held while paused, dropped once the socket is gone. */
  deliver(chunk: Buffer): void {
    if (this.destroyed) return;
    if (this.paused) this.pending.push(chunk);
    else this.emit('data', chunk);
  }

  setFull(full: boolean): void {
    const was = this.full;
    this.full = full;
    if (!full) this.writableLength = 0;
    if (was && !full && !this.destroyed) this.emit('drain');
  }
}

/**
 * Checks the broker's output as it comes: frames must be well-formed and decodable. Reports the
 * methods it sees, so a well-behaved client can answer them.
 */
class OutputChecker {
  private readonly reader = new FrameReader(0);
  private sawHeader = false;
  private head: Buffer[] = [];
  private failed: unknown;

  constructor(
    private readonly onMethod: (channel: number, method: Method) => void,
    /** The frame-max in force (0: none): no frame may be larger. */
    private readonly frameMax: () => number,
  ) {}

  push(chunk: Buffer): void {
    if (this.failed) return;
    let data = chunk;
    if (!this.sawHeader) {
      // The broker may answer a bad protocol header with its own header.
      this.head.push(chunk);
      const all = Buffer.concat(this.head);
      if (all.length < 8 && AMQP_0_9_1_HEADER.subarray(0, all.length).equals(all)) return;
      this.sawHeader = true;
      this.head = [];
      data = all.subarray(0, 8).equals(AMQP_0_9_1_HEADER) ? all.subarray(8) : all;
    }
    try {
      this.reader.feed(data, (type, channel, payload) => {
        const max = this.frameMax();
        if (max > 0 && payload.length + 8 > max) throw new Error(`a frame of ${payload.length + 8} octets, frame-max ${max}`);
        if (type === 1) {
          const m = OutputChecker.method(payload);
          if (m) this.onMethod(channel, m);
        } else if (type === 2) decodeContentHeader(payload);
      });
    } catch (err) {
      this.failed = err;
    }
  }

  /**
   * A reply text over 255 octets is cut to 252 + "..." by octets, which may split a UTF-8
   * sequence: the only shortstr the broker may send that is not UTF-8. RabbitMQ 3.10 sends the
   * same bytes (checked: a passive queue.declare of 63 emoji, reply text ending f0 9f "...").
   */
  private static method(payload: Buffer): Method | undefined {
    try {
      return decodeMethod(payload);
    } catch (err) {
      const id = payload.readUInt32BE(0);
      const isClose = id === 0x000a0032 || id === 0x00140028;
      const cut = isClose && payload[6] === 255 && payload.toString('latin1', 7 + 252, 7 + 255) === '...';
      if (!(cut && err instanceof AmqpError && err.replyText.includes('Malformed UTF-8'))) throw err;
      return undefined;
    }
  }

  check(): void {
    if (this.failed) throw new OracleFailure('invariant', 'the broker wrote a frame that is too large or does not decode', this.failed);
  }
}

const CLOSE_OK = encodeMethodFrame(0, 'connection.close-ok', {});

const START_OK = encodeMethodFrame(0, 'connection.start-ok', {
  clientProperties: {
    product: F.str('warren-fuzz'),
    capabilities: F.table({
      authentication_failure_close: F.bool(true),
      'connection.blocked': F.bool(true),
      consumer_cancel_notify: F.bool(true),
      publisher_confirms: F.bool(true),
    }),
  },
  mechanism: 'PLAIN',
  response: Buffer.from('\0guest\0guest'),
  locale: 'en_US',
});

/** The client's side of a handshake, as one chunk. */
export const HANDSHAKE = Buffer.concat([
  AMQP_0_9_1_HEADER,
  START_OK,
  encodeMethodFrame(0, 'connection.tune-ok', { channelMax: 2047, frameMax: 131072, heartbeat: 60 }),
  encodeMethodFrame(0, 'connection.open', { virtualHost: '/' }),
]);

/** Channels the well-behaved client opens on each connection, right after the handshake. */
const OPEN_CHANNELS = [1, 2, 3, 4, 5, 6];
const OPEN = Buffer.concat(OPEN_CHANNELS.map((ch) => encodeMethodFrame(ch, 'channel.open', { reserved1: '' })));

interface Client {
  conn: Connection;
  socket: FakeSocket;
  output: OutputChecker;
  /** What a well-behaved client sends next: close-oks, and channel.open after a channel.close. */
  replies: Buffer[];
}

/** Errors raised outside any call the harness makes (timers, promise callbacks). */
const stray: unknown[] = [];
let strayHooked = false;
function hookStrayErrors(): void {
  if (strayHooked) return;
  strayHooked = true;
  process.on('uncaughtException', (err) => stray.push(err));
  process.on('unhandledRejection', (err) => stray.push(err));
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class ConnectionHarness {
  readonly clock = new FakeClock();
  readonly broker: Broker;
  private readonly clients: Array<Client | undefined> = [undefined, undefined];
  private readonly gone: Connection[] = [];
  private readonly errors: string[] = [];
  private ids = 0;

  constructor(private readonly handshake: boolean) {
    hookStrayErrors();
    stray.length = 0;
    const sink = {
      write: (line: string) => {
        this.errors.push(line);
        return true;
      },
    };
    this.broker = new Broker({ clock: this.clock, logger: createLogger('error', sink as unknown as NodeJS.WritableStream) });
  }

  private client(i: number): Client {
    let c = this.clients[i];
    if (c && !c.socket.destroyed) return c;
    if (c) this.gone.push(c.conn);
    const replies: Buffer[] = [];
    const output = new OutputChecker((channel, m) => {
      if (!this.handshake) return;
      if (m.name === 'connection.close') replies.push(CLOSE_OK);
      else if (m.name === 'channel.close') {
        replies.push(encodeMethodFrame(channel, 'channel.close-ok', {}), encodeMethodFrame(channel, 'channel.open', { reserved1: '' }));
      }
    }, () => conn.frameMax);
    const socket = new FakeSocket((chunk) => output.push(chunk));
    const conn: Connection = new Connection(socket as unknown as Socket, this.broker, ++this.ids);
    c = { conn, socket, output, replies };
    this.clients[i] = c;
    if (this.handshake) {
      this.guard(() => socket.deliver(Buffer.concat([HANDSHAKE, OPEN])));
      invariant(conn.state === 'open' && conn.channels.size === OPEN_CHANNELS.length, `the harness's handshake left the connection ${conn.state}`);
    }
    return c;
  }

  /** Runs a client action; anything escaping the broker's socket handlers is a crash. */
  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      throw new OracleFailure('crash', 'an exception escaped the connection', err);
    }
    this.checkErrors();
  }

  private checkErrors(): void {
    if (stray.length) throw new OracleFailure('crash', 'uncaught exception or unhandled rejection', stray[0]);
    if (this.errors.length) throw new OracleFailure('crash', `the broker logged an error: ${this.errors[0]!.slice(0, 2000)}`);
    for (const c of this.clients) c?.output.check();
  }

  /** The well-behaved client's answers to what the broker sent since the last step. */
  private answer(): void {
    for (const c of this.clients) {
      if (!c || c.replies.length === 0) continue;
      const data = Buffer.concat(c.replies);
      c.replies.length = 0;
      this.guard(() => c.socket.deliver(data));
    }
  }

  async run(script: Buffer): Promise<void> {
    let o = 0;
    while (o < script.length) {
      this.answer();
      const op = script[o]!;
      const arg = script[o + 1] ?? 0;
      o += 2;
      const c = this.client(op & OP.second ? 1 : 0);
      switch (op & 7) {
        case OP.clock:
          this.guard(() => this.clock.advance(arg <= 200 ? arg * 250 : (arg - 200) * 60_000));
          break;
        case OP.turn:
          await this.turns(2);
          break;
        case OP.backpressure:
          this.guard(() => c.socket.setFull(!c.socket.full));
          break;
        case OP.reconnect:
          this.guard(() => c.socket.destroy());
          await this.turns(1);
          break;
        default: {
          const data = script.subarray(o, o + arg);
          o += data.length;
          this.guard(() => c.socket.deliver(data));
        }
      }
    }
    await this.turns(2);
  }

  /** Lets the event loop run n times (flushes output, runs confirms and socket 'close' events). */
  async turns(n: number): Promise<void> {
    for (let i = 0; i < n; i++) await turn();
    this.checkErrors();
  }

  /** After the script: let every timeout pass, then check nothing is left stuck. */
  async settle(): Promise<void> {
    const { handshakeTimeout, closeTimeout } = this.broker.config;
    for (const c of this.clients) if (c) c.socket.setFull(false);
    this.guard(() => this.clock.advance(handshakeTimeout + closeTimeout + 1));
    await this.turns(2);
    this.guard(() => this.clock.advance(closeTimeout + 1));
    await this.turns(2);
    for (const c of this.clients) {
      if (!c) continue;
      const s = c.conn.state;
      invariant(s === 'open' || s === 'closed', `a connection is still '${s}' after its handshake and close timeouts`);
      invariant(s !== 'closed' || c.socket.destroyed, 'a closed connection kept its socket');
    }
  }

  /** Every client leaves; its channels, consumers and exclusive queues must go with it. */
  async disconnect(): Promise<void> {
    for (const c of this.clients) if (c) this.guard(() => c.socket.destroy());
    await this.turns(2);
    const conns = [...this.gone, ...this.clients.flatMap((c) => (c ? [c.conn] : []))];
    for (const conn of conns) {
      invariant(conn.state === 'closed', `a connection whose socket closed is '${conn.state}'`);
      invariant(conn.channels.size === 0, 'a closed connection still has channels');
    }
    for (const vhost of this.broker.vhosts.values()) {
      for (const q of vhost.queues.values()) {
        invariant(q.consumerCount === 0, `queue '${q.name}' has ${q.consumerCount} consumers after every client left`);
        invariant(!conns.includes(q.exclusiveOwner as Connection), `exclusive queue '${q.name}' outlived its connection`);
      }
    }
  }

  async close(): Promise<void> {
    await this.broker.close();
  }
}

/**
 * The target: runs the script, calls `atPeak` while the broker still holds what it made (the
 * memory oracle measures there), then settles, disconnects and checks.
 */
export async function fuzzConnection(script: Buffer, handshake: boolean, atPeak?: () => void): Promise<void> {
  const h = new ConnectionHarness(handshake);
  try {
    await h.run(script);
    atPeak?.();
    await h.settle();
    await h.disconnect();
  } finally {
    await h.close();
  }
}
