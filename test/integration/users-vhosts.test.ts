import { expect } from 'chai';
import { networkInterfaces } from 'node:os';
import type { ChannelModel } from 'amqplib';
import { hashPassword } from '../../src/access/password.js';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { BrokerOptions } from '../../src/config.js';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { channel, closedWith, confirmChannel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { captureLog } from '../support/capture-log.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const FULL = { configure: '.*', write: '.*', read: '.*' };

/** The close amqplib reports for a connection the server closed (320 comes with 'close', not 'error'). */
function connectionClose(conn: ChannelModel): Promise<{ code: number; text: string }> {
  return new Promise((resolve) => {
    conn.once('close', (e?: Error & { code: number }) => {
      const m = e && /with message "(.*)"$/.exec(e.message);
      resolve({ code: e?.code ?? 0, text: m ? m[1]! : String(e?.message) });
    });
  });
}

describe('vhosts: created and deleted at run time (rabbit_vhost)', () => {
  const b = useBroker();

  it('a new vhost has the standard exchanges; its creator gets full permissions, nobody else any', async () => {
    const { broker } = b.running;
    expect(broker.putVhost('orders', { description: 'the orders', tags: ['prod'] }, 'guest')).to.equal('created');
    expect(broker.vhosts.get('orders')!.metadata).to.deep.equal({ description: 'the orders', tags: ['prod'], defaultQueueType: undefined });
    expect(broker.access.permission('guest', 'orders')).to.deep.include(FULL);
    expect([...broker.vhosts.get('orders')!.exchanges.keys()].sort()).to.deep.equal(['', 'amq.direct', 'amq.fanout', 'amq.headers', 'amq.match', 'amq.rabbitmq.trace', 'amq.topic']);
    const conn = await connect(`${b.url}/orders`);
    await conn.close();
    // Updating keeps what it is not given (rabbit_vhost:update changes description and tags).
    expect(broker.putVhost('orders', { tags: ['prod', 'eu'] })).to.equal('updated');
    expect(broker.vhosts.get('orders')!.metadata.description).to.equal('the orders');
  });

  it('deleting a vhost closes its connections with 320 and takes its queues, messages, exchanges, permissions and policies', async () => {
    const { broker } = b.running;
    broker.putVhost('dv', {}, 'guest');
    const conn = await connect(`${b.url}/dv`);
    const closed = connectionClose(conn);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('dq', { durable: true });
    ch.sendToQueue('dq', Buffer.from('m'), { persistent: true });
    await ch.waitForConfirms();
    broker.policies.put('policy', 'dv', 'ttl', { pattern: '.*', definition: { 'message-ttl': 1000 } });
    expect(broker.store.metadata.loadDefinitions().filter((d) => d.kind === 'policy')).to.have.length(1);
    const other = await connect(b.url);
    expect(broker.store.messages.queues()).to.include('dv\u0000dq');
    expect(broker.deleteVhost('dv')).to.equal(true);
    expect(await closed).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - vhost 'dv' is deleted" });
    expect(broker.deleteVhost('dv')).to.equal(false);
    expect(broker.access.permissions({ vhost: 'dv' })).to.deep.equal([]);
    expect(broker.store.messages.queues()).to.not.include('dv\u0000dq');
    // Connections to other vhosts go on.
    await (await channel(other)).checkExchange('amq.direct');
    await other.close();
    expect(broker.store.metadata.loadDefinitions().filter((d) => d.kind === 'policy')).to.deep.equal([]);
    // A vhost of the same name made again starts empty.
    broker.putVhost('dv', {}, 'guest');
    expect(broker.policies.list('policy', 'dv')).to.deep.equal([]);
    const again = await connect(`${b.url}/dv`);
    expect((await closedWith((await channel(again)).checkQueue('dq'))).text).to.equal("NOT_FOUND - no queue 'dq' in vhost 'dv'");
    await again.close();
  });

  it('the default queue type applies to declares that suit it (rabbit_amqqueue:augment_declare_args)', async () => {
    const { broker } = b.running;
    broker.putVhost('dqt', { defaultQueueType: 'quorum' }, 'guest');
    const conn = await connect(`${b.url}/dqt`);
    const ch = await channel(conn);
    await ch.assertQueue('dq1', { durable: true });
    expect(broker.vhosts.get('dqt')!.queues.get('dq1')!.isQuorum).to.equal(true);
    await ch.assertQueue('tq1', { durable: false });
    expect(broker.vhosts.get('dqt')!.queues.get('tq1')!.isQuorum).to.equal(false);
    expect((await closedWith(ch.assertQueue('dq1', { durable: true, arguments: { 'x-queue-type': 'classic' } }))).text).to.equal(
      "PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue 'dq1' in vhost 'dqt': received 'classic' but current is 'quorum'",
    );
    const ch2 = await channel(conn);
    expect((await closedWith(ch2.assertQueue('', { durable: true }))).text).to.equal('PRECONDITION_FAILED - Cannot declare a server-named queue for type rabbit_quorum_queue');
    await conn.close();
    expect(() => broker.putVhost('bad', { defaultQueueType: 'bogus' })).to.throw(/unknown queue type 'bogus'/);
  });
});

describe('users: deletion closes their connections (rabbit_connection_tracking)', () => {
  const b = useBroker();

  it("closes a deleted user's connections with 320 and leaves the others", async () => {
    const { access } = b.running.broker;
    access.putUser('del', { password: 'pw', tags: [] });
    access.setPermission('del', '/', FULL);
    const conn = await connect(b.url.replace('guest:guest', 'del:pw'));
    const closed = connectionClose(conn);
    const guest = await connect(b.url);
    access.deleteUser('del');
    expect(await closed).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - user 'del' is deleted" });
    await (await channel(guest)).checkExchange('amq.direct');
    await guest.close();
    const err = await connect(b.url.replace('guest:guest', 'del:pw')).then(() => 'connected', (e: Error) => e.message);
    expect(err).to.contain('ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN');
  });
});

describe('users: loopback_users', () => {
  const external = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  const b = useBroker({ host: '0.0.0.0' });

  it('guest may log in from loopback only; other users from anywhere', async function () {
    if (!external) this.skip(); // needs a non-loopback address to connect from
    const { access } = b.running.broker;
    access.putUser('remote', { password: 'pw', tags: [] });
    access.setPermission('remote', '/', FULL);
    (await connect(`amqp://guest:guest@127.0.0.1:${b.port}`)).close();
    const err = await connect(`amqp://guest:guest@${external}:${b.port}`).then(() => 'connected', (e: Error) => e.message);
    expect(err).to.contain('ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN');
    await (await connect(`amqp://remote:pw@${external}:${b.port}`)).close();
  });
});

describe('users and vhosts: persisted in the data dir, seeded from the config on a blank one', function () {
  this.timeout(30000);
  let dataDir: string;
  let running: RunningBroker | undefined;
  const start = async (options: BrokerOptions = {}) => {
    running = await startBroker({ port: 0, logLevel: 'silent', dataDir, ...options });
    return running;
  };

  beforeEach(() => {
    dataDir = makeTmpDir('warren-access-');
  });
  afterEach(async () => {
    await running?.close();
    running = undefined;
    removeDir(dataDir);
  });

  it('users, vhosts, permissions and topic permissions made at run time survive a restart', async () => {
    let r = await start();
    const { broker } = r;
    broker.putVhost('kept', { description: 'd', tags: ['t'] });
    broker.access.putUser('app', { password: 'app-pw', tags: ['management'], limits: { 'max-channels': 9 } });
    broker.access.setPermission('app', 'kept', { configure: '^app\\.', write: '.*', read: '.*' });
    broker.access.setTopicPermission('app', 'kept', 'amq.topic', { write: '^app\\.', read: '.*' });
    broker.access.deleteUser('guest');
    await r.close();

    r = await start();
    expect(r.broker.vhosts.get('kept')!.metadata).to.deep.equal({ description: 'd', tags: ['t'], defaultQueueType: undefined });
    expect(r.broker.access.user('app')).to.deep.include({ tags: ['management'], limits: { 'max-channels': 9 } });
    // guest was deleted: the config's default user does not come back.
    expect(r.broker.access.hasUser('guest')).to.equal(false);
    const conn = await connect(`amqp://app:app-pw@127.0.0.1:${r.port}/kept`);
    const ch = await channel(conn);
    await ch.assertQueue('app.q');
    expect((await closedWith(ch.assertQueue('other.q'))).text).to.equal("ACCESS_REFUSED - access to queue 'other.q' in vhost 'kept' refused for user 'app'");
    const ch2 = await channel(conn);
    const closed = new Promise<Error>((resolve) => ch2.once('error', resolve));
    ch2.publish('amq.topic', 'other.key', Buffer.from('m'));
    expect((await closed).message).to.contain("ACCESS_REFUSED - access to topic 'other.key' in exchange 'amq.topic' in vhost 'kept' refused for user 'app'");
    await conn.close();
  });

  it('a deleted vhost stays deleted, with its durable queues, after a restart', async () => {
    let r = await start({ vhosts: ['/', 'gone'] });
    const conn = await connect(`${r.url}/gone`);
    await (await channel(conn)).assertQueue('gq', { durable: true });
    await conn.close();
    r.broker.deleteVhost('gone');
    await r.close();
    r = await start({ vhosts: ['/', 'gone'] });
    expect(r.broker.vhosts.has('gone')).to.equal(false);
    expect(r.broker.store.metadata.load().queues).to.deep.equal([]);
  });

  it('seeds users with hashed passwords, tags and permissions from the config on a blank data dir only', async () => {
    const log = captureLog('debug');
    const md5 = hashPassword('bob-pw', 'rabbit_password_hashing_md5');
    const users = [
      { username: 'alice', password: 'alice-pw-7c1e', tags: ['management'], vhosts: ['/'] },
      { username: 'bob', passwordHash: md5, hashingAlgorithm: 'rabbit_password_hashing_md5' as const, permissions: { extra: { configure: '^bob', write: '^bob', read: '^bob' } } },
      { username: 'carol', password: 'carol-pw' },
    ];
    let r = await start({ logger: log.log, users, vhosts: ['/', 'extra'] });
    const { access, config } = r.broker;
    // The plain passwords are gone once the config is resolved, and never logged.
    expect(JSON.stringify(config.users)).to.not.contain('alice-pw-7c1e');
    expect(JSON.stringify(log.entries)).to.not.contain('alice-pw-7c1e');
    expect(access.authenticate('alice', 'alice-pw-7c1e')?.tags).to.deep.equal(['management']);
    expect(access.authenticate('bob', 'bob-pw')?.hashingAlgorithm).to.equal('rabbit_password_hashing_md5');
    expect(access.permissions().map((p) => `${p.user}@${p.vhost}:${p.configure}`)).to.deep.equal(['alice@/:.*', 'bob@extra:^bob', 'carol@/:.*', 'carol@extra:.*']);
    expect(access.tags('carol')).to.deep.equal([]);
    access.deleteUser('carol');
    access.setPermission('alice', 'extra', FULL);
    await r.close();

    // Later starts take users from the data dir: carol stays deleted, dave is not created, and a log line says so.
    const later = captureLog('info');
    r = await start({ logger: later.log, users: [...users, { username: 'dave', password: 'x' }], vhosts: ['/', 'extra', 'new'] });
    expect(r.broker.access.hasUser('carol')).to.equal(false);
    expect(r.broker.access.hasUser('dave')).to.equal(false);
    expect(r.broker.vhosts.has('new')).to.equal(false);
    expect(r.broker.access.permission('alice', 'extra')).to.deep.include(FULL);
    const line = later.entries.find((e) => /seed a new data dir only/.test(e.msg));
    expect(line).to.deep.include({ users: ['carol', 'dave'], vhosts: ['new'] });
  });

  it('guest gets the administrator tag and full permissions by default, as RabbitMQ\'s default user', async () => {
    const r = await start();
    expect(r.broker.access.tags('guest')).to.deep.equal(['administrator']);
    expect(r.broker.access.permissions()).to.deep.equal([{ user: 'guest', vhost: '/', ...FULL }]);
  });

  it('refuses a config user with both a password and a hash, or a malformed hash', async () => {
    const failure = (options: BrokerOptions) => start(options).then(() => 'started', (e: Error) => e.message);
    expect(await failure({ users: [{ username: 'x', password: 'a', passwordHash: '' }] })).to.match(/give password or passwordHash, not both/);
    expect(await failure({ users: [{ username: 'x', passwordHash: 'not base64!' }] })).to.match(/passwordHash must be base64/);
  });

  it('a config user without a password cannot log in with one (RabbitMQ: certificate-only users)', async () => {
    const r = await start({ users: [{ username: 'cert-only' }] });
    expect(r.broker.access.authenticate('cert-only', '')).to.equal(undefined);
    const c = await RawClient.connect(r.url);
    expect((await c.handshake({ user: 'cert-only', password: 'anything' })).close?.code).to.equal(403);
    c.destroy();
  });
});
