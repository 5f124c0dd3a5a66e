import { expect } from 'chai';
import amqp, { type ChannelModel } from 'amqplib';
import { createHash } from 'node:crypto';
import { startBroker } from '../../src/broker.js';
import { call, useManagedBroker } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/** A RabbitMQ password hash made here, independently of src/access: base64(salt ‖ H(salt ‖ password)). */
function rabbitHash(password: string, digest: 'sha256' | 'sha512', salt = Buffer.from([1, 2, 3, 4])): string {
  return Buffer.concat([salt, createHash(digest).update(salt).update(password, 'utf8').digest()]).toString('base64');
}

/** The error an AMQP connection closes with, as amqplib reports it. */
function closeOf(conn: ChannelModel): Promise<string> {
  conn.on('error', () => {});
  return new Promise((resolve) => conn.on('close', (err?: Error) => resolve(String(err?.message))));
}

/**
 * What users, permissions and vhosts made over the management API do for AMQP clients, as
 * observed on RabbitMQ 3.10.8 with the same calls: logins, the permission checks of
 * queue.declare and topic publishes, and the connections closed when a user or vhost goes.
 */
describe('management API: users, permissions and vhosts seen from AMQP', () => {
  const b = useManagedBroker();
  const amqpUrl = (user: string, password: string, vhost = '/') => {
    const u = new URL(b.url);
    u.username = encodeURIComponent(user);
    u.password = encodeURIComponent(password);
    u.pathname = `/${encodeURIComponent(vhost)}`;
    return u.href;
  };
  const full = { configure: '.*', write: '.*', read: '.*' };

  it('a user put with a password logs in over AMQP once it has permissions in the vhost, and not with a wrong password', async () => {
    expect((await b.api('PUT', '/api/users/amqp-u', { body: { password: 'pw-1', tags: '' } })).status).to.equal(201);
    // No permission in "/" yet: connection.open is refused.
    await amqp.connect(amqpUrl('amqp-u', 'pw-1')).then((c) => c.close().then(() => expect.fail('connected without permissions')), (err: Error) => expect(err.message).to.contain('ConnectionClose'));
    expect((await b.api('PUT', '/api/permissions/%2F/amqp-u', { body: full })).status).to.equal(201);
    const conn = await amqp.connect(amqpUrl('amqp-u', 'pw-1'));
    await conn.close();
    const refused = await amqp.connect(amqpUrl('amqp-u', 'wrong')).then(() => 'connected', (err: Error) => err.message);
    expect(refused).to.equal('Handshake terminated by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN. For details see the broker logfile."');
  });

  it('a password_hash is taken as it is (SHA-256 by default, SHA-512 when named), and the user logs in with its password', async () => {
    await b.api('PUT', '/api/users/h256', { body: { password_hash: rabbitHash('secret-256', 'sha256'), tags: '' } });
    await b.api('PUT', '/api/users/h512', { body: { password_hash: rabbitHash('secret-512', 'sha512'), hashing_algorithm: 'rabbit_password_hashing_sha512', tags: 'management' } });
    for (const u of ['h256', 'h512']) await b.api('PUT', `/api/permissions/%2F/${u}`, { body: full });
    await (await amqp.connect(amqpUrl('h256', 'secret-256'))).close();
    await (await amqp.connect(amqpUrl('h512', 'secret-512'))).close();
    const who = await call(b.base, 'GET', '/api/whoami', { user: 'h512', password: 'secret-512' });
    expect([who.status, who.json]).to.deep.equal([200, { name: 'h512', tags: ['management'] }]);
    expect((await b.api('GET', '/api/users/h512')).json.password_hash).to.equal(rabbitHash('secret-512', 'sha512'));
  });

  it('a PUT with tags and no password clears the password (as RabbitMQ does): the user can no longer log in', async () => {
    await b.api('PUT', '/api/users/cleared', { body: { password: 'pw', tags: 'management' } });
    await b.api('PUT', '/api/permissions/%2F/cleared', { body: full });
    expect((await call(b.base, 'GET', '/api/whoami', { user: 'cleared', password: 'pw' })).status).to.equal(200);
    expect((await b.api('PUT', '/api/users/cleared', { body: { tags: 'management,policymaker' } })).status).to.equal(204);
    expect((await b.api('GET', '/api/users/cleared')).json).to.include({ password_hash: '', hashing_algorithm: 'rabbit_password_hashing_sha256' });
    const who = await call(b.base, 'GET', '/api/whoami', { user: 'cleared', password: 'pw' });
    expect([who.status, who.json]).to.deep.equal([401, { error: 'not_authorized', reason: 'Login failed' }]);
    const login = await amqp.connect(amqpUrl('cleared', 'pw')).then(() => 'connected', (err: Error) => err.message);
    expect(login).to.contain('403 (ACCESS-REFUSED)');
  });

  it('permissions set over HTTP decide queue.declare: configure "^ok" allows ok-q and refuses bad-q', async () => {
    await b.api('PUT', '/api/users/perm-u', { body: { password: 'pw', tags: '' } });
    await b.api('PUT', '/api/permissions/%2F/perm-u', { body: { configure: '^ok', write: '.*', read: '.*' } });
    const conn = await amqp.connect(amqpUrl('perm-u', 'pw'));
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue('ok-q', { autoDelete: true });
      const ch2 = await conn.createChannel();
      ch2.on('error', () => {});
      const refused = await ch2.assertQueue('bad-q').then(() => 'declared', (err: Error) => err.message);
      expect(refused).to.equal('Operation failed: QueueDeclare; 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - access to queue \'bad-q\' in vhost \'/\' refused for user \'perm-u\'"');
    } finally {
      await conn.close();
    }
  });

  it('topic permissions set over HTTP decide which routing keys a user may publish to a topic exchange', async () => {
    await b.api('PUT', '/api/users/topic-u', { body: { password: 'pw', tags: '' } });
    await b.api('PUT', '/api/permissions/%2F/topic-u', { body: full });
    expect((await b.api('PUT', '/api/topic-permissions/%2F/topic-u', { body: { exchange: 'amq.topic', write: '^orders\\.', read: '.*' } })).status).to.equal(201);
    const conn = await amqp.connect(amqpUrl('topic-u', 'pw'));
    try {
      const ch = await conn.createConfirmChannel();
      ch.on('error', () => {});
      ch.publish('amq.topic', 'orders.new', Buffer.from('ok'));
      await ch.waitForConfirms();
      const closed = new Promise<string>((resolve) => ch.on('close', () => resolve('closed')));
      const errored = new Promise<string>((resolve) => ch.on('error', (err: Error) => resolve(err.message)));
      ch.publish('amq.topic', 'billing.new', Buffer.from('no'));
      expect(await errored).to.equal('Channel closed by server: 403 (ACCESS-REFUSED) with message "ACCESS_REFUSED - access to topic \'billing.new\' in exchange \'amq.topic\' in vhost \'/\' refused for user \'topic-u\'"');
      await closed;
    } finally {
      await conn.close();
    }
  });

  it('/api/user-limits sets, shows and clears a user\'s limits, one a request, as 3.10.8 answers (recorded), and AMQP obeys them', async () => {
    await b.api('PUT', '/api/users/limited', { body: { password: 'pw', tags: '' } });
    await b.api('PUT', '/api/permissions/%2F/limited', { body: full });
    expect((await b.api('GET', '/api/user-limits')).json).to.deep.equal([]);
    const put = (user: string, name: string, body: unknown, headers?: Record<string, string>) => b.api('PUT', `/api/user-limits/${user}/${name}`, { body, headers });
    const refused = async (res: Promise<{ status: number; text: string }>) => {
      const r = await res;
      return [r.status, r.text];
    };
    expect((await put('limited', 'max-connections', { value: 1 })).status).to.equal(204);
    expect(await refused(put('limited', 'max-channels', { value: '7' }))).to.deep.equal([400, '{"error":"bad_request","reason":"max-channels should be a number, actually was <<\\"7\\">>"}']);
    expect(await refused(put('limited', 'max-bogus', { value: 5 }))).to.deep.equal([400, '{"error":"bad_request","reason":"Unrecognised terms [{<<\\"max-bogus\\">>,5}] in user-limits"}']);
    expect(await refused(put('nouser', 'max-connections', { value: 5 }))).to.deep.equal([400, '{"error":"bad_request","reason":["no_such_user","nouser"]}']);
    expect(await refused(put('limited', 'max-connections', {}))).to.deep.equal([400, '{"error":"bad_request","reason":"[{key_missing,value}]"}']);
    expect(await refused(put('limited', 'max-connections', { value: null }))).to.deep.equal([400, '{"error":"bad_request","reason":"max-connections should be a number, actually was null"}']);
    // Only JSON bodies are taken.
    const plain = await fetch(`${b.base}/api/user-limits/limited/max-connections`, {
      method: 'PUT', body: '{"value":2}', headers: { 'content-type': 'text/plain', authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
    });
    expect(plain.status).to.equal(415);
    expect((await b.api('GET', '/api/user-limits')).json).to.deep.equal([{ user: 'limited', value: { 'max-connections': 1 } }]);
    expect((await b.api('GET', '/api/user-limits/limited')).json).to.deep.equal([{ user: 'limited', value: { 'max-connections': 1 } }]);
    expect((await b.api('GET', '/api/user-limits/guest')).json).to.deep.equal([]);
    expect((await b.api('GET', '/api/user-limits/nouser')).status).to.equal(404);
    // The limit holds over AMQP: a second connection is refused.
    const first = await amqp.connect(amqpUrl('limited', 'pw'));
    const second = await amqp.connect(amqpUrl('limited', 'pw')).then((c) => c.close().then(() => 'connected'), (err: Error) => err.message);
    expect(second).to.equal('Expected ConnectionOpenOk; got <ConnectionClose channel:0>'); // amqplib's words for the 530
    await first.close();
    expect((await b.api('DELETE', '/api/user-limits/limited/max-connections')).status).to.equal(204);
    expect((await b.api('DELETE', '/api/user-limits/limited/max-connections')).status).to.equal(204);
    expect((await b.api('GET', '/api/user-limits/limited')).json).to.deep.equal([]);
    expect((await b.api('DELETE', '/api/user-limits/nouser/max-connections')).status).to.equal(500);
    // A negative limit is kept as given: no limit.
    expect((await put('limited', 'max-connections', { value: -1 })).status).to.equal(204);
    expect((await b.api('GET', '/api/users/limited')).json.limits).to.deep.equal({ 'max-connections': -1 });
  });

  it('deleting a user closes its AMQP connections with 320 CONNECTION_FORCED', async () => {
    await b.api('PUT', '/api/users/doomed', { body: { password: 'pw', tags: '' } });
    await b.api('PUT', '/api/permissions/%2F/doomed', { body: full });
    const conn = await amqp.connect(amqpUrl('doomed', 'pw'));
    const closed = closeOf(conn);
    expect((await b.api('DELETE', '/api/users/doomed')).status).to.equal(204);
    expect(await closed).to.equal('Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - user \'doomed\' is deleted"');
    expect((await b.api('GET', '/api/permissions/%2F/doomed')).status).to.equal(404);
    expect((await b.api('DELETE', '/api/users/doomed')).status).to.equal(404);
  });

  it('bulk-delete deletes users in order and stops at the first that does not exist', async () => {
    for (const u of ['bd1', 'bd2', 'bd3']) await b.api('PUT', `/api/users/${u}`, { body: { password: 'pw', tags: '' } });
    const res = await b.api('POST', '/api/users/bulk-delete', { body: { users: ['bd1', 'nobody', 'bd2'] } });
    expect([res.status, res.json]).to.deep.equal([400, { error: 'bad_request', reason: ['no_such_user', 'nobody'] }]);
    const names = (await b.api('GET', '/api/users?columns=name')).json.map((u: { name: string }) => u.name);
    expect(names).to.include.members(['bd2', 'bd3']).and.not.to.include('bd1');
    expect((await b.api('POST', '/api/users/bulk-delete', { body: { users: ['bd2', 'bd3'] } })).status).to.equal(204);
  });

  it('a vhost put over HTTP has the standard exchanges, full permissions for its creator, and its metadata', async () => {
    const put = await b.api('PUT', '/api/vhosts/made', { body: { description: 'made over HTTP', tags: 'a,b', defaultqueuetype: 'quorum' } });
    expect(put.status).to.equal(201);
    expect((await b.api('PUT', '/api/vhosts/made', { body: { description: 'renamed', tags: ['c'] } })).status).to.equal(204);
    expect((await b.api('GET', '/api/permissions/made/guest')).json).to.deep.equal({ user: 'guest', vhost: 'made', ...full });
    const conn = await amqp.connect(amqpUrl('guest', 'guest', 'made'));
    try {
      const ch = await conn.createChannel();
      for (const x of ['amq.direct', 'amq.topic', 'amq.fanout', 'amq.headers', 'amq.match']) await ch.checkExchange(x);
    } finally {
      await conn.close();
    }
    const v = (await b.api('GET', '/api/vhosts/made')).json;
    expect(v).to.deep.include({ name: 'made', description: 'renamed', tags: ['c'], default_queue_type: 'quorum', metadata: { default_queue_type: 'quorum', description: 'renamed', tags: ['c'] } });
    const listed = (await b.api('GET', '/api/vhosts?columns=name,description')).json;
    expect(listed).to.deep.include({ name: 'made', description: 'renamed' });
  });

  it('deleting a vhost closes its connections with 320 and removes the permissions in it', async () => {
    await b.api('PUT', '/api/vhosts/gone', { body: {} });
    const conn = await amqp.connect(amqpUrl('guest', 'guest', 'gone'));
    const closed = closeOf(conn);
    expect((await b.api('DELETE', '/api/vhosts/gone')).status).to.equal(204);
    expect(await closed).to.equal('Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - vhost \'gone\' is deleted"');
    expect((await b.api('GET', '/api/permissions/gone/guest')).status).to.equal(404);
    expect((await b.api('DELETE', '/api/vhosts/gone')).json).to.deep.equal({ error: 'Object Not Found', reason: 'Not Found' });
  });

  it('creates a vhost with tracing: true traced, as rabbit_vhost:put_vhost does (test/integration/tracing.test.ts has the rest)', async () => {
    const res = await b.api('PUT', '/api/vhosts/traced', { body: { tracing: true } });
    expect(res.status).to.equal(201);
    expect((await b.api('GET', '/api/vhosts/traced')).json.tracing).to.equal(true);
    expect((await b.api('PUT', '/api/vhosts/traced', { body: { tracing: false } })).status).to.equal(204);
    expect((await b.api('GET', '/api/vhosts/traced')).json.tracing).to.equal(false);
    await b.api('DELETE', '/api/vhosts/traced');
  });
});

/** rabbit_mgmt_util:is_authorized counts HTTP logins in rabbitmq_auth_attempts_total{protocol="http"}. */
describe('management API: HTTP logins in the auth attempt metrics', () => {
  const b = useManagedBroker({ prometheusPort: 0 });
  const httpAttempts = async (): Promise<[number, number]> => {
    const text = await (await fetch(`${b.running.broker.prometheusUrl}/metrics`)).text();
    const value = (name: string) => Number(new RegExp(`^rabbitmq_${name}\\{protocol="http"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    return [value('auth_attempts_succeeded_total'), value('auth_attempts_failed_total')];
  };

  it('counts a request that passes as succeeded, a refused one as failed, and none without credentials', async () => {
    const before = await httpAttempts();
    await b.api('PUT', '/api/users/plain', { body: { password: 'pw', tags: '' } }); // +1 succeeded
    await b.api('GET', '/api/whoami'); // +1 succeeded
    await b.api('GET', '/api/whoami', { password: 'wrong' }); // +1 failed (Login failed)
    await b.api('GET', '/api/whoami', { user: 'plain', password: 'pw' }); // +1 failed (Not management user)
    await b.api('GET', '/api/whoami', { auth: false }); // not an attempt
    expect(await httpAttempts()).to.deep.equal([before[0] + 2, before[1] + 2]);
  });
});

/** What the API changes is stored: a restart on the same data dir keeps it. */
describe('management API: users, permissions and vhosts survive a restart', () => {
  it('keeps a user (password, tags), its permissions, topic permissions and a vhost with its metadata', async function () {
    this.timeout(30000);
    const dataDir = makeTmpDir('warren-mgmt-users-');
    try {
      let r = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent', dataDir });
      const api = (method: string, path: string, body?: unknown) => call(r.managementUrl!, method, path, { body });
      await api('PUT', '/api/vhosts/kept', { description: 'stays', tags: 'x' });
      await api('PUT', '/api/users/keeper', { password: 'pw', tags: 'management' });
      await api('PUT', '/api/permissions/kept/keeper', { configure: '^k', write: '.*', read: '.*' });
      await api('PUT', '/api/topic-permissions/kept/keeper', { exchange: 'amq.topic', write: '^k', read: '.*' });
      await r.broker.store.metadata.sync();
      await r.close();
      r = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent', dataDir });
      expect((await api('GET', '/api/vhosts/kept')).json).to.deep.include({ description: 'stays', tags: ['x'] });
      expect((await api('GET', '/api/users/keeper')).json.tags).to.deep.equal(['management']);
      expect((await api('GET', '/api/permissions/kept/keeper')).json.configure).to.equal('^k');
      expect((await api('GET', '/api/topic-permissions/kept/keeper')).json).to.have.length(1);
      const url = new URL(r.url);
      url.username = 'keeper';
      url.password = 'pw';
      url.pathname = '/kept';
      await (await amqp.connect(url.href)).close();
      await r.close();
    } finally {
      removeDir(dataDir);
    }
  });
});
