/**
 * Runs the conformance cases (see conformance/README.md).
 *
 *   npm run conformance                                  Warren (in-process, port 0) vs golden traces
 *   npm run conformance -- --built                       the built `warren` command (bin/warren.js) vs golden traces
 *   npm run conformance -- --url URL                     any broker vs golden traces
 *   npm run conformance -- --ref URL --cand URL          two live brokers against each other
 *   npm run conformance -- --record --ref URL [--repeat 3]   (re)record golden traces
 *
 * Options: --filter TEXT (substring of area/name; a /regex/ also works; repeatable),
 * --jobs N (cases run concurrently, default 4), --timeout MS (per case), --verbose (print whole
 * traces of failures), --list, --mgmt URL / --ref-mgmt URL / --cand-mgmt URL (the management API
 * the policy cases set policies through and the
 * access cases create users and vhosts through; default: the AMQP port + 10000, lib/management.ts).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import './cases/index.js';
import { AREAS, caseId, registry, type Area, type Case } from './lib/case.js';
import { CaseContext, sleep } from './lib/context.js';
import { describeDiff } from './lib/diff.js';
import { stableStringify, type Json } from './lib/json.js';
import { normaliseTrace } from './lib/normalise.js';

const here = dirname(fileURLToPath(import.meta.url));
const goldenDir = join(here, 'golden');

interface Options {
  url?: string;
  ref?: string;
  cand?: string;
  record: boolean;
  repeat: number;
  filters: string[];
  jobs: number;
  timeoutMs?: number;
  verbose: boolean;
  list: boolean;
  /** Run the built `warren` command (npm run build first) as the candidate, not an in-process Warren. */
  built: boolean;
  mgmt?: string;
  refMgmt?: string;
  candMgmt?: string;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { record: false, repeat: 1, filters: [], jobs: 4, verbose: false, list: false, built: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const val = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--url') o.url = val();
    else if (a === '--ref') o.ref = val();
    else if (a === '--cand') o.cand = val();
    else if (a === '--record') o.record = true;
    else if (a === '--repeat') o.repeat = Number(val());
    else if (a === '--filter' || a === '-f') o.filters.push(val());
    else if (a === '--jobs' || a === '-j') o.jobs = Number(val());
    else if (a === '--timeout') o.timeoutMs = Number(val());
    else if (a === '--verbose' || a === '-v') o.verbose = true;
    else if (a === '--list') o.list = true;
    else if (a === '--built') o.built = true;
    else if (a === '--mgmt') o.mgmt = val();
    else if (a === '--ref-mgmt') o.refMgmt = val();
    else if (a === '--cand-mgmt') o.candMgmt = val();
    else if (!a.startsWith('-')) o.filters.push(a);
    else throw new Error(`unknown option ${a}`);
  }
  if (o.record && !o.ref) throw new Error('--record needs --ref URL (the broker to record from)');
  if (o.cand && !o.ref) throw new Error('--cand needs --ref');
  if (o.built && (o.url || o.ref || o.record)) throw new Error('--built is the candidate: it does not go with --url, --ref or --record');
  return o;
}

function selected(c: Case, filters: string[]): boolean {
  if (filters.length === 0) return true;
  const id = caseId(c);
  return filters.some((f) => (f.length > 2 && f.startsWith('/') && f.endsWith('/') ? new RegExp(f.slice(1, -1)).test(id) : id.includes(f)));
}

/** Deletes what a case declared, on a connection of its own per broker. */
class Janitor {
  private conn: ChannelModel | undefined;
  private ch: Channel | undefined;
  constructor(private readonly url: string) {}

  private async channel(): Promise<Channel> {
    if (!this.conn) {
      this.conn = await amqp.connect(this.url);
      this.conn.on('error', () => {});
      this.conn.on('close', () => {
        this.conn = undefined;
        this.ch = undefined;
      });
    }
    if (!this.ch) {
      const ch = await this.conn.createChannel();
      ch.on('error', () => {});
      ch.on('close', () => {
        if (this.ch === ch) this.ch = undefined;
      });
      this.ch = ch;
    }
    return this.ch;
  }

  async clean(queues: Iterable<string>, exchanges: Iterable<string>): Promise<void> {
    for (const q of queues) await this.attempt((ch) => ch.deleteQueue(q));
    for (const x of exchanges) await this.attempt((ch) => ch.deleteExchange(x));
  }

  private async attempt(fn: (ch: Channel) => Promise<unknown>): Promise<void> {
    try {
      await Promise.race([fn(await this.channel()), sleep(2000)]);
    } catch {
      // already gone, or the channel closed: the next attempt opens a new one
    }
  }

  async close(): Promise<void> {
    await this.conn?.close().catch(() => {});
  }
}

async function runCase(c: Case, url: string, janitor: Janitor, timeoutMs: number | undefined, mgmtUrl?: string): Promise<{ trace: Json; ms: number }> {
  const token = randomBytes(4).toString('hex');
  const t = new CaseContext(url, c.name, token, mgmtUrl);
  const started = Date.now();
  const limit = timeoutMs ?? c.timeoutMs ?? 8000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      c.run(t),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${limit} ms`)), limit);
      }),
    ]);
  } catch (e) {
    t.log('exception', (e as Error)?.message?.split('\n')[0] ?? String(e));
  } finally {
    clearTimeout(timer);
    await t.closeAll().catch(() => {});
    await t.deletePolicies().catch(() => {});
    await janitor.clean(t.queues, t.exchanges);
    for (const u of t.users) await t.admin.deleteUser(u).catch(() => {});
    for (const v of t.vhosts) await t.admin.deleteVhost(v).catch(() => {});
  }
  return { trace: normaliseTrace(t.trace, token), ms: Date.now() - started };
}

/** Runs fn over items with at most jobs in flight, reporting in input order as results arrive. */
async function pool<T, R>(items: T[], jobs: number, fn: (item: T) => Promise<R>, report: (item: T, r: R) => void): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const done: boolean[] = new Array(items.length).fill(false);
  let next = 0;
  let reported = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
      done[i] = true;
      while (reported < items.length && done[reported]) {
        report(items[reported] as T, results[reported] as R);
        reported++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker));
  return results;
}

interface GoldenFile {
  area: Area;
  recordedWith: string;
  cases: Record<string, { cite: string; trace: Json }>;
}

function goldenPath(a: Area): string {
  return join(goldenDir, `${a}.json`);
}

function loadGolden(a: Area): GoldenFile | undefined {
  const p = goldenPath(a);
  return existsSync(p) ? (JSON.parse(readFileSync(p, 'utf8')) as GoldenFile) : undefined;
}

/** Cases where Warren differs from the reference on purpose, with the reason (caseId → why). */
function loadKnownDifferences(): Record<string, string> {
  const p = join(goldenDir, '..', 'known-differences.json');
  if (!existsSync(p)) return {};
  const entries = JSON.parse(readFileSync(p, 'utf8')) as Record<string, string>;
  return Object.fromEntries(Object.entries(entries).filter(([k]) => !k.startsWith('$')));
}

/**
 * Starts the built `warren` command (bin/warren.js: the launcher, then bin/broker.cjs running the
 * bundle, as users run it) on port 0 with a fresh data directory; its URLs come from --ready-json.
 */
async function startBuilt(): Promise<{ url: string; managementUrl: string; stop: () => Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-conformance-'));
  const proc = spawn(process.execPath, [join(here, '..', 'bin', 'warren.js'), '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir,
    '--management-port', '0', '--prometheus-port', 'off', '--log-level', 'warn', '--ready-json'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  // A runner that ends on an error leaves no broker behind (holding CI's output open).
  process.once('exit', () => proc.kill('SIGKILL'));
  try {
    const ready = await new Promise<{ amqp: string; management: string }>((resolve, reject) => {
      createInterface({ input: proc.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { amqp: string; management: string }));
      void exited.then(() => reject(new Error(`bin/warren.js exited with ${String(proc.exitCode ?? proc.signalCode)} before it listened (its output is above)`)));
    });
    return {
      url: ready.amqp,
      managementUrl: ready.management,
      stop: async () => {
        proc.kill('SIGTERM');
        await exited;
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

async function serverIdentity(url: string): Promise<string> {
  try {
    const conn = await amqp.connect(url);
    const sp = (conn as unknown as { connection: { serverProperties: Record<string, unknown> } }).connection.serverProperties;
    await conn.close();
    return `${String(sp['product'])} ${String(sp['version'])}`;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const cases = registry.filter((c) => selected(c, o.filters));
  if (o.list) {
    for (const c of cases) console.log(`${caseId(c)}  — ${c.cite}`);
    console.log(`${cases.length} cases`);
    return 0;
  }
  let passed = 0;
  let failed = 0;
  let knownCount = 0;
  const line = (ok: boolean, c: Case, ms: number, detail?: string): void => {
    if (ok) passed++;
    else failed++;
    console.log(`${ok ? 'ok  ' : 'FAIL'} ${caseId(c)} (${ms} ms)${detail ? ` — ${detail}` : ''}`);
  };

  if (o.record) {
    const ref = o.ref as string;
    const janitor = new Janitor(ref);
    const runs: Array<Array<{ trace: Json; ms: number }>> = [];
    for (let r = 0; r < o.repeat; r++) {
      runs.push(await pool(cases, o.jobs, (c) => runCase(c, ref, janitor, o.timeoutMs, o.refMgmt), () => {}));
    }
    await janitor.close();
    const identity = await serverIdentity(ref);
    const byArea = new Map<Area, GoldenFile>();
    cases.forEach((c, i) => {
      const traces = runs.map((r) => (r[i] as { trace: Json }).trace);
      const first = traces[0] as Json;
      const ms = (runs[0]?.[i] as { ms: number }).ms;
      const broken = JSON.stringify(first).includes('"exception"');
      const flaky = traces.map((tr) => describeDiff(first, tr)).find((d) => d !== null);
      if (broken || flaky) {
        line(false, c, ms, broken ? `exception while recording: ${JSON.stringify(first).slice(0, 300)}` : `not deterministic: ${flaky}`);
        return;
      }
      let g = byArea.get(c.area);
      if (!g) {
        const old = loadGolden(c.area);
        g = { area: c.area, recordedWith: identity, cases: o.filters.length && old ? old.cases : {} };
        byArea.set(c.area, g);
      }
      g.cases[c.name] = { cite: c.cite, trace: first };
      line(true, c, ms, 'recorded');
    });
    mkdirSync(goldenDir, { recursive: true });
    for (const [a, g] of byArea) writeFileSync(goldenPath(a), `${stableStringify(g)}\n`);
  } else if (o.ref && o.cand) {
    const ref = o.ref;
    const cand = o.cand;
    const jr = new Janitor(ref);
    const jc = new Janitor(cand);
    await pool(
      cases,
      o.jobs,
      async (c) => {
        const [a, b] = await Promise.all([runCase(c, ref, jr, o.timeoutMs, o.refMgmt), runCase(c, cand, jc, o.timeoutMs, o.candMgmt)]);
        return { a, b };
      },
      (c, { a, b }) => {
        const d = describeDiff(a.trace, b.trace);
        line(d === null, c, b.ms, d ?? undefined);
        if (d && o.verbose) console.log(`  ref:  ${stableStringify(a.trace)}\n  cand: ${stableStringify(b.trace)}`);
      },
    );
    await jr.close();
    await jc.close();
  } else {
    let url = o.url;
    let mgmt = o.mgmt;
    let stop: (() => Promise<void>) | undefined;
    if (o.built) {
      const b = await startBuilt();
      url = b.url;
      mgmt ??= b.managementUrl;
      stop = b.stop;
    } else if (!url) {
      const { startBroker } = await import('../src/broker.js');
      const b = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent' });
      url = b.url;
      // Warren's management API: the policy cases set policies, the access cases users,
      // permissions and vhosts through it, as against RabbitMQ.
      mgmt ??= b.managementUrl!;
      stop = () => b.close();
    }
    const golden = new Map<Area, GoldenFile | undefined>(AREAS.map((a) => [a, loadGolden(a)]));
    // Differences Warren keeps on purpose apply only when the candidate is Warren itself.
    const known = stop ? loadKnownDifferences() : {};
    const janitor = new Janitor(url);
    await pool(
      cases,
      o.jobs,
      (c) => runCase(c, url as string, janitor, o.timeoutMs, mgmt),
      (c, r) => {
        const g = golden.get(c.area)?.cases[c.name];
        if (!g) {
          line(false, c, r.ms, 'no golden trace (record one with --record --ref URL)');
          return;
        }
        const d = describeDiff(g.trace, r.trace);
        const reason = known[caseId(c)];
        if (d !== null && reason !== undefined) {
          knownCount++;
          console.log(`KNOWN ${caseId(c)} (${r.ms} ms) — ${reason}`);
          return;
        }
        line(d === null, c, r.ms, d ?? undefined);
        if (d && o.verbose) console.log(`  expected: ${stableStringify(g.trace)}\n  got:      ${stableStringify(r.trace)}`);
      },
    );
    await janitor.close();
    await stop?.();
  }
  if (knownCount > 0) console.log(`${knownCount} known differences, each explained in conformance/known-differences.json`);
  console.log(`conformance: ${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    console.log('conformance: 0 passed, 1 failed');
    process.exit(2);
  },
);
