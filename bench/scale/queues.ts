/**
 * Scale: many durable queues. Declares `count` durable queues (q names scale-q-N) over one raw
 * connection, pipelined (at most `window` declarations in flight, each waiting for its
 * declare-ok), then the caller restarts the broker on the same data and `verifyQueues` checks
 * every queue is back with passive declarations (a missing one closes the channel: 404).
 */
import { connect, type Socket } from 'node:net';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { F } from '../../src/frame/field-table.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';

const CM_START = 0x000a000a;
const CM_TUNE = 0x000a001e;
const CM_OPEN_OK = 0x000a0029;
const CM_CONN_CLOSE = 0x000a0032;
const CM_CH_OPEN_OK = 0x0014000b;
const CM_CH_CLOSE = 0x00140028;
const CM_DECLARE_OK = 0x0032000b;

/** One raw connection with channel 1 open; `onMethod` sees every method frame (class<<16|method). */
async function rawChannel(url: string, onMethod: (cm: number, payload: Buffer) => void): Promise<Socket> {
  const u = new URL(url);
  const s = connect({ host: u.hostname, port: Number(u.port || 5672) });
  s.setNoDelay(true);
  let pending: Buffer | undefined;
  let ready: (() => void) | undefined;
  let failed: ((e: Error) => void) | undefined;
  const opened = new Promise<void>((resolve, reject) => { ready = resolve; failed = reject; });
  s.on('error', (e) => failed?.(e));
  s.on('data', (chunk: Buffer) => {
    let b = pending ? Buffer.concat([pending, chunk]) : chunk;
    pending = undefined;
    while (b.length >= 8) {
      const size = b.readUInt32BE(3);
      if (b.length < size + 8) break;
      if (b[0] === 1) {
        const cm = b.readUInt32BE(7);
        if (cm === CM_START) {
          s.write(encodeMethodFrame(0, 'connection.start-ok', {
            clientProperties: { product: F.str('warren-scale-bench') }, mechanism: 'PLAIN',
            response: `\0${decodeURIComponent(u.username || 'guest')}\0${decodeURIComponent(u.password || 'guest')}`, locale: 'en_US',
          }));
        } else if (cm === CM_TUNE) {
          s.write(Buffer.concat([
            encodeMethodFrame(0, 'connection.tune-ok', { channelMax: 2047, frameMax: 131072, heartbeat: 0 }),
            encodeMethodFrame(0, 'connection.open', { virtualHost: '/' }),
          ]));
        } else if (cm === CM_OPEN_OK) s.write(encodeMethodFrame(1, 'channel.open', {}));
        else if (cm === CM_CH_OPEN_OK) ready?.();
        else if (cm === CM_CONN_CLOSE || cm === CM_CH_CLOSE) {
          failed?.(new Error(`closed by the broker: ${b.subarray(13, 14 + (b[13] ?? 0)).toString('latin1')}`));
          onMethod(cm, b.subarray(7, size + 7));
        } else onMethod(cm, b.subarray(7, size + 7));
      }
      b = b.subarray(size + 8);
    }
    if (b.length > 0) pending = Buffer.from(b);
  });
  await new Promise<void>((resolve, reject) => { s.once('connect', resolve); s.once('error', reject); });
  s.write(AMQP_0_9_1_HEADER);
  await opened;
  return s;
}

export const queueName = (i: number) => `scale-q-${i}`;

/**
 * Declares queues 0..count-1 (durable, or passive to verify), `window` at a time. Resolves with
 * the ms taken, or rejects when the broker closes the channel (a passive declare of a missing
 * queue) or past capMs.
 */
export async function declareQueues(url: string, count: number, o: { passive: boolean; window?: number; capMs?: number }): Promise<number> {
  const window = o.window ?? 500;
  let sent = 0;
  let ok = 0;
  let sock: Socket | undefined;
  let done: (() => void) | undefined;
  let fail: ((e: Error) => void) | undefined;
  const finished = new Promise<void>((resolve, reject) => { done = resolve; fail = reject; });
  const frames = (from: number, to: number) => {
    const parts: Buffer[] = [];
    for (let i = from; i < to; i++) {
      parts.push(encodeMethodFrame(1, 'queue.declare', {
        queue: queueName(i), passive: o.passive, durable: true, exclusive: false, autoDelete: false, noWait: false, arguments: {},
      }));
    }
    return Buffer.concat(parts);
  };
  const pump = () => {
    const to = Math.min(count, ok + window);
    if (to > sent) {
      sock!.write(frames(sent, to));
      sent = to;
    }
  };
  const t0 = performance.now();
  sock = await rawChannel(url, (cm) => {
    if (cm === CM_DECLARE_OK) {
      ok++;
      if (ok === count) done?.();
      else if (sent - ok < window / 2) pump();
    } else if (cm === CM_CH_CLOSE || cm === CM_CONN_CLOSE) fail?.(new Error(`channel closed after ${ok} of ${count} declarations`));
  });
  const cap = setTimeout(() => fail?.(new Error(`only ${ok} of ${count} queues declared within ${o.capMs} ms`)), o.capMs ?? 600000);
  try {
    if (count === 0) done?.();
    else pump();
    await finished;
    return performance.now() - t0;
  } finally {
    clearTimeout(cap);
    sock.destroy();
  }
}
