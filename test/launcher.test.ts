import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import amqp from 'amqplib';
import { heapSizeFor } from '../src/memory-monitor.js';
import { makeTmpDir, removeDir } from './support/tmp-dir.js';
import { confirmChannel, connect } from './support/amqp.js';
import { call } from './support/management.js';
import { TestPki } from './support/tls-certs.js';

const MiB = 1024 * 1024;

interface Started {
  launcher: ChildProcess;
  /** The broker's "memory high watermark" log line. */
  memory: { watermark: number; heapLimit: number };
  exited: Promise<number | null>;
}

/** Runs the `warren` command from the sources (test/fixtures/launch.ts, as bin/warren.js does) until it listens. */
function launch(dataDir: string, args: string[], nodeArgs: string[] = []): Promise<Started> {
  const launcher = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'test/fixtures/launch.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', '--prometheus-port', 'off', '--management-port', 'off', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let memory: Started['memory'] | undefined;
    createInterface({ input: launcher.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg: string; watermark?: number; heapLimit?: number };
      if (entry.watermark !== undefined) memory = { watermark: entry.watermark, heapLimit: entry.heapLimit as number };
      if (entry.msg.startsWith('warren listening') && memory) resolve({ launcher, memory, exited });
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before listening`)));
  });
}

interface Built {
  launcher: ChildProcess;
  /** Its --ready-json line. */
  ready: { amqp: string; amqps?: string; management: string };
  /** What it has logged so far (--ready-json sends the logs to stderr). */
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Runs the built `warren` command (bin/warren.js) with --ready-json and the management API on a free port, until it is ready. */
async function startBuilt(dataDir: string, args: string[]): Promise<Built> {
  const launcher = spawn(process.execPath, ['bin/warren.js', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir,
    '--ready-json', '--management-port', '0', '--prometheus-port', 'off', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  launcher.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  const ready = await new Promise<Built['ready']>((resolve, reject) => {
    createInterface({ input: launcher.stdout! }).once('line', (line) => resolve(JSON.parse(line) as Built['ready']));
    void exited.then((code) => reject(new Error(`warren exited with ${code}: ${stderr}`)));
  });
  return { launcher, ready, stderr: () => stderr, exited };
}

/** The pids of a process's children (Linux). */
function children(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

/** The `warren` command sizes the JS heap from the memory watermark (issue 10). */
describe('launcher (bin/warren.js)', function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(() => (dir = makeTmpDir('warren-launch-')));
  afterEach(() => removeDir(dir));

  it('starts the broker in a Node whose old space fits the watermark, and passes signals on', async () => {
    const { launcher, memory, exited } = await launch(dir, ['--memory-high-watermark-absolute', '100MB']);
    expect(memory.watermark).to.equal(100e6);
    // The heap alarm (70% of the old space) goes off at the watermark, not below it.
    expect(memory.heapLimit).to.equal(heapSizeFor(100e6) * MiB);
    if (process.platform === 'linux') expect(children(launcher.pid as number)).to.have.length(1);
    launcher.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('keeps a --max-old-space-size given by hand, and then runs the broker itself', async () => {
    const { launcher, memory, exited } = await launch(dir, [], ['--max-old-space-size=200']);
    expect(memory.heapLimit).to.equal(200 * MiB);
    if (process.platform === 'linux') expect(children(launcher.pid as number).length).to.be.below(2);
    launcher.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('the broker stops when the launcher is killed', async () => {
    const { launcher } = await launch(dir, []);
    const [broker] = children(launcher.pid as number);
    if (broker === undefined) return; // no /proc: nothing to look at
    launcher.kill('SIGKILL');
    // The broker sees its channel to the launcher close, shuts down and exits: wait for that.
    await new Promise<void>((resolve) => {
      const poll = (): void => {
        if (!existsSync(`/proc/${broker}`) || /State:\s+Z/.test(readFileSync(`/proc/${broker}/status`, 'utf8'))) resolve();
        else setTimeout(poll, 20);
      };
      poll();
    });
  });

  /**
   * What a user runs: bin/warren.js from the build (`npm test` builds first). Its broker process
   * runs the bundle (dist/bundle/main.cjs, through bin/broker.cjs), which must find what the
   * modules find beside them: the web UI's files, rabbitmqadmin and package.json's version.
   */
  it('the built command runs the broker from the bundle: AMQP, the web UI, rabbitmqadmin and the version work', async () => {
    const { launcher, ready, exited } = await startBuilt(dir, ['--log-level', 'warn']);
    try {
      if (process.platform === 'linux') {
        const [broker] = children(launcher.pid as number);
        const argv = readFileSync(`/proc/${broker}/cmdline`, 'utf8').split('\0');
        expect(argv.some((a) => a.endsWith('bin/broker.cjs'))).to.equal(true, argv.join(' '));
      }
      const conn = await connect(ready.amqp);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('bundled', { durable: true });
      ch.sendToQueue('bundled', Buffer.from('from the bundle'), { persistent: true });
      await ch.waitForConfirms();
      const got = await ch.get('bundled', { noAck: true });
      expect(got && got.content.toString()).to.equal('from the bundle');
      await conn.close();
      const ui = await fetch(`${ready.management}/`);
      expect(ui.status).to.equal(200);
      expect(ui.headers.get('content-type')).to.equal('text/html; charset=utf-8');
      expect(await ui.text()).to.match(/<html/i);
      const admin = await fetch(`${ready.management}/cli/rabbitmqadmin`);
      expect(admin.status).to.equal(200);
      expect(await admin.text()).to.contain("VERSION = '3.10.8'");
      const auth = { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` };
      const overview = (await (await fetch(`${ready.management}/api/overview`, { headers: auth })).json()) as { warren_version: string };
      const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
      expect(overview.warren_version).to.equal(pkg.version);
    } finally {
      launcher.kill('SIGTERM');
      expect(await exited).to.equal(0);
    }
  });

  /**
   * What only some brokers use, through the built command: the AMQPS listener, the management
   * API over HTTPS, and a shovel, whose connections load amqplib when first made. bin/broker.cjs
   * runs the bundle as a vm.Script, in which an import() fails ("A dynamic import callback was not
   * specified"): shovels failed so in the built command, while every test of them ran the sources.
   */
  it('the built command runs what only some brokers use: AMQPS, HTTPS and a shovel work', async () => {
    const pki = new TestPki();
    const server = pki.server();
    const config = join(dir, 'warren.json');
    writeFileSync(config, JSON.stringify({ tls: { certfile: server.cert, keyfile: server.key, port: 0 }, managementTls: { certfile: server.cert, keyfile: server.key, port: 0 } }));
    const { launcher, ready, stderr, exited } = await startBuilt(join(dir, 'data'), ['--config', config, '--log-level', 'info']);
    try {
      // The log goes to stderr, which may arrive after the ready line.
      let https: RegExpExecArray | null = null;
      for (let i = 0; i < 200 && https === null; i++) {
        https = /"port":(\d+)[^\n]*management API listening for HTTPS/.exec(stderr());
        if (https === null) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(https, stderr()).to.not.equal(null);
      const auth = `Basic ${Buffer.from('guest:guest').toString('base64')}`;
      // node:https, not fetch: fetch takes no CA of its own.
      const overview = await new Promise<number>((resolve, reject) => {
        request(`https://localhost:${https![1]}/api/overview`, { ca: pki.ca.certPem, headers: { authorization: auth }, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject).end();
      });
      expect(overview).to.equal(200);

      const tlsConn = await amqp.connect(`amqps://guest:guest@localhost:${new URL(ready.amqps!).port}`, { ca: [pki.ca.certPem], servername: 'localhost' });
      const tlsCh = await tlsConn.createConfirmChannel();
      await tlsCh.assertQueue('src', { durable: true });
      tlsCh.sendToQueue('src', Buffer.from('over TLS, then shovelled'), { persistent: true });
      await tlsCh.waitForConfirms();
      await tlsConn.close();

      const put = await call(ready.management, 'PUT', '/api/parameters/shovel/%2F/move', {
        body: { value: { 'src-uri': 'amqp://', 'src-queue': 'src', 'dest-uri': 'amqp://', 'dest-queue': 'dst' } },
      });
      expect(put.status).to.equal(201);
      const conn = await connect(ready.amqp);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('dst', { durable: true });
      let got: false | { content: Buffer } = false;
      for (let i = 0; i < 200 && got === false; i++) {
        got = await ch.get('dst', { noAck: true });
        if (got === false) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(got && got.content.toString(), stderr()).to.equal('over TLS, then shovelled');
      await conn.close();
    } finally {
      launcher.kill('SIGTERM');
      await exited;
      pki.dispose();
    }
  });

  /**
   * bin/broker.cjs keeps a V8 code cache of the bundle beside it, made once the broker listens.
   * V8 would take a cache of any source of the same length: the cache names the bundle it was
   * made from (its SHA-256), and a damaged or foreign one is replaced, never trusted.
   */
  it('the broker process keeps a code cache of the bundle: a damaged one is replaced, a good one kept', async () => {
    const cacheFile = 'dist/bundle/main.cjs.cache';
    /** Runs bin/broker.cjs until it listens, then until the cache file is no longer `before`. */
    async function start(before: Buffer | undefined): Promise<Buffer> {
      const broker = spawn(process.execPath, ['bin/broker.cjs', '--port', '0', '--host', '127.0.0.1', '--data-dir', dir,
        '--ready-json', '--management-port', 'off', '--prometheus-port', 'off', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const exited = new Promise<number | null>((resolve) => broker.once('exit', (code) => resolve(code)));
      try {
        const ready = await new Promise<{ amqp: string }>((resolve, reject) => {
          createInterface({ input: broker.stdout! }).once('line', (line) => resolve(JSON.parse(line) as { amqp: string }));
          void exited.then((code) => reject(new Error(`broker exited with ${code}`)));
        });
        const conn = await connect(ready.amqp);
        await conn.close();
        // Written right after main() resolves; a kept cache is not written again.
        for (let i = 0; i < 50; i++) {
          const now = existsSync(cacheFile) ? readFileSync(cacheFile) : undefined;
          if (now && !(before && now.equals(before))) return now;
          await new Promise((r) => setTimeout(r, 20));
        }
        return readFileSync(cacheFile);
      } finally {
        broker.kill('SIGTERM');
        expect(await exited).to.equal(0);
      }
    }
    const digest = createHash('sha256').update(readFileSync('dist/bundle/main.cjs')).digest();
    // Damaged: right digest, bytes V8 rejects.
    const damaged = Buffer.concat([digest, Buffer.from('not a code cache')]);
    writeFileSync(cacheFile, damaged);
    const made = await start(damaged);
    expect(made.subarray(0, 32).equals(digest)).to.equal(true);
    expect(made.length).to.be.above(100_000);
    // Good: used and kept as it is (not written again).
    const written = statSync(cacheFile).mtimeMs;
    expect((await start(made)).equals(made)).to.equal(true);
    expect(statSync(cacheFile).mtimeMs).to.equal(written);
    // Made from another bundle of the same length: not used (V8 would run it), and replaced.
    const foreign = Buffer.concat([Buffer.alloc(32), made.subarray(32)]);
    writeFileSync(cacheFile, foreign);
    const remade = await start(foreign);
    expect(remade.subarray(0, 32).equals(digest)).to.equal(true);
  });
});
