/**
 * npm run bench -- --loadgen-selfcheck [--ref URL] [--quick] [--rounds N] [--markdown]
 *
 * Shows that the load generator is not what limits the lg-* scenarios: each generator role runs
 * against sinks that cost next to nothing (bench/loadgen/sink.ts, own process) and then against
 * Warren (and the reference, with --ref) in the same spec, and the rates are compared. The
 * generator passes when, for every role, its rate against the sink is at least 3× the broker's.
 *
 *   publisher → TCP sink (only reads; no handshake)        vs lg-publish on the broker
 *   publisher → fake broker (transient)                    vs lg-publish
 *   4 confirm publishers (2 processes × 2) → fake broker   vs lg-confirm
 *   consumer ← fake broker (prefetch ignored, ack every 100) vs lg-e2e's consumer
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { children, ROOT, startWarren, type RunningWarren, type WarrenLaunch } from '../lib/brokers.js';
import { awaitQuiet } from '../lib/proc.js';
import { fmt, median } from '../lib/stats.js';
import type { ConsumeSpec, PublishSpec } from '../lib/protocol.js';
import {
  brokerUsPerMessage, consumeSpec, cpuOf, openAdmin, publishSpec, rateOf, sum, windowRun,
  type BenchOptions, type RoundOutcome, type Scenario, type Target,
} from '../scenarios.js';
import { LOADGEN_SCENARIOS } from './scenarios.js';
import type { SinkMode, SinkToParent } from './sink.js';
import { benchBody, encodePublish } from './wire.js';

export interface SelfcheckOptions {
  launch: WarrenLaunch;
  bench: BenchOptions;
  ref: string | undefined;
  refPid: number;
  refName: string;
  rounds: number;
  markdown: boolean;
  /** Write every round and the medians here as JSON. */
  json: string | undefined;
  log: (s: string) => void;
}

/** How many times faster than the broker the generator must run against the sinks. */
export const HEADROOM_TARGET = 3;

interface SinkStats {
  bytes: number;
  publishes: number;
  deliveries: number;
  acks: number;
}

interface Sink {
  pid: number;
  port: number;
  stats(): Promise<SinkStats>;
  stop(): void;
}

async function startSink(mode: SinkMode): Promise<Sink> {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'loadgen', 'sink.ts')], {
    cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_SINK: mode },
  });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  proc.on('error', () => {});
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${mode} sink did not listen within 30 s`)), 30000);
    proc.on('message', (m: SinkToParent) => {
      if (m.ev === 'listening') {
        clearTimeout(t);
        resolve(m.port);
      }
    });
    proc.once('exit', (code) => reject(new Error(`${mode} sink exited (${code})`)));
  });
  const stats = () => new Promise<SinkStats>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${mode} sink did not report its counts`)), 10000);
    const on = (m: SinkToParent) => {
      if (m.ev !== 'stats') return;
      clearTimeout(t);
      proc.off('message', on);
      resolve(m);
    };
    proc.on('message', on);
    proc.send({ cmd: 'stats' });
  });
  return { pid: proc.pid as number, port, stats, stop: () => proc.kill('SIGKILL') };
}

/** A Target for windowRun: a sink has no admin channel (no queue depth is read). */
function sinkTarget(s: Sink): Target {
  return {
    kind: 'warren', url: `amqp://guest:guest@127.0.0.1:${s.port}`, pid: s.pid,
    admin: undefined as never, ch: undefined as never, listenMs: NaN, givenListenMs: NaN,
  };
}

interface Measured {
  rate: number;
  /** CPU % of one core: the generator's processes (all, busiest) and the sink's/broker's. */
  genCpu: number;
  genCpuMax: number;
  peerCpu: number;
  usPerMsg: number;
  problems: string[];
}

/**
 * One window of generator traffic against a sink, checked against the sink's own counts: what
 * the publishers say they sent is what the sink read (publishes counted by the fake broker, or
 * octets by the TCP sink), and a consumer got no more than was pushed and did acknowledge.
 */
async function againstSink(s: Sink, mode: SinkMode, o: BenchOptions, pubs: PublishSpec[], cons: ConsumeSpec[]): Promise<Measured> {
  await awaitQuiet(5000);
  const before = await s.stats();
  const run = await windowRun(sinkTarget(s), o, pubs, cons, false);
  // The consumers' close and the publishers' last octets reach the sink before it is asked.
  const after = await s.stats();
  const published = sum(run.publishers.map((p) => p.result?.total ?? 0));
  const delivered = sum(run.consumers.map((c) => c.result?.total ?? 0));
  if (pubs.length > 0) {
    if (published === 0) run.problems.push('nothing published');
    if (mode === 'broker' && after.publishes - before.publishes !== published) {
      run.problems.push(`the generator counted ${published} publishes, the fake broker read ${after.publishes - before.publishes}`);
    }
    if (mode === 'tcp') {
      const connections = sum(pubs.map((p) => p.connections ?? 1));
      const expected = connections * 8 + published * encodePublish(1, '', 'q', benchBody(16), {}).length;
      if (after.bytes - before.bytes !== expected) run.problems.push(`the generator sent ${expected} octets by its count, the TCP sink read ${after.bytes - before.bytes}`);
    }
  }
  if (cons.length > 0) {
    if (delivered === 0) run.problems.push('nothing delivered');
    if (delivered > after.deliveries - before.deliveries) run.problems.push(`the consumer counted ${delivered} deliveries, the fake broker sent ${after.deliveries - before.deliveries}`);
    if (after.acks === before.acks) run.problems.push('the consumer sent no basic.ack');
  }
  const rate = cons.length > 0 ? sum(run.consumers.map((c) => rateOf(c.marks))) : sum(run.publishers.map((p) => rateOf(p.marks)));
  const cpus = run.workers.map((w) => cpuOf(w.marks));
  return {
    rate, genCpu: sum(cpus), genCpuMax: Math.max(...cpus), peerCpu: run.brokerCpu,
    usPerMsg: (run.brokerCpu * 10000) / rate, problems: run.problems,
  };
}

/** A scenario round on a broker, reduced to what the self-check compares. */
async function onBroker(s: Scenario, t: Target, o: BenchOptions, clientRole: 'publish' | 'consume'): Promise<Measured> {
  await awaitQuiet(5000);
  let r: RoundOutcome;
  try {
    r = await s.round(t, o);
  } catch (err) {
    return { rate: NaN, genCpu: NaN, genCpuMax: NaN, peerCpu: NaN, usPerMsg: NaN, problems: [(err as Error).message] };
  }
  const names = Object.keys(r.clients ?? {}).filter((n) => n.startsWith(`lg-${clientRole}`));
  const metric = s.metrics[0];
  return {
    // the rate the generator's role achieved (client side), as compared with the sink runs
    rate: sum(names.map((n) => r.clientRates?.[n] ?? NaN)),
    genCpu: sum(names.map((n) => r.clients?.[n] ?? NaN)),
    genCpuMax: Math.max(...names.map((n) => r.clients?.[n] ?? NaN)),
    peerCpu: r.brokerCpu,
    usPerMsg: metric ? brokerUsPerMessage(metric, r) : NaN,
    problems: r.problems,
  };
}

interface Check {
  role: string;
  sink: 'tcp' | 'broker';
  scenario: string;
  clientRole: 'publish' | 'consume';
  specs(t: Target): { pubs: PublishSpec[]; cons: ConsumeSpec[] };
}

/** Against a sink there is no broker to protect: no bound on messages (the default is 20 M). */
const lg = { engine: 'loadgen', maxMessages: Number.MAX_SAFE_INTEGER } as const;
const CHECKS: Check[] = [
  {
    role: 'publisher 16 B → TCP sink (raw)', sink: 'tcp', scenario: 'lg-publish', clientRole: 'publish',
    specs: (t) => ({ pubs: [publishSpec(t, { ...lg, routingKey: 'q', raw: true })], cons: [] }),
  },
  {
    role: 'publisher 16 B → fake broker', sink: 'broker', scenario: 'lg-publish', clientRole: 'publish',
    specs: (t) => ({ pubs: [publishSpec(t, { ...lg, routingKey: 'q' })], cons: [] }),
  },
  {
    role: '4 confirm publishers (window 1000) → fake broker', sink: 'broker', scenario: 'lg-confirm', clientRole: 'publish',
    specs: (t) => {
      const p = publishSpec(t, { ...lg, routingKey: 'q', persistent: true, confirmWindow: 1000, connections: 2 });
      return { pubs: [p, { ...p }], cons: [] };
    },
  },
  {
    role: 'consumer (prefetch 1000, ack every 100) ← fake broker', sink: 'broker', scenario: 'lg-e2e', clientRole: 'consume',
    specs: (t) => ({ pubs: [], cons: [consumeSpec(t, { ...lg, queues: ['q'], prefetch: 1000, ackEvery: 100 })] }),
  },
];

function medianOf(ms: Measured[]): Measured {
  const m = (f: (x: Measured) => number) => median(ms.map(f));
  return {
    rate: m((x) => x.rate), genCpu: m((x) => x.genCpu), genCpuMax: m((x) => x.genCpuMax), peerCpu: m((x) => x.peerCpu),
    usPerMsg: m((x) => x.usPerMsg), problems: [...new Set(ms.flatMap((x) => x.problems))],
  };
}

export async function runSelfcheck(opt: SelfcheckOptions): Promise<boolean> {
  const { log, bench: o } = opt;
  const sinkRuns = new Map<Check, Measured[]>();
  const brokerRuns = new Map<string, { warren: Measured[]; ref: Measured[] }>();
  // Generator against the sinks.
  for (const mode of ['tcp', 'broker'] as const) {
    const sink = await startSink(mode);
    try {
      for (const c of CHECKS.filter((x) => x.sink === mode)) {
        log(`\n== ${c.role}`);
        for (let r = 0; r < opt.rounds; r++) {
          const { pubs, cons } = c.specs(sinkTarget(sink));
          const m = await againstSink(sink, mode, o, pubs, cons);
          log(`    sink   rate=${fmt(m.rate)}/s  cpu generator ${fmt(m.genCpu)}% (busiest ${fmt(m.genCpuMax)}%) sink ${fmt(m.peerCpu)}%${m.problems.length ? `  PROBLEMS: ${m.problems.join('; ')}` : ''}`);
          sinkRuns.set(c, [...(sinkRuns.get(c) ?? []), m]);
        }
      }
    } finally {
      sink.stop();
    }
  }
  // The same roles against the brokers, through the lg-* scenarios.
  const scenarios = [...new Set(CHECKS.map((c) => c.scenario))];
  for (const name of scenarios) {
    const s = LOADGEN_SCENARIOS.find((x) => x.name === name) as Scenario;
    const role = (CHECKS.find((c) => c.scenario === name) as Check).clientRole;
    const runs = { warren: [] as Measured[], ref: [] as Measured[] };
    brokerRuns.set(name, runs);
    log(`\n== ${name} (${s.title})`);
    let warren: RunningWarren | undefined;
    let wt: Target | undefined;
    let rt: Target | undefined;
    try {
      warren = await startWarren(opt.launch, `selfcheck-${name}`);
      const w = await openAdmin(warren.url);
      wt = { kind: 'warren', url: warren.url, pid: warren.pid, admin: w.admin, ch: w.ch, listenMs: warren.listenMs, givenListenMs: NaN };
      if (opt.ref) {
        const r = await openAdmin(opt.ref);
        rt = { kind: 'ref', url: opt.ref, pid: opt.refPid, admin: r.admin, ch: r.ch, listenMs: NaN, givenListenMs: NaN };
      }
      for (let r = 0; r < opt.rounds; r++) {
        for (const t of [wt, rt]) {
          if (!t) continue;
          const m = await onBroker(s, t, o, role);
          log(`    ${t.kind.padEnd(6)} ${role} rate=${fmt(m.rate)}/s  broker ${fmt(m.usPerMsg)} µs/msg  cpu generator ${fmt(m.genCpu)}% (busiest ${fmt(m.genCpuMax)}%) broker ${fmt(m.peerCpu)}%${m.problems.length ? `  PROBLEMS: ${m.problems.join('; ')}` : ''}`);
          runs[t.kind].push(m);
        }
      }
    } catch (err) {
      log(`  failed: ${(err as Error).message}`);
    } finally {
      for (const t of [wt, rt]) await t?.admin.close().catch(() => {});
      await warren?.stop();
    }
  }
  // Table.
  const header = ['generator role', 'vs sink (msg/s)', 'generator CPU% (busiest)', 'generator µs/msg', 'sink CPU%', `vs Warren (msg/s)`, 'headroom W', ...(opt.ref ? [`vs ${opt.refName} (msg/s)`, `headroom ${opt.refName[0]}`] : []), `≥ ${HEADROOM_TARGET}×`];
  let ok = true;
  const problems: string[] = [];
  const results: unknown[] = [];
  const rows = CHECKS.map((c) => {
    const sink = medianOf(sinkRuns.get(c) ?? []);
    const b = brokerRuns.get(c.scenario);
    const w = medianOf(b?.warren ?? []);
    const f = medianOf(b?.ref ?? []);
    const hw = sink.rate / w.rate;
    const hf = sink.rate / f.rate;
    const pass = hw >= HEADROOM_TARGET && (!opt.ref || hf >= HEADROOM_TARGET);
    if (!pass) ok = false;
    results.push({
      role: c.role, sink: c.sink, scenario: c.scenario, headroomWarren: hw, headroomRef: hf, pass,
      median: { sink, warren: w, ref: f }, rounds: { sink: sinkRuns.get(c) ?? [], warren: b?.warren ?? [], ref: b?.ref ?? [] },
    });
    problems.push(...sink.problems.map((p) => `${c.role}, sink: ${p}`), ...w.problems.map((p) => `${c.scenario}, Warren: ${p}`), ...f.problems.map((p) => `${c.scenario}, ${opt.refName}: ${p}`));
    const x = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)}×` : '—');
    return [
      c.role, fmt(sink.rate), `${fmt(sink.genCpu)} (${fmt(sink.genCpuMax)})`, fmt((sink.genCpu * 10000) / sink.rate), fmt(sink.peerCpu), `${fmt(w.rate)} (${c.scenario})`, x(hw),
      ...(opt.ref ? [fmt(f.rate), x(hf)] : []), pass ? 'yes' : 'NO',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd();
  process.stdout.write(`\n${[line(header), widths.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)].join('\n')}\n`);
  if (opt.markdown) {
    const md = (cells: string[]) => `| ${cells.join(' | ')} |`;
    process.stdout.write(`\n${[md(header), md(header.map(() => '---')), ...rows.map(md)].join('\n')}\n`);
  }
  const uniq = [...new Set(problems)];
  if (uniq.length) process.stdout.write(`\nProblems:\n${uniq.map((p) => `  - ${p}`).join('\n')}\n`);
  process.stdout.write(`\nheadroom = the generator's rate against the sink / the same role's rate against the broker (client side, lg-* scenario);\n` +
    `the generator is not the limit when it is ≥ ${HEADROOM_TARGET}× for every role. Medians of ${opt.rounds} round(s).\n` +
    `CPU% is of one core over the measured window; the sink and the generator each run in their own processes.\n`);
  if (opt.json) {
    writeFileSync(opt.json, JSON.stringify({
      date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model,
      ref: opt.ref ? { url: opt.ref, name: opt.refName, pid: opt.refPid } : null, options: opt.bench, rounds: opt.rounds,
      headroomTarget: HEADROOM_TARGET, checks: results, problems: uniq,
    }, null, 2));
    log(`wrote ${opt.json}`);
  }
  return ok && uniq.length === 0;
}
