/**
 * A reference RabbitMQ 3.10 for the tests that run against one (shovels, the migration path):
 * `../shared/tools/reference-rabbitmq.sh` (or /work/shared/tools/...) with Debian's
 * rabbitmq-server, and the rabbitmq_shovel plugins enabled on it.
 *
 * - WARREN_REFERENCE_MGMT set (.ci/run starts one on 5699 and enables the shovel plugin): that
 *   node is used and left running.
 * - Otherwise, where the script and rabbitmq-server are installed and we are root, a node is
 *   started on WARREN_REFERENCE_PORT (default 5698, beside CI's 5699; reused if one answers there) and stopped
 *   when the test process exits.
 * - Otherwise `referenceOrSkip` skips the suite, saying why there is none.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Reference {
  port: number;
  amqpUrl: string;
  mgmt: string;
  node: string;
  /** rabbitmqctl -n NODE ARGS, as the rabbitmq user. */
  ctl(...args: string[]): string;
}

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPTS = [resolve(repo, '../shared/tools/reference-rabbitmq.sh'), '/work/shared/tools/reference-rabbitmq.sh'];

function asRabbit(cmd: string): string {
  return execFileSync('su', ['rabbitmq', '-s', '/bin/sh', '-c', cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
}

async function answers(mgmt: string): Promise<boolean> {
  try {
    const res = await fetch(`${mgmt}/api/overview`, { headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` } });
    return res.ok;
  } catch {
    return false;
  }
}

/** Enables the shovel plugins on ref<port>@localhost (idempotent). */
export function enableShovelPlugin(port: number): void {
  asRabbit(`RABBITMQ_ENABLED_PLUGINS_FILE=/tmp/reference-rabbitmq-${port}/enabled_plugins rabbitmq-plugins -q -n ref${port}@localhost enable rabbitmq_shovel rabbitmq_shovel_management`);
}

let shared: Promise<Reference | string> | undefined;

/** The reference RabbitMQ (one per test process), or why there is none. */
function reference(): Promise<Reference | string> {
  return (shared ??= open());
}

/**
 * For a suite's before hook: the reference RabbitMQ, or the suite skipped with the reason there
 * is none (starting one may take minutes: the hook's timeout is raised).
 */
export async function referenceOrSkip(ctx: Mocha.Context): Promise<Reference> {
  ctx.timeout(300_000);
  const r = await reference();
  if (typeof r === 'string') {
    console.log(`      skipped: no reference RabbitMQ (${r})`);
    ctx.skip();
  }
  return r as Reference;
}

async function open(): Promise<Reference | string> {
  const fromEnv = process.env['WARREN_REFERENCE_MGMT'];
  let port: number;
  let started = false;
  if (fromEnv) {
    port = Number(new URL(fromEnv).port) - 10000;
    if (!(await answers(fromEnv))) return `WARREN_REFERENCE_MGMT=${fromEnv} does not answer`;
  } else {
    const script = SCRIPTS.find((s) => existsSync(s));
    if (!script) return 'no ../shared/tools/reference-rabbitmq.sh';
    if (!existsSync('/usr/lib/rabbitmq/bin/rabbitmq-server')) return 'rabbitmq-server is not installed (.ci/run installs it)';
    if (process.getuid?.() !== 0) return 'starting the reference RabbitMQ needs root';
    port = Number(process.env['WARREN_REFERENCE_PORT'] ?? 5698);
    if (!(await answers(`http://127.0.0.1:${port + 10000}`))) {
      try {
        execFileSync(script, ['start', String(port)], { stdio: 'ignore', timeout: 180_000 });
        started = true;
      } catch (e) {
        return `the reference RabbitMQ did not start: ${(e as Error).message}`;
      }
    }
  }
  // A node this process started is stopped when it exits (several test files share it).
  if (started) process.once('exit', () => execFileSync(SCRIPTS.find((s) => existsSync(s))!, ['stop', String(port)], { stdio: 'ignore' }));
  const node = `ref${port}@localhost`;
  try {
    enableShovelPlugin(port);
  } catch (e) {
    return `could not enable rabbitmq_shovel on ${node}: ${(e as Error).message}`;
  }
  const ref: Reference = {
    port,
    amqpUrl: `amqp://guest:guest@127.0.0.1:${port}`,
    mgmt: `http://127.0.0.1:${port + 10000}`,
    node,
    ctl: (...args) => asRabbit(`rabbitmqctl -q -n ${node} ${args.join(' ')}`),
  };
  return ref;
}
