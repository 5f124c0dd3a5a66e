/**
 * Dynamic shovels between two in-process Warrens, driven as a RabbitMQ user drives them: the
 * parameter PUT over /api/parameters/shovel, messages published and read with amqplib, the state
 * read from /api/shovels. What RabbitMQ 3.10.8 does was recorded from a reference node with
 * rabbitmq_shovel (src/shovel/README.md): the x-shovelled header, /api/shovels' keys, autodelete
 * removing the parameter, reconnection after reconnect-delay.
 */
import amqp, { type ChannelModel } from 'amqplib';
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { call } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const silent = { logLevel: 'silent' as const };

async function putShovel(b: RunningBroker, name: string, value: Record<string, unknown>, vhost = '%2F') {
  const res = await call(b.managementUrl!, 'PUT', `/api/parameters/shovel/${vhost}/${name}`, { body: { value } });
  expect(res.status, res.text).to.be.oneOf([201, 204]);
}

async function publish(url: string, queue: string, n: number, opts: { persistent?: boolean; headers?: Record<string, unknown> } = {}, offset = 0) {
  const c = await amqp.connect(url);
  const ch = await c.createConfirmChannel();
  await ch.assertQueue(queue, { durable: true });
  for (let i = 0; i < n; i++) ch.sendToQueue(queue, Buffer.from(String(offset + i)), { persistent: opts.persistent ?? true, headers: opts.headers });
  await ch.waitForConfirms();
  await c.close();
}

async function drain(url: string, queue: string): Promise<Array<{ body: string; headers: Record<string, unknown> | undefined }>> {
  const c = await amqp.connect(url);
  const ch = await c.createChannel();
  const out: Array<{ body: string; headers: Record<string, unknown> | undefined }> = [];
  for (;;) {
    const m = await ch.get(queue, { noAck: true });
    if (!m) break;
    out.push({ body: m.content.toString(), headers: m.properties.headers });
  }
  await c.close();
  return out;
}

describe('shovels between two Warrens', function () {
  this.timeout(30_000);
  let a: RunningBroker;
  let b: RunningBroker;
  before(async () => {
    a = await startBroker({ port: 0, managementPort: 0, ...silent });
    b = await startBroker({ port: 0, managementPort: 0, ...silent });
  });
  after(async () => {
    await a.close();
    await b.close();
  });
  afterEach(async () => {
    for (const r of (await call(a.managementUrl!, 'GET', '/api/parameters/shovel')).json as Array<{ name: string }>) {
      await call(a.managementUrl!, 'DELETE', `/api/parameters/shovel/%2F/${r.name}`);
    }
    await a.reset();
    await b.reset();
  });

  it('on-confirm: moves every message from a local queue (amqp://) to a remote one, with the x-shovelled and timestamp headers RabbitMQ writes', async () => {
    await publish(a.url, 'src', 300, { headers: { mine: 1 } });
    const before = Math.floor(Date.now() / 1000);
    await putShovel(a, 's1', {
      'src-uri': 'amqp://', 'src-queue': 'src', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'dst',
      'add-forward-headers': true, 'dest-add-timestamp-header': true,
    });
    await b.until.queueLength('dst', 300);
    await a.until.queueDrained('src');
    const got = await drain(b.url, 'dst');
    expect(got.map((m) => m.body)).to.deep.equal(Array.from({ length: 300 }, (_, i) => String(i)));
    const h = got[0]!.headers!;
    // Recorded from RabbitMQ 3.10.8: the source's headers first, then x-shovelled (an array of
    // one table, URIs without credentials), then x-shovelled-timestamp (seconds, a long).
    expect(Object.keys(h)).to.deep.equal(['mine', 'x-shovelled', 'x-shovelled-timestamp']);
    expect(h['x-shovelled']).to.deep.equal([{
      'shovelled-by': a.broker.identity.cluster, 'shovel-type': 'dynamic', 'shovel-name': 's1', 'shovel-vhost': '/',
      'src-uri': 'amqp://', 'dest-uri': `amqp://127.0.0.1:${b.port}`, 'src-queue': 'src', 'dest-queue': 'dst',
    }]);
    expect(h['x-shovelled-timestamp']).to.be.within(before, Math.floor(Date.now() / 1000));
    expect(a.broker.shovels.get('/', 's1')!.counts).to.include({ forwarded: 300, acked: 300, pending: 0 });
  });

  it('/api/shovels lists a running shovel with the keys RabbitMQ lists, in its order', async () => {
    await putShovel(a, 's2', { 'src-uri': 'amqp://', 'src-queue': 'q-in', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}/%2F`, 'dest-queue': 'q-out' });
    await a.broker.shovels.whenState('/', 's2', 'running');
    const res = await call(a.managementUrl!, 'GET', '/api/shovels');
    expect(res.status).to.equal(200);
    const [s] = res.json as Array<Record<string, string>>;
    expect(Object.keys(s!)).to.deep.equal(['node', 'timestamp', 'name', 'vhost', 'type', 'state', 'src_uri', 'src_protocol', 'dest_protocol', 'dest_uri', 'src_queue', 'dest_queue']);
    expect(s).to.deep.include({
      node: a.broker.identity.node, name: 's2', vhost: '/', type: 'dynamic', state: 'running', src_uri: 'amqp://', src_protocol: 'amqp091',
      dest_protocol: 'amqp091', dest_uri: `amqp://127.0.0.1:${b.port}/%2F`, src_queue: 'q-in', dest_queue: 'q-out',
    });
    expect(s!['timestamp']).to.match(/^\d{4}-\d\d-\d\d \d{1,2}:\d\d:\d\d$/);
    expect((await call(a.managementUrl!, 'GET', '/api/shovels/%2F')).json).to.have.length(1);
    expect((await call(a.managementUrl!, 'GET', '/api/shovels/nope')).status).to.equal(404);
    // Deleting the parameter stops the shovel: its connections to the destination close.
    expect((await call(a.managementUrl!, 'DELETE', '/api/parameters/shovel/%2F/s2')).status).to.equal(204);
    expect((await call(a.managementUrl!, 'GET', '/api/shovels')).json).to.deep.equal([]);
    await b.until.consumerCount('q-out', 0);
    const shovelConns = () => [...b.broker.connections].filter((c) => c.state !== 'closed').length;
    for (let i = 0; i < 200 && shovelConns() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(shovelConns()).to.equal(0);
  });

  it('src-delete-after queue-length moves what the queue held, then deletes its own parameter', async () => {
    await publish(a.url, 'drain-me', 40);
    await putShovel(a, 'drainer', { 'src-uri': 'amqp://', 'src-queue': 'drain-me', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'drained', 'src-delete-after': 'queue-length' });
    await b.until.queueLength('drained', 40);
    for (let i = 0; i < 500 && a.broker.parameters.get('shovel', '/', 'drainer'); i++) await new Promise((r) => setTimeout(r, 10));
    expect((await call(a.managementUrl!, 'GET', '/api/parameters/shovel/%2F/drainer')).status).to.equal(404);
    expect((await call(a.managementUrl!, 'GET', '/api/shovels')).json).to.deep.equal([]);
    await publish(a.url, 'drain-me', 3, {}, 40);
    expect((await drain(b.url, 'drained')).length).to.equal(40);
    expect((await drain(a.url, 'drain-me')).map((m) => m.body)).to.deep.equal(['40', '41', '42']);
  });

  it('a numeric src-delete-after with on-publish moves exactly that many', async () => {
    await publish(a.url, 'ten', 10);
    await putShovel(a, 'four', { 'src-uri': 'amqp://', 'src-queue': 'ten', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'four', 'src-delete-after': 4, 'ack-mode': 'on-publish' });
    await b.until.queueLength('four', 4);
    for (let i = 0; i < 500 && a.broker.parameters.get('shovel', '/', 'four'); i++) await new Promise((r) => setTimeout(r, 10));
    expect(a.broker.parameters.get('shovel', '/', 'four')).to.equal(undefined);
    expect((await drain(b.url, 'four')).map((m) => m.body)).to.deep.equal(['0', '1', '2', '3']);
    expect((await drain(a.url, 'ten')).length).to.equal(6);
  });

  it('no-ack from an exchange (a server-named queue bound with src-exchange-key) to an exchange with dest-exchange-key', async () => {
    const bc: ChannelModel = await amqp.connect(b.url);
    const bch = await bc.createChannel();
    await bch.assertQueue('from-x', { durable: false });
    await bch.bindQueue('from-x', 'amq.direct', 'rk-out');
    await putShovel(a, 'x', { 'src-uri': 'amqp://', 'src-exchange': 'amq.topic', 'src-exchange-key': 'a.#', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-exchange': 'amq.direct', 'dest-exchange-key': 'rk-out', 'ack-mode': 'no-ack', 'add-forward-headers': true });
    await a.broker.shovels.whenState('/', 'x', 'running');
    const ac = await amqp.connect(a.url);
    const ach = await ac.createConfirmChannel();
    for (let i = 0; i < 50; i++) ach.publish('amq.topic', i % 2 ? 'a.b' : 'z', Buffer.from(String(i)));
    await ach.waitForConfirms();
    await b.until.queueLength('from-x', 25);
    const got = await drain(b.url, 'from-x');
    expect(got.map((m) => Number(m.body))).to.deep.equal(Array.from({ length: 25 }, (_, i) => 2 * i + 1));
    expect(got[0]!.headers!['x-shovelled']).to.deep.equal([{
      'shovelled-by': a.broker.identity.cluster, 'shovel-type': 'dynamic', 'shovel-name': 'x', 'shovel-vhost': '/',
      'src-uri': 'amqp://', 'dest-uri': `amqp://127.0.0.1:${b.port}`, 'src-exchange': 'amq.topic', 'src-exchange-key': 'a.#',
      'dest-exchange': 'amq.direct', 'dest-exchange-key': 'rk-out',
    }]);
    await ac.close();
    await bc.close();
  });

  it('dest-publish-properties are set over the message\'s own properties, its headers kept, as RabbitMQ 3.10.8 sets them', async () => {
    const c = await amqp.connect(a.url);
    const ch = await c.createConfirmChannel();
    await ch.assertQueue('pp-src', { durable: true });
    ch.sendToQueue('pp-src', Buffer.from('hello'), { contentType: 'a/b', priority: 3, headers: { h: 'v' }, appId: 'orig' });
    await ch.waitForConfirms();
    await c.close();
    const set = {
      delivery_mode: 2, app_id: 'shov', content_type: 'x/y', priority: 7, message_id: 'm-1', timestamp: 1700000000, type: 't',
      user_id: 'guest', correlation_id: 'c', reply_to: 'r', expiration: '60000', content_encoding: 'e',
    };
    await putShovel(a, 'pp', { 'src-uri': 'amqp://', 'src-queue': 'pp-src', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'pp-dst', 'dest-publish-properties': set });
    await b.until.queueLength('pp-dst', 1);
    const bc = await amqp.connect(b.url);
    const m = await (await bc.createChannel()).get('pp-dst', { noAck: true });
    await bc.close();
    // What RabbitMQ's shovel delivered for the same message and definition (management API, /get).
    expect(m && m.properties).to.deep.include({
      appId: 'shov', userId: 'guest', type: 't', timestamp: 1700000000, messageId: 'm-1', expiration: '60000', replyTo: 'r',
      correlationId: 'c', priority: 7, deliveryMode: 2, headers: { h: 'v' }, contentEncoding: 'e', contentType: 'x/y',
    });
  });

  it('a dest-publish-properties value that cannot go on the wire fails each session before it consumes, and the broker goes on', async () => {
    const c = await amqp.connect(a.url);
    const ch = await c.createConfirmChannel();
    await ch.assertQueue('pp-bad', { durable: true });
    ch.sendToQueue('pp-bad', Buffer.from('kept'));
    await ch.waitForConfirms();
    await putShovel(a, 'bad', { 'src-uri': 'amqp://', 'src-queue': 'pp-bad', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'pp-none', 'dest-publish-properties': { priority: 300 } });
    const w = a.broker.shovels.get('/', 'bad')!;
    await new Promise<void>((resolve) => {
      const stop = w.watch(() => w.counts.restarts >= 1 && (stop(), resolve()));
    });
    expect([w.current.state, w.counts.forwarded]).to.deep.equal(['terminated', 0]);
    expect(w.current.reason).to.equal('"dest-publish-properties: priority 300 is out of range (0-255)"');
    expect((await ch.checkQueue('pp-bad')).messageCount).to.equal(1);
    await c.close();
  });
});

describe('shovels: direct connections (amqp:// without a host)', function () {
  this.timeout(30_000);
  let a: RunningBroker;
  const admin = { user: 'admin', password: 'admin' };
  const api = (method: string, path: string, body?: unknown) => call(a.managementUrl!, method, path, body === undefined ? admin : { ...admin, body });
  before(async () => {
    a = await startBroker({ port: 0, managementPort: 0, ...silent });
    await call(a.managementUrl!, 'PUT', '/api/users/admin', { body: { password: 'admin', tags: 'administrator' } });
    await call(a.managementUrl!, 'PUT', '/api/users/bob', { body: { password: 'bob', tags: '' } });
    for (const u of ['admin', 'bob']) await call(a.managementUrl!, 'PUT', `/api/permissions/%2F/${u}`, { body: { configure: '.*', write: '.*', read: '.*' } });
    // Without guest, as production brokers run: RabbitMQ's direct connection needs no user.
    expect((await api('DELETE', '/api/users/guest')).status).to.equal(204);
  });
  after(async () => {
    await a.close();
  });
  const urlOf = (user: string) => a.url.replace('guest:guest', `${user}:${user}`);

  it('run as the user RabbitMQ calls none, which may do anything: messages keep a user_id their publisher set', async () => {
    const c = await amqp.connect(urlOf('bob'));
    const ch = await c.createConfirmChannel();
    await ch.assertQueue('direct-src', { durable: true });
    ch.sendToQueue('direct-src', Buffer.from('from bob'), { userId: 'bob' });
    await ch.waitForConfirms();
    await c.close();
    const put = await api('PUT', '/api/parameters/shovel/%2F/direct', { value: { 'src-uri': 'amqp://', 'src-queue': 'direct-src', 'dest-uri': 'amqp://', 'dest-queue': 'direct-dst' } });
    expect(put.status, put.text).to.equal(201);
    await a.until.queueLength('direct-dst', 1);
    const conns = (await api('GET', '/api/connections')).json as Array<{ user: string; client_properties: { connection_name?: string } }>;
    expect(conns.filter((x) => x.client_properties.connection_name === 'Shovel direct').map((x) => x.user)).to.deep.equal(['none', 'none']);
    const r = await amqp.connect(urlOf('bob'));
    const m = await (await r.createChannel()).get('direct-dst', { noAck: true });
    expect(m && [m.content.toString(), m.properties.userId]).to.deep.equal(['from bob', 'bob']);
    await r.close();
    expect((await api('DELETE', '/api/parameters/shovel/%2F/direct')).status).to.equal(204);
  });

  it('a user in the URI without a password runs it as that user; nobody else logs in as none', async () => {
    const put = await api('PUT', '/api/parameters/shovel/%2F/as-bob', { value: { 'src-uri': 'amqp://bob@', 'src-queue': 'bob-src', 'dest-uri': 'amqp://', 'dest-queue': 'bob-dst' } });
    expect(put.status, put.text).to.equal(201);
    await a.broker.shovels.whenState('/', 'as-bob', 'running');
    const conns = (await api('GET', '/api/connections')).json as Array<{ user: string; client_properties: { connection_name?: string } }>;
    expect(conns.filter((x) => x.client_properties.connection_name === 'Shovel as-bob').map((x) => x.user).sort()).to.deep.equal(['bob', 'none']);
    expect((await api('DELETE', '/api/parameters/shovel/%2F/as-bob')).status).to.equal(204);
    const refused = await amqp.connect(a.url.replace('guest:guest', 'none:guess')).then(() => 'connected', (e: Error) => e.message);
    expect(refused).to.match(/ACCESS_REFUSED|403/);
  });

  it('the direct secret opens nothing on the AMQP listener: there it is a wrong password like any other', async () => {
    const secret = encodeURIComponent(a.broker.access.directSecret);
    for (const user of ['none', 'bob']) {
      const refused = await amqp.connect(a.url.replace('guest:guest', `${user}:${secret}`)).then(() => 'connected', (e: Error) => e.message);
      expect(refused, user).to.match(/ACCESS_REFUSED|403/);
    }
  });

  it('a user and password in the URI: a direct connection of that user', async () => {
    const value = { 'src-uri': 'amqp://bob:bob@', 'src-queue': 'pw-src', 'dest-uri': 'amqp://', 'dest-queue': 'pw-dst' };
    expect((await api('PUT', '/api/parameters/shovel/%2F/with-password', { value })).status).to.equal(201);
    await a.broker.shovels.whenState('/', 'with-password', 'running');
    const conns = (await api('GET', '/api/connections')).json as Array<{ user: string; type: string; client_properties: { connection_name?: string } }>;
    const listed = conns.filter((x) => x.client_properties.connection_name === 'Shovel with-password').map(({ user, type }) => `${user} ${type}`);
    expect(listed.sort()).to.deep.equal(['bob direct', 'none direct']);
    expect((await api('DELETE', '/api/parameters/shovel/%2F/with-password')).status).to.equal(204);
  });

  it('a wrong password in the URI leaves the shovel starting; its failed logins throttle direct password logins, never the broker\'s own', async () => {
    const clock = new FakeClock();
    const b = await startBroker({ port: 0, managementPort: 0, clock, loginFailureLimit: 2, ...silent });
    try {
      await call(b.managementUrl!, 'PUT', '/api/users/bob', { body: { password: 'bob', tags: '' } });
      await call(b.managementUrl!, 'PUT', '/api/permissions/%2F/bob', { body: { configure: '.*', write: '.*', read: '.*' } });
      const restarts = (name: string, n: number) => new Promise<void>((resolve) => {
        const worker = b.broker.shovels.get('/', name)!;
        if (worker.counts.restarts >= n) return resolve();
        const unwatch = worker.watch(() => worker.counts.restarts >= n && (unwatch(), resolve()));
      });
      await putShovel(b, 'wrong', { 'src-uri': 'amqp://bob:wrong@', 'src-queue': 'pw-src', 'dest-uri': 'amqp://', 'dest-queue': 'pw-dst', 'reconnect-delay': 1 });
      // Two failed logins: loginFailureLimit, after which password logins there are held back.
      await restarts('wrong', 1);
      await clock.advance(1000);
      await restarts('wrong', 2);
      expect(b.broker.shovels.get('/', 'wrong')!.current.state).to.equal('starting');
      // On the same (unmoving) clock: bob's right password is held back on the direct listener
      // too (a local process cannot guess passwords there unthrottled)...
      await putShovel(b, 'right-password', { 'src-uri': 'amqp://bob:bob@', 'src-queue': 'pw-src', 'dest-uri': 'amqp://', 'dest-queue': 'pw-dst', 'reconnect-delay': 1 });
      await restarts('right-password', 1);
      expect(b.broker.shovels.get('/', 'right-password')!.current.state).to.equal('starting');
      // ...while the broker's own direct logins (amqp://, amqp://bob@) go through.
      await putShovel(b, 'own', { 'src-uri': 'amqp://bob@', 'src-queue': 'pw-src', 'dest-uri': 'amqp://', 'dest-queue': 'pw-dst' });
      await b.broker.shovels.whenState('/', 'own', 'running', 5000);
    } finally {
      await b.close();
    }
  });

  it('the direct listener takes two sockets per shovel and a few more: strangers cannot open descriptors there without bound', async () => {
    const b = await startBroker({ port: 0, managementPort: 0, ...silent });
    const junk: Socket[] = [];
    const open = () => new Promise<'open' | 'closed'>((resolve) => {
      const s = createConnection({ path: b.broker.directListenerPath! });
      junk.push(s);
      s.on('error', () => {});
      // A socket taken answers the protocol header with connection.start; a refused one is closed.
      s.once('data', () => resolve('open'));
      s.once('close', () => resolve('closed'));
      s.once('connect', () => s.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
    });
    try {
      const first: string[] = [];
      for (let i = 0; i < 16; i++) first.push(await open());
      expect(first.every((x) => x === 'open')).to.equal(true);
      expect(await open()).to.equal('closed');
      // A shovel brings room for its two connections.
      await putShovel(b, 'crowded', { 'src-uri': 'amqp://', 'src-queue': 'c-src', 'dest-uri': 'amqp://', 'dest-queue': 'c-dst' });
      await b.broker.shovels.whenState('/', 'crowded', 'running', 5000);
      expect(await open()).to.equal('closed');
    } finally {
      for (const s of junk) s.destroy();
      await b.close();
    }
  });

  it('do not count against connection_max, as RabbitMQ\'s direct connections do not: a shovel runs while clients fill it', async () => {
    const full = await startBroker({ port: 0, managementPort: 0, connectionMax: 1, ...silent });
    try {
      const client = await amqp.connect(full.url);
      const second = await amqp.connect(full.url).then(() => 'connected', (e: Error) => e.message);
      expect(second).to.not.equal('connected');
      const ch = await client.createConfirmChannel();
      await ch.assertQueue('full-src', { durable: true });
      for (let i = 0; i < 10; i++) ch.sendToQueue('full-src', Buffer.from(String(i)), { persistent: true });
      await ch.waitForConfirms();
      const value = { 'src-uri': 'amqp://', 'src-queue': 'full-src', 'dest-uri': 'amqp://', 'dest-queue': 'full-dst' };
      const put = await call(full.managementUrl!, 'PUT', '/api/parameters/shovel/%2F/while-full', { body: { value } });
      expect(put.status, put.text).to.equal(201);
      await full.until.queueLength('full-dst', 10);
      const bodies: string[] = [];
      for (let m = await ch.get('full-dst', { noAck: true }); m; m = await ch.get('full-dst', { noAck: true })) bodies.push(m.content.toString());
      expect(bodies).to.deep.equal(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
      await client.close();
    } finally {
      await full.close();
    }
  });
});

/** What RabbitMQ 3.10.8's management API showed of its shovels' direct connections. */
const recordedDirect = JSON.parse(readFileSync(new URL('./fixtures/direct-connections-3.10.8.json', import.meta.url), 'utf8')) as {
  connections: Array<Record<string, unknown>>;
  connection: Record<string, unknown>;
  channels: Array<{ connection_details: Record<string, unknown> }>;
  consumers: Array<{ channel_details: Record<string, unknown> }>;
  connectionsAsBob: Array<Record<string, unknown>>;
};

describe('shovels: direct connections in the management API, as RabbitMQ lists them', function () {
  this.timeout(30_000);
  let a: RunningBroker;
  const api = (method: string, path: string, body?: unknown) => call(a.managementUrl!, method, path, body === undefined ? {} : { body });
  type Listed = Record<string, unknown> & { name: string; client_properties: { connection_name?: string } };
  const shovelConnections = async (shovel: string): Promise<Listed[]> =>
    ((await api('GET', '/api/connections')).json as Listed[]).filter((c) => c.client_properties.connection_name === `Shovel ${shovel}`);
  before(async () => {
    a = await startBroker({ port: 0, managementPort: 0, ...silent });
  });
  after(async () => {
    await a.close();
  });

  it('type direct, protocol Direct 0-9-1, a process name, no socket fields; channels and consumers without a peer', async () => {
    const value = { 'src-uri': 'amqp://', 'src-queue': 'listed-src', 'dest-uri': 'amqp://', 'dest-queue': 'listed-dst', 'reconnect-delay': 1 };
    expect((await api('PUT', '/api/parameters/shovel/%2F/listed', { value })).status).to.equal(201);
    await a.until.consumerCount('listed-src', 1);
    const node = ((await api('GET', '/api/overview')).json as { node: string }).node;
    const conns = await shovelConnections('listed');
    expect(conns).to.have.length(2);
    const [recorded] = recordedDirect.connections;
    for (const c of conns) {
      expect(Object.keys(c)).to.deep.equal(Object.keys(recorded!));
      expect(c).to.deep.include({ client_properties: { connection_name: 'Shovel listed' }, node, protocol: 'Direct 0-9-1', type: 'direct', user: 'none', user_who_performed_action: 'none', vhost: '/' });
      // RabbitMQ names it by its Erlang pid: <node.creation.id.serial>.
      expect(c.name).to.match(/^<rabbit@[^.>]+\.\d+\.\d+\.0>$/);
      expect(c.name.startsWith(`<${node}.`)).to.equal(true);
      const one = await api('GET', `/api/connections/${encodeURIComponent(c.name)}`);
      expect(Object.keys(one.json as object)).to.deep.equal(Object.keys(recordedDirect.connection));
      expect(one.json).to.deep.equal(c);
    }
    const names = conns.map((c) => c.name);
    expect(new Set(names).size).to.equal(2);
    const channels = ((await api('GET', '/api/channels')).json as Array<{ connection_details: { name: string } }>).filter((ch) => names.includes(ch.connection_details.name));
    expect(channels).to.have.length(2);
    for (const ch of channels) {
      expect(ch.connection_details).to.deep.equal({ ...recordedDirect.channels[0]!.connection_details, name: ch.connection_details.name });
    }
    const consumers = ((await api('GET', '/api/consumers')).json as Array<{ channel_details: Record<string, unknown> }>).filter((c) => names.includes(c.channel_details['connection_name'] as string));
    expect(consumers).to.have.length(1);
    const { peer_host, peer_port } = recordedDirect.consumers[0]!.channel_details;
    expect(consumers[0]!.channel_details).to.include({ peer_host, peer_port, user: 'none' });
    // Closing one (RabbitMQ: 204, and the shovel starts again with new connections).
    expect((await api('DELETE', `/api/connections/${encodeURIComponent(names[0]!)}`)).status).to.equal(204);
    await a.broker.shovels.whenState('/', 'listed', 'terminated');
    await a.broker.shovels.whenState('/', 'listed', 'running');
    await a.until.consumerCount('listed-src', 1);
    const again = (await shovelConnections('listed')).map((c) => c.name);
    expect(again).to.have.length(2);
    expect(again.some((n) => names.includes(n))).to.equal(false);
    expect((await api('DELETE', '/api/parameters/shovel/%2F/listed')).status).to.equal(204);
  });

  it('a user in the URI: a direct connection of that user, under the same checks as its network ones', async () => {
    expect((await api('PUT', '/api/users/bob', { password: 'bob', tags: '' })).status).to.equal(201);
    expect((await api('PUT', '/api/permissions/%2F/bob', { configure: '^bob-', write: '^bob-', read: '^bob-' })).status).to.equal(201);
    const value = { 'src-uri': 'amqp://bob@', 'src-queue': 'bob-src', 'dest-uri': 'amqp://', 'dest-queue': 'bob-dst' };
    expect((await api('PUT', '/api/parameters/shovel/%2F/as-bob', { value })).status).to.equal(201);
    await a.broker.shovels.whenState('/', 'as-bob', 'running');
    const listed = (await shovelConnections('as-bob')).map(({ user, type, protocol }) => ({ user, type, protocol }));
    const recorded = recordedDirect.connectionsAsBob.map(({ user, type, protocol }) => ({ user, type, protocol }));
    expect(listed.sort((x, y) => String(x.user).localeCompare(String(y.user)))).to.deep.equal(recorded.sort((x, y) => String(x.user).localeCompare(String(y.user))));
    expect((await api('DELETE', '/api/parameters/shovel/%2F/as-bob')).status).to.equal(204);
    // bob's permissions still hold on his direct connection: a queue outside ^bob- is refused.
    const refused = { 'src-uri': 'amqp://bob@', 'src-queue': 'other-src', 'dest-uri': 'amqp://', 'dest-queue': 'other-dst', 'reconnect-delay': 1 };
    expect((await api('PUT', '/api/parameters/shovel/%2F/bob-refused', { value: refused })).status).to.equal(201);
    await a.broker.shovels.whenState('/', 'bob-refused', 'terminated');
    // RabbitMQ 3.10.8 reports the refused declaration so (recorded), and bob declared nothing.
    const status = ((await api('GET', '/api/shovels/%2F')).json as Array<{ name: string; state: string; reason?: string }>).find((s) => s.name === 'bob-refused');
    expect(status).to.include({ state: 'terminated', reason: '"needed a restart"' });
    expect((await api('GET', '/api/queues/%2F/other-src')).status).to.equal(404);
    expect((await api('DELETE', '/api/parameters/shovel/%2F/bob-refused')).status).to.equal(204);
  });
});

/** RabbitMQ 3.10.8's Prometheus samples with only a shovel's two direct connections open. */
const recordedPrometheus = JSON.parse(readFileSync(new URL('./fixtures/direct-connections-prometheus-3.10.8.json', import.meta.url), 'utf8')) as {
  metrics: string[];
  perObject: string[];
  authAttempts: string[];
};

describe('shovels: direct connections in Prometheus, as RabbitMQ counts them', function () {
  this.timeout(30_000);

  it('counted in rabbitmq_connections, without connection rows of their own; their channels have theirs', async () => {
    const b = await startBroker({ port: 0, managementPort: 0, prometheusPort: 0, ...silent });
    try {
      await putShovel(b, 'd', { 'src-uri': 'amqp://', 'src-queue': 'dsrc', 'dest-uri': 'amqp://', 'dest-queue': 'ddst' });
      await b.until.consumerCount('dsrc', 1);
      const samples = async (path: string) => (await (await fetch(`${b.broker.prometheusUrl}${path}`)).text())
        .split('\n').filter((l) => /^rabbitmq_(connection_|connections |channels |channel_consumers)/.test(l));
      const value = (lines: string[], name: string) => lines.find((l) => l.startsWith(`${name} `));
      // Every connection and channel sample Warren gives is the one RabbitMQ gave.
      const aggregated = await samples('/metrics');
      expect(aggregated.length).to.be.greaterThan(3);
      for (const line of aggregated) expect(line).to.equal(value(recordedPrometheus.metrics, line.split(' ')[0]!));
      expect(value(aggregated, 'rabbitmq_connections')).to.equal('rabbitmq_connections 2');
      const perObject = await samples('/metrics/per-object');
      const shape = (lines: string[]) => lines.map((l) => l.replace(/\{channel="[^"]+"\}/, '{channel}')).sort();
      expect(shape(perObject)).to.deep.equal(shape(recordedPrometheus.perObject));
      // Their logins are not authentication attempts: only the management API's are counted.
      const auth = (lines: string[]) => lines.filter((l) => l.startsWith('rabbitmq_auth_attempts')).map((l) => l.replace(/ \d+$/, ''));
      const all = (await (await fetch(`${b.broker.prometheusUrl}/metrics`)).text()).split('\n');
      expect(auth(all)).to.deep.equal(auth(recordedPrometheus.authAttempts));
    } finally {
      await b.close();
    }
  });
});

describe('shovels: reconnection on the injected clock, and restart with the broker', function () {
  this.timeout(30_000);

  it('reports terminated with the reason when the destination goes away, and reconnects after reconnect-delay', async () => {
    const clock = new FakeClock();
    const a = await startBroker({ port: 0, managementPort: 0, clock, ...silent });
    const dir = makeTmpDir('warren-shovel-dest-');
    let b = await startBroker({ port: 0, dataDir: dir, ...silent });
    const port = b.port;
    try {
      await putShovel(a, 'r', { 'src-uri': 'amqp://', 'src-queue': 'rq', 'dest-uri': `amqp://guest:guest@127.0.0.1:${port}`, 'dest-queue': 'rq-out', 'reconnect-delay': 7 });
      await a.broker.shovels.whenState('/', 'r', 'running');
      await b.close();
      await a.broker.shovels.whenState('/', 'r', 'terminated');
      const [st] = (await call(a.managementUrl!, 'GET', '/api/shovels')).json as Array<Record<string, string>>;
      expect(Object.keys(st!)).to.deep.equal(['node', 'timestamp', 'name', 'vhost', 'type', 'state', 'reason']);
      // RabbitMQ 3.10.8, its destination stopped (rabbitmqctl stop_app): this exit reason, ~p-printed.
      expect(st!['reason']).to.equal(`{shutdown,{server_initiated_close,320,<<"CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'">>}}`);
      b = await startBroker({ port, dataDir: dir, ...silent });
      await publish(a.url, 'rq', 5);
      // Nothing happens before reconnect-delay has passed on the broker's clock.
      await clock.advance(6_900);
      expect(a.broker.shovels.get('/', 'r')!.current.state).to.equal('terminated');
      await clock.advance(100);
      await a.broker.shovels.whenState('/', 'r', 'running');
      await b.until.queueLength('rq-out', 5);
      expect(a.broker.shovels.get('/', 'r')!.counts.restarts).to.equal(1);
    } finally {
      await a.close();
      await b.close();
      removeDir(dir);
    }
  });

  it('reconnects when the source goes away (restarted on its data dir) and moves what it holds then: every message once, in order', async () => {
    const clock = new FakeClock();
    const dir = makeTmpDir('warren-shovel-source-');
    let src = await startBroker({ port: 0, dataDir: dir, ...silent });
    const port = src.port;
    const host = await startBroker({ port: 0, managementPort: 0, clock, ...silent });
    try {
      await publish(src.url, 'far', 50);
      await putShovel(host, 'pull', { 'src-uri': `amqp://guest:guest@127.0.0.1:${port}`, 'src-queue': 'far', 'dest-uri': 'amqp://', 'dest-queue': 'near', 'reconnect-delay': 2 });
      await host.until.queueLength('near', 50);
      // Acked at the source (on-confirm: after the destination confirmed) before it goes away.
      await src.until.queueDrained('far');
      await src.close();
      await host.broker.shovels.whenState('/', 'pull', 'terminated');
      src = await startBroker({ port, dataDir: dir, ...silent });
      await publish(src.url, 'far', 30, {}, 50);
      await clock.advance(2_000);
      await host.broker.shovels.whenState('/', 'pull', 'running');
      await host.until.queueLength('near', 80);
      await src.until.queueDrained('far');
      expect((await drain(host.url, 'near')).map((m) => m.body)).to.deep.equal(Array.from({ length: 80 }, (_, i) => String(i)));
    } finally {
      await host.close();
      await src.close();
      removeDir(dir);
    }
  });

  it('a shovel restarts with the broker: its parameter is kept in the data directory', async () => {
    const dir = makeTmpDir('warren-shovel-src-');
    const b = await startBroker({ port: 0, ...silent });
    let a = await startBroker({ port: 0, managementPort: 0, dataDir: dir, ...silent });
    try {
      await putShovel(a, 'kept', { 'src-uri': 'amqp://', 'src-queue': 'kq', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'kq-out' });
      await a.broker.shovels.whenState('/', 'kept', 'running');
      await a.close();
      a = await startBroker({ port: 0, managementPort: 0, dataDir: dir, ...silent });
      await a.broker.shovels.whenState('/', 'kept', 'running');
      await publish(a.url, 'kq', 7);
      await b.until.queueLength('kq-out', 7);
      expect((await call(a.managementUrl!, 'GET', '/api/parameters/shovel')).json).to.have.length(1);
    } finally {
      await a.close();
      await b.close();
      removeDir(dir);
    }
  });
});

describe('shovels from definitions and from the config file', function () {
  this.timeout(30_000);

  it('a shovel in an imported definitions file runs, and the export lists it as RabbitMQ does', async () => {
    const b = await startBroker({ port: 0, ...silent });
    const a = await startBroker({ port: 0, managementPort: 0, ...silent });
    try {
      const value = { 'dest-queue': 'def-out', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'src-queue': 'def-in', 'src-uri': 'amqp://' };
      const posted = await call(a.managementUrl!, 'POST', '/api/definitions', { body: { parameters: [{ value, vhost: '/', component: 'shovel', name: 'from-defs' }] } });
      expect(posted.status, posted.text).to.equal(204);
      await a.broker.shovels.whenState('/', 'from-defs', 'running');
      await publish(a.url, 'def-in', 3);
      await b.until.queueLength('def-out', 3);
      const defs = (await call(a.managementUrl!, 'GET', '/api/definitions')).json as { parameters: unknown[] };
      expect(defs.parameters).to.deep.equal([{ value, vhost: '/', component: 'shovel', name: 'from-defs' }]);
      // A bad one is refused with RabbitMQ's import text (recorded from RabbitMQ 3.10.8).
      const bad = await call(a.managementUrl!, 'POST', '/api/definitions', { body: { parameters: [{ value: { 'src-uri': 'amqp://' }, vhost: '/', component: 'shovel', name: 'bad' }] } });
      expect(bad.status).to.equal(400);
      expect(bad.json).to.deep.equal({ error: 'bad_request', reason: 'Validation failed\n\nMust specify \'src-exchange\' or \'src-queue\'\nKey "dest-uri" not found in bad\n (//shovel/bad)' });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('a shovel in the config file\'s parameters starts with the broker', async () => {
    const b = await startBroker({ port: 0, ...silent });
    const a = await startBroker({
      port: 0,
      ...silent,
      parameters: [{ vhost: '/', component: 'shovel', name: 'from-config', value: { 'src-uri': 'amqp://', 'src-queue': 'cfg-in', 'dest-uri': `amqp://guest:guest@127.0.0.1:${b.port}`, 'dest-queue': 'cfg-out' } }],
    });
    try {
      await a.broker.shovels.whenState('/', 'from-config', 'running');
      await publish(a.url, 'cfg-in', 4);
      await b.until.queueLength('cfg-out', 4);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
