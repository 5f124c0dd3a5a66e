/**
 * The scale bench (issue 19, "Scale" and "Latency"): Warren beside a reference RabbitMQ, one
 * scenario at a time, each on a fresh broker.
 *
 *   npm run bench:scale -- [--ref-port 5707] [--only idle,queues,deep,latency] [--json out.json]
 *     idle:    --connections 10000 --heartbeat 10 --procs 4 --warm 200 --settle 120
 *     queues:  --queues 100000 --restarts 3 --ref-cap 900
 *     deep:    --messages 1000000 --points 10 --size 16 --window 2000
 *     latency: --rounds 3 --fraction 0.5
 *
 * With --ref-port, the bench starts the reference itself for each scenario with
 * /work/shared/tools/reference-rabbitmq.sh (fresh data, then restarted with the descriptor limit
 * raised) and stops it at the end. `npm run bench:scale` raises `ulimit -n` for itself, the
 * brokers and the clients. Prints a markdown table on stdout, the progress on stderr.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, pidListeningOn } from '../lib/brokers.js';
import { processCpuMs } from '../lib/proc.js';
import { fmt, median } from '../lib/stats.js';
import { awaitClosed, log, refHome, refRestartKeepingData, refStartFresh, refStop, startWarrenAt } from './common.js';
import { deepQueue, type DeepResult } from './deep.js';
import { idleConnections, type IdleResult } from './idle.js';
import { latencyAtHalf, type LatencyResult } from './latency.js';
import { declareQueues } from './queues.js';

process.setMaxListeners(0);
const { values } = parseArgs({
  options: {
    'ref-port': { type: 'string' }, only: { type: 'string' }, json: { type: 'string' },
    connections: { type: 'string', default: '10000' }, heartbeat: { type: 'string', default: '10' },
    procs: { type: 'string', default: '4' }, warm: { type: 'string', default: '200' }, settle: { type: 'string', default: '120' },
    queues: { type: 'string', default: '100000' }, restarts: { type: 'string', default: '3' }, 'ref-cap': { type: 'string', default: '900' },
    messages: { type: 'string', default: '1000000' }, points: { type: 'string', default: '10' }, size: { type: 'string', default: '16' },
    window: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' }, fraction: { type: 'string', default: '0.5' },
  },
});
const n = (k: keyof typeof values) => Number(values[k]);
const refPort = values['ref-port'] ? Number(values['ref-port']) : undefined;
const refUrl = refPort ? `amqp://guest:guest@127.0.0.1:${refPort}` : undefined;
const only = values.only ? values.only.split(',') : ['idle', 'queues', 'deep', 'latency'];
const logDir = mkdtempSync(join(tmpdir(), 'warren-scale-logs-'));

interface Row { scenario: string; metric: string; warren: number; ref: number; target?: string; met?: boolean; digits?: number }
const rows: Row[] = [];
const problems: string[] = [];
const json: Record<string, unknown> = {};

async function withWarren<T>(tag: string, f: (w: Awaited<ReturnType<typeof startWarrenAt>>, dataDir: string) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), `warren-scale-${tag}-`));
  const w = await startWarrenAt(dataDir, join(logDir, `warren-${tag}.log`));
  try {
    return await f(w, dataDir);
  } finally {
    await w.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function withRef<T>(f: (pid: number) => Promise<T>): Promise<T | undefined> {
  if (!refPort) return undefined;
  const pid = await refStartFresh(refPort);
  try {
    return await f(pid);
  } finally {
    refStop(refPort);
  }
}

async function idle(): Promise<void> {
  const o = { connections: n('connections'), heartbeat: n('heartbeat'), procs: n('procs'), warm: n('warm'), settleS: n('settle') };
  log(`\n== idle: ${o.connections} idle connections, heartbeat ${o.heartbeat} s, ${o.procs} client processes`);
  const w = await withWarren('idle', (b) => idleConnections(b.url, b.pid, o));
  const r = await withRef((pid) => idleConnections(refUrl as string, pid, o));
  json['idle'] = { warren: w, ref: r };
  const note = (x: IdleResult | undefined, who: string) => x?.problems.forEach((p) => problems.push(`idle ${who}: ${p}`));
  note(w, 'warren');
  note(r, 'ref');
  rows.push({ scenario: 'idle', metric: `broker RSS per idle connection, heartbeat ${o.heartbeat} s (KiB)`, warren: w.perConnectionKiB, ref: r?.perConnectionKiB ?? NaN, digits: 1 });
  rows.push({ scenario: 'idle', metric: 'same, slope over the second half of the connections (KiB)', warren: w.perConnectionSecondHalfKiB, ref: r?.perConnectionSecondHalfKiB ?? NaN, target: '≤ 10 KiB', met: w.perConnectionSecondHalfKiB <= 10, digits: 1 });
  rows.push({ scenario: 'idle', metric: 'broker RSS with all connections open (MiB)', warren: w.rssAfterKiB / 1024, ref: (r?.rssAfterKiB ?? NaN) / 1024 });
  rows.push({ scenario: 'idle', metric: `connections still open after ${o.settleS} s of heartbeats`, warren: w.connections - w.closed - (w.connections - w.opened), ref: r ? r.connections - r.closed - (r.connections - r.opened) : NaN });
}

async function queues(): Promise<void> {
  const count = n('queues');
  const restarts = n('restarts');
  const capMs = n('ref-cap') * 1000;
  log(`\n== queues: ${count} durable queues declared, broker restarted ${restarts}× on the same data`);
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-scale-queues-'));
  const logFile = join(logDir, 'warren-queues.log');
  const wr = { declareMs: NaN, listenMs: [] as number[], cpuMs: [] as number[], recovered: false };
  try {
    let w = await startWarrenAt(dataDir, logFile);
    wr.declareMs = await declareQueues(w.url, count, { passive: false });
    log(`    warren: declared in ${fmt(wr.declareMs)} ms`);
    await w.stop();
    for (let i = 0; i < restarts; i++) {
      w = await startWarrenAt(dataDir, logFile);
      wr.listenMs.push(w.listenMs);
      wr.cpuMs.push(w.listenCpuMs);
      log(`    warren: restart ${i + 1}: listening after ${fmt(w.listenMs)} ms (${fmt(w.listenCpuMs)} ms of broker CPU)`);
      if (i === 0) {
        try {
          await declareQueues(w.url, count, { passive: true });
          wr.recovered = true;
        } catch (err) {
          problems.push(`queues warren: ${(err as Error).message}`);
        }
      }
      await w.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const rr = { declareMs: NaN, listenMs: NaN, cpuMs: NaN, recovered: false };
  if (refPort) {
    await refStartFresh(refPort);
    try {
      rr.declareMs = await declareQueues(refUrl as string, count, { passive: false, capMs });
      log(`    ref: declared in ${fmt(rr.declareMs)} ms`);
      refStop(refPort);
      await awaitClosed(refPort, capMs);
      rr.listenMs = await refRestartKeepingData(refPort, capMs);
      rr.cpuMs = processCpuMs(pidListeningOn(refPort));
      log(`    ref: restart: listening after ${fmt(rr.listenMs)} ms (${fmt(rr.cpuMs)} ms of broker CPU)`);
      if (Number.isFinite(rr.listenMs)) {
        await declareQueues(refUrl as string, count, { passive: true, capMs });
        rr.recovered = true;
      }
    } catch (err) {
      problems.push(`queues ref: ${(err as Error).message}`);
    } finally {
      refStop(refPort);
    }
  }
  json['queues'] = { warren: wr, ref: rr };
  const listen = median(wr.listenMs);
  rows.push({ scenario: 'queues', metric: `declare ${count} durable queues (s)`, warren: wr.declareMs / 1000, ref: rr.declareMs / 1000, digits: 1 });
  rows.push({ scenario: 'queues', metric: `restart with ${count} queues: spawn → listening (ms)`, warren: listen, ref: rr.listenMs, target: '≤ 2,000 ms', met: listen <= 2000 });
  rows.push({ scenario: 'queues', metric: 'broker CPU until listening (ms)', warren: median(wr.cpuMs), ref: rr.cpuMs });
  rows.push({ scenario: 'queues', metric: 'every queue recovered (passive declare of each: 1 = yes)', warren: wr.recovered ? 1 : 0, ref: refPort ? (rr.recovered ? 1 : 0) : NaN });
}

async function deep(): Promise<void> {
  const o = { messages: n('messages'), points: n('points'), size: n('size'), window: n('window'), capS: n('ref-cap') };
  log(`\n== deep: one durable queue filled with ${o.messages} persistent ${o.size} B messages, nobody consuming`);
  const w = await withWarren('deep', (b, dir) => deepQueue(b.url, b.pid, dir, o));
  const r = refPort ? await withRef((pid) => deepQueue(refUrl as string, pid, join(refHome(refPort), 'mnesia'), o)) : undefined;
  json['deep'] = { warren: w, ref: r };
  for (const [x, who] of [[w, 'warren'], [r, 'ref']] as Array<[DeepResult | undefined, string]>) x?.problems.forEach((p) => problems.push(`deep ${who}: ${p}`));
  const at = (x: DeepResult | undefined, k: number) => x?.points.find((p) => p.messages >= Math.round((o.messages * k) / o.points));
  const levels = [...new Set([1, Math.round(o.points / 2), o.points])];
  for (const k of levels) {
    const label = `${fmt(Math.round((o.messages * k) / o.points))} messages`;
    rows.push({ scenario: 'deep', metric: `broker RSS at ${label} (MiB)`, warren: (at(w, k)?.rssKiB ?? NaN) / 1024, ref: (at(r, k)?.rssKiB ?? NaN) / 1024 });
  }
  for (const k of levels) {
    rows.push({ scenario: 'deep', metric: `broker RSS without file pages at ${fmt(Math.round((o.messages * k) / o.points))} messages (MiB)`, warren: (at(w, k)?.rssAnonKiB ?? NaN) / 1024, ref: (at(r, k)?.rssAnonKiB ?? NaN) / 1024 });
  }
  rows.push({ scenario: 'deep', metric: 'RSS growth per message, first → last point (B)', warren: w.rssPerMessage, ref: r?.rssPerMessage ?? NaN });
  rows.push({ scenario: 'deep', metric: `disk per message, ${o.size} B bodies (B)`, warren: w.diskPerMessage, ref: r?.diskPerMessage ?? NaN });
  rows.push({ scenario: 'deep', metric: 'fill rate, 1 confirming publisher (msg/s, noisy)', warren: w.rate, ref: r?.rate ?? NaN });
  rows.push({ scenario: 'deep', metric: 'queue.delete of the full queue: delete-ok after (ms)', warren: w.deleteOkMs, ref: r?.deleteOkMs ?? NaN });
  rows.push({ scenario: 'deep', metric: "another connection's slowest round trip meanwhile (ms)", warren: w.probeMaxMs, ref: r?.probeMaxMs ?? NaN });
}

async function latency(): Promise<void> {
  const o = { rounds: n('rounds'), fraction: n('fraction') };
  log(`\n== latency: p50 / p99 publish → deliver at ${o.fraction * 100} % of each broker's e2e saturation rate`);
  const r = await withRef((pid) => latencyAtHalf('ref', refUrl as string, pid, o));
  const w = await withWarren('latency', (b) => latencyAtHalf('warren', b.url, b.pid, { ...o, ...(r ? { atRate: r.rate } : {}) }));
  json['latency'] = { warren: w, ref: r };
  for (const [x, who] of [[w, 'warren'], [r, 'ref']] as Array<[LatencyResult | undefined, string]>) x?.problems.forEach((p) => problems.push(`latency ${who}: ${p}`));
  rows.push({ scenario: 'latency', metric: 'e2e saturation rate, amqplib (msg/s)', warren: w.saturation, ref: r?.saturation ?? NaN });
  rows.push({ scenario: 'latency', metric: `paced at ${o.fraction * 100} % of own saturation: rate (msg/s)`, warren: w.rate, ref: r?.rate ?? NaN });
  rows.push({ scenario: 'latency', metric: 'p50 publish → deliver (ms)', warren: w.p50, ref: r?.p50 ?? NaN, digits: 2 });
  rows.push({ scenario: 'latency', metric: 'p99 publish → deliver (ms)', warren: w.p99, ref: r?.p99 ?? NaN, digits: 2 });
  if (w.atRate) {
    rows.push({ scenario: 'latency', metric: `Warren at RabbitMQ's paced rate (${fmt(w.atRate.rate)} msg/s): p50 / p99 (ms)`, warren: w.atRate.p50, ref: r?.p50 ?? NaN, digits: 2 });
    rows.push({ scenario: 'latency', metric: '… p99 (ms)', warren: w.atRate.p99, ref: r?.p99 ?? NaN, digits: 2 });
  }
}

const show = (x: number, digits = 0) => (Number.isFinite(x) ? x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '—');

log(ensureBuilt());
for (const s of only) {
  try {
    if (s === 'idle') await idle();
    else if (s === 'queues') await queues();
    else if (s === 'deep') await deep();
    else if (s === 'latency') await latency();
    else throw new Error(`unknown scenario ${s}`);
  } catch (err) {
    problems.push(`${s}: ${(err as Error).message}`);
    log(`  ${s} failed: ${(err as Error).message}`);
  }
}
const out = ['| scenario | metric | Warren | RabbitMQ | target | met |', '| --- | --- | ---: | ---: | --- | --- |'];
for (const r of rows) {
  out.push(`| ${r.scenario} | ${r.metric} | ${show(r.warren, r.digits)} | ${show(r.ref, r.digits)} | ${r.target ?? ''} | ${r.met === undefined ? '' : r.met ? 'yes' : '**no**'} |`);
}
if (problems.length) out.push('', 'Problems:', ...problems.map((p) => `- ${p}`));
process.stdout.write(`${out.join('\n')}\n`);
if (values.json) writeFileSync(values.json, JSON.stringify({ rows, problems, details: json }, null, 2));
// Exit explicitly: tsx's esbuild service or a client's timer must not keep the bench alive.
process.exit(problems.length ? 1 : 0);
