/**
 * Shared pieces of the scale bench (bench/scale/): starting Warren on a given data directory,
 * restarting the reference RabbitMQ without wiping its data, sizes of processes and directories.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { closeSync, lstatSync, openSync, readdirSync, type Stats } from 'node:fs';
import { ROOT, freePort, pidListeningOn, tryConnect, warrenEntry } from '../lib/brokers.js';
import { processCpuMs } from '../lib/proc.js';

export const log = (s: string) => process.stderr.write(`${s}\n`);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** Polls the port every `everyMs` until it accepts; returns ms since t0, or NaN past capMs. */
export async function awaitListening(port: number, t0: number, capMs: number, everyMs = 2, alive: () => boolean = () => true): Promise<number> {
  for (;;) {
    if (await tryConnect(port)) return performance.now() - t0;
    if (!alive() || performance.now() - t0 > capMs) return NaN;
    await sleep(everyMs);
  }
}

export interface ScaleWarren {
  proc: ChildProcess;
  pid: number;
  port: number;
  url: string;
  /** spawn → port accepts, ms. */
  listenMs: number;
  /** CPU time (utime + stime, all threads) the process used until it accepted, ms. */
  listenCpuMs: number;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts the broker as `warren` does (warrenEntry, flags as `npm start`) on `dataDir`. `nodeFlags` are extra V8 flags
 * (e.g. --cpu-prof). The bench's ulimit -n is inherited (npm run bench:scale raises it).
 */
export async function startWarrenAt(dataDir: string, logFile: string, nodeFlags: string[] = [], port?: number): Promise<ScaleWarren> {
  const p = port ?? await freePort();
  const fd = openSync(logFile, 'a');
  const t0 = performance.now();
  const proc = spawn(process.execPath, ['--max-semi-space-size=64', ...nodeFlags, warrenEntry(),
    '--port', String(p), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'warn',
    '--prometheus-port', 'off', '--management-port', 'off'], { cwd: ROOT, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => { exited = true; resolve(); }));
  process.once('exit', () => proc.kill('SIGKILL'));
  const listenMs = await awaitListening(p, t0, 120000, 2, () => !exited);
  const listenCpuMs = processCpuMs(proc.pid as number);
  if (!Number.isFinite(listenMs)) {
    proc.kill('SIGKILL');
    throw new Error(`Warren did not listen (see ${logFile})`);
  }
  return {
    proc, pid: proc.pid as number, port: p, url: `amqp://guest:guest@127.0.0.1:${p}`, listenMs, listenCpuMs,
    async stop(signal = 'SIGTERM') {
      if (exited) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 30000);
      await exit;
      clearTimeout(timer);
    },
  };
}

/**
 * Bytes on disk under a directory: `apparent` (du -sb), `allocated` (du -sk: every block), and
 * `held`: each file's allocated blocks up to its size. Space allocated past a file's end is not
 * data: Warren's store keeps 64 MiB reserved past its data file (src/store/lmdb/space-reserve.ts),
 * renewed as the file grows, which would add up to ±32 MiB of noise to a slope of `allocated`.
 */
export function diskBytes(dir: string): { apparent: number; allocated: number; held: number } {
  const a = spawnSync('du', ['-sb', dir], { encoding: 'utf8' });
  const k = spawnSync('du', ['-sk', dir], { encoding: 'utf8' });
  return { apparent: Number(a.stdout.split(/\s/)[0]), allocated: Number(k.stdout.split(/\s/)[0]) * 1024, held: heldBytes(dir) };
}

function heldBytes(path: string): number {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return 0; // gone while walking (a file a broker removed)
  }
  if (st.isDirectory()) {
    let n = 0;
    for (const name of readdirSync(path)) n += heldBytes(join(path, name));
    return n;
  }
  return st.isFile() ? Math.min(st.blocks * 512, Math.ceil(st.size / 4096) * 4096) : 0;
}

/**
 * The reference RabbitMQ started by /work/shared/tools/reference-rabbitmq.sh on `port`: its data
 * directory, and a restart that keeps the data (the script wipes it at every start).
 */
export const REF_SCRIPT = '/work/shared/tools/reference-rabbitmq.sh';
export function refHome(port: number): string {
  return `/tmp/reference-rabbitmq-${port}`;
}

/**
 * Fresh reference node (data wiped, as the script does), then restarted with the descriptor limit
 * raised (`su` resets the soft limit to 1024, too few for 10,000 connections). Returns its pid.
 */
export async function refStartFresh(port: number): Promise<number> {
  const r = spawnSync('bash', [REF_SCRIPT, 'start', String(port)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`reference RabbitMQ did not start: ${r.stderr}`);
  refStop(port);
  await awaitClosed(port, 60000);
  const ms = await refRestartKeepingData(port, 120000);
  if (!Number.isFinite(ms)) throw new Error('reference RabbitMQ did not restart');
  return pidListeningOn(port);
}

export function refStop(port: number): void {
  spawnSync('bash', [REF_SCRIPT, 'stop', String(port)], { encoding: 'utf8' });
}

/**
 * Starts the reference node on its existing data (the same command as the script, without the
 * wipe) and returns ms from the start command to its AMQP port accepting, or NaN past capMs.
 * RabbitMQ opens its listener after it has recovered its durable queues.
 */
export async function refRestartKeepingData(port: number, capMs: number): Promise<number> {
  const home = refHome(port);
  const env = `RABBITMQ_NODENAME=ref${port}@localhost RABBITMQ_NODE_PORT=${port} RABBITMQ_DIST_PORT=${port + 20000} `
    + `RABBITMQ_CONFIG_FILE=${home}/rabbitmq RABBITMQ_ENABLED_PLUGINS_FILE=${home}/enabled_plugins `
    + `RABBITMQ_MNESIA_BASE=${home}/mnesia RABBITMQ_LOG_BASE=${home}/log`;
  const t0 = performance.now();
  spawnSync('su', ['rabbitmq', '-s', '/bin/sh', '-c', `ulimit -n $(ulimit -Hn); ${env} nohup /usr/lib/rabbitmq/bin/rabbitmq-server >>${home}/stdout 2>&1 &`]);
  return awaitListening(port, t0, capMs, 20);
}

/** Waits until nothing listens on the port any more (after a stop). */
export async function awaitClosed(port: number, capMs: number): Promise<void> {
  const t0 = performance.now();
  while (await tryConnect(port)) {
    if (performance.now() - t0 > capMs) throw new Error(`port ${port} still open after ${capMs} ms`);
    await sleep(100);
  }
}

export const kib = (bytes: number) => bytes / 1024;
export const mib = (bytes: number) => bytes / 1048576;
