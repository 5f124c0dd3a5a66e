/**
 * One process of idle AMQP connections for the scale bench: raw sockets, a pre-encoded
 * handshake (start-ok PLAIN guest/guest, tune-ok with the requested heartbeat, open), then
 * nothing but heartbeats, answered both ways: every connection sends a heartbeat frame every
 * heartbeat/2 seconds (one timer for the whole process) and counts the broker's.
 *
 *   tsx bench/scale/idle-worker.ts URL COUNT HEARTBEAT_S [CONCURRENCY] [PROPERTIES]
 *
 * PROPERTIES: `amqplib` sends the client properties amqplib sends (product, version, platform,
 * information, six capabilities); by default only a product.
 *
 * Talks to its parent over stdout/stdin, one JSON line each way:
 *   → {"opened":N,"failed":F,"ms":T}             once every connection is open (or failed)
 *   ← "status"  → {"open":N,"closed":C,"heartbeatsIn":H,"failures":[...]}
 *   ← "close"   destroys every socket and exits.
 */
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { F } from '../../src/frame/field-table.js';
import { AMQP_0_9_1_HEADER } from '../../src/frame/protocol-header.js';

const [url, countArg, hbArg, concArg, propsArg] = process.argv.slice(2);
const u = new URL(url as string);
const count = Number(countArg);
const heartbeat = Number(hbArg);
const concurrency = Number(concArg ?? 50);

const START_OK = encodeMethodFrame(0, 'connection.start-ok', {
  clientProperties: propsArg === 'amqplib'
    ? {
      product: F.str('amqplib'), version: F.str('0.10.9'), platform: F.str(`Node.JS ${process.version}`),
      information: F.str('https://amqp-node.github.io/amqplib/'),
      capabilities: F.table({
        publisher_confirms: F.bool(true), exchange_exchange_bindings: F.bool(true), 'basic.nack': F.bool(true),
        consumer_cancel_notify: F.bool(true), 'connection.blocked': F.bool(true), authentication_failure_close: F.bool(true),
      }),
    }
    : { product: F.str('warren-scale-bench') },
  mechanism: 'PLAIN', response: `\0${decodeURIComponent(u.username || 'guest')}\0${decodeURIComponent(u.password || 'guest')}`, locale: 'en_US',
});
const TUNE_OK_OPEN = Buffer.concat([
  encodeMethodFrame(0, 'connection.tune-ok', { channelMax: 2047, frameMax: 131072, heartbeat }),
  encodeMethodFrame(0, 'connection.open', { virtualHost: decodeURIComponent(u.pathname.replace(/^\//, '')) || '/' }),
]);
const HEARTBEAT = Buffer.from([8, 0, 0, 0, 0, 0, 0, 0xce]);

const sockets = new Set<Socket>();
let open = 0;
let closed = 0;
let heartbeatsIn = 0;
let shuttingDown = false;
const failures: string[] = [];
const fail = (why: string) => { if (failures.length < 20) failures.push(why); };

/** Opens one connection; resolves true once connection.open-ok arrives. */
function openOne(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: u.hostname, port: Number(u.port || 5672) });
    let pending: Buffer | undefined;
    let done = false;
    const finish = (ok: boolean) => { if (!done) { done = true; resolve(ok); } };
    s.setNoDelay(true);
    s.once('connect', () => s.write(AMQP_0_9_1_HEADER));
    s.on('error', (e) => { fail(`socket: ${e.message}`); finish(false); });
    s.on('close', () => {
      if (sockets.delete(s)) { closed++; open--; if (!shuttingDown) fail('connection closed by the broker'); }
      finish(false);
    });
    s.on('data', (chunk: Buffer) => {
      let b = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = undefined;
      while (b.length >= 8) {
        const size = b.readUInt32BE(3);
        if (b.length < size + 8) break;
        const type = b[0];
        if (type === 8) heartbeatsIn++;
        else if (type === 1) {
          const cm = b.readUInt32BE(7);
          if (cm === 0x000a000a) s.write(START_OK); // connection.start
          else if (cm === 0x000a001e) s.write(TUNE_OK_OPEN); // connection.tune
          else if (cm === 0x000a0029) { sockets.add(s); open++; finish(true); } // connection.open-ok
          else if (cm === 0x000a0032) { fail(`connection.close: ${b.subarray(13, 13 + (b[13] ?? 0) + 1).toString('latin1')}`); s.destroy(); }
        }
        b = b.subarray(size + 8);
      }
      if (b.length > 0) pending = Buffer.from(b);
    });
  });
}

const t0 = performance.now();
let next = 0;
let failed = 0;
async function lane(): Promise<void> {
  while (next < count) {
    next++;
    if (!(await openOne())) failed++;
  }
}
await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
const ms = performance.now() - t0;

if (heartbeat > 0) {
  setInterval(() => { for (const s of sockets) s.write(HEARTBEAT); }, (heartbeat * 1000) / 2);
}
process.stdout.write(`${JSON.stringify({ opened: open, failed, ms })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  if (line === 'status') process.stdout.write(`${JSON.stringify({ open, closed, heartbeatsIn, failures })}\n`);
  else if (line === 'close') {
    shuttingDown = true;
    for (const s of sockets) s.destroy();
    process.exit(0);
  }
});
process.stdin.on('end', () => process.exit(0));
