/**
 * A fuzzing worker thread: runs the targets campaign.ts hands it, one after another, and
 * posts what it finds. The main thread's watchdog stops it if an input never finishes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CampaignMessage, WorkerTask } from './campaign.js';
import { Coverage } from './coverage.js';

// Block coverage must be on before Warren's code is compiled: V8 adds block counters only to
// functions compiled after that. So start it first, then load the rest.
const cov = new Coverage();
const { coverageMode, Executor, Probe, propertyMode } = await import('./engine.js');
const { targetNamed } = await import('./targets.js');
type Budget = import('./engine.js').Budget;

const task = workerData as WorkerTask;
const probe = new Probe(task.sab);
const post = (m: CampaignMessage): void => parentPort!.postMessage(m);

for (const name of task.targets) {
  const target = targetNamed(name);
  post({ type: 'target', target: name });
  const ex = new Executor(target, probe, task.memoryEvery, (finding) => post({ type: 'finding', finding }));
  const started = Date.now();
  const share = (part: number): Budget =>
    task.seconds !== undefined ? { deadline: started + task.seconds * 1000 * part } : { runs: Math.ceil((task.runs ?? 0) * part) };
  let coverage = { corpus: 0, features: 0 };
  if (task.mode !== 'coverage') await propertyMode(ex, task.seed, share(task.mode === 'both' ? 0.5 : 1));
  if (task.mode !== 'property') {
    coverage = await coverageMode(ex, cov, task.seed, task.seconds !== undefined ? share(1) : share(task.mode === 'both' ? 0.5 : 1), (corpus, features) =>
      post({ type: 'progress', target: name, execs: ex.execs, corpus, features }));
  }
  post({ type: 'stats', target: name, execs: ex.execs, ms: Date.now() - started, ...coverage });
}
cov.close();
post({ type: 'done' });
