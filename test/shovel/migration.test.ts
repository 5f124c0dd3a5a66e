/**
 * The migration path of the README ("When one machine is not enough"), run as written against
 * the reference RabbitMQ 3.10 (test/support/reference-rabbitmq.ts; skipped, saying why, where
 * there is none): the shell block is taken from README.md and run by bash, with `warren` being
 * this checkout's src/main.ts. Before it, a Warren with users, a vhost, permissions, a policy,
 * exchanges, queues, bindings and persistent messages is stopped; after it, RabbitMQ has the same
 * topology (compared through both brokers' /api/definitions), the users log in with their
 * passwords, and every message is in RabbitMQ's queues, in order.
 *
 * Also: `warren export` refuses a running or missing data dir.
 */
import amqp from 'amqplib';
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBroker } from '../../src/broker.js';
import { call } from '../support/management.js';
import { referenceOrSkip, type Reference } from '../support/reference-rabbitmq.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const guest = { user: 'guest', password: 'guest' };
const VHOST = 'mig-v';
const ev = encodeURIComponent;

/** The README's migration commands: the sh block under "When one machine is not enough". */
function readmeSteps(): string {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const at = readme.indexOf('### When one machine is not enough');
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  if (at < 0 || !m) throw new Error('README.md has no migration block');
  return m[1]!;
}

function freePort(): Promise<number> {
  return new Promise((res) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/** A `warren` command that runs this checkout's src/main.ts. */
function warrenShim(dir: string): string {
  const bin = join(dir, 'bin');
  spawnSync('mkdir', ['-p', bin]);
  const tsx = join(repo, 'node_modules/tsx/dist/esm/index.mjs');
  writeFileSync(join(bin, 'warren'), `#!/bin/sh\nexec "${process.execPath}" --import "${tsx}" "${join(repo, 'src/main.ts')}" "$@"\n`);
  chmodSync(join(bin, 'warren'), 0o755);
  return bin;
}

function runWarren(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const tsx = join(repo, 'node_modules/tsx/dist/esm/index.mjs');
  const r = spawnSync(process.execPath, ['--import', tsx, join(repo, 'src/main.ts'), ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('warren export', function () {
  this.timeout(60_000);
  it('refuses a data dir without a store, and one whose broker is running', async () => {
    const dir = makeTmpDir('warren-export-');
    try {
      const none = runWarren(['export', '--data-dir', dir]);
      expect(none.status).to.equal(2);
      expect(none.stderr).to.contain('no Warren data');
      const running = await startBroker({ port: 0, dataDir: dir, logLevel: 'silent' });
      try {
        const r = runWarren(['export', '--data-dir', dir]);
        expect(r.status).to.equal(2);
        expect(r.stderr).to.contain('is running or did not stop cleanly');
      } finally {
        await running.close();
      }
      const ok = runWarren(['export', '--data-dir', dir]);
      expect(ok.status, ok.stderr).to.equal(0);
      const defs = JSON.parse(ok.stdout) as { users: Array<{ name: string }>; vhosts: Array<{ name: string }> };
      expect(defs.users.map((u) => u.name)).to.deep.equal(['guest']);
      expect(defs.vhosts).to.deep.equal([{ name: '/' }]);
    } finally {
      removeDir(dir);
    }
  });
});

describe('the README migration path, run against the reference RabbitMQ', function () {
  this.timeout(300_000);
  let ref: Reference;
  before(async function () {
    ref = await referenceOrSkip(this);
  });

  it('moves users, vhosts, permissions, policies, exchanges, queues, bindings and every message to RabbitMQ', async () => {
    const dir = makeTmpDir('warren-migrate-');
    const data = join(dir, 'data');
    await call(ref.mgmt, 'DELETE', `/api/vhosts/${VHOST}`, guest);
    await call(ref.mgmt, 'DELETE', '/api/users/mig-user', guest);
    for (const q of ['mig.orders', 'mig.audit']) await call(ref.mgmt, 'DELETE', `/api/queues/%2F/${q}`, guest);
    await call(ref.mgmt, 'DELETE', '/api/exchanges/%2F/mig.events', guest);
    await call(ref.mgmt, 'DELETE', '/api/policies/%2F/mig-policy', guest);
    try {
      // A Warren with some of everything, and messages in its queues.
      const w = await startBroker({ port: 0, managementPort: 0, dataDir: data, logLevel: 'silent' });
      const api = (method: string, path: string, body?: unknown) => call(w.managementUrl!, method, path, body === undefined ? {} : { body });
      expect((await api('PUT', `/api/vhosts/${VHOST}`, {})).status).to.equal(201);
      expect((await api('PUT', '/api/users/mig-user', { password: 'mig-secret', tags: 'management' })).status).to.equal(201);
      for (const v of [VHOST, '/']) expect((await api('PUT', `/api/permissions/${ev(v)}/mig-user`, { configure: '^mig\\.', write: '.*', read: '.*' })).status).to.equal(201);
      expect((await api('PUT', `/api/permissions/${VHOST}/guest`, { configure: '.*', write: '.*', read: '.*' })).status).to.be.oneOf([201, 204]);
      expect((await api('PUT', '/api/policies/%2F/mig-policy', { pattern: '^mig\\.audit$', definition: { 'max-length': 100000 }, 'apply-to': 'queues' })).status).to.equal(201);
      const c = await amqp.connect(w.url);
      const ch = await c.createConfirmChannel();
      await ch.assertExchange('mig.events', 'topic', { durable: true });
      await ch.assertQueue('mig.orders', { durable: true, arguments: { 'x-message-ttl': 3_600_000 } });
      await ch.assertQueue('mig.audit', { durable: true });
      await ch.bindQueue('mig.orders', 'mig.events', 'order.*');
      await ch.bindQueue('mig.audit', 'mig.events', '#');
      for (let i = 0; i < 500; i++) ch.publish('mig.events', i % 5 === 0 ? 'order.new' : 'user.login', Buffer.from(String(i)), { persistent: true });
      await ch.waitForConfirms();
      await c.close();
      const vc = await amqp.connect(`${w.url}/${VHOST}`);
      const vch = await vc.createConfirmChannel();
      await vch.assertQueue('mig.jobs', { durable: true });
      for (let i = 0; i < 300; i++) vch.sendToQueue('mig.jobs', Buffer.from(`job ${i}`), { persistent: true });
      await vch.waitForConfirms();
      await vc.close();
      const before = (await api('GET', '/api/definitions')).json as Record<string, unknown[]>;
      await w.close();

      // The README's commands, as written.
      const [warrenPort, mgmtPort] = [await freePort(), await freePort()];
      const env = {
        ...process.env,
        PATH: `${warrenShim(dir)}:${process.env['PATH']}`,
        WARREN_DATA: data,
        WARREN_MGMT: `http://127.0.0.1:${mgmtPort}`,
        WARREN_USER: 'guest:guest',
        RABBIT_MGMT: ref.mgmt,
        RABBIT_AMQP: ref.amqpUrl,
        RABBIT_USER: 'guest:guest',
        WARREN_PORT: String(warrenPort),
        WARREN_HOST: '127.0.0.1',
        WARREN_MANAGEMENT_PORT: String(mgmtPort),
        WARREN_PROMETHEUS_PORT: 'off',
        WARREN_LOG_LEVEL: 'warn',
      };
      const run = spawnSync('bash', ['-eo', 'pipefail', '-c', readmeSteps()], { cwd: dir, env, encoding: 'utf8', timeout: 240_000 });
      expect(run.status, `README steps failed:\n${run.stdout}\n${run.stderr}`).to.equal(0);

      // Same topology in RabbitMQ.
      const after = (await call(ref.mgmt, 'GET', '/api/definitions', guest)).json as Record<string, Array<Record<string, unknown>>>;
      const pick = (list: unknown[], keep: (x: Record<string, unknown>) => boolean) => (list as Array<Record<string, unknown>>).filter(keep);
      const ours = (x: Record<string, unknown>) => String(x['name'] ?? x['source'] ?? x['user'] ?? '').startsWith('mig') || x['vhost'] === VHOST;
      for (const key of ['queues', 'exchanges', 'bindings', 'policies', 'permissions']) {
        const sort = (l: Array<Record<string, unknown>>) => l.map((x) => JSON.stringify(x)).sort();
        expect(sort(pick(after[key]!, ours)), key).to.deep.equal(sort(pick(before[key]!, ours)));
      }
      const user = (l: unknown[]) => pick(l, (u) => u['name'] === 'mig-user');
      expect(user(after['users']!)).to.deep.equal(user(before['users']!));
      expect(after['vhosts']!.map((v) => v['name'])).to.include(VHOST);
      // The user logs in to RabbitMQ with the password it had in Warren.
      const login = await amqp.connect(`amqp://mig-user:mig-secret@127.0.0.1:${ref.port}/${VHOST}`);
      await login.close();

      // Every message, in order; the drain shovels deleted themselves.
      const rc = await amqp.connect(ref.amqpUrl);
      const rch = await rc.createChannel();
      const bodies = async (queue: string) => {
        const out: string[] = [];
        for (let m = await rch.get(queue, { noAck: true }); m; m = await rch.get(queue, { noAck: true })) out.push(m.content.toString());
        return out;
      };
      expect(await bodies('mig.orders')).to.deep.equal(Array.from({ length: 100 }, (_, i) => String(i * 5)));
      expect(await bodies('mig.audit')).to.deep.equal(Array.from({ length: 500 }, (_, i) => String(i)));
      await rc.close();
      const vrc = await amqp.connect(`${ref.amqpUrl}/${VHOST}`);
      const vrch = await vrc.createChannel();
      const jobs: string[] = [];
      for (let m = await vrch.get('mig.jobs', { noAck: true }); m; m = await vrch.get('mig.jobs', { noAck: true })) jobs.push(m.content.toString());
      expect(jobs).to.deep.equal(Array.from({ length: 300 }, (_, i) => `job ${i}`));
      await vrc.close();
    } finally {
      removeDir(dir);
      await call(ref.mgmt, 'DELETE', `/api/vhosts/${VHOST}`, guest);
      await call(ref.mgmt, 'DELETE', '/api/users/mig-user', guest);
      for (const q of ['mig.orders', 'mig.audit']) await call(ref.mgmt, 'DELETE', `/api/queues/%2F/${q}`, guest);
      await call(ref.mgmt, 'DELETE', '/api/exchanges/%2F/mig.events', guest);
      await call(ref.mgmt, 'DELETE', '/api/policies/%2F/mig-policy', guest);
    }
  });
});
