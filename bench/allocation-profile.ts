/**
 * Where the broker allocates JS heap per message (what its garbage collection then costs): the
 * sampling heap profiler of a Warren run in this process (built: `npm run build` first) while
 * another process publishes with amqplib, confirmed, into a durable queue (persistent, 1,000
 * unconfirmed at most: lib/publish-confirmed.ts). Prints the bytes allocated per message and the allocation sites
 * with the most, each with its two callers (an inlined callee's allocations count as its
 * caller's).
 *
 *   npx tsx bench/allocation-profile.ts [--messages 200000] [--size 16] [--transient] [--top 30]
 *
 * A warm-up run of half as many messages comes first (into another queue), so that the
 * profile is of optimised code. Queues are kept, not deleted, so no sweep runs meanwhile.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import amqp from 'amqplib';
import { publishConfirmed } from './lib/publish-confirmed.js';

/** The publisher, run as a child process: confirmed publishes of `count` messages into `queue`. */
async function publisher(url: string, queue: string, count: number, size: number, persistent: boolean): Promise<void> {
  const conn = await amqp.connect(url);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue(queue, { durable: persistent });
  await publishConfirmed(ch, queue, count, Buffer.alloc(size, 0x61), { persistent });
  await conn.close();
}

interface ProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: ProfileNode[];
}

const { values } = parseArgs({
  options: {
    messages: { type: 'string' }, size: { type: 'string' }, transient: { type: 'boolean' }, top: { type: 'string' },
    publisher: { type: 'string' },
  },
});
const messages = Number(values.messages ?? 200_000);
const size = Number(values.size ?? 16);
const persistent = values.transient !== true;

if (values.publisher !== undefined) {
  const [url, queue] = JSON.parse(values.publisher) as [string, string];
  await publisher(url, queue, messages, size, persistent);
  process.exit(0);
}

const { startBroker } = await import('../dist/broker.js');
const dataDir = mkdtempSync(join(tmpdir(), 'warren-alloc-'));
const warren = await startBroker({ port: 0, logLevel: 'silent', dataDir, managementPort: 'off', prometheusPort: 'off' } as never);
const self = fileURLToPath(import.meta.url);
const publish = (queue: string, count: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const args = ['--import', 'tsx', self, '--publisher', JSON.stringify([warren.url, queue]), '--messages', String(count), '--size', String(size)];
    if (!persistent) args.push('--transient');
    execFile(process.execPath, args, (err, _out, stderr) => (err ? reject(new Error(`publisher: ${stderr || err.message}`)) : resolve()));
  });

try {
  await publish('warm-up', Math.round(messages / 2));
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // Every object is counted, whichever collection frees it.
  await session.post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  await publish('measured', messages);
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();

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
  console.log(`${messages} ${persistent ? 'persistent' : 'transient'} ${size} B messages, confirmed: ${(total / messages).toFixed(0)} B of JS heap allocated per message`);
  console.log('B/msg    site  <  callers');
  for (const [site, bytes] of [...sites].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top ?? 30))) {
    console.log(`${(bytes / messages).toFixed(1).padStart(6)}   ${site}`);
  }
} finally {
  await warren.close();
  rmSync(dataDir, { recursive: true, force: true });
}
