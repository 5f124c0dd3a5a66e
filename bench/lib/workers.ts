/**
 * The orchestrator's side of a client worker process: spawn, wait for its events, send commands.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { children, ROOT } from './brokers.js';
import type { FromWorker, Sample, ToWorker, WorkerResult, WorkerSpec } from './protocol.js';

export class WorkerHandle {
  readonly proc: ChildProcess;
  readonly marks: Sample[] = [];
  result: WorkerResult | undefined;
  error: string | undefined;
  exited = false;
  private waiters: Array<() => void> = [];
  onProgress: ((count: number) => void) | undefined;
  progress = 0;
  filled = -1;
  ready = false;

  constructor(readonly spec: WorkerSpec, readonly name: string) {
    const script = 'engine' in spec && spec.engine === 'loadgen' ? join(ROOT, 'bench', 'loadgen', 'worker.ts') : join(ROOT, 'bench', 'worker.ts');
    this.proc = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_WORKER: JSON.stringify(spec) },
    });
    children.add(this.proc);
    this.proc.once('exit', () => children.delete(this.proc));
    this.proc.on('message', (m: FromWorker) => this.onMessage(m));
    // IPC to a worker that is exiting fails with EPIPE: not an error of the benchmark.
    this.proc.on('error', () => {});
    this.proc.on('exit', (code, signal) => {
      this.exited = true;
      if (!this.result && !this.error) this.error = `${name} exited (${signal ?? code}) without a result`;
      this.wake();
    });
  }

  private onMessage(m: FromWorker): void {
    switch (m.ev) {
      case 'ready': this.ready = true; break;
      case 'mark': this.marks.push(m.sample); break;
      case 'progress':
        this.progress = m.count;
        this.onProgress?.(m.count);
        break;
      case 'filled': this.filled = m.count; break;
      case 'done': this.result = m.result; break;
      case 'error': this.error = `${this.name}: ${m.message}`; break;
    }
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  send(m: ToWorker): void {
    if (!this.exited && this.proc.connected) this.proc.send(m, (err) => void err);
  }

  /** Waits until cond() holds; throws on timeout or if the worker failed first. */
  async until(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      if (this.error) throw new Error(this.error);
      if (this.exited) throw new Error(`${this.name} exited while waiting for ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${this.name}: timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 1000));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  kill(): void {
    if (!this.exited) this.proc.kill('SIGKILL');
  }
}

/** Waits for every worker's 'ready'. */
export async function allReady(workers: WorkerHandle[], timeoutMs = 30000): Promise<void> {
  await Promise.all(workers.map((w) => w.until(() => w.ready, timeoutMs, 'ready')));
}

/** Sends 'stop' and waits for results; kills stragglers. */
export async function stopAll(workers: WorkerHandle[], timeoutMs = 15000): Promise<void> {
  for (const w of workers) w.send({ cmd: 'stop' });
  await Promise.allSettled(workers.map((w) => w.until(() => w.result !== undefined, timeoutMs, 'its result')));
  await Promise.allSettled(workers.map((w) => w.until(() => w.exited, 5000, 'exit')));
  for (const w of workers) w.kill();
}

/** What the workers reported going wrong: a worker's own failure, then each error it counted. */
export function workerProblems(workers: WorkerHandle[]): string[] {
  const out: string[] = [];
  for (const w of workers) {
    if (w.error) out.push(w.error);
    for (const e of w.result?.errors ?? []) out.push(`${w.name}: ${e}`);
  }
  return out;
}
