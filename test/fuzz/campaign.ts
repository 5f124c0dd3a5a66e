/**
 * Runs fuzz targets in a worker thread under a watchdog (the main-thread side of the runner):
 * an input still running after its target's hang bound plus a grace second is reported as a
 * hang and the worker is stopped; a worker that runs out of heap is reported as a memory blowup.
 * Either way the campaign goes on with the next target in a new worker.
 */
import { Worker } from 'node:worker_threads';
import { Probe, type Finding } from './engine.js';
import { targetNamed } from './targets.js';

export interface CampaignOptions {
  targets: string[];
  seed: number;
  mode: 'property' | 'coverage' | 'both';
  /** Inputs per target (deterministic)... */
  runs?: number;
  /** ...or seconds per target. */
  seconds?: number;
  /** Check retained memory every n-th input (0: never; 'auto': within a tenth of the time). */
  memoryEvery: number | 'auto';
  /** Heap limit of the worker (MB): a blowup past it is reported with the input that caused it. */
  heapMb?: number;
  log?: (line: string) => void;
}

export interface WorkerTask extends Omit<CampaignOptions, 'log' | 'heapMb'> {
  sab: SharedArrayBuffer;
}

export interface TargetStats {
  target: string;
  execs: number;
  ms: number;
  corpus: number;
  features: number;
}

export type CampaignMessage =
  | { type: 'target'; target: string }
  | { type: 'finding'; finding: Finding }
  | { type: 'progress'; target: string; execs: number; corpus: number; features: number }
  | ({ type: 'stats' } & TargetStats)
  | { type: 'done' };

const GRACE_MS = 1000;

/** Workers do not inherit tsx's loader hooks: register them, then load worker.ts. */
const BOOT = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./worker.ts', import.meta.url).href)}); })`;

export async function runCampaign(opts: CampaignOptions): Promise<{ findings: Finding[]; stats: TargetStats[] }> {
  const findings: Finding[] = [];
  const stats: TargetStats[] = [];
  const log = opts.log ?? (() => undefined);
  let pending = [...opts.targets];
  while (pending.length > 0) {
    const probe = new Probe();
    const task: WorkerTask = { targets: pending, seed: opts.seed, mode: opts.mode, runs: opts.runs, seconds: opts.seconds, memoryEvery: opts.memoryEvery, sab: probe.sab };
    let current: string | undefined;
    let failedToStart: Error | undefined;
    const worker = new Worker(BOOT, {
      eval: true,
      workerData: task,
      resourceLimits: { maxOldGenerationSizeMb: opts.heapMb ?? 1024 },
    });
    const died = await new Promise<string | undefined>((resolve) => {
      let verdict: string | undefined;
      const watchdog = setInterval(() => {
        const running = probe.running();
        const bound = current ? targetNamed(current).hangMs + GRACE_MS : Infinity;
        if (running && running.ms > bound && !verdict) {
          verdict = 'hang';
          findings.push(deadWorkerFinding(current!, 'hang', `an input ran for more than ${running.ms} ms and never finished (bound ${bound - GRACE_MS} ms)`, running.input, opts));
          void worker.terminate();
        }
      }, 100);
      worker.on('message', (m: CampaignMessage) => {
        if (m.type === 'target') {
          current = m.target;
          log(`${m.target}: fuzzing`);
        } else if (m.type === 'finding') {
          findings.push(m.finding);
          log(`${m.finding.target}: FOUND ${m.finding.summary} (input ${m.finding.input.length / 2} bytes)`);
        } else if (m.type === 'progress') {
          log(`${m.target}: ${m.execs} inputs, corpus ${m.corpus}, ${m.features} coverage features`);
        } else if (m.type === 'stats') {
          const { type: _type, ...s } = m;
          stats.push(s);
          pending = pending.filter((t) => t !== m.target);
          log(`${m.target}: ${m.execs} inputs in ${(m.ms / 1000).toFixed(1)} s${m.features ? `, corpus ${m.corpus}, ${m.features} coverage features` : ''}`);
        }
      });
      worker.on('error', (err) => {
        if (verdict) return;
        if (!current) {
          verdict = 'error';
          failedToStart = err;
          return;
        }
        verdict = 'error';
        const running = probe.running();
        const oom = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
        findings.push(deadWorkerFinding(current, oom ? 'memory' : 'crash', oom ? 'the worker ran out of heap' : `the worker died: ${err.stack ?? err.message}`, running?.input ?? Buffer.alloc(0), opts));
      });
      worker.on('exit', () => {
        clearInterval(watchdog);
        resolve(verdict);
      });
    });
    if (failedToStart) throw failedToStart;
    if (died && current) pending = pending.filter((t) => t !== current);
    else if (!died) pending = [];
  }
  return { findings, stats };
}

function deadWorkerFinding(target: string, kind: Finding['kind'], message: string, input: Buffer, opts: CampaignOptions): Finding {
  return { target, kind, summary: `${kind}: ${message}`, message, input: input.toString('hex'), originalLength: input.length, mode: opts.mode, seed: opts.seed };
}
