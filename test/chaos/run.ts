/**
 * The long chaos run: `npm run chaos -- --cycles 100 [--seed N] [--faults kill,pause,clock,disk]`.
 * Prints one line per fault and the checker's verdict; exits 1 if it found a violation.
 */
import { parseArgs } from 'node:util';
import { FAULT_KINDS, runChaos, type FaultKind } from './harness.js';

const { values } = parseArgs({
  options: {
    cycles: { type: 'string', default: '100' },
    seed: { type: 'string' },
    faults: { type: 'string' },
  },
  strict: true,
});
const cycles = Number(values.cycles);
const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
const schedule = values.faults?.split(',').map((f) => f.trim()) as FaultKind[] | undefined;
if (!Number.isInteger(cycles) || cycles < 1 || !Number.isInteger(seed) || schedule?.some((f) => !FAULT_KINDS.includes(f))) {
  process.stderr.write(`usage: npm run chaos -- [--cycles N] [--seed N] [--faults ${FAULT_KINDS.join(',')}]\n`);
  process.exit(2);
}
const log = (line: string) => process.stdout.write(`${line}\n`);
log(`chaos: ${cycles} cycle(s), seed ${seed}${schedule ? `, faults ${schedule.join(',')}` : ''}`);
const started = performance.now();
const report = await runChaos({ cycles, seed, schedule, log });
for (const s of report.skipped) log(`skipped ${s}`);
log(`faults: ${JSON.stringify(report.faults)}; connections lost during them: ${JSON.stringify(report.disconnects)}`);
log(`history: ${JSON.stringify(report.stats)}`);
log(`took ${((performance.now() - started) / 1000).toFixed(0)} s`);
if (report.violations.length > 0) {
  log(`FAILED (seed ${seed}):`);
  for (const v of report.violations) log(`  ${v}`);
  process.exit(1);
}
log('ok: nothing confirmed was lost, every duplicate was marked redelivered, per-consumer order held');
process.exit(0);
