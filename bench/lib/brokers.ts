/**
 * Starting Warren as a child process (what the `warren` command runs: the bundle of dist/main.js,
 * or src/main.ts through tsx), and finding the reference broker's pid.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, closeSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');

/**
 * The script the `warren` command's broker process runs in the checkout root (src/launcher.ts):
 * bin/broker.cjs, which runs dist/bundle/main.cjs; in a checkout built before, the ESM bundle
 * dist/bundle/main.js or, before there was a bundle, dist/main.js (so that older commits can be
 * measured side by side).
 */
export function warrenEntry(root = ROOT): string {
  if (existsSync(join(root, 'dist', 'bundle', 'main.cjs'))) return join(root, 'bin', 'broker.cjs');
  const bundle = join(root, 'dist', 'bundle', 'main.js');
  return existsSync(bundle) ? bundle : join(root, 'dist', 'main.js');
}

export interface WarrenLaunch {
  /** Run src/main.ts through tsx instead of the built broker (warrenEntry). */
  fromSource: boolean;
  /** Directory for --cpu-prof output (undefined: no profiling). */
  cpuProfDir: string | undefined;
  /** Extra node flags (e.g. --max-semi-space-size=64). */
  nodeFlags: string[];
  logDir: string;
}

export interface RunningWarren {
  pid: number;
  port: number;
  url: string;
  /** Milliseconds from spawn() to the port accepting a TCP connection. */
  listenMs: number;
  dataDir: string;
  logFile: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

/** Builds dist/ when a file under src/ is newer than the bundle. Returns a note for the log. */
export function ensureBuilt(): string {
  const main = join(ROOT, 'dist', 'bundle', 'main.cjs');
  let built = 0;
  try {
    built = statSync(main).mtimeMs;
  } catch {
    built = 0;
  }
  if (built >= newestMtime(join(ROOT, 'src'))) return 'dist/ is up to date';
  const r = spawnSync('npm', ['run', 'build'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status === 0) return 'rebuilt dist/ (npm run build)';
  if (built > 0) return `npm run build failed, using the existing (stale) dist/:\n${(r.stdout + r.stderr).slice(-2000)}`;
  throw new Error(`npm run build failed and there is no dist/bundle/main.cjs:\n${r.stdout}${r.stderr}`);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something accepts a TCP connection on the loopback port. */
export function tryConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1' });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

let launches = 0;

/** Child processes to kill if the bench itself dies (crash, Ctrl-C), so no broker is left behind. */
export const children = new Set<ChildProcess>();
const dataDirs = new Set<string>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

/** Spawns Warren on a free loopback port with a fresh data dir and waits until it accepts. */
export async function startWarren(launch: WarrenLaunch, tag: string): Promise<RunningWarren> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-'));
  dataDirs.add(dataDir);
  const logFile = join(launch.logDir, `warren-${tag}-${++launches}.log`);
  const fd = openSync(logFile, 'w');
  const args = [...launch.nodeFlags];
  if (launch.cpuProfDir) args.push('--cpu-prof', `--cpu-prof-dir=${launch.cpuProfDir}`, `--cpu-prof-name=warren-${tag}.cpuprofile`);
  if (launch.fromSource) args.push('--import', 'tsx', join(ROOT, 'src', 'main.ts'));
  else args.push(warrenEntry());
  args.push('--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'warn', '--prometheus-port', 'off', '--management-port', 'off');
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  let exited = false;
  const exit = new Promise<void>((resolve) => proc.once('exit', () => {
    exited = true;
    resolve();
  }));
  for (;;) {
    if (exited) throw new Error(`Warren exited before listening (see ${logFile})`);
    if (await tryConnect(port)) break;
    if (performance.now() - t0 > 30000) {
      proc.kill('SIGKILL');
      throw new Error(`Warren did not listen within 30 s (see ${logFile})`);
    }
    await new Promise((r) => setTimeout(r, 2));
  }
  const listenMs = performance.now() - t0;
  return {
    pid: proc.pid as number,
    port,
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    listenMs,
    dataDir,
    logFile,
    proc,
    async stop() {
      if (!exited) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 15000);
        await exit;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
      dataDirs.delete(dataDir);
    },
  };
}

/** The pid listening on a loopback TCP port (via `ss`), or 0. */
export function pidListeningOn(port: number): number {
  const r = spawnSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const m = /pid=(\d+)/.exec(r.stdout ?? '');
  return m ? Number(m[1]) : 0;
}
