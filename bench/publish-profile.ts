/**
 * Where the broker's cost of a confirmed publish goes: a Warren run in this process (built:
 * `npm run build` first) while another process publishes with amqplib, confirmed, persistent,
 * into a durable queue or a stream. Prints the broker's CPU per message (all its threads, and
 * the main thread's share), its store batches and LMDB transactions, and then one of:
 *
 * - the bytes of JS heap allocated per message, by site (V8's sampling heap profiler; the
 *   default), each with its two callers (an inlined callee's allocations count as its caller's);
 * - `--cpu FILE`: V8's CPU profile of the run, written to FILE (`npx tsx bench/cpuprofile-top.ts
 *   FILE` lists it): the broker's time without the start and warm-up that a profile of a whole
 *   process (`npm run bench -- --cpu-prof`) has;
 * - `--no-profile`: nothing more (the figures above without a profiler's own cost).
 *
 *   npx tsx bench/publish-profile.ts [--messages 200000] [--size 16] [--transient | --stream]
 *                                    [--window 1000] [--cpu FILE | --no-profile] [--top 30]
 *
 * The publisher publishes as `npm run bench`'s amqplib clients do: Nagle off, and either
 * batches of 1,000 each awaited (lib/publish-confirmed.ts, the default) or, with `--window N`,
 * a sliding window of N unconfirmed (the confirm and stream scenarios' pattern: 500 publishes a
 * turn at most). The broker naps for read coalescing as the `warren` command does. A warm-up
 * run of half as many messages comes first (into another queue), so that what is measured is
 * optimised code. Queues are kept, not deleted, so no sweep runs meanwhile.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import amqp, { type ConfirmChannel } from 'amqplib';
import { threadCpuMs } from './lib/proc.js';
import { publishConfirmed } from './lib/publish-confirmed.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string' }, size: { type: 'string' }, transient: { type: 'boolean' }, stream: { type: 'boolean' },
    window: { type: 'string' }, cpu: { type: 'string' }, 'no-profile': { type: 'boolean' }, top: { type: 'string' },
    publisher: { type: 'string' },
  },
});
const messages = Number(values.messages ?? 200_000);
const size = Number(values.size ?? 16);
const stream = values.stream === true;
const persistent = values.transient !== true;
const window = values.window === undefined ? 0 : Number(values.window);
if (stream && !persistent) throw new Error('--stream and --transient: a stream keeps every message on disk');
if (values.cpu !== undefined && values['no-profile']) throw new Error('--cpu and --no-profile: one or the other');

/** Publishes count messages through ch with at most `window` unconfirmed, up to 500 a turn (bench/worker.ts's pump). */
function publishWindowed(ch: ConfirmChannel, queue: string, count: number, body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    let published = 0;
    let confirmed = 0;
    let scheduled = false;
    const canSend = (): boolean => published < count && published - confirmed < window;
    const pump = (): void => {
      scheduled = false;
      for (let n = 0; n < 500; n++) {
        if (!canSend()) return;
        published++;
        ch.publish('', queue, body, { persistent }, onConfirm);
      }
      kick();
    };
    const kick = (): void => {
      if (!scheduled && canSend()) {
        scheduled = true;
        setImmediate(pump);
      }
    };
    const onConfirm = (err: unknown): void => {
      if (err) return reject(new Error('a publish was nacked'));
      confirmed++;
      if (confirmed === count) resolve();
      else kick();
    };
    pump();
  });
}

/** The publisher, run as a child process: confirmed publishes of `count` messages into `queue`. */
async function publisher(url: string, queue: string, count: number): Promise<void> {
  const conn = await amqp.connect(url, { noDelay: true });
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue, { durable: persistent, arguments: stream ? { 'x-queue-type': 'stream' } : {} });
  const body = Buffer.alloc(size, 0x61);
  if (window > 0) await publishWindowed(ch, queue, count, body);
  else await publishConfirmed(ch, queue, count, body, { persistent });
  await conn.close();
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

if (values.publisher !== undefined) {
  const [url, queue] = JSON.parse(values.publisher) as [string, string];
  await publisher(url, queue, messages);
  process.exit(0);
}

const { startBroker } = await import('../dist/broker.js');
const { DEFAULT_CONFIG } = await import('../dist/config.js');
const dataDir = mkdtempSync(join(tmpdir(), 'warren-profile-'));
const warren = await startBroker({
  port: 0, logLevel: 'silent', dataDir, managementPort: 'off', prometheusPort: 'off',
  // As the warren command: the publisher runs in a process of its own, so a nap stops nothing of it.
  readCoalescingMicros: DEFAULT_CONFIG.readCoalescingMicros,
});
const self = fileURLToPath(import.meta.url);
const publish = (queue: string, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', self, '--publisher', JSON.stringify([warren.url, queue]), '--messages', String(count), '--size', String(size)];
    if (!persistent) args.push('--transient');
    if (stream) args.push('--stream');
    if (window > 0) args.push('--window', String(window));
    execFile(process.execPath, args, (err, _out, stderr) => (err ? reject(new Error(`publisher: ${stderr || err.message}`)) : resolve()));
  });
const what = `${messages} ${persistent ? 'persistent' : 'transient'} ${size} B messages into a ${stream ? 'stream' : 'queue'}, confirmed${window > 0 ? `, window ${window}` : ''}`;

/** The measured run, with the broker's CPU per message, its threads' share and its store's commits. */
async function measured(): Promise<void> {
  const counters = () => (warren.broker.store as { counters?: { batches: number; transactions: number } }).counters;
  const threads0 = threadCpuMs(process.pid);
  const cpu0 = process.cpuUsage();
  const commits0 = counters();
  const coalescing = warren.broker.readCoalescing!;
  const naps0 = coalescing.naps;
  // The publisher's connection, kept once seen: its socket reads (recv_cnt) are final when it closes.
  const publishers = new Set<{ counters: { recvCnt: number } }>();
  const watch = setInterval(() => {
    for (const conn of warren.broker.connections) publishers.add(conn);
  }, 10);
  const t0 = performance.now();
  await publish('measured', messages);
  const ms = performance.now() - t0;
  clearInterval(watch);
  const cpu = process.cpuUsage(cpu0);
  const threads1 = threadCpuMs(process.pid);
  const commits1 = counters();
  const us = (n: number) => (n / messages).toFixed(2);
  let main = 0;
  let others = 0;
  for (const [tid, t] of threads1) {
    const d = t - (threads0.get(tid) ?? 0);
    if (tid === process.pid) main += d;
    else others += d;
  }
  console.log(`${what}: ${Math.round((messages * 1000) / ms).toLocaleString('en-US')} msg/s`);
  console.log(`  broker CPU ${us(cpu.user + cpu.system)} µs/msg (user ${us(cpu.user)}, system ${us(cpu.system)}); main thread ${us(main * 1000)}, other threads ${us(others * 1000)} (clock ticks: 10 ms)`);
  let reads = 0;
  for (const conn of publishers) reads += conn.counters.recvCnt;
  console.log(`  reads ${reads.toLocaleString('en-US')} (${(messages / reads).toFixed(1)} messages each), read-coalescing naps after ${(((coalescing.naps - naps0) * 100) / reads).toFixed(0)} % of them`);
  if (commits0 && commits1) console.log(`  store: ${commits1.batches - commits0.batches} batches, ${commits1.transactions - commits0.transactions} LMDB transactions`);
}

/** V8's CPU profile of the measured run, written to file. */
async function cpuProfile(session: Session, file: string): Promise<void> {
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  await measured();
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  console.log(`CPU profile in ${file} (the figures above include the profiler's own cost)`);
}

/** The bytes allocated per message during the measured run, by site. */
async function heapProfile(session: Session): Promise<void> {
  await session.post('HeapProfiler.enable');
  // Every object is counted, whichever collection frees it.
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  await measured();
  const { profile } = await session.post('HeapProfiler.stopSampling');

  const sites = new Map<string, number>();
  let total = 0;
  const name = (n: ProfileNode): string => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber + 1}`;
  const walk = (n: ProfileNode, callers: string[]): void => {
    if (n.selfSize > 0) {
      const key = `${name(n)}  <  ${callers.slice(-2).reverse().join(' < ')}`;
      sites.set(key, (sites.get(key) ?? 0) + n.selfSize);
      total += n.selfSize;
    }
    for (const c of n.children) walk(c, [...callers, n.callFrame.functionName || '(anonymous)']);
  };
  walk(profile.head as unknown as ProfileNode, []);
  console.log(`${(total / messages).toFixed(0)} B of JS heap allocated per message (the CPU figures above include the sampler's own cost)`);
  console.log('B/msg    site  <  callers');
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top ?? 30))) {
    console.log(`${(bytes / messages).toFixed(1).padStart(6)}   ${site}`);
  }
}

try {
  await publish('warm-up', Math.round(messages / 2));
  if (values['no-profile']) await measured();
  else {
    const session = new Session();
    session.connect();
    try {
      if (values.cpu !== undefined) await cpuProfile(session, values.cpu);
      else await heapProfile(session);
    } finally {
      session.disconnect();
    }
  }
} finally {
  await warren.close();
  rmSync(dataDir, { recursive: true, force: true });
}
