/**
 * `npm run fuzz -- [options]`: the long fuzzing run (README.md).
 *
 *   --seconds N       how long in all, shared evenly by the targets (default 300)
 *   --runs N          inputs per target instead of a duration (deterministic)
 *   --seed N          seed (default: from the clock; printed, so a run can be repeated)
 *   --target NAME     only this target (repeatable); default: all
 *   --mode M          property | coverage | both (default both: half the time each)
 *   --memory-every N  check retained memory every N-th input (0 = never; default: as often as
 *                     keeps those checks, two full GCs each, within a tenth of the time)
 *   --replay FILE     run one saved input (a .bin from the findings folder) and print the outcome
 *
 * Findings are printed and saved as test/fuzz/findings/<target>-<kind>-<hash>.bin (+ .txt).
 * The exit code is 1 when anything was found.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { runCampaign, type CampaignOptions } from './campaign.js';
import { Executor } from './engine.js';
import { TARGETS, targetNamed } from './targets.js';

function parse(argv: string[]): { opts: CampaignOptions; replay?: string } {
  const opts: CampaignOptions = { targets: [], seed: Date.now() % 2 ** 31, mode: 'both', memoryEvery: 'auto', seconds: 300 };
  let replay: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${a} needs a value`);
      return x;
    };
    if (a === '--seconds') opts.seconds = Number(v());
    else if (a === '--runs') {
      opts.runs = Number(v());
      delete opts.seconds;
    } else if (a === '--seed') opts.seed = Number(v());
    else if (a === '--target') opts.targets.push(targetNamed(v()).name);
    else if (a === '--mode') opts.mode = v() as CampaignOptions['mode'];
    else if (a === '--memory-every') opts.memoryEvery = Number(v());
    else if (a === '--replay') replay = v();
    else throw new Error(`unknown option ${a}`);
  }
  if (opts.targets.length === 0) opts.targets = TARGETS.map((t) => t.name);
  if (opts.seconds !== undefined) opts.seconds /= opts.targets.length;
  return { opts, replay };
}

async function replayFile(file: string): Promise<number> {
  const name = TARGETS.map((t) => t.name).sort((a, b) => b.length - a.length).find((n) => basename(file).startsWith(`${n}-`));
  if (!name) throw new Error(`cannot tell the target from the file name ${file}`);
  const input = readFileSync(file);
  const ex = new Executor(targetNamed(name), undefined, 1, () => undefined);
  const f = await ex.exec(input, true);
  console.log(f ? f.message : `${name}: no failure (${input.length} bytes)`);
  return f ? 1 : 0;
}

async function main(): Promise<number> {
  const { opts, replay } = parse(process.argv.slice(2));
  if (replay) return replayFile(replay);
  const how = opts.runs !== undefined ? `${opts.runs} inputs` : `${opts.seconds!.toFixed(0)} s`;
  console.log(`fuzzing ${opts.targets.join(', ')}: ${how} per target, mode ${opts.mode}, seed ${opts.seed}`);
  const { findings } = await runCampaign({ ...opts, log: (l) => console.log(l) });
  if (findings.length === 0) {
    console.log('nothing found');
    return 0;
  }
  const dir = new URL('./findings/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  for (const f of findings) {
    const input = Buffer.from(f.input, 'hex');
    const file = new URL(`${f.target}-${f.kind}-${createHash('sha1').update(input).digest('hex').slice(0, 8)}`, dir);
    writeFileSync(new URL(`${file.href}.bin`), input);
    writeFileSync(new URL(`${file.href}.txt`), `${f.message}\n\ntarget ${f.target}, mode ${f.mode}, seed ${f.seed}\ninput (${input.length} of ${f.originalLength} bytes): ${f.input}\n`);
    console.log(`\n${f.target}: ${f.message}\n  input (${input.length} bytes, hex): ${f.input}\n  saved as ${file.pathname}.bin`);
  }
  return 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(2);
  },
);
