import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { call, useManagedBroker } from '../support/management.js';
import { TestPki } from '../support/tls-certs.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const run = promisify(execFile);
const CLIENTS = join(import.meta.dirname, '..', 'clients');
const EXPECTED = join(CLIENTS, 'expected.json');
const GOPATH = '/usr/share/gocode';
const AMQP091 = join(GOPATH, 'src/github.com/rabbitmq/amqp091-go');
const JARS = ['/usr/share/java/amqp-client.jar', '/usr/share/java/slf4j-api.jar', '/usr/share/java/slf4j-nop.jar'];

/**
 * The same scenario driven by Go's amqp091-go and by the RabbitMQ Java client (test/clients/go,
 * test/clients/java: Debian's golang-github-rabbitmq-amqp091-go-dev and librabbitmq-client-java,
 * which .ci/run installs): server properties and capabilities, negotiated limits, declare-ok,
 * confirms, basic.get with its message count, nack with requeue, prefetch and consume,
 * redelivered flags, a server-named queue, a mandatory publish returned, a 300,000-octet body,
 * the cancel notification of a deleted queue's consumer, a passive declare's 404, a nack from a
 * reject-publish queue, a transaction rolled back and committed, an exclusive consumer's 403; the
 * Java client's automatic recovery once the management API closes its connection; and both
 * clients' blocked and unblocked notifications under the memory alarm. Each client
 * must see from Warren exactly what it saw from RabbitMQ 3.10.8 (test/clients/expected.json;
 * `RECORD_CLIENTS_FROM=amqp://… npx mocha …` records it again from a reference, its management
 * API on the AMQP port + 10000).
 */
describe('Go (amqp091-go) and Java (RabbitMQ Java client) see Warren as RabbitMQ', function () {
  this.timeout(120_000);
  const b = useManagedBroker({ heartbeat: 60 });

  /** The URL without a path: the Java client reads a trailing "/" as the vhost "". */
  const url = () => process.env['RECORD_CLIENTS_FROM'] ?? `amqp://guest:guest@127.0.0.1:${b.running.port}`;
  const management = () => {
    const reference = process.env['RECORD_CLIENTS_FROM'];
    return reference ? `http://127.0.0.1:${Number(new URL(reference).port) + 10000}` : b.base;
  };
  const check = (client: 'go' | 'java' | 'javaRecovery' | 'goBlocked' | 'javaBlocked', out: string) => {
    const seen = JSON.parse(out) as Record<string, unknown>;
    if (process.env['RECORD_CLIENTS_FROM']) {
      writeFileSync(EXPECTED, `${JSON.stringify({ ...expected(), [client]: seen }, null, 2)}\n`);
      return;
    }
    expect(seen).to.deep.equal(expected()[client]);
  };

  it('Go: amqp091-go', async function () {
    await withGo(this, async (go) => check('go', await output(go, [url()])));
  });

  it('Java: the RabbitMQ Java client', async function () {
    await withJava(this, async (java) => check('java', await output(java, [url()])));
  });

  it('Java: automatic recovery after the server closes the connection (320 through the management API)', async function () {
    await withJava(this, async (java) => {
      const result = await drive(java, [url(), 'recovery'], async () => {
        // RabbitMQ lists a connection once its statistics are in: look for it a while.
        let name: string | undefined;
        for (let i = 0; i < 100 && name === undefined; i++) {
          const list = (await call(management(), 'GET', '/api/connections')).json as Array<{ name: string; client_properties?: { connection_name?: string } }>;
          name = list.find((c) => c.client_properties?.connection_name === 'java-recovery')?.name;
          if (name === undefined) await new Promise((r) => setTimeout(r, 100));
        }
        expect((await call(management(), 'DELETE', `/api/connections/${encodeURIComponent(name!)}`)).status).to.equal(204);
      });
      check('javaRecovery', result);
    });
  });

  /**
   * The memory alarm: Warren's raised by the toolkit (faults.raiseAlarm), the reference's by
   * lowering its watermark (rabbitmqctl set_vm_memory_high_watermark), until the client says it
   * is blocked.
   */
  const alarm = async (on: boolean): Promise<void> => {
    const reference = process.env['RECORD_CLIENTS_FROM'];
    if (reference === undefined) {
      if (on) b.running.faults.raiseAlarm('memory');
      else b.running.faults.clearAlarm('memory');
      return;
    }
    const node = `ref${new URL(reference).port}@localhost`;
    await run('su', ['rabbitmq', '-s', '/bin/sh', '-c', `rabbitmqctl -q -n ${node} set_vm_memory_high_watermark ${on ? '0.000001' : '0.4'}`]);
  };
  /** The program's 'blocked' run: the alarm goes on at its "ready", and off again whatever happens. */
  const blockedUnderAlarm = async (p: Program, client: 'goBlocked' | 'javaBlocked'): Promise<void> => {
    try {
      check(client, await drive(p, [url(), 'blocked'], async (line) => alarm(line === 'ready')));
    } finally {
      await alarm(false);
    }
  };

  it('Go: connection.blocked and connection.unblocked while the memory alarm is on', async function () {
    await withGo(this, (go) => blockedUnderAlarm(go, 'goBlocked'));
  });

  it('Java: connection.blocked and connection.unblocked while the memory alarm is on', async function () {
    await withJava(this, (java) => blockedUnderAlarm(java, 'javaBlocked'));
  });
});

/**
 * The same scenario over AMQPS (Warren's TLS listener, a certificate of test/support/tls-certs.ts):
 * Go's crypto/tls, verifying the name, and Java's JSSE see what they saw over plain AMQP.
 */
describe('Go and Java clients over TLS (amqps)', function () {
  this.timeout(120_000);
  let pki: TestPki;
  let broker: RunningBroker;
  before(async () => {
    pki = new TestPki();
    const server = pki.server();
    broker = await startBroker({ port: 0, logLevel: 'silent', heartbeat: 60, tls: { port: 0, certfile: server.cert, keyfile: server.key } });
  });
  after(async () => {
    await broker?.close();
    pki?.dispose();
  });
  const url = () => `amqps://guest:guest@localhost:${broker.tlsPort}`;

  it('Go: amqp091-go over crypto/tls', async function () {
    await withGo(this, async (go) => {
      expect(JSON.parse(await output(go, [url()], { CLIENT_CA: pki.ca.cert }))).to.deep.equal(expected()['go']);
    });
  });

  it('Java: the RabbitMQ Java client over JSSE', async function () {
    await withJava(this, async (java) => {
      expect(JSON.parse(await output(java, [url()], { CLIENT_CA: pki.ca.cert }))).to.deep.equal(expected()['java']);
    });
  });
});

function expected(): Record<string, unknown> {
  return JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, unknown>;
}

/** A client program: the command that runs it, with its arguments and environment before the test's own. */
interface Program {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** Runs body with the Go program (go run, GOPATH mode, a build cache of its own), or skips without Go. */
async function withGo(ctx: Mocha.Context, body: (go: Program) => Promise<void>): Promise<void> {
  if (!existsSync(AMQP091) || !(await found('go'))) return skip(ctx, 'Debian\'s golang-go and golang-github-rabbitmq-amqp091-go-dev are not installed');
  const cache = makeTmpDir('warren-go-cache-');
  try {
    await body({ command: 'go', args: ['run', join(CLIENTS, 'go', 'main.go')], env: { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: cache, GOFLAGS: '' } });
  } finally {
    removeDir(cache);
  }
}

/** Runs body with the Java program, compiled for it, or skips without a JDK and the client. */
async function withJava(ctx: Mocha.Context, body: (java: Program) => Promise<void>): Promise<void> {
  if (JARS.some((j) => !existsSync(j)) || !(await found('javac'))) return skip(ctx, 'Debian\'s default-jdk-headless and librabbitmq-client-java are not installed');
  const classes = makeTmpDir('warren-java-');
  try {
    await run('javac', ['-cp', JARS[0]!, '-d', classes, join(CLIENTS, 'java', 'ClientCheck.java')]);
    await body({ command: 'java', args: ['-cp', [classes, ...JARS].join(':'), 'ClientCheck'], env: process.env });
  } finally {
    removeDir(classes);
  }
}

/** What the program prints, run to its end with args (and env added). */
async function output(p: Program, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return (await run(p.command, [...p.args, ...args], { env: { ...p.env, ...env } })).stdout;
}

/**
 * Runs a client program that prints control lines ("ready", "blocked") the test acts on (act)
 * before its last line, what it saw; resolves with that line once the program exits with 0.
 */
async function drive(p: Program, args: string[], act: (line: string) => Promise<void>): Promise<string> {
  const child = spawn(p.command, [...p.args, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: p.env });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let result = '';
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line === 'ready' || line === 'blocked') await act(line);
    else result = line;
  }
  expect(await exited, `${p.command} exit code`).to.equal(0);
  return result;
}

async function found(command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${command}`]);
    return true;
  } catch {
    return false;
  }
}

function skip(ctx: Mocha.Context, why: string): void {
  console.log(`      (skipped: ${why})`);
  ctx.skip();
}
