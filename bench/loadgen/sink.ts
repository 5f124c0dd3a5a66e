/**
 * Sinks for the load generator's self-check (npm run bench -- --loadgen-selfcheck), each in its
 * own process so that its CPU is not the generator's:
 *
 *   BENCH_SINK=tcp     accepts connections and only reads (publishers connect in raw mode);
 *   BENCH_SINK=broker  answers like a broker, from pre-encoded frames: the handshake, channel.open,
 *                      confirm.select, basic.qos, basic.consume, connection/channel close; in
 *                      confirm mode one basic.ack (multiple) per chunk read, for every publish
 *                      counted so far; to a consumer, pre-encoded deliveries (16 B bodies) as fast
 *                      as the socket takes them, prefetch ignored (the consumer's acks are read
 *                      and counted, not waited for).
 *
 * It listens on a free loopback port, sends { ev: 'listening', port } over IPC, answers
 * { cmd: 'stats' } with { ev: 'stats', bytes, publishes, deliveries, acks } once no connection is
 * open (at most 3 s later), exits on disconnect.
 */
import { createServer, type Socket } from 'node:net';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { encodeBasicAck, encodeBasicDeliver } from '../../src/frame/fast.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { F } from '../../src/frame/field-table.js';
import { writeU64 } from '../../src/frame/wire.js';
import { CM, FrameScanner, benchBody, type ScanHandler } from './wire.js';

export type SinkMode = 'tcp' | 'broker';
export type SinkToParent =
  | { ev: 'listening'; port: number }
  | { ev: 'stats'; bytes: number; publishes: number; deliveries: number; acks: number };

const mode = process.env['BENCH_SINK'] as SinkMode | undefined;
if ((mode !== 'tcp' && mode !== 'broker') || !process.send) {
  process.stderr.write('bench/loadgen/sink.ts is started by the bench (BENCH_SINK=tcp|broker)\n');
  process.exit(2);
}

const totals = { bytes: 0, publishes: 0, deliveries: 0, acks: 0 };
/** Connections open now; stats wait (≤ 3 s) until none is, so that everything sent is counted. */
let open = 0;
let whenIdle: Array<() => void> = [];

// ---- pre-encoded replies -----------------------------------------------------------------------

const START = encodeMethodFrame(0, 'connection.start', {
  versionMajor: 0, versionMinor: 9,
  serverProperties: { product: F.str('warren-loadgen-sink'), capabilities: F.table({ publisher_confirms: F.bool(true), 'basic.nack': F.bool(true) }) },
  mechanisms: 'PLAIN', locales: 'en_US',
});
const TUNE = encodeMethodFrame(0, 'connection.tune', { channelMax: 2047, frameMax: 131072, heartbeat: 0 });
const OPEN_OK = encodeMethodFrame(0, 'connection.open-ok', {});
const CLOSE_OK = encodeMethodFrame(0, 'connection.close-ok', {});
const reply = new Map<string, Buffer>();
/** A reply on a channel, encoded once per (channel, method). */
function replyOn(channel: number, name: 'channel.open-ok' | 'channel.close-ok' | 'confirm.select-ok' | 'basic.qos-ok'): Buffer {
  const key = `${channel}/${name}`;
  let b = reply.get(key);
  if (!b) {
    b = encodeMethodFrame(channel, name, {} as never);
    reply.set(key, b);
  }
  return b;
}

/** DELIVERIES deliveries (basic.deliver + header + 16 B body) in one buffer; tag offsets noted. */
const DELIVERIES = 512;
function deliveryTemplate(channel: number, consumerTag: string): { buf: Buffer; tagAt: Uint32Array } {
  const body = benchBody(16);
  const header = encodeContentHeaderFrame(channel, 60, body.length, {});
  const bodyFrame = encodeFrame(3, channel, body);
  const one = Buffer.concat([encodeBasicDeliver(channel, consumerTag, 1, false, '', 'q'), header, bodyFrame]);
  const tagOffset = 12 + Buffer.byteLength(consumerTag);
  const buf = Buffer.alloc(one.length * DELIVERIES);
  const tagAt = new Uint32Array(DELIVERIES);
  for (let i = 0; i < DELIVERIES; i++) {
    one.copy(buf, i * one.length);
    tagAt[i] = i * one.length + tagOffset;
  }
  return { buf, tagAt };
}

// ---- one connection ----------------------------------------------------------------------------

class FakeBrokerConnection implements ScanHandler {
  private readonly scanner = new FrameScanner(this);
  private headerSeen = false;
  private head = Buffer.alloc(0);
  private readonly confirmChannels = new Set<number>();
  private readonly published = new Map<number, number>();
  private pendingConfirms: number[] = [];
  private pushers: Array<() => void> = [];
  private nextTag = 1;

  constructor(private readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => {
      for (const p of this.pushers) p();
    });
    socket.on('error', () => {});
  }

  private onData(chunk: Buffer): void {
    totals.bytes += chunk.length;
    if (!this.headerSeen) {
      // The 8-octet protocol header (possibly in pieces); anything after it is frames.
      this.head = Buffer.concat([this.head, chunk]);
      if (this.head.length < 8) return;
      this.headerSeen = true;
      this.socket.write(START);
      chunk = this.head.subarray(8);
      if (chunk.length === 0) return;
    }
    try {
      this.scanner.feed(chunk);
    } catch {
      this.socket.destroy();
      return;
    }
    if (this.pendingConfirms.length > 0) {
      for (const ch of this.pendingConfirms) this.socket.write(encodeBasicAck(ch, this.published.get(ch) ?? 0, true));
      this.pendingConfirms = [];
    }
  }

  onPublish(channel: number): void {
    totals.publishes++;
    this.published.set(channel, (this.published.get(channel) ?? 0) + 1);
    if (this.confirmChannels.has(channel) && !this.pendingConfirms.includes(channel)) this.pendingConfirms.push(channel);
  }

  onAck(): void {
    totals.acks++;
  }

  onNack(): void {
    totals.acks++;
  }

  onDeliver(): void {
    this.socket.destroy(); // a client does not send basic.deliver
  }

  onHeartbeat(): void {}

  onMethod(channel: number, cm: number, payload: Buffer): void {
    switch (cm) {
      case CM.connectionStartOk: this.socket.write(TUNE); return;
      case CM.connectionTuneOk: return;
      case CM.connectionOpen: this.socket.write(OPEN_OK); return;
      case CM.channelOpen: this.socket.write(replyOn(channel, 'channel.open-ok')); return;
      case CM.confirmSelect:
        this.confirmChannels.add(channel);
        this.socket.write(replyOn(channel, 'confirm.select-ok'));
        return;
      case CM.basicQos: this.socket.write(replyOn(channel, 'basic.qos-ok')); return;
      case CM.basicConsume: {
        // queue (shortstr after reserved short), then consumer-tag (shortstr)
        const ql = payload[6] as number;
        const tl = payload[7 + ql] as number;
        const tag = payload.toString('latin1', 8 + ql, 8 + ql + tl) || `sink-${channel}`;
        this.socket.write(encodeMethodFrame(channel, 'basic.consume-ok', { consumerTag: tag }));
        this.startPushing(channel, tag);
        return;
      }
      case CM.channelClose: this.socket.write(replyOn(channel, 'channel.close-ok')); return;
      case CM.connectionClose:
        this.pushers = [];
        this.socket.end(CLOSE_OK);
        return;
      default:
        return;
    }
  }

  /** Writes deliveries while the socket takes them; goes on at 'drain'. */
  private startPushing(channel: number, consumerTag: string): void {
    const t = deliveryTemplate(channel, consumerTag);
    let scheduled = false;
    const push = (): void => {
      scheduled = false;
      if (this.socket.destroyed || this.socket.writableEnded) return;
      for (let turn = 0; turn < 8; turn++) {
        const b = Buffer.from(t.buf); // a fresh copy per write: the previous one may still be queued
        for (let i = 0; i < DELIVERIES; i++) writeU64(b, t.tagAt[i] as number, this.nextTag++);
        totals.deliveries += DELIVERIES;
        if (!this.socket.write(b)) return; // 'drain' calls push again
      }
      if (!scheduled) {
        scheduled = true;
        setImmediate(push);
      }
    };
    this.pushers.push(push);
    push();
  }
}

// ---- server ------------------------------------------------------------------------------------

const server = createServer((socket) => {
  open++;
  socket.once('close', () => {
    if (--open > 0) return;
    const ws = whenIdle;
    whenIdle = [];
    for (const w of ws) w();
  });
  if (mode === 'tcp') {
    socket.on('data', (chunk: Buffer) => {
      totals.bytes += chunk.length;
    });
    socket.on('error', () => {});
    return;
  }
  new FakeBrokerConnection(socket);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.send?.({ ev: 'listening', port } satisfies SinkToParent);
});
process.on('message', (m: { cmd: string }) => {
  if (m.cmd !== 'stats') return;
  const report = () => process.send?.({ ev: 'stats', ...totals } satisfies SinkToParent);
  if (open === 0) {
    report();
    return;
  }
  const t = setTimeout(report, 3000);
  whenIdle.push(() => {
    clearTimeout(t);
    report();
  });
});
process.on('disconnect', () => process.exit(0));
