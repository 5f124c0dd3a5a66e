/**
 * rabbitmqadmin 3.10.8 (Python 3, standard library only): the copy Warren serves at
 * /cli/rabbitmqadmin (src/management/cli/rabbitmqadmin, byte for byte what RabbitMQ 3.10.8
 * serves) runs the management API tests. test/management/cli.test.ts checks that copy against
 * Debian's, taken from the rabbitmq-server .deb at test time (`apt-get download
 * rabbitmq-server`, then ./usr/bin/rabbitmqadmin out of its data archive with dpkg-deb) and
 * cached under node_modules/.cache (a clean clone fetches it again); .ci/run fetches it ahead of
 * the tests with `node --import tsx test/support/rabbitmqadmin.ts`.
 */
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTmpDir, removeDir } from './tmp-dir.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The rabbitmqadmin Warren serves. */
export const SERVED_RABBITMQADMIN = join(ROOT, 'src', 'management', 'cli', 'rabbitmqadmin');
const DEBIAN_CACHED = join(ROOT, 'node_modules', '.cache', 'warren', 'rabbitmqadmin');
export const PYTHON = '/usr/bin/python3';

/** Why rabbitmqadmin cannot run here, or undefined when it can. */
export function rabbitmqadminUnavailable(): string | undefined {
  return existsSync(PYTHON) ? undefined : `${PYTHON} is missing: rabbitmqadmin needs Python 3`;
}

/** Why Debian's rabbitmqadmin cannot be had here, or undefined when it can. */
export function debianRabbitmqadminUnavailable(): string | undefined {
  if (existsSync(DEBIAN_CACHED)) return undefined;
  if (!has('apt-get') || !has('dpkg-deb')) return 'apt-get/dpkg-deb are not available: cannot fetch Debian\'s rabbitmqadmin (run .ci/run on Debian)';
  return undefined;
}

function has(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The path of Debian's rabbitmqadmin, fetched and extracted on first use. */
export function debianRabbitmqadminPath(): string {
  if (existsSync(DEBIAN_CACHED)) return DEBIAN_CACHED;
  const work = makeTmpDir('warren-rabbitmqadmin-');
  try {
    const download = () => execFileSync('apt-get', ['download', '-qq', 'rabbitmq-server'], { cwd: work, stdio: 'pipe' });
    try {
      download();
    } catch (err) {
      // A fresh machine has no package lists yet.
      if (process.getuid?.() !== 0) throw err;
      execFileSync('apt-get', ['update', '-qq'], { stdio: 'pipe' });
      download();
    }
    const deb = readdirSync(work).find((f) => f.endsWith('.deb'));
    if (!deb) throw new Error('apt-get download rabbitmq-server left no .deb');
    execFileSync('sh', ['-c', `dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/rabbitmqadmin`, 'sh', join(work, deb), work]);
    mkdirSync(dirname(DEBIAN_CACHED), { recursive: true });
    copyFileSync(join(work, 'usr', 'bin', 'rabbitmqadmin'), DEBIAN_CACHED);
    return DEBIAN_CACHED;
  } finally {
    removeDir(work);
  }
}

export interface AdminResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs rabbitmqadmin against the management API on port (as guest unless args say otherwise). */
export function runRabbitmqadmin(port: number, args: string[]): Promise<AdminResult> {
  return new Promise((resolve) => {
    execFile(PYTHON, [SERVED_RABBITMQADMIN, '-H', '127.0.0.1', '-P', String(port), ...args], { timeout: 20000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

// `node --import tsx test/support/rabbitmqadmin.ts`: fetch Debian's now (CI, before the tests).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const why = debianRabbitmqadminUnavailable();
  if (why) {
    process.stderr.write(`${why}\n`);
    process.exit(1);
  }
  process.stdout.write(`${debianRabbitmqadminPath()}\n`);
}
