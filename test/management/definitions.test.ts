import { expect } from 'chai';
import amqp from 'amqplib';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { call, useManagedBroker } from '../support/management.js';
import { rabbitmqadminUnavailable, runRabbitmqadmin } from '../support/rabbitmqadmin.js';
import { connectError } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { exportDefinitions } from '../../src/management/definitions/broker-definitions.js';
import { encodeJson } from '../../src/management/json.js';

/** RabbitMQ 3.10.8's own export (guest/guest, app/s3cret), recorded from the reference. */
const referenceExport = (): Record<string, unknown> => JSON.parse(readFileSync(new URL('../../../shared/reference/management-samples/definitions.json', import.meta.url), 'utf8'));

describe('definitions: GET/POST /api/definitions and definitions at boot', function () {
  this.timeout(30000);

  describe('export and import over HTTP', () => {
    const b = useManagedBroker();

    it("exports in RabbitMQ 3.10.8's shape: the same categories and, per object, the same keys in the same order", async () => {
      const conn = await amqp.connect(b.url);
      const ch = await conn.createChannel();
      await ch.assertExchange('orders', 'topic', { durable: true });
      await ch.assertQueue('orders.created', { durable: true, arguments: { 'x-message-ttl': 60000 } });
      await ch.bindQueue('orders.created', 'orders', 'order.*');
      await ch.assertQueue('', { exclusive: true }); // exclusive queues are not exported
      await b.api('PUT', '/api/policies/%2F/dlx-ttl', { body: { pattern: '^ttl\\.', definition: { 'message-ttl': 30000 }, 'apply-to': 'queues', priority: 5 } });
      const got = (await b.api('GET', '/api/definitions')).json as Record<string, unknown[]>;
      const ref = referenceExport() as Record<string, unknown[]>;
      expect(Object.keys(got)).to.deep.equal(Object.keys(ref));
      for (const category of ['users', 'vhosts', 'permissions', 'policies', 'queues', 'exchanges', 'bindings']) {
        expect(Object.keys(got[category]![0] as object), category).to.deep.equal(Object.keys(ref[category]![0] as object));
      }
      expect(got['queues']).to.deep.equal([{ name: 'orders.created', vhost: '/', durable: true, auto_delete: false, arguments: { 'x-message-ttl': 60000 } }]);
      expect(got['bindings']).to.deep.equal([{ source: 'orders', vhost: '/', destination: 'orders.created', destination_type: 'queue', routing_key: 'order.*', arguments: {} }]);
      expect((got['exchanges'] as Array<{ name: string }>).map((x) => x.name)).to.deep.equal(['orders']); // no amq.*, no default
      const vhost = (await b.api('GET', '/api/definitions/%2F')).json as Record<string, unknown[]>;
      expect(Object.keys(vhost)).to.deep.equal(['rabbit_version', 'parameters', 'policies', 'queues', 'exchanges', 'bindings']);
      expect(vhost['queues']).to.deep.equal([{ name: 'orders.created', durable: true, auto_delete: false, arguments: { 'x-message-ttl': 60000 } }]);
      // As RabbitMQ 3.10.8 exports one vhost: its policies (and parameters) keep their vhost.
      expect(vhost['policies']).to.deep.equal([{ vhost: '/', name: 'dlx-ttl', pattern: '^ttl\\.', 'apply-to': 'queues', definition: { 'message-ttl': 30000 }, priority: 5 }]);
      const unknown = await b.api('GET', '/api/definitions/nope');
      expect([unknown.status, unknown.text]).to.deep.equal([400, '{"error":"bad_request","reason":"vhost_not_found"}']);
      const download = await b.api('GET', '/api/definitions?download=defs.json');
      expect(download.headers.get('content-disposition')).to.equal('attachment; filename=defs.json');
      await conn.close();
    });

    it('writes a large export a part a turn (chunked), with the same text as the whole document', async () => {
      const conn = await amqp.connect(b.url);
      const ch = await conn.createChannel();
      await ch.assertExchange('big.x', 'direct', { durable: true });
      for (let i = 0; i < 450; i++) {
        void ch.assertQueue(`big.${i}`, { durable: true, arguments: i % 2 ? { 'x-max-length': i } : {} });
        void ch.bindQueue(`big.${i}`, 'big.x', `k${i}`);
      }
      await ch.checkQueue('big.449');
      const whole = exportDefinitions(b.running.broker);
      const res = await b.api('GET', '/api/definitions');
      expect(res.headers.get('transfer-encoding')).to.equal('chunked');
      expect(res.headers.get('content-length')).to.equal(null);
      expect(res.text).to.equal(encodeJson(whole));
      const got = res.json as Record<string, Array<{ name?: string; routing_key?: string }>>;
      expect(got['queues']!.filter((q) => q.name!.startsWith('big.')).length).to.equal(450);
      expect(got['bindings']!.map((x) => x.routing_key)).to.include.members(['k0', 'k449']);
      // One vhost's export too, and HEAD answers without a body.
      const vhost = await b.api('GET', '/api/definitions/%2F');
      expect(vhost.headers.get('transfer-encoding')).to.equal('chunked');
      expect(Object.keys(vhost.json as object)).to.deep.equal(['rabbit_version', 'parameters', 'policies', 'queues', 'exchanges', 'bindings']);
      expect((vhost.json as Record<string, Array<{ name: string }>>)['queues']!.filter((q) => q.name.startsWith('big.')).length).to.equal(450);
      const head = await b.api('HEAD', '/api/definitions');
      expect([head.status, head.text]).to.deep.equal([200, '']);
      // Columns of it: the whole document, as before.
      const columns = await b.api('GET', '/api/definitions?columns=rabbit_version');
      expect(columns.json).to.deep.equal({ rabbit_version: whole['rabbit_version'] });
      await conn.close();
    });

    it("imports RabbitMQ's export: users log in with their passwords, topology, policies and operator policies act", async () => {
      expect((await b.api('POST', '/api/definitions', { body: referenceExport() })).status).to.equal(204);
      const amqpUrl = (user: string, vhost = '') => b.url.replace('guest:guest', user) + (vhost ? `/${vhost}` : '');
      expect(await connectError(amqpUrl('app:s3cret'))).to.equal('connected');
      expect(await connectError(amqpUrl('app:wrong'))).to.include('ACCESS_REFUSED');
      expect(await connectError(amqpUrl('hashed:'))).to.include('ACCESS_REFUSED'); // an empty hash never logs in
      const q = (await b.api('GET', '/api/queues/%2F/ttl.jobs')).json as Record<string, unknown>;
      expect(q).to.deep.include({ policy: 'dlx-ttl', operator_policy: 'cap' });
      const x = (await b.api('GET', '/api/exchanges/%2F/orders')).json as Record<string, unknown>;
      expect(x).to.deep.include({ policy: 'ae' });
      const bindings = (await b.api('GET', '/api/bindings/%2F/e/orders/q/ttl.jobs')).json as Array<Record<string, unknown>>;
      expect(bindings.map((x) => [x.routing_key, x.arguments])).to.deep.equal([['job.#', { 'x-foo': 'bar' }]]);
      expect((await b.api('GET', '/api/vhosts/dev')).status).to.equal(200);
      // Import is additive: doing it again changes nothing and still answers 204.
      expect((await b.api('POST', '/api/definitions', { body: referenceExport() })).status).to.equal(204);
    });

    it("refuses what RabbitMQ refuses, with its reasons", async () => {
      const post = async (body: unknown, path = '/api/definitions') => {
        const r = await call(b.base, 'POST', path, { body });
        return [r.status, r.json] as const;
      };
      expect(await post([1, 2])).to.deep.equal([400, { error: 'bad_request', reason: 'failed_to_parse_json' }]);
      expect(await post('{not json')).to.deep.equal([400, { error: 'bad_request', reason: 'failed_to_parse_json' }]);
      expect(await post({ queues: [{ name: 'q1', vhost: 'nope', durable: true, auto_delete: false, arguments: {} }] })).to.deep.equal([400, { error: 'bad_request', reason: ['no_such_vhost', 'nope'] }]);
      expect(await post({ permissions: [{ user: 'ghost', vhost: '/', configure: '.*', write: '.*', read: '.*' }] })).to.deep.equal([400, { error: 'bad_request', reason: ['no_such_user', 'ghost'] }]);
      expect(await post({ users: [{ name: 'u3' }] })).to.deep.equal([400, { error: 'bad_request', reason: 'tags_not_present' }]);
      expect(await post({ policies: [{ vhost: '/', name: 'p', pattern: '.*', 'apply-to': 'queues', definition: { 'message-ttl': 'abc' }, priority: 0 }] }))
        .to.deep.equal([400, { error: 'bad_request', reason: 'Validation failed\n\n&lt;&lt;"abc"&gt;&gt; is not a valid message TTL\n (//p)' }]);
      expect(await post({ policies: [{ vhost: '/', pattern: '.*', definition: { 'message-ttl': 5 } }] })).to.deep.equal([400, { error: 'bad_request', reason: "policy in virtual host '/' has undefined name" }]);
      const badType = await post({ exchanges: [{ name: 'x1', vhost: '/', type: 'bogus', durable: true, auto_delete: false, internal: false, arguments: {} }] });
      expect(badType).to.deep.equal([400, { error: 'bad_request', reason: ['amqp_error', 'command_invalid', [...Buffer.from("unknown exchange type 'bogus'")], 'none'] }]);
      expect(await post({ queues: [] }, '/api/definitions/nope')).to.deep.equal([404, { error: 'not_found', reason: 'vhost_not_found' }]);
      // A binding whose queue is missing is skipped, as RabbitMQ skips it.
      expect((await post({ bindings: [{ source: 'amq.direct', vhost: '/', destination: 'missing', destination_type: 'queue', routing_key: 'k', arguments: {} }] }))[0]).to.equal(204);
    });

    it('refuses malformed entries as RabbitMQ 3.10.8 does (recorded from it), changing nothing', async () => {
      const before = (await b.api('GET', '/api/definitions')).json as Record<string, unknown>;
      const fn = { error: 'bad_request', reason: 'function_clause' };
      const badarg = { error: 'bad_request', reason: 'badarg' };
      const invalidType = ['amqp_error', 'command_invalid', [...Buffer.from("invalid exchange type 'undefined'")], 'none'];
      const cases: Array<[unknown, number, unknown]> = [
        // A permission whose pattern is missing or not a string: none is set (it used to clear guest's access).
        [{ permissions: [{ user: 'guest', vhost: '/', configure: '.*', write: '.*' }] }, 400, badarg],
        [{ permissions: [{ user: 'guest', vhost: '/', configure: 5, write: '.*', read: '.*' }] }, 400, badarg],
        [{ permissions: [{ vhost: '/', configure: '.*', write: '.*', read: '.*' }] }, 400, { error: 'bad_request', reason: ['no_such_user', 'undefined'] }],
        [{ permissions: [{ user: 'guest', configure: '.*', write: '.*', read: '.*' }] }, 400, { error: 'bad_request', reason: ['no_such_vhost', 'undefined'] }],
        [{ permissions: [{ user: 'guest', vhost: '/', configure: '(', write: '.*', read: '.*' }] }, 400, { error: 'bad_request', reason: ['invalid_regexp', [40], [[...Buffer.from('missing )')], 1]] }],
        [{ topic_permissions: [{ user: 'guest', vhost: '/', exchange: 'amq.topic', write: '.*' }] }, 400, badarg],
        [{ topic_permissions: [{ user: 'guest', vhost: '/', exchange: 'amq.topic', write: 5, read: '.*' }] }, 400, badarg],
        // Queues: durable and auto_delete must be booleans ("true" too is refused), arguments an object.
        [{ queues: [{ name: 'dq1', vhost: '/', durable: 'true', auto_delete: false, arguments: {} }] }, 400, fn],
        [{ queues: [{ name: 'dq3', vhost: '/', durable: true, auto_delete: false, arguments: null }] }, 400, fn],
        [{ queues: [{ name: 'dq4', vhost: '/', durable: true }] }, 400, fn],
        [{ queues: [{ name: 'dq6', vhost: '/', durable: true, auto_delete: false, arguments: 5 }] }, 400, fn],
        [{ queues: [{ name: 'dq5', durable: true, auto_delete: false, arguments: {} }] }, 400, { error: 'bad_request', reason: ['no_such_vhost', 'undefined'] }],
        [{ queues: [{ vhost: '/' }] }, 400, fn],
        [{ exchanges: [{ name: 'dx8', vhost: '/', durable: true, auto_delete: false, internal: false, arguments: {} }] }, 400, { error: 'bad_request', reason: invalidType }],
        [{ exchanges: [{ name: 'dx9', vhost: '/', type: 'direct', durable: true, auto_delete: false, internal: false, arguments: 5 }] }, 400, fn],
        // RabbitMQ crashes on an exchange without a boolean durable (and creates none).
        [{ exchanges: [{ name: 'dx1', vhost: '/', type: 'direct', auto_delete: false, internal: false, arguments: {} }] }, 500, undefined], // an empty body
        [{ bindings: [{ source: 'amq.direct', vhost: '/', destination: 'amq.fanout', destination_type: 'bogus', routing_key: 'k', arguments: {} }] }, 400, fn],
        [{ bindings: [{ source: 'amq.direct', vhost: '/', destination: 'amq.fanout', routing_key: 'k', arguments: {} }] }, 400, fn],
        [{ bindings: [{ source: 'amq.direct', vhost: '/', destination: 'amq.fanout', destination_type: 'exchange', routing_key: 'k', arguments: 5 }] }, 400, fn],
        [{ users: [{ name: 'du1', password: 5, tags: '' }] }, 400, badarg],
        [{ users: [{ name: 'du2', password: 'x', tags: 5 }] }, 400, fn],
        [{ parameters: [{ vhost: '/' }] }, 400, { error: 'bad_request', reason: 'Validation failed\n\ncomponent undefined not found\n (//undefined/undefined)' }],
        [{ parameters: [{ vhost: '/', component: 'vhost-limits', name: 'limits' }] }, 400, { error: 'bad_request', reason: 'Validation failed\n\nlimits not a list undefined\n (//vhost-limits/limits)' }],
        [{ parameters: [{ component: 'vhost-limits', name: 'limits', value: { 'max-queues': 5 } }] }, 400, { error: 'bad_request', reason: ['no_such_vhost', 'undefined'] }],
        [{ policies: [{ vhost: '/', name: 'p1' }] }, 400, { error: 'bad_request', reason: 'Validation failed\n\nparse error while reading policy definition: undefined. Validator: policy_validator.\npattern should be a binary but was undefined\n (//p1)' }],
        [{ policies: [{ vhost: '/', name: 'p1', pattern: '^x', definition: [] }] }, 400, { error: 'bad_request', reason: 'Validation failed\n\nno policy provided\n (//p1)' }],
        [{ policies: [{ name: 'p1', pattern: '^x', definition: { 'max-length': 1 } }] }, 400, { error: 'bad_request', reason: ['no_such_vhost', 'undefined'] }],
      ];
      for (const [body, status, json] of cases) {
        const r = await call(b.base, 'POST', '/api/definitions', { body });
        expect([r.status, r.json], JSON.stringify(body)).to.deep.equal([status, json]);
      }
      expect((await b.api('GET', '/api/definitions')).json).to.deep.equal(before);
      // guest still has its access.
      expect(await connectError(b.url)).to.equal('connected');
    });

    it('takes what RabbitMQ 3.10.8 takes: empty lists for arguments, entries without optional keys', async () => {
      const body = {
        queues: [{ name: 'arr.q', vhost: '/', durable: true, auto_delete: false, arguments: [] }, { name: 'noargs.q', vhost: '/', durable: true, auto_delete: false }],
        exchanges: [{ name: 'arr.x', vhost: '/', type: 'direct', durable: true, auto_delete: false, internal: false, arguments: [] }],
        bindings: [{ source: 'arr.x', vhost: '/', destination: 'arr.q', destination_type: 'queue', routing_key: 'k', arguments: [] }],
        topic_permissions: [{ user: 'guest', vhost: '/', exchange: 'amq.topic', write: '^a', read: '^b' }],
        global_parameters: [{ name: 'no-value' }],
      };
      expect((await call(b.base, 'POST', '/api/definitions', { body })).status).to.equal(204);
      expect(((await b.api('GET', '/api/queues/%2F/arr.q')).json as Record<string, unknown>)['arguments']).to.deep.equal({});
      expect((await b.api('GET', '/api/queues/%2F/noargs.q')).status).to.equal(200);
      expect(((await b.api('GET', '/api/bindings/%2F/e/arr.x/q/arr.q')).json as unknown[]).length).to.equal(1);
      // RabbitMQ stores the atom undefined where a global parameter has no value.
      expect((await b.api('GET', '/api/global-parameters/no-value')).json).to.deep.equal({ value: 'undefined', name: 'no-value' });
    });

    it("round-trips through rabbitmqadmin 3.10.8 export and import", async function () {
      if (rabbitmqadminUnavailable()) this.skip();
      const dir = makeTmpDir('warren-defs-');
      try {
        const port = Number(new URL(b.base).port);
        const file = join(dir, 'defs.json');
        const exported = await runRabbitmqadmin(port, ['export', file]);
        expect(exported.code, exported.stderr).to.equal(0);
        const defs = JSON.parse(readFileSync(file, 'utf8'));
        expect(defs.users.map((u: { name: string }) => u.name)).to.include('app');
        defs.queues.push({ name: 'from.admin', vhost: '/', durable: true, auto_delete: false, arguments: {} });
        writeFileSync(file, JSON.stringify(defs));
        const imported = await runRabbitmqadmin(port, ['import', file]);
        expect(imported.code, imported.stderr).to.equal(0);
        expect((await b.api('GET', '/api/queues/%2F/from.admin')).status).to.equal(200);
      } finally {
        removeDir(dir);
      }
    });
  });

  describe('at boot', () => {
    let running: RunningBroker | undefined;
    let dir: string;
    beforeEach(() => (dir = makeTmpDir('warren-defs-boot-')));
    afterEach(async () => {
      await running?.close();
      running = undefined;
      removeDir(dir);
    });

    it("loads RabbitMQ's export from a file on a blank node, which then has no default guest user", async () => {
      const defs = referenceExport() as { users: Array<{ name: string }>; permissions: Array<{ user: string }> };
      defs.users = defs.users.filter((u) => u.name !== 'guest');
      defs.permissions = defs.permissions.filter((p) => p.user !== 'guest');
      const file = join(dir, 'definitions.json');
      writeFileSync(file, JSON.stringify(defs));
      running = await startBroker({ port: 0, logLevel: 'silent', definitions: file });
      const base = running.url.replace('guest:guest@', '');
      expect(await connectError(base.replace('amqp://', 'amqp://guest:guest@'))).to.include('ACCESS_REFUSED');
      expect(await connectError(base.replace('amqp://', 'amqp://app:s3cret@'))).to.equal('connected');
      expect(running.broker.vhosts.get('/')!.queues.has('orders.created')).to.equal(true);
      expect(running.broker.policies.list('policy').map((p) => p.name)).to.deep.equal(['ae', 'dlx-ttl']);
    });

    it('imports again at every boot, adding to what the data dir holds', async () => {
      const file = join(dir, 'definitions.json');
      writeFileSync(file, JSON.stringify({ vhosts: [{ name: '/' }], users: [{ name: 'ops', password: 'pw', tags: 'administrator' }], permissions: [{ user: 'ops', vhost: '/', configure: '.*', write: '.*', read: '.*' }], queues: [{ name: 'boot.q', vhost: '/', durable: true, auto_delete: false, arguments: {} }] }));
      const dataDir = join(dir, 'data');
      running = await startBroker({ port: 0, logLevel: 'silent', dataDir, definitions: file });
      const url = running.url.replace('guest:guest', 'ops:pw');
      const conn = await amqp.connect(url);
      const ch = await conn.createChannel();
      await ch.deleteQueue('boot.q');
      await ch.assertQueue('kept.q', { durable: true });
      await conn.close();
      await running.close();
      running = await startBroker({ port: 0, logLevel: 'silent', dataDir, definitions: file });
      const vhost = running.broker.vhosts.get('/')!;
      expect([vhost.queues.has('boot.q'), vhost.queues.has('kept.q')]).to.deep.equal([true, true]);
    });

    it('broker.reset() goes back to the imported definitions, without a default user', async () => {
      const defs = { vhosts: [{ name: 'app' }], users: [{ name: 'svc', password: 'pw', tags: [] }], permissions: [{ user: 'svc', vhost: 'app', configure: '.*', write: '.*', read: '.*' }], queues: [{ name: 'jobs', vhost: 'app', durable: true, auto_delete: false, arguments: {} }] };
      running = await startBroker({ port: 0, logLevel: 'silent', definitions: defs });
      const url = running.url.replace('guest:guest', 'svc:pw') + '/app';
      const conn = await amqp.connect(url);
      const ch = await conn.createChannel();
      await ch.assertQueue('scratch');
      await ch.close();
      await conn.close();
      await running.reset();
      expect([...running.broker.vhosts.keys()]).to.deep.equal(['app']);
      expect([...running.broker.vhosts.get('app')!.queues.keys()]).to.deep.equal(['jobs']);
      expect(running.broker.access.users().map((u) => u.name)).to.deep.equal(['svc']);
      expect(await connectError(url)).to.equal('connected');
    });

    it('refuses to start on a definitions file it cannot import, saying why', async () => {
      const file = join(dir, 'bad.json');
      writeFileSync(file, '{"queues":[{"name":"q","vhost":"nope","durable":true,"auto_delete":false,"arguments":{}}]}');
      const outcome = await startBroker({ port: 0, logLevel: 'silent', definitions: file }).then((r) => r.close().then(() => 'started'), (err: Error) => err.message);
      expect(outcome).to.equal(`definitions file ${file}: ["no_such_vhost","nope"]`);
    });
  });

  describe('against the reference RabbitMQ 3.10.8', () => {
    const mgmt = process.env.WARREN_REFERENCE_MGMT; // set by .ci/run, which starts one
    const b = useManagedBroker();

    it("Warren's export imports into RabbitMQ unchanged", async function () {
      if (!mgmt) {
        console.log('      skipped: WARREN_REFERENCE_MGMT is not set (.ci/run starts a reference RabbitMQ and sets it)');
        this.skip();
      }
      const conn = await amqp.connect(b.url);
      const ch = await conn.createChannel();
      await ch.assertExchange('warren.x', 'headers', { durable: true, arguments: { 'alternate-exchange': 'amq.fanout' } });
      await ch.assertQueue('warren.q', { durable: true, arguments: { 'x-max-length': 10, 'x-overflow': 'reject-publish' } });
      await ch.bindQueue('warren.q', 'warren.x', '', { 'x-match': 'any', kind: 'a' });
      await conn.close();
      await b.api('PUT', '/api/policies/%2F/warren-ttl', { body: { pattern: '^warren\\.', definition: { 'message-ttl': 1000 }, 'apply-to': 'queues' } });
      const defs = (await b.api('GET', '/api/definitions')).json as Record<string, unknown>;
      const auth = { user: 'guest', password: 'guest' };
      const posted = await call(mgmt!, 'POST', '/api/definitions', { ...auth, body: defs });
      expect(posted.status, JSON.stringify(posted.json)).to.equal(204);
      const q = (await call(mgmt!, 'GET', '/api/queues/%2F/warren.q', auth)).json as Record<string, unknown>;
      expect(q).to.deep.include({ durable: true, arguments: { 'x-max-length': 10, 'x-overflow': 'reject-publish' } });
      const bindings = (await call(mgmt!, 'GET', '/api/bindings/%2F/e/warren.x/q/warren.q', auth)).json as Array<Record<string, unknown>>;
      expect(bindings.map((x) => x.arguments)).to.deep.equal([{ 'x-match': 'any', kind: 'a' }]);
      const policy = (await call(mgmt!, 'GET', '/api/policies/%2F/warren-ttl', auth)).json as Record<string, unknown>;
      expect(policy).to.deep.include({ pattern: '^warren\\.', definition: { 'message-ttl': 1000 } });
      for (const path of ['/api/queues/%2F/warren.q', '/api/exchanges/%2F/warren.x', '/api/policies/%2F/warren-ttl']) await call(mgmt!, 'DELETE', path, auth);
    });
  });
});

