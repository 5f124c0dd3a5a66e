import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { memoryWatermark, resolveConfig, type BrokerConfig } from './config.js';
import { main, parseCli } from './main.js';
import { availableMemory, heapSizeFor, semiSpaceMiB, watermarkBytes } from './memory-monitor.js';

/**
 * dist/main.js and every module it loads, bundled by esbuild (scripts/bundle.mjs); absent when
 * this module runs from src/ (tsx), where the launcher starts its own script again.
 */
export const BUNDLE = fileURLToPath(new URL('./bundle/main.cjs', import.meta.url));

/** What runs BUNDLE in the broker's Node, with a V8 code cache (bin/broker.cjs). */
export const BUNDLE_LOADER = fileURLToPath(new URL('../bin/broker.cjs', import.meta.url));

/** Set in the broker's environment by the launcher: the --max-old-space-size it chose, in MiB. */
const SIZED = 'WARREN_HEAP_SIZED';

/**
 * The `warren` command (bin/warren.js, npm start). V8 sizes its heap at a quarter of RAM (at
 * most 4 GiB), well under RabbitMQ's watermark of 0.4 of RAM: heap growth would end in "FATAL
 * ERROR: Reached heap limit" before the memory alarm. A running Node cannot change its heap
 * limit, so the launcher reads the settings (flags, WARREN_* variables, config file), works out
 * the watermark, and starts the broker in a second Node with `--max-old-space-size` =
 * heapSizeFor(watermark): the heap's alarm share of it is the watermark. It forwards signals
 * and exits as the broker does; the broker stops if the launcher goes away (main.ts). The cost
 * is one more Node start before the broker's (this module does not load the broker): 150-300 ms
 * on a busy 2-core VM (Node starts in 110-190 ms there, this module loads in 40-100 ms), where
 * the broker itself listens after 550-800 ms. A --max-old-space-size given by hand (on the
 * command line or in NODE_OPTIONS) is respected, and so is a smaller --max-semi-space-size; a
 * larger one is cut to 1/16 of the old space: one scavenge can promote a semi-space's worth of
 * objects at once, which must fit in the headroom the heap alarm leaves (30% of the old space).
 *
 * The second Node runs the broker from BUNDLE when the build made it (`npm run build`): the same
 * compiled modules as dist/, in one CommonJS file, which loads in about 140 ms less than their
 * ~230 ES modules on this class of machine, and about 40 ms less again with the code cache
 * BUNDLE_LOADER keeps beside it (BENCHMARKS.md, "Time to listen").
 */
export function launch(argv = process.argv.slice(2)): void {
  const nodeFlags = [...process.execArgv, ...(process.env['NODE_OPTIONS'] ?? '').split(/\s+/)];
  const config = settings(argv);
  const script = process.argv[1];
  if (process.env[SIZED] !== undefined || nodeFlags.some((f) => /^--max[-_]old[-_]space[-_]size=/.test(f)) || !config || !script) {
    void main(argv);
    return;
  }
  const oldSpaceMiB = heapSizeFor(watermarkBytes(memoryWatermark(resolveConfig(config)), availableMemory()));
  const semiSpace = Math.min(semiSpaceMiB(nodeFlags), Math.max(1, Math.floor(oldSpaceMiB / 16)));
  const execArgv = process.execArgv.filter((f) => !/^--max[-_]semi[-_]space[-_]size=/.test(f));
  const entry = existsSync(BUNDLE) ? BUNDLE_LOADER : script;
  const child = spawn(process.execPath, [...execArgv, `--max-semi-space-size=${semiSpace}`, `--max-old-space-size=${oldSpaceMiB}`, entry, ...argv], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, [SIZED]: String(oldSpaceMiB) },
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
}

/** The settings, or undefined for --help and errors, which main() answers itself. */
function settings(argv: string[]): Partial<BrokerConfig> | undefined {
  try {
    const config = parseCli(argv, process.env);
    return config === 'help' ? undefined : config;
  } catch {
    return undefined;
  }
}
