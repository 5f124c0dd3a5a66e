import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { Timer } from '../clock.js';
import { AmqpError, ChannelError, ConnectionError, ReplyCode, replyText } from '../errors.js';
import { decodeTable, encodeTable, F, type FieldTable } from '../frame/field-table.js';
import { FRAME_BODY, FRAME_HEADER, FRAME_HEARTBEAT, FRAME_METHOD, FrameReader } from '../frame/frame-reader.js';
import { FrameWriter, HEARTBEAT_FRAME } from '../frame/frame-writer.js';
import { decodeMethod, encodeMethodFrame, type MethodArgsInput, type MethodName } from '../frame/generated/methods.js';
import { AMQP_0_9_1_HEADER, checkProtocolHeader, classifyProtocolHeader } from '../frame/protocol-header.js';
import type { Logger } from '../log.js';
import { ConnectionCounters } from '../metrics/counters.js';
import type { VHost } from '../vhost/vhost.js';
import type { Authorizer } from '../access/authorizer.js';
import { DIRECT_USER } from '../access/access-control.js';
import { hostPort, plainAddress } from '../peer-address.js';
import { AbruptClose, unexpectedFrameError } from '../frame/frame-errors.js';
import { Channel } from './channel.js';
import { HeartbeatEntry, type HeartbeatPeer } from './heartbeats.js';
import type { BrokerContext } from './context.js';
import { dispatchBody, dispatchHeader, dispatchMethod, startPublish } from './dispatch.js';
import { BasicPublishDecoder } from '../frame/publish-decoder.js';
import { basicAckMultiple, basicAckTag } from '../frame/ack-decoder.js';
import { handleConnectionMethod } from './handlers/connection.js';
import { checkUserChannelLimit } from './user-limits.js';
import type { ReadCoalescing, ReadPace } from './read-coalescing.js';

/** The spec's frame-min-size: what a peer must accept before tuning. */
const FRAME_MIN_SIZE = 4096;

/**
 * Output backpressure (DESIGN.md, convention 5): at OUTPUT_HIGH_WATER octets not yet sent
 * (queued in the writer + buffered by the socket) the connection stops reading and its
 * consumers stop being dispatched to; both resume once the output is down to OUTPUT_LOW_WATER.
 * Like RabbitMQ, whose reader stops when its writer cannot keep up, a peer that does not read
 * cannot make the broker hold more than this plus one message for it.
 */
export const OUTPUT_HIGH_WATER = 1024 * 1024;
const OUTPUT_LOW_WATER = 256 * 1024;

/**
 * Why the socket is not being read: a resource alarm (publishers only), a full output, a
 * shutdown, or an ack a channel settles over several turns (Channel.ackTag).
 */
export type ReadPause = 'alarm' | 'output' | 'shutdown' | 'settling';
const READ_PAUSES: readonly ReadPause[] = ['alarm', 'output', 'shutdown', 'settling'];
/** A connection keeps its reasons as bits (1 << index in READ_PAUSES), not as a Set of its own. */
const readPauseBit = (reason: ReadPause): number => 1 << READ_PAUSES.indexOf(reason);

/** Where the shared socket listeners find the socket's connection. */
const CONNECTION = Symbol('connection');
type OwnedSocket = Socket & { [CONNECTION]: Connection };

/** The client properties (and capabilities) of a connection that has sent none: shared, never written. */
const NO_PROPERTIES: FieldTable = Object.freeze(Object.create(null) as FieldTable);

/** The channels of a connection that has none (most idle ones): shared, never written. */
const NO_CHANNELS: ReadonlyMap<number, Channel> = new Map();

type State = 'awaiting-header' | 'starting' | 'tuning' | 'opening' | 'open' | 'closing' | 'closed';

/**
 * One client socket: the handshake, heartbeats, the channel table and the outbound frame
 * writer. Frames are handled synchronously as they are read; protocol errors thrown by
 * handlers become channel.close (soft) or connection.close (hard) here and nowhere else.
 */
export class Connection implements HeartbeatPeer, ReadPace {
  state: State = 'awaiting-header';
  private childLog: Logger | undefined;
  readonly writer: FrameWriter;
  private readonly reader: FrameReader;
  /** Open channels by number; made with the first channel (an idle connection has none). */
  private channelTable: Map<number, Channel> | undefined;
  /** Decodes basic.publish without a Method object (onRawFrame); made at the first method frame on a channel (idle connections stay small). */
  private publishDecoder: BasicPublishDecoder | undefined;
  vhost: VHost | undefined;
  /** The user's permission checks in the vhost (set with the vhost at connection.open). */
  access: Authorizer | undefined;
  username = '';
  /**
   * A direct connection: one logged in on the broker's direct listener (a shovel's `amqp://`),
   * which RabbitMQ opens inside the node (rabbit_direct). The management API shows it as
   * RabbitMQ shows those (type `direct`, named as a process).
   */
  direct = false;
  /**
   * connection.start-ok's client properties, kept encoded as a latin1 string: one small heap
   * object per connection instead of a table of objects holding views into the frame it came in
   * (a Buffer would pin a slab of Node's buffer pool). Decoded when read.
   */
  private clientPropertiesKept: string | FieldTable | undefined;
  channelMax: number;
  heartbeat = 0;
  /**
   * RabbitMQ's name for the connection: "peer:port -> local:port"; a direct connection's is a
   * process name ("<rabbit@vm.1795449011.12.0>", loggedInDirect).
   */
  name: string;
  /** When the socket was accepted (wall clock ms). */
  readonly connectedAt: number;
  /** The SASL mechanism of connection.start-ok. */
  authMechanism = '';
  /** Reasons the socket is not read now; it is read when there are none. */
  private readPauses = 0;
  /** Output reached OUTPUT_HIGH_WATER: reading and delivery resume at OUTPUT_LOW_WATER. */
  private outputFull = false;
  private headerBuf: Buffer | null = null;
  private lastReceived = 0;
  private lastSentBytes = -1;
  /**
   * The broker's read coalescing, asked after each read; none on the direct listener, whose
   * clients (shovels) run on this event loop and could send nothing while it naps.
   */
  private readonly readCoalescing: ReadCoalescing | undefined;
  /** ReadPace (read-coalescing.ts): when it last read (performance.now()), and what it had sent by then. */
  lastReadAt = -Infinity;
  writtenAtLastRead = -1;
  /** Its place in the broker's heartbeat schedule (connection/heartbeats.ts), from tune-ok on. */
  private heartbeatEntry: HeartbeatEntry | undefined;
  private handshakeTimer: Timer | undefined;
  private closeTimer: Timer | undefined;
  private onClosedHooks: Array<() => void> | undefined;
  /** Bytes and reads from the socket (src/metrics); bytes sent are writer.bytesWritten. */
  readonly counters: ConnectionCounters;

  constructor(
    readonly socket: Socket,
    readonly broker: BrokerContext,
    readonly id: number,
    /** Accepted on the broker's direct listener (src/direct-listener.ts), not the AMQP one. */
    readonly viaDirectListener = false,
  ) {
    const { config } = broker;
    this.counters = new ConnectionCounters(broker.metrics.nextPid());
    this.readCoalescing = viaDirectListener ? undefined : broker.readCoalescing;
    this.channelMax = config.channelMax;
    this.name = `${hostPort(socket.remoteAddress, socket.remotePort)} -> ${hostPort(socket.localAddress, socket.localPort)}`;
    this.connectedAt = broker.clock.now();
    // RabbitMQ enforces the spec's minimum frame size until connection.tune-ok.
    this.reader = new FrameReader(FRAME_MIN_SIZE);
    this.reader.rawHandler = this.onRawFrame;
    this.writer = new FrameWriter(socket, config.frameMax);
    this.writer.onFlush = () => this.onOutputProgress();
    this.writer.onError = (err) => this.onWriteError(err);
    socket.setNoDelay(true);
    // The socket's listeners are shared by every connection (no closures per connection): they
    // find theirs on the socket.
    (socket as OwnedSocket)[CONNECTION] = this;
    socket.on('data', Connection.socketData);
    socket.on('drain', Connection.socketDrain);
    socket.on('error', Connection.socketError);
    socket.on('close', Connection.socketClose);
    this.handshakeTimer = broker.clock.setTimeout(() => {
      if (this.state !== 'open' && this.state !== 'closed') {
        this.log.info('handshake timed out');
        this.destroy();
      }
    }, config.handshakeTimeout);
  }

  private static readonly socketData = function (this: OwnedSocket, chunk: Buffer): void {
    const conn = this[CONNECTION];
    conn.onData(chunk);
    // After the connection has handled the chunk, before the next read: an alarm raised here
    // pauses a publisher's socket at once.
    conn.broker.noteInput(chunk.length);
    conn.readCoalescing?.afterRead(conn, chunk.length, conn.writer.bytesWritten);
  };

  private static readonly socketDrain = function (this: OwnedSocket): void {
    this[CONNECTION].onDrain();
  };

  private static readonly socketError = function (this: OwnedSocket, err: Error): void {
    this[CONNECTION].log.debug({ err: err.message }, 'socket error');
  };

  private static readonly socketClose = function (this: OwnedSocket): void {
    this[CONNECTION].onSocketClosed();
  };

  /**
   * This connection's logger (a pino child with conn and peer), made when first used: most
   * connections never log, and 10,000 idle ones would hold 10,000 children. The peer address
   * stays readable after the socket closes (net.Socket caches it; `name` read it already).
   */
  get log(): Logger {
    this.childLog ??= this.broker.log.child(this.logFields());
    return this.childLog;
  }

  /**
   * The fields that name this connection in log lines (those of `log`), for a line logged
   * through the broker's logger without making the child: "connection opened" is logged for
   * every connection, at info level.
   */
  logFields(): { conn: number; peer: string } {
    return { conn: this.id, peer: `${this.socket.remoteAddress}:${this.socket.remotePort}` };
  }

  /** Logged in on the direct listener: a direct connection from now on (see direct). */
  loggedInDirect(): void {
    this.direct = true;
    this.name = this.broker.identity.nextProcessName();
  }

  /** A direct connection without a user (DIRECT_USER): every check passes, no user limit applies. */
  get unrestricted(): boolean {
    return this.direct && this.username === DIRECT_USER;
  }

  /** The client properties of connection.start-ok (empty before it); a fresh decoding each time. */
  get clientProperties(): FieldTable {
    const kept = this.clientPropertiesKept;
    if (kept === undefined) return NO_PROPERTIES;
    return typeof kept === 'string' ? decodeTable(Buffer.from(kept, 'latin1'), 0).table : kept;
  }

  set clientProperties(table: FieldTable) {
    let any = false;
    for (const _ in table) {
      any = true;
      break;
    }
    if (!any) {
      this.clientPropertiesKept = undefined;
      return;
    }
    try {
      this.clientPropertiesKept = encodeTable(table).toString('latin1');
    } catch {
      // Whatever was decoded encodes again; should it not, the table itself is kept.
      this.clientPropertiesKept = table;
    }
  }

  /** Client capabilities from connection.start-ok's client properties (consumer_cancel_notify, ...). */
  get capabilities(): FieldTable {
    const caps = this.clientProperties['capabilities'];
    return caps?.type === 'F' ? caps.value : NO_PROPERTIES;
  }

  /** Open channels by number (read-only: channels come and go through the connection). */
  get channels(): ReadonlyMap<number, Channel> {
    return this.channelTable ?? NO_CHANNELS;
  }

  get isTls(): boolean {
    return this.socket instanceof TLSSocket;
  }

  /** The client certificate (DER) of a TLS connection that presented one. */
  get peerCertificate(): Buffer | undefined {
    if (!(this.socket instanceof TLSSocket)) return undefined;
    const cert = this.socket.getPeerCertificate();
    return cert && cert.raw ? cert.raw : undefined;
  }

  /** The client's address; an IPv4-mapped IPv6 address as the IPv4 address. */
  get remoteAddress(): string {
    return plainAddress(this.socket.remoteAddress);
  }

  private onOpenHooks: Array<() => void> | undefined;
  private blocked = false;

  onOpen(hook: () => void): void {
    (this.onOpenHooks ??= []).push(hook);
  }

  private get notifiesBlocked(): boolean {
    const cap = this.clientProperties['capabilities'];
    return cap?.type === 'F' && cap.value['connection.blocked']?.value === true;
  }

  /** The alarm in force ("low on memory"), from block() to unblock(). */
  private alarm: string | undefined;

  /**
   * A resource alarm: the connection is 'blocking' (rabbit_reader's state). It is read as before
   * until it sends a content frame (a publish); then it is 'blocked' (afterContentFrame).
   */
  block(reason: string): void {
    if (this.alarm !== undefined || this.state !== 'open') return;
    this.alarm = reason;
  }

  /**
   * A content header or body frame has been handled (rabbit_reader:post_process_frame →
   * publish_received): under an alarm the connection is no longer read (TCP pushes back on the
   * publisher; the rest of the message waits in the socket) and, if it asked for them, gets
   * connection.blocked. Connections that only consume, or stay idle, are never blocked.
   */
  afterContentFrame(): void {
    if (this.alarm === undefined || this.blocked) return;
    this.blocked = true;
    if (this.notifiesBlocked) this.send(0, 'connection.blocked', { reason: this.alarm });
    this.pauseReading('alarm');
  }

  /**
   * The broker is shutting down: nothing more is read (Broker.close then lets the store commit
   * what was already published, so those confirms go out before connection.close).
   */
  stopReading(): void {
    this.pauseReading('shutdown');
  }

  /** RabbitMQ's connection state under an alarm; undefined when there is none. */
  get blockState(): 'blocked' | 'blocking' | undefined {
    if (this.alarm === undefined) return undefined;
    return this.blocked ? 'blocked' : 'blocking';
  }

  /** The alarm cleared: a blocked connection gets connection.unblocked and is read again. */
  unblock(): void {
    if (this.alarm === undefined) return;
    this.alarm = undefined;
    if (!this.blocked) return;
    this.blocked = false;
    if (this.state !== 'open') return;
    if (this.notifiesBlocked) this.send(0, 'connection.unblocked', {});
    this.resumeReading('alarm');
  }

  onClosed(hook: () => void): void {
    (this.onClosedHooks ??= []).push(hook);
  }

  // ---- input --------------------------------------------------------------------------------

  private onData(chunk: Buffer): void {
    this.counters.recvOct += chunk.length;
    this.counters.recvCnt++;
    if (this.state === 'closed') return;
    this.lastReceived = this.broker.clock.monotonic();
    if (this.state === 'awaiting-header') {
      chunk = this.headerBuf ? Buffer.concat([this.headerBuf, chunk]) : chunk;
      // RabbitMQ also takes the AMQP 0-9 header and then speaks 0-9-1.
      const check = classifyProtocolHeader(chunk) === 'amqp-0-9' ? 'ok' : checkProtocolHeader(chunk);
      if (check === 'incomplete') {
        this.headerBuf = chunk;
        return;
      }
      this.headerBuf = null;
      if (check === 'mismatch') {
        // The spec: answer with the protocol header we do speak, then close.
        this.log.info('protocol header mismatch');
        this.socket.end(AMQP_0_9_1_HEADER);
        this.state = 'closed';
        return;
      }
      this.sendStart();
      chunk = chunk.subarray(8);
      if (chunk.length === 0) return;
    }
    // No closure per read (readInput takes one): this runs for every socket read.
    try {
      this.reader.feed(chunk, this.onFrame);
    } catch (err) {
      this.fail(err);
    }
  }

  private readInput(read: () => void): void {
    try {
      read();
    } catch (err) {
      this.fail(err);
    }
  }

  /** Handles one frame; stops reading after it when the output is full. */
  private readonly onFrame = (type: number, channel: number, payload: Buffer): void => {
    this.handleFrame(type, channel, payload);
    this.afterFrame();
  };

  /**
   * The fast path of a publish and an ack (FrameReader.rawHandler), straight from the input's
   * bytes: a basic.publish is decoded without a Method object or a Buffer of its own, when
   * nothing but starting the publish can happen (an open channel, no content pending, no
   * immediate); a basic.ack likewise (basicAckTag) and settled at once (Channel.ackTag); a
   * content header with the same bytes as the channel's last kept one is handled as that
   * Buffer; a body frame is handed to the assembler as bytes (a small body is copied out
   * without a view first). Every other frame goes to onFrame.
   */
  private readonly onRawFrame = (type: number, channel: number, buf: Buffer, start: number, end: number): boolean => {
    if (this.state !== 'open' || channel === 0) return false;
    const ch = this.channelTable?.get(channel);
    if (ch === undefined || ch.closing) return false;
    if (type === FRAME_BODY) {
      // What handleFrame → onContentFrame → dispatchBody do, the body compacted out of the input.
      try {
        dispatchBody(ch, buf, start, end);
      } catch (err) {
        this.frameFailed(err, channel);
      }
    } else if (type === FRAME_METHOD) {
      if (ch.assembler.pending) return false;
      const tag = basicAckTag(buf, start, end);
      if (tag >= 0) {
        // What dispatchMethod and the basic.ack handler do (an unknown tag is a channel error
        // naming basic.ack).
        try {
          ch.ackTag(tag, basicAckMultiple(buf, end));
        } catch (err) {
          if (err instanceof AmqpError) err.at(60, 80);
          this.frameFailed(err, channel);
        }
      } else {
        const d = (this.publishDecoder ??= new BasicPublishDecoder());
        if (!d.decode(buf, start, end) || d.immediate) return false;
        // What dispatchMethod and the basic.publish handler do, none of which can fail here.
        startPublish(ch, d.exchange, d.routingKey, d.mandatory);
      }
    } else if (type === FRAME_HEADER) {
      const header = ch.publisher.sameHeader(buf, start, end);
      if (header === undefined) return false;
      // What handleFrame → onContentFrame do for an open channel, without finding it again.
      try {
        dispatchHeader(ch, header);
      } catch (err) {
        this.frameFailed(err, channel);
      }
    } else {
      return false;
    }
    this.afterFrame();
    return true;
  };

  /** After each frame: stops reading when the output is full (or a test asked to drop). */
  private afterFrame(): void {
    if (this.framesUntilDrop !== 0 && --this.framesUntilDrop === 0) {
      this.dropAfterFrames(0);
      return;
    }
    if (!this.writable && (this.state === 'open' || this.state === 'opening')) this.pauseReading('output');
  }

  private handleFrame(type: number, channel: number, payload: Buffer): void {
    if (this.state === 'closed') return;
    if (this.state === 'closing') {
      // Waiting for connection.close-ok: everything else is discarded, as the spec asks.
      if (type === FRAME_METHOD && channel === 0) this.onClosingMethod(payload);
      return;
    }
    try {
      if (type === FRAME_METHOD) this.onMethodFrame(channel, payload);
      else if (type === FRAME_HEADER || type === FRAME_BODY) this.onContentFrame(type, channel, payload);
      else if (type === FRAME_HEARTBEAT) {
        if (channel !== 0) throw unexpectedFrameError(type, payload);
      } else {
        throw new ConnectionError(ReplyCode.FRAME_ERROR, `unknown frame type ${type}`);
      }
    } catch (err) {
      this.frameFailed(err, channel);
    }
  }

  /** A frame on channel failed: a channel error closes the channel, anything else the connection. */
  private frameFailed(err: unknown, channel: number): void {
    if (err instanceof ChannelError && channel !== 0) {
      const ch = this.channels.get(channel);
      if (ch) {
        this.closeChannel(ch, err);
        return;
      }
    }
    this.fail(err);
  }

  private onMethodFrame(channel: number, payload: Buffer): void {
    const method = decodeMethod(payload);
    if (channel === 0) {
      try {
        handleConnectionMethod(this, method);
      } catch (err) {
        if (err instanceof AmqpError) err.at(method.classId, method.methodId);
        throw err;
      }
      return;
    }
    // Before connection.open-ok RabbitMQ does not look at other channels at all.
    if (this.state !== 'open') return;
    let ch = this.channels.get(channel);
    if (!ch) {
      this.checkChannelLimit();
      if (method.name !== 'channel.open') {
        throw new ConnectionError(ReplyCode.CHANNEL_ERROR, "expected 'channel.open'").at(method.classId, method.methodId);
      }
      ch = new Channel(channel, this);
      (this.channelTable ??= new Map()).set(channel, ch);
    }
    dispatchMethod(ch, method);
  }

  private onContentFrame(type: number, channel: number, payload: Buffer): void {
    if (this.state !== 'open' && channel !== 0) return;
    // rabbit_reader has no channel 0 process to hand it to: it names the frame and its octets.
    if (channel === 0) throw unexpectedFrameError(type, payload);
    const ch = this.channels.get(channel);
    if (!ch) {
      this.checkChannelLimit();
      throw new ConnectionError(ReplyCode.UNEXPECTED_FRAME, 'expected method frame, got non method frame instead');
    }
    if (type === FRAME_HEADER) dispatchHeader(ch, payload);
    else dispatchBody(ch, payload, 0, payload.length);
  }

  /**
   * rabbit_reader:create_channel: any frame on a channel not yet open takes a new channel, and
   * past the negotiated channel_max (counting open channels, not channel numbers) or the
   * user's max-channels limit the connection is closed with 530.
   */
  private checkChannelLimit(): void {
    if (this.channelMax !== 0 && this.channels.size >= this.channelMax) {
      throw new ConnectionError(ReplyCode.NOT_ALLOWED, `number of channels opened (${this.channels.size}) has reached the negotiated channel_max (${this.channelMax})`);
    }
    checkUserChannelLimit(this);
  }

  private onClosingMethod(payload: Buffer): void {
    let name: string;
    try {
      name = decodeMethod(payload).name;
    } catch {
      return;
    }
    if (name === 'connection.close-ok') this.destroy();
    else if (name === 'connection.close') {
      this.send(0, 'connection.close-ok', {});
      this.writer.flush();
      this.destroy();
    }
  }

  // ---- output -------------------------------------------------------------------------------

  send<N extends MethodName>(channel: number, name: N, args: MethodArgsInput<N>): void {
    if (this.state === 'closed') return;
    this.writer.write(encodeMethodFrame(channel, name, args));
  }

  /** Octets queued for this peer and not sent yet: in the writer plus in the socket's buffer. */
  get unsentBytes(): number {
    return this.writer.pendingBytes + this.socket.writableLength;
  }

  /**
   * Whether more output may be queued: false from OUTPUT_HIGH_WATER unsent octets on, as soon
   * as they are queued (consumers are not dispatched to; Channel.canDeliver).
   */
  get writable(): boolean {
    if (this.unsentBytes < OUTPUT_HIGH_WATER) return true;
    this.outputFull = true;
    return false;
  }

  /** Whether the socket is not being read now (an alarm or a full output). */
  get readingPaused(): boolean {
    return this.readPauses !== 0;
  }

  /** Why the socket is not being read now, if it is not. */
  get readPausedBy(): ReadPause[] {
    return READ_PAUSES.filter((_, i) => (this.readPauses & (1 << i)) !== 0);
  }

  /** The one place that pauses the socket; it is read again when no reason is left. */
  private pauseReading(reason: ReadPause): void {
    const bit = readPauseBit(reason);
    if ((this.readPauses & bit) !== 0) return;
    this.readPauses |= bit;
    if (reason === 'output') this.outputFull = true;
    // Either stops right after the current frame: the rest of the chunk waits too, as RabbitMQ's
    // blocked reader leaves what it has buffered (a publish's body behind its header, say).
    this.reader.pause();
    if (this.readPauses === bit) this.socket.pause();
  }

  private resumeReading(reason: ReadPause): void {
    const bit = readPauseBit(reason);
    if ((this.readPauses & bit) === 0) return;
    this.readPauses &= ~bit;
    if (this.readPauses !== 0) return;
    // The heartbeat monitor restarts now: the peer could not be heard while it was not read.
    this.lastReceived = this.broker.clock.monotonic();
    if (this.state !== 'closed') this.socket.resume();
    this.readInput(() => this.reader.resume(this.onFrame));
  }

  /**
   * A channel settles an ack of many deliveries over several turns (Channel.ackTag): nothing
   * more of this connection is read until it is done, so the client's next frames find the ack
   * settled, as they would behind RabbitMQ's busy channel process. Other connections go on.
   */
  settlingStarted(): void {
    this.pauseReading('settling');
  }

  /** The ack settlingStarted() announced is settled: reading goes on. */
  settlingDone(): void {
    this.resumeReading('settling');
  }

  /** Reads again whatever paused it (to see connection.close-ok). */
  private resumeAllReading(): void {
    for (const reason of this.readPausedBy) this.resumeReading(reason);
  }

  /** 'drain': the writer goes on. Called by the socket, so nothing may escape into the event loop. */
  private onDrain(): void {
    try {
      this.writer.flush();
      this.onOutputProgress();
    } catch (err) {
      this.onWriteError(err);
    }
  }

  /** A flush run by the event loop (setImmediate, 'drain') threw: this connection only is closed. */
  private onWriteError(err: unknown): void {
    this.log.error({ err }, 'internal error writing to the socket');
    this.destroy();
  }

  /** Output went out: below OUTPUT_LOW_WATER, reading and delivery resume. */
  private onOutputProgress(): void {
    if (!this.outputFull || this.unsentBytes > OUTPUT_LOW_WATER || this.state === 'closed') return;
    this.outputFull = false;
    this.resumeReading('output');
    for (const ch of this.channels.values()) ch.resumeDelivery();
  }

  // ---- handshake (called from handlers/connection.ts) ---------------------------------------

  private sendStart(): void {
    this.state = 'starting';
    const { config } = this.broker;
    const capabilities: FieldTable = {
      publisher_confirms: F.bool(true),
      exchange_exchange_bindings: F.bool(true),
      'basic.nack': F.bool(true),
      consumer_cancel_notify: F.bool(true),
      consumer_priorities: F.bool(true),
      'connection.blocked': F.bool(true),
      direct_reply_to: F.bool(true),
      authentication_failure_close: F.bool(true),
      per_consumer_qos: F.bool(true),
    };
    this.send(0, 'connection.start', {
      versionMajor: 0,
      versionMinor: 9,
      serverProperties: {
        capabilities: F.table(capabilities),
        cluster_name: F.str(this.broker.identity.cluster),
        copyright: F.str('Copyright (c) Warren contributors'),
        information: F.str('Warren, an AMQP 0-9-1 broker compatible with RabbitMQ'),
        platform: F.str(`Node.js ${process.version}`),
        product: F.str(config.product),
        version: F.str(config.version),
      },
      // EXTERNAL (a client certificate names the user) only over TLS, as rabbit_auth_mechanism_ssl offers it.
      mechanisms: Buffer.from(this.isTls ? 'PLAIN AMQPLAIN EXTERNAL' : 'PLAIN AMQPLAIN'),
      locales: Buffer.from('en_US'),
    });
  }

  /** The frame_max in force: the broker's until connection.tune-ok, then the negotiated one. */
  get frameMax(): number {
    return this.writer.frameMax;
  }

  /** connection.tune-ok accepted: start heartbeats with the negotiated interval. */
  tuned(frameMax: number, channelMax: number, heartbeat: number): void {
    this.channelMax = channelMax;
    this.heartbeat = heartbeat;
    this.reader.frameMax = frameMax;
    this.writer.frameMax = frameMax;
    this.state = 'opening';
    if (heartbeat > 0) this.scheduleHeartbeat();
  }

  /** connection.open accepted: the vhost and the permission checks of this user in it. */
  opened(vhost: VHost, access: Authorizer): void {
    this.vhost = vhost;
    this.access = access;
    this.state = 'open';
    this.handshakeTimer?.cancel();
    // A cancelled timer still holds its Timeout and closures: let them go with it.
    this.handshakeTimer = undefined;
    this.broker.connectionOpened(this);
    if (this.onOpenHooks) for (const hook of this.onOpenHooks) hook();
  }

  /** The next heartbeat check in half the negotiated interval (the broker's shared schedule). */
  private scheduleHeartbeat(): void {
    this.heartbeatEntry ??= new HeartbeatEntry(this);
    this.broker.heartbeats.schedule(this.heartbeatEntry, (this.heartbeat * 1000) / 2);
  }

  /** Every half heartbeat interval (Heartbeats): drop a silent peer, or send a heartbeat if idle. */
  heartbeatCheck(): void {
    if (this.state === 'closed') return;
    const now = this.broker.clock.monotonic();
    // RabbitMQ drops a peer that has been silent for two heartbeat intervals. A peer that is
    // not read (a publisher blocked by an alarm, or one whose output is full) cannot be heard:
    // like rabbit_heartbeat:pause_monitor while the reader is blocked, the check pauses.
    if (!this.readingPaused && now - this.lastReceived >= this.heartbeat * 2000) {
      this.log.warn({ timeout: this.heartbeat }, `missed heartbeats from client, timeout: ${this.heartbeat}s`);
      this.destroy();
      return;
    }
    const sent = this.writer.bytesWritten;
    if (sent === this.lastSentBytes) this.writer.write(HEARTBEAT_FRAME);
    this.lastSentBytes = this.writer.bytesWritten;
    this.scheduleHeartbeat();
  }

  private stopHeartbeats(): void {
    if (this.heartbeatEntry) this.broker.heartbeats.cancel(this.heartbeatEntry);
  }

  // ---- closing ------------------------------------------------------------------------------

  /** Soft error: channel.close with the error's code; the channel waits for close-ok. */
  closeChannel(ch: Channel, err: AmqpError): void {
    this.log.info({ channel: ch.id, code: err.replyCode }, `channel error: ${err.replyText}`);
    ch.closeByServer(err);
  }

  channelClosed(ch: Channel): void {
    this.channelTable?.delete(ch.id);
  }

  /** Turns anything thrown while handling input into the right connection.close. */
  fail(err: unknown): void {
    if (err instanceof AbruptClose) {
      // RabbitMQ's reader process crashes on these: the client sees the socket reset, no close.
      this.log.warn({ reason: err.reason }, 'connection reset: undecodable input');
      this.abort();
      return;
    }
    if (err instanceof AmqpError) {
      this.closeWithError(err.replyCode, err.replyText, err.classId, err.methodId);
      return;
    }
    this.log.error({ err }, 'internal error');
    this.closeWithError(ReplyCode.INTERNAL_ERROR, replyText(ReplyCode.INTERNAL_ERROR, (err as Error)?.message ?? String(err)), 0, 0);
  }

  /** Sends connection.close and waits (bounded) for close-ok; channels are torn down now. */
  closeWithError(code: number, text: string, classId: number, methodId: number): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    if (code !== ReplyCode.CONNECTION_FORCED) this.log.warn({ code, classId, methodId }, `closing connection: ${text}`);
    const answered = this.answersHandshakeError(code);
    this.state = 'closing';
    this.teardown();
    if (!answered) {
      // rabbit_reader: most errors during the handshake end the socket without a close.
      this.destroy();
      return;
    }
    this.send(0, 'connection.close', { replyCode: code, replyText: text, classId, methodId });
    this.writer.flush();
    // A connection blocked by an alarm or a full output must be read again to see the close-ok.
    this.resumeAllReading();
    this.closeTimer = this.broker.clock.setTimeout(() => this.destroy(), this.broker.config.closeTimeout);
  }

  /**
   * Closed by an operator (the management API's DELETE /api/connections/{name}): the client
   * gets connection.close 320 "CONNECTION_FORCED - <reason>", as rabbit_networking:close_connection
   * sends it.
   */
  forceClose(reason: string): void {
    this.log.info({ reason }, 'closing connection on request');
    this.closeWithError(ReplyCode.CONNECTION_FORCED, replyText(ReplyCode.CONNECTION_FORCED, reason), 0, 0);
  }

  /**
   * Whether an error in the current state is answered with connection.close (rabbit_reader's
   * handle_exception): always once open; during start-ok only a refused login from a client
   * with the authentication_failure_close capability; during open only 530 NOT_ALLOWED.
   */
  private answersHandshakeError(code: number): boolean {
    switch (this.state) {
      case 'open':
        return true;
      case 'starting':
      case 'tuning': {
        const cap = this.capabilities['authentication_failure_close'];
        return code === ReplyCode.ACCESS_REFUSED && cap?.type === 't' && cap.value;
      }
      case 'opening':
        return code === ReplyCode.NOT_ALLOWED;
      default:
        return false;
    }
  }

  /**
   * The client asked to close: reply close-ok. Like RabbitMQ, leave the socket for the client
   * to close, but not for longer than closeTimeout.
   */
  closeByClient(): void {
    this.teardown();
    this.send(0, 'connection.close-ok', {});
    this.writer.flush();
    this.state = 'closed';
    this.closeTimer = this.broker.clock.setTimeout(() => this.socket.destroy(), this.broker.config.closeTimeout);
  }

  /** Releases channels (requeueing unacked messages) and exclusive queues. Idempotent. */
  private teardown(): void {
    if (this.channelTable) {
      for (const ch of this.channelTable.values()) ch.release();
      this.channelTable = undefined;
    }
    this.stopHeartbeats();
    this.handshakeTimer?.cancel();
    this.vhost?.connectionClosed(this);
  }

  /** Frames still to be read before the socket is dropped (dropAfterFrames); 0 = never. */
  private framesUntilDrop = 0;

  /**
   * A test fault (the toolkit's faults.dropConnection): once `frames` more frames have been
   * read from the client (0: now), the socket is reset without connection.close, which is how
   * a network failure or a killed broker looks to the client. Channels are released (unacked
   * messages requeued) as when any socket goes.
   */
  dropAfterFrames(frames: number): void {
    if (this.state === 'closed') return;
    if (frames > 0) {
      this.framesUntilDrop = frames;
      return;
    }
    this.log.info('connection dropped (faults.dropConnection)');
    this.abort();
  }

  /** Ends the connection at once with a TCP reset: no close, nothing more written. */
  private abort(): void {
    if (this.state !== 'closing') this.teardown();
    this.state = 'closed';
    this.closeTimer?.cancel();
    this.writer.discard();
    this.socket.resetAndDestroy();
  }

  destroy(): void {
    if (this.state !== 'closing') this.teardown();
    this.state = 'closed';
    this.closeTimer?.cancel();
    this.writer.discard();
    this.socket.destroy();
  }

  private onSocketClosed(): void {
    if (this.state !== 'closed' && this.state !== 'closing') this.teardown();
    this.state = 'closed';
    this.writer.discard();
    this.closeTimer?.cancel();
    this.stopHeartbeats();
    this.handshakeTimer?.cancel();
    this.broker.connectionClosed(this);
    if (this.onClosedHooks) for (const hook of this.onClosedHooks) hook();
  }
}
