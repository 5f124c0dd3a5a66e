import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { call, useManagedBroker } from '../support/management.js';
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
 * the cancel notification of a deleted queue's consumer, and a passive declare's 404; and the
 * Java client's automatic recovery once the management API closes its connection. Each client
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
  const expected = () => JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, unknown>;
  const check = (client: 'go' | 'java' | 'javaRecovery', out: string) => {
    const seen = JSON.parse(out) as Record<string, unknown>;
    if (process.env['RECORD_CLIENTS_FROM']) {
      writeFileSync(EXPECTED, `${JSON.stringify({ ...expected(), [client]: seen }, null, 2)}\n`);
      return;
    }
    expect(seen).to.deep.equal(expected()[client]);
  };

  it('Go: amqp091-go', async function () {
    if (!existsSync(AMQP091) || !(await found('go'))) return skip(this, 'Debian\'s golang-go and golang-github-rabbitmq-amqp091-go-dev are not installed');
    const cache = makeTmpDir('warren-go-cache-');
    try {
      const { stdout } = await run('go', ['run', join(CLIENTS, 'go', 'main.go'), url()], {
        env: { ...process.env, GO111MODULE: 'off', GOPATH, GOCACHE: cache, GOFLAGS: '' },
      });
      check('go', stdout);
    } finally {
      removeDir(cache);
    }
  });

  it('Java: the RabbitMQ Java client', async function () {
    if (JARS.some((j) => !existsSync(j)) || !(await found('javac'))) return skip(this, 'Debian\'s default-jdk-headless and librabbitmq-client-java are not installed');
    const classes = makeTmpDir('warren-java-');
    try {
      await run('javac', ['-cp', JARS[0]!, '-d', classes, join(CLIENTS, 'java', 'ClientCheck.java')]);
      const { stdout } = await run('java', ['-cp', [classes, ...JARS].join(':'), 'ClientCheck', url()]);
      check('java', stdout);
    } finally {
      removeDir(classes);
    }
  });

  it('Java: automatic recovery after the server closes the connection (320 through the management API)', async function () {
    if (JARS.some((j) => !existsSync(j)) || !(await found('javac'))) return skip(this, 'Debian\'s default-jdk-headless and librabbitmq-client-java are not installed');
    const classes = makeTmpDir('warren-java-');
    try {
      await run('javac', ['-cp', JARS[0]!, '-d', classes, join(CLIENTS, 'java', 'ClientCheck.java')]);
      const child = spawn('java', ['-cp', [classes, ...JARS].join(':'), 'ClientCheck', url(), 'recovery'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let result = '';
      for await (const line of createInterface({ input: child.stdout! })) {
        if (line !== 'ready') {
          result = line;
          continue;
        }
        // RabbitMQ lists a connection once its statistics are in: look for it a while.
        let name: string | undefined;
        for (let i = 0; i < 100 && name === undefined; i++) {
          const list = (await call(management(), 'GET', '/api/connections')).json as Array<{ name: string; client_properties?: { connection_name?: string } }>;
          name = list.find((c) => c.client_properties?.connection_name === 'java-recovery')?.name;
          if (name === undefined) await new Promise((r) => setTimeout(r, 100));
        }
        expect((await call(management(), 'DELETE', `/api/connections/${encodeURIComponent(name!)}`)).status).to.equal(204);
      }
      check('javaRecovery', result);
    } finally {
      removeDir(classes);
    }
  });
});

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
