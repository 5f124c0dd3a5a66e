/**
 * Scale: many idle connections with heartbeats. Opens `warm` connections, reads the broker's
 * RSS, opens the rest (spread over `procs` processes of bench/scale/idle-worker.ts), waits
 * `settleS` seconds (at least two heartbeat intervals, so that heartbeats flow both ways and a
 * connection whose heartbeats were not answered would be closed), checks that every connection is
 * still open and got heartbeats, and reads the RSS again.
 *
 * Per connection = (RSS after − RSS with the warm connections) / (connections − warm): start-up
 * memory and JIT warm-up excluded. The rest opens in two waves with an RSS reading between them:
 * the second wave's slope is the marginal cost of one more idle connection, without the one-off
 * growth of the first burst (the young generation growing to its maximum).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { processRssKiB } from '../lib/proc.js';
import { log, sleep } from './common.js';

export interface IdleResult {
  connections: number;
  opened: number;
  heartbeat: number;
  rssBeforeKiB: number;
  rssWarmKiB: number;
  /** RSS after the first half of the connections (past the warm ones). */
  rssHalfKiB: number;
  rssAfterKiB: number;
  /** (RSS after − RSS with the warm connections) / (connections − warm). */
  perConnectionKiB: number;
  /** The slope over the second half: (RSS after − RSS at half) / connections of the second wave. */
  perConnectionSecondHalfKiB: number;
  openMs: number;
  heartbeatsIn: number;
  closed: number;
  problems: string[];
}

class IdleWorker {
  readonly proc: ChildProcess;
  private readonly lines: Interface;
  private readonly queue: string[] = [];
  private waiter: ((l: string) => void) | undefined;
  constructor(url: string, count: number, heartbeat: number) {
    this.proc = spawn(process.execPath, ['--import', 'tsx', new URL('./idle-worker.ts', import.meta.url).pathname, url, String(count), String(heartbeat), '50'],
      { stdio: ['pipe', 'pipe', 'inherit'] });
    this.lines = createInterface({ input: this.proc.stdout! });
    this.lines.on('line', (l) => {
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(l);
      } else this.queue.push(l);
    });
    process.once('exit', () => this.proc.kill('SIGKILL'));
  }
  next(timeoutMs: number): Promise<Record<string, unknown>> {
    const l = this.queue.shift();
    if (l !== undefined) return Promise.resolve(JSON.parse(l));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('idle worker did not answer')), timeoutMs);
      this.waiter = (line) => {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      };
    });
  }
  async status(): Promise<{ open: number; closed: number; heartbeatsIn: number; failures: string[] }> {
    this.proc.stdin!.write('status\n');
    return (await this.next(10000)) as never;
  }
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.proc.once('exit', () => resolve());
      this.proc.stdin!.write('close\n');
    });
  }
}

async function rssMedian(pid: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < 5; i++) {
    xs.push(processRssKiB(pid));
    await sleep(200);
  }
  xs.sort((a, b) => a - b);
  return xs[2] as number;
}

export async function idleConnections(url: string, pid: number, o: { connections: number; heartbeat: number; procs: number; warm: number; settleS: number }): Promise<IdleResult> {
  const problems: string[] = [];
  await sleep(1000);
  const rssBeforeKiB = await rssMedian(pid);
  const workers: IdleWorker[] = [];
  const t0 = performance.now();
  let opened = 0;
  const start = async (n: number) => {
    const w = new IdleWorker(url, n, o.heartbeat);
    workers.push(w);
    const r = (await w.next(600000)) as { opened: number; failed: number };
    opened += r.opened;
    if (r.failed) problems.push(`${r.failed} connections failed to open`);
  };
  try {
    await start(o.warm);
    await sleep(1000);
    const rssWarmKiB = await rssMedian(pid);
    // The rest in two waves, each over half the processes; the RSS between them gives the
    // slope (second wave), which leaves out one-off growth such as V8's young generation
    // reaching its maximum size (up to 3 × --max-semi-space-size) during the first burst.
    const rest = o.connections - o.warm;
    const wave1 = Math.floor(rest / 2);
    const wave = async (count: number, procs: number) => {
      const per = Math.ceil(count / procs);
      await Promise.all(Array.from({ length: procs }, (_, i) => start(Math.max(0, Math.min(per, count - i * per)))));
    };
    const half = Math.max(1, Math.floor(o.procs / 2));
    const t1 = performance.now();
    await wave(wave1, half);
    await sleep(1000);
    const rssHalfKiB = await rssMedian(pid);
    await wave(rest - wave1, half);
    const openMs = performance.now() - t1;
    log(`    ${opened} connections open (${((performance.now() - t0) / 1000).toFixed(1)} s); settling ${o.settleS} s with heartbeats every ${o.heartbeat} s`);
    await sleep(o.settleS * 1000);
    const rssAfterKiB = await rssMedian(pid);
    let open = 0;
    let closed = 0;
    let heartbeatsIn = 0;
    for (const w of workers) {
      const s = await w.status();
      open += s.open;
      closed += s.closed;
      heartbeatsIn += s.heartbeatsIn;
      if (s.failures.length) problems.push(...s.failures.slice(0, 3));
    }
    if (open !== o.connections) problems.push(`${open} of ${o.connections} connections open after settling`);
    if (o.heartbeat > 0 && heartbeatsIn < open) problems.push(`only ${heartbeatsIn} heartbeats received from the broker for ${open} connections`);
    return {
      connections: o.connections, opened, heartbeat: o.heartbeat, rssBeforeKiB, rssWarmKiB, rssAfterKiB,
      perConnectionKiB: (rssAfterKiB - rssWarmKiB) / (o.connections - o.warm), rssHalfKiB,
      perConnectionSecondHalfKiB: (rssAfterKiB - rssHalfKiB) / (rest - wave1), openMs, heartbeatsIn, closed, problems,
    };
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
}
