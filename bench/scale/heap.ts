/**
 * What one idle connection holds in Warren's JS heap: heap snapshots (taken on SIGUSR2 with
 * `--heapsnapshot-signal`, which collects garbage first) of Warren with `warm` idle connections
 * and again with `warm + connections`, compared by (node type, constructor name). Prints the
 * live bytes and objects per connection, the biggest contributors, and the broker's RSS.
 *
 *   npx tsx bench/scale/heap.ts [--connections 3000] [--warm 200] [--heartbeat 10] [--top 40] [--amqplib-properties]
 *
 * Uses dist/ (built if older than src/). Connections are bench/scale/idle-worker.ts's raw
 * sockets (handshake, then heartbeats only), as in `npm run bench:scale -- --only idle`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt } from '../lib/brokers.js';
import { processRssKiB } from '../lib/proc.js';
import { log, sleep, startWarrenAt } from './common.js';

const { values } = parseArgs({
  options: {
    connections: { type: 'string', default: '3000' }, warm: { type: 'string', default: '200' },
    heartbeat: { type: 'string', default: '10' }, top: { type: 'string', default: '40' },
    /** Connections send amqplib's client properties instead of a one-field table. */
    'amqplib-properties': { type: 'boolean', default: false },
  },
});
const connections = Number(values.connections);
const warm = Number(values.warm);
const heartbeat = Number(values.heartbeat);
const top = Number(values.top);

interface Summary { bytes: number; count: number; by: Map<string, { bytes: number; count: number }> }

/** Sums a .heapsnapshot's nodes by "type:name" (self sizes). */
function summarise(file: string): Summary {
  const snap = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const nf = fields.length;
  const iType = fields.indexOf('type');
  const iName = fields.indexOf('name');
  const iSize = fields.indexOf('self_size');
  const by = new Map<string, { bytes: number; count: number }>();
  let bytes = 0;
  let count = 0;
  for (let i = 0; i < snap.nodes.length; i += nf) {
    const type = types[snap.nodes[i + iType] as number] as string;
    const size = snap.nodes[i + iSize] as number;
    let name = snap.strings[snap.nodes[i + iName] as number] as string;
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string') name = '';
    if (name.length > 60) name = `${name.slice(0, 60)}…`;
    const key = `${type}:${name}`;
    const e = by.get(key) ?? { bytes: 0, count: 0 };
    e.bytes += size;
    e.count++;
    by.set(key, e);
    bytes += size;
    count++;
  }
  return { bytes, count, by };
}

function openIdle(url: string, count: number): Promise<() => void> {
  const p = spawn(process.execPath, ['--import', 'tsx', new URL('./idle-worker.ts', import.meta.url).pathname, url, String(count), String(heartbeat), '50', values['amqplib-properties'] ? 'amqplib' : 'plain'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  process.once('exit', () => p.kill('SIGKILL'));
  return new Promise((resolve, reject) => {
    p.stdout!.once('data', (d: Buffer) => {
      const r = JSON.parse(d.toString()) as { opened: number; failed: number };
      if (r.opened !== count) reject(new Error(`${r.opened} of ${count} opened`));
      else resolve(() => p.stdin!.write('close\n'));
    });
  });
}

async function snapshot(pid: number, dir: string): Promise<Summary> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  for (;;) {
    await sleep(500);
    const f = readdirSync(dir).find((x) => x.endsWith('.heapsnapshot') && !before.has(x));
    if (!f) continue;
    // Written when its size stops changing and it parses.
    try {
      return summarise(join(dir, f));
    } catch {
      continue;
    }
  }
}

log(ensureBuilt());
const dataDir = mkdtempSync(join(tmpdir(), 'warren-heap-data-'));
const snapDir = mkdtempSync(join(tmpdir(), 'warren-heap-snaps-'));
const w = await startWarrenAt(dataDir, join(snapDir, 'warren.log'), ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapDir}`]);
const closers: Array<() => void> = [];
try {
  closers.push(await openIdle(w.url, warm));
  await sleep(2000);
  const rssA = processRssKiB(w.pid);
  const a = await snapshot(w.pid, snapDir);
  closers.push(await openIdle(w.url, connections));
  await sleep(Math.max(2000, heartbeat * 1000 + 1000));
  const rssB = processRssKiB(w.pid);
  const b = await snapshot(w.pid, snapDir);
  const rows = [...b.by].map(([k, v]) => {
    const o = a.by.get(k) ?? { bytes: 0, count: 0 };
    return { k, bytes: (v.bytes - o.bytes) / connections, count: (v.count - o.count) / connections };
  }).filter((r) => Math.abs(r.bytes) >= 1 || Math.abs(r.count) >= 0.05).sort((x, y) => y.bytes - x.bytes);
  console.log(`live heap per connection: ${((b.bytes - a.bytes) / connections).toFixed(0)} B, ${((b.count - a.count) / connections).toFixed(1)} objects`);
  console.log(`RSS per connection (no settle): ${((rssB - rssA) / connections).toFixed(2)} KiB (${rssA} → ${rssB} KiB)`);
  for (const r of rows.slice(0, top)) console.log(`${r.bytes.toFixed(1).padStart(8)} B ${r.count.toFixed(2).padStart(6)}  ${r.k}`);
} finally {
  for (const c of closers) c();
  await w.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(snapDir, { recursive: true, force: true });
}
process.exit(0);
