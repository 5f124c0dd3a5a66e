/**
 * npm run bench -- [options]
 *
 * Runs the scenarios of bench/scenarios.ts against Warren (a child process: node dist/bundle/main.cjs,
 * restarted with a fresh data dir for every scenario) and, with --ref, against a reference
 * broker in the same run, alternating Warren/reference round by round. Prints medians, the
 * ratio Warren/reference, the targets of issue 7, and the CPU of the broker and of the client
 * processes, so that client-bound cases show. See BENCHMARKS.md.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureBuilt, pidListeningOn, startWarren, type RunningWarren, type WarrenLaunch } from './lib/brokers.js';
import { machineSpeedMBps } from './lib/machine-speed.js';
import { awaitQuiet, processAlive } from './lib/proc.js';
import { fmt, median } from './lib/stats.js';
import { LOADGEN_SCENARIOS } from './loadgen/scenarios.js';
import { runSelfcheck } from './loadgen/selfcheck.js';
import { brokerUsPerMessage, openAdmin, SCENARIOS as AMQPLIB_SCENARIOS, type BenchOptions, type MetricDef, type RoundOutcome, type Scenario, type Target } from './scenarios.js';

/** amqplib scenarios (what users see), then the load generator's (lg-*). */
const SCENARIOS: Scenario[] = [...AMQPLIB_SCENARIOS, ...LOADGEN_SCENARIOS];

const USAGE = `Usage: npm run bench -- [options]

  --ref URL          reference broker, e.g. amqp://guest:guest@127.0.0.1:5692 (loopback only)
  --ref-pid N        its pid, for CPU and memory (default: found with ss from the URL's port)
  --ref-name NAME    label of the reference (default RabbitMQ)
  --ref-listen-ms N  the reference's time to listen, to report beside Warren's (not measured)
  --duration S       measured seconds per scenario round (default 3; --quick 2)
  --warmup S         seconds before the measured window (default 1; --quick 0.5)
  --rounds N         rounds per broker, alternating Warren/reference (default 3; --quick 1)
  --only a,b         run only these scenarios        --skip a,b   skip these
  --quick            short run (~2 min with a reference)
  --max-other P      retry a round (twice at most) when other processes used more than P % CPU
                     during it (default 30; the machine may be shared)
  --json FILE        write all rounds and medians as JSON
  --markdown         print the summary as a Markdown table too
  --src              run Warren from src/ through tsx instead of dist/
  --no-build         do not rebuild a stale dist/
  --cpu-prof DIR     run Warren under node --cpu-prof, one .cpuprofile per scenario in DIR
                     (summarise with: npx tsx bench/cpuprofile-top.ts DIR/warren-NAME.cpuprofile)
  --node-flags=F     node flags for Warren (default "--max-semi-space-size=64", as bin/warren.js)
  --fill N           messages pre-filled for the consume scenarios (default 300000; --quick 150000)
  --connections N    connections opened by the connections scenario (default 500)
  --list             list the scenarios
  --loadgen-selfcheck  instead of the scenarios: run each load generator role against a TCP sink
                     and a fake broker (bench/loadgen/sink.ts), then against Warren (and --ref),
                     and check the generator runs ≥ 3× faster against the sinks (exit 1 if not)

Scenarios: ${SCENARIOS.map((s) => s.name).join(', ')}
`;

interface Cli {
  ref: string | undefined;
  refPid: number;
  refName: string;
  refListenMs: number;
  rounds: number;
  maxOther: number;
  only: string[];
  skip: string[];
  json: string | undefined;
  markdown: boolean;
  selfcheck: boolean;
  launch: WarrenLaunch;
  build: boolean;
  bench: BenchOptions;
}

function parseCli(argv: string[]): Cli | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      ref: { type: 'string' }, 'ref-pid': { type: 'string' }, 'ref-name': { type: 'string' },
      'ref-listen-ms': { type: 'string' }, duration: { type: 'string' }, warmup: { type: 'string' },
      rounds: { type: 'string' }, only: { type: 'string' }, skip: { type: 'string' }, quick: { type: 'boolean' },
      json: { type: 'string' }, markdown: { type: 'boolean' }, src: { type: 'boolean' }, 'no-build': { type: 'boolean' },
      'cpu-prof': { type: 'string' }, fill: { type: 'string' }, connections: { type: 'string' }, 'max-other': { type: 'string' }, 'node-flags': { type: 'string' },
      list: { type: 'boolean' }, 'loadgen-selfcheck': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return null;
  }
  if (values.list) {
    for (const s of SCENARIOS) process.stdout.write(`${s.name.padEnd(16)} ${s.title}\n`);
    return null;
  }
  const quick = values.quick ?? false;
  const num = (v: string | undefined, d: number, what: string): number => {
    if (v === undefined) return d;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`invalid ${what} '${v}'`);
    return n;
  };
  const list = (v: string | undefined) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []);
  const only = list(values.only);
  const skip = list(values.skip);
  for (const n of [...only, ...skip]) if (!SCENARIOS.some((s) => s.name === n)) throw new Error(`unknown scenario '${n}'`);
  if (values.ref) {
    const host = new URL(values.ref).hostname;
    if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) throw new Error(`--ref must be a loopback address, not '${host}'`);
  }
  const cpuProf = values['cpu-prof'];
  if (cpuProf) mkdirSync(cpuProf, { recursive: true });
  return {
    ref: values.ref,
    refPid: num(values['ref-pid'], 0, '--ref-pid'),
    refName: values['ref-name'] ?? 'RabbitMQ',
    refListenMs: num(values['ref-listen-ms'], NaN, '--ref-listen-ms'),
    rounds: Math.max(1, Math.round(num(values.rounds, quick ? 1 : 3, '--rounds'))),
    maxOther: num(values['max-other'], 30, '--max-other'),
    only,
    skip,
    json: values.json,
    markdown: values.markdown ?? false,
    selfcheck: values['loadgen-selfcheck'] ?? false,
    build: !values['no-build'] && !values.src,
    launch: {
      fromSource: values.src ?? false,
      cpuProfDir: cpuProf,
      // Warren runs as bin/warren.js and npm start run it, unless --node-flags says otherwise.
      nodeFlags: (values['node-flags'] ?? '--max-semi-space-size=64').split(/\s+/).filter(Boolean),
      logDir: mkdtempSync(join(tmpdir(), 'warren-bench-logs-')),
    },
    bench: {
      warmup: num(values.warmup, quick ? 0.5 : 1, '--warmup'),
      duration: num(values.duration, quick ? 2 : 3, '--duration'),
      fill: Math.round(num(values.fill, quick ? 150_000 : 300_000, '--fill')),
      connections: Math.round(num(values.connections, 500, '--connections')),
      latencyRate: 5000,
      listenRuns: quick ? 3 : 5,
    },
  };
}

const log = (s: string) => process.stderr.write(`${s}\n`);

interface ScenarioResult {
  name: string;
  title: string;
  metrics: MetricDef[];
  rounds: { warren: RoundOutcome[]; ref: RoundOutcome[] };
}

async function withTarget(kind: 'warren' | 'ref', url: string, pid: number, extra: Partial<Target>): Promise<Target> {
  const { admin, ch } = await openAdmin(url);
  return { kind, url, pid, admin, ch, listenMs: NaN, givenListenMs: NaN, ...extra };
}

async function closeTarget(t: Target): Promise<void> {
  await Promise.race([t.admin.close().catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
}

/**
 * Runs a round, again (twice at most) when other processes took more than maxOther % CPU
 * during it, keeping the quietest attempt.
 */
async function measuredRound(s: Scenario, t: Target, cli: Cli): Promise<RoundOutcome> {
  let best: RoundOutcome | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const t0 = Date.now();
    const out = await safeRound(s, t, cli.bench);
    const noisy = out.otherCpu > cli.maxOther;
    log(`${describeRound(t.kind === 'ref' ? 'ref' : 'warren', out, s.metrics)}  (${((Date.now() - t0) / 1000).toFixed(1)} s)${noisy ? '  [noisy]' : ''}`);
    if (!best || !(out.otherCpu >= best.otherCpu)) best = out;
    if (!noisy) break;
  }
  return best as RoundOutcome;
}

/** Runs a round; on failure records it and reopens the admin channel (a failed RPC closes it). */
async function safeRound(s: Scenario, t: Target, o: BenchOptions): Promise<RoundOutcome> {
  // Let the previous round's aftermath (queue deletion, GC, the other broker) and other users
  // of the machine settle first.
  const busy = await awaitQuiet(5000);
  if (busy >= 15) log(`    (machine still ${busy.toFixed(0)}% busy before this round)`);
  const machineSpeed = machineSpeedMBps();
  try {
    return { ...(await s.round(t, o)), machineSpeed };
  } catch (err) {
    try {
      await closeTarget(t);
      const fresh = await openAdmin(t.url);
      t.admin = fresh.admin;
      t.ch = fresh.ch;
    } catch {
      // the broker may be gone; the next round reports that
    }
    return { metrics: {}, brokerCpu: NaN, clientCpu: NaN, clientCpuMax: NaN, otherCpu: NaN, problems: [`round failed: ${(err as Error).message}`], machineSpeed };
  }
}

/** How much the machine's speed (the probe before each round) moved over the run, with a warning past 15 %. */
function speedSummary(results: ScenarioResult[]): string | undefined {
  const speeds = results.flatMap((r) => [...r.rounds.warren, ...r.rounds.ref]).map((o) => o.machineSpeed).filter((v): v is number => v !== undefined);
  if (speeds.length === 0) return undefined;
  const min = Math.min(...speeds);
  const max = Math.max(...speeds);
  const line = `Machine speed before each round (SHA-256 probe, bench/lib/machine-speed.ts): ${fmt(min)}–${fmt(max)} MB/s.\n`;
  if (max <= min * 1.15) return line;
  return `${line}WARNING: the machine's speed changed by ${((max / min - 1) * 100).toFixed(0)} % during the run (its host's load): rates and µs/msg ` +
    `of scenarios run at different speeds are not comparable; each scenario's W÷R, whose rounds alternate between the brokers, holds better.\n`;
}

function describeRound(kind: string, r: RoundOutcome, metrics: MetricDef[]): string {
  const figs = metrics.map((m) => {
    const us = brokerUsPerMessage(m, r);
    return `${m.key}=${fmt(r.metrics[m.key] ?? NaN)}${Number.isFinite(us) ? ` (broker ${fmt(us)} µs/msg)` : ''}`;
  }).join(' ');
  const cpu = `cpu broker ${fmt(r.brokerCpu)}% clients ${fmt(r.clientCpu)}% (max ${fmt(r.clientCpuMax)}%) other ${fmt(r.otherCpu)}%` +
    (r.machineSpeed !== undefined ? ` speed ${fmt(r.machineSpeed)} MB/s` : '');
  const each = r.clients ? ` [${Object.entries(r.clients).map(([k, v]) => `${k} ${fmt(v)}%${r.clientRates?.[k] !== undefined ? ` ${fmt(r.clientRates[k] as number)}/s` : ''}`).join(', ')}]` : '';
  return `    ${kind.padEnd(6)} ${figs}  ${cpu}${each}${r.problems.length ? `  PROBLEMS: ${r.problems.join('; ')}` : ''}`;
}

async function runScenario(s: Scenario, cli: Cli): Promise<ScenarioResult> {
  const result: ScenarioResult = { name: s.name, title: s.title, metrics: s.metrics, rounds: { warren: [], ref: [] } };
  log(`\n== ${s.name}: ${s.title}`);
  let warren: RunningWarren | undefined;
  let wt: Target | undefined;
  let rt: Target | undefined;
  try {
    if (s.ownBroker) {
      wt = {
        kind: 'warren', url: '', pid: 0, admin: undefined as never, ch: undefined as never, listenMs: NaN, givenListenMs: NaN,
        startWarrenOnce: async () => {
          const w = await startWarren(cli.launch, s.name);
          await w.stop();
          return w.listenMs;
        },
      };
      if (cli.ref) rt = { kind: 'ref', url: cli.ref, pid: cli.refPid, admin: undefined as never, ch: undefined as never, listenMs: NaN, givenListenMs: cli.refListenMs };
    } else {
      warren = await startWarren(cli.launch, s.name);
      wt = await withTarget('warren', warren.url, warren.pid, { listenMs: warren.listenMs });
      if (cli.ref && s.runsOnRef) rt = await withTarget('ref', cli.ref, cli.refPid, {});
      const setup = s.setupTarget;
      if (setup) {
        for (const t of [wt, rt]) {
          if (!t) continue;
          const t0 = Date.now();
          await setup(t, cli.bench);
          log(`  setup on ${t.kind}: ${Date.now() - t0} ms`);
        }
      }
    }
    for (let r = 0; r < cli.rounds; r++) {
      const order: Target[] = [wt];
      if (rt) {
        if (r % 2 === 0) order.push(rt);
        else order.unshift(rt);
      }
      for (const t of order) {
        if (t.kind === 'ref' && !s.runsOnRef) {
          const out: RoundOutcome = { metrics: { [s.metrics[0]?.key ?? 'ms']: t.givenListenMs }, brokerCpu: NaN, clientCpu: NaN, clientCpuMax: NaN, otherCpu: NaN, problems: [] };
          result.rounds.ref.push(out);
          continue;
        }
        const out = await measuredRound(s, t, cli);
        result.rounds[t.kind].push(out);
        if (t.kind === 'warren' && warren && !processAlive(warren.pid)) throw new Error(`Warren died (see ${warren.logFile})`);
      }
    }
  } catch (err) {
    const msg = `scenario failed: ${(err as Error).message}`;
    log(`  ${msg}`);
    result.rounds.warren.push({ metrics: {}, brokerCpu: NaN, clientCpu: NaN, clientCpuMax: NaN, otherCpu: NaN, problems: [msg] });
  } finally {
    if (wt?.admin) await closeTarget(wt);
    if (rt?.admin) await closeTarget(rt);
    if (rt?.admin && s.teardownRef) {
      try {
        await s.teardownRef(rt.url);
      } catch {
        // best effort
      }
    }
    await warren?.stop();
  }
  return result;
}

interface SummaryRow {
  scenario: string;
  metric: MetricDef;
  warren: number;
  ref: number;
  ratio: number;
  target: string;
  met: boolean | undefined;
  cpu: { warren: [number, number, number, number]; ref: [number, number, number, number] };
  /** Broker CPU time per message (rate metrics): client-independent efficiency. */
  brokerUsPerMsg: { warren: number; ref: number };
  problems: string[];
}

function summarise(results: ScenarioResult[], hasRef: boolean): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const r of results) {
    const cpuOf = (rs: RoundOutcome[]): [number, number, number, number] =>
      [median(rs.map((x) => x.brokerCpu)), median(rs.map((x) => x.clientCpu)), median(rs.map((x) => x.clientCpuMax)), median(rs.map((x) => x.otherCpu))];
    const problems = [...r.rounds.warren.flatMap((x) => x.problems.map((p) => `warren: ${p}`)), ...r.rounds.ref.flatMap((x) => x.problems.map((p) => `ref: ${p}`))];
    for (const m of r.metrics) {
      const w = median(r.rounds.warren.map((x) => x.metrics[m.key] ?? NaN));
      const f = median(r.rounds.ref.map((x) => x.metrics[m.key] ?? NaN));
      const ratio = w / f;
      let target = '';
      let met: boolean | undefined;
      if (m.targetAbsolute !== undefined) {
        const higher = m.better === 'higher';
        target = `${higher ? '≥' : '≤'} ${fmt(m.targetAbsolute)} ${m.unit}`;
        met = Number.isFinite(w) ? (higher ? w >= m.targetAbsolute : w <= m.targetAbsolute) : false;
      } else if (m.targetRatio !== undefined) {
        target = `${m.better === 'higher' ? '≥' : '≤'} ${m.targetRatio}×`;
        if (hasRef && Number.isFinite(ratio)) met = m.better === 'higher' ? ratio >= m.targetRatio : ratio <= m.targetRatio;
        else met = hasRef ? false : undefined;
      }
      const perMsg = (rs: RoundOutcome[]) => median(rs.map((x) => brokerUsPerMessage(m, x)));
      rows.push({
        scenario: r.name, metric: m, warren: w, ref: f, ratio, target, met,
        cpu: { warren: cpuOf(r.rounds.warren), ref: cpuOf(r.rounds.ref) },
        brokerUsPerMsg: { warren: perMsg(r.rounds.warren), ref: perMsg(r.rounds.ref) }, problems,
      });
    }
  }
  return rows;
}

/** Issue 19: broker CPU per message at most one fifth of the reference's in every throughput scenario. */
const CPU_PER_MSG_TARGET = 0.2;

function cpuPerMsgRatio(r: SummaryRow): string {
  const q = r.brokerUsPerMsg.warren / r.brokerUsPerMsg.ref;
  if (!Number.isFinite(q)) return '—';
  return `${q.toFixed(2)}× ${q <= CPU_PER_MSG_TARGET ? 'yes' : 'NO'}`;
}

function cpuText(c: [number, number, number, number]): string {
  if (!Number.isFinite(c[0]) && !Number.isFinite(c[1])) return '—';
  const bound = c[2] >= 85 ? ' client-bound?' : '';
  return `${fmt(c[0])} / ${fmt(c[1])} (${fmt(c[2])})${bound}`;
}

function printTable(rows: SummaryRow[], refName: string, markdown: boolean): string {
  const header = ['scenario', 'metric', 'Warren', refName, 'ratio', 'target', 'met', `Warren CPU% broker / clients (max)`, `${refName} CPU% broker / clients (max)`, 'broker µs/msg W / R', `µs/msg W÷R (≤ ${CPU_PER_MSG_TARGET})`, 'other CPU% W / R'];
  const body = rows.map((r) => [
    r.scenario,
    `${r.metric.label} (${r.metric.unit})`,
    fmt(r.warren),
    fmt(r.ref),
    Number.isFinite(r.ratio) ? `${r.ratio.toFixed(2)}×` : '—',
    r.target || '—',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
    cpuText(r.cpu.warren),
    cpuText(r.cpu.ref),
    Number.isFinite(r.brokerUsPerMsg.warren) ? `${fmt(r.brokerUsPerMsg.warren)} / ${fmt(r.brokerUsPerMsg.ref)}` : '—',
    cpuPerMsgRatio(r),
    Number.isFinite(r.cpu.warren[3]) ? `${fmt(r.cpu.warren[3])} / ${fmt(r.cpu.ref[3])}` : '—',
  ]);
  if (markdown) {
    const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
    return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] as number)).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

async function main(): Promise<void> {
  let cli: Cli | null;
  try {
    cli = parseCli(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${(err as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (!cli) return;
  if (cli.build) log(ensureBuilt());
  if (cli.ref && !cli.refPid) {
    cli.refPid = pidListeningOn(Number(new URL(cli.ref).port || 5672));
    if (!cli.refPid) log(`warning: no pid found listening on ${cli.ref}; its CPU and memory are not measured (pass --ref-pid)`);
  }
  if (cli.selfcheck) {
    const ok = await runSelfcheck({ launch: cli.launch, bench: cli.bench, ref: cli.ref, refPid: cli.refPid, refName: cli.refName, rounds: cli.rounds, markdown: cli.markdown, json: cli.json, log });
    rmSync(cli.launch.logDir, { recursive: true, force: true });
    process.exit(ok ? 0 : 1);
  }
  const selected = SCENARIOS.filter((s) => (cli.only.length === 0 || cli.only.includes(s.name)) && !cli.skip.includes(s.name));
  const started = Date.now();
  log(`bench: ${selected.length} scenarios, ${cli.rounds} round(s), warm-up ${cli.bench.warmup} s + ${cli.bench.duration} s; ` +
    `Warren from ${cli.launch.fromSource ? 'src/ (tsx)' : 'dist/'}; reference ${cli.ref ? `${cli.refName} ${cli.ref} pid ${cli.refPid}` : 'none'}; ` +
    `${cpus().length} CPUs; Warren logs in ${cli.launch.logDir}`);
  const results: ScenarioResult[] = [];
  for (const s of selected) results.push(await runScenario(s, cli));
  const rows = summarise(results, cli.ref !== undefined);
  // Warren's logs (level warn) are kept only when something was logged.
  const logs = readdirSync(cli.launch.logDir).map((f) => join(cli.launch.logDir, f));
  if (logs.every((f) => statSync(f).size === 0)) rmSync(cli.launch.logDir, { recursive: true, force: true });
  else log(`Warren logged warnings: see ${cli.launch.logDir}`);
  const elapsed = (Date.now() - started) / 1000;
  process.stdout.write(`\n${printTable(rows, cli.refName, false)}\n`);
  if (cli.markdown) process.stdout.write(`\n${printTable(rows, cli.refName, true)}\n`);
  const problems = [...new Set(rows.flatMap((r) => r.problems.map((p) => `${r.scenario}: ${p}`)))];
  if (problems.length) process.stdout.write(`\nProblems:\n${problems.map((p) => `  - ${p}`).join('\n')}\n`);
  process.stdout.write(`\nCPU% is of one core over the measured window (2 cores = 200%); "client-bound?" marks a client process at ≥ 85%;\n` +
    `"broker µs/msg" is broker CPU time per message (per delivery for fanout): efficiency whatever the clients manage;\n` +
    `"µs/msg W÷R" is Warren's over the reference's (issue 19: ≤ ${CPU_PER_MSG_TARGET} in every throughput scenario);\n` +
    `"other" is the rest of the machine's busy time in the window (other processes: noise).\n` +
    `Medians of ${cli.rounds} round(s); ran ${elapsed.toFixed(0)} s.\n`);
  const speed = speedSummary(results);
  if (speed) process.stdout.write(speed);
  if (cli.json) {
    writeFileSync(cli.json, JSON.stringify({
      date: new Date().toISOString(), node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model,
      ref: cli.ref ? { url: cli.ref, name: cli.refName, pid: cli.refPid } : null, options: cli.bench, rounds: cli.rounds,
      summary: rows.map((r) => ({ scenario: r.scenario, metric: r.metric.key, label: r.metric.label, unit: r.metric.unit, warren: r.warren, ref: r.ref, ratio: r.ratio, target: r.target, met: r.met, cpu: r.cpu, brokerUsPerMsg: r.brokerUsPerMsg })),
      scenarios: results, problems, elapsedSeconds: elapsed,
    }, null, 2));
    log(`wrote ${cli.json}`);
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

main().then(() => process.exit(0), (err: unknown) => {
  process.stderr.write(`bench: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
