import { expect } from 'chai';
import { networkInterfaces } from 'node:os';
import { startBroker } from '../../src/broker.js';
import { captureLog } from '../support/capture-log.js';
import { call, useManagedBroker } from '../support/management.js';

const USERS = [
  { username: 'guest', password: 'guest', tags: ['administrator'] },
  { username: 'plain', password: 'p' },
  { username: 'mon', password: 'p', tags: ['monitoring'], vhosts: [] },
  { username: 'mgmt', password: 'p', tags: ['management'], vhosts: ['other'] },
];

/** RabbitMQ's HTTP rules (management-api.md §1b), each answer as RabbitMQ 3.10.8 gave it. */
describe('management API: HTTP rules', () => {
  const b = useManagedBroker({ vhosts: ['/', 'other'], users: USERS });
  const as = (user: string) => ({ user, password: user === 'guest' ? 'guest' : 'p' });

  describe('authentication and tags', () => {
    it('challenges a call without credentials: 401, empty body, WWW-Authenticate Basic realm', async () => {
      const res = await b.api('GET', '/api/overview', { auth: false });
      expect(res.status).to.equal(401);
      expect(res.text).to.equal('');
      expect(res.headers.get('www-authenticate')).to.equal('Basic realm="RabbitMQ Management"');
    });

    it('refuses a bad password with not_authorized "Login failed" and the challenge', async () => {
      const res = await b.api('GET', '/api/overview', { user: 'guest', password: 'nope' });
      expect([res.status, res.text]).to.deep.equal([401, '{"error":"not_authorized","reason":"Login failed"}']);
      expect(res.headers.get('www-authenticate')).to.equal('Basic realm="RabbitMQ Management"');
      expect((await b.api('GET', '/api/overview', { user: 'nobody', password: 'x' })).status).to.equal(401);
    });

    it('refuses a user without a management tag with not_authorised (British) "Not management user"', async () => {
      const res = await b.api('GET', '/api/whoami', as('plain'));
      expect([res.status, res.text]).to.deep.equal([401, '{"error":"not_authorised","reason":"Not management user"}']);
      expect(res.headers.get('www-authenticate')).to.equal(null);
    });

    it('answers an Authorization header it cannot parse with a bare 400, and a Bearer token as a failed login (recorded from 3.10.8)', async () => {
      for (const header of ['Basic !!!', 'Basic Z3Vlc3Q=', 'Basic', 'Digest x']) {
        const res = await b.api('GET', '/api/overview', { auth: false, headers: { authorization: header } });
        expect([res.status, res.text, res.headers.get('www-authenticate'), res.headers.get('vary')], header).to.deep.equal([400, '', null, null]);
      }
      const bearer = await b.api('GET', '/api/overview', { auth: false, headers: { authorization: 'Bearer abc' } });
      expect([bearer.status, bearer.text, bearer.headers.get('www-authenticate')]).to.deep.equal([401, '{"error":"not_authorized","reason":"Login failed"}', 'Basic realm="RabbitMQ Management"']);
      expect((await b.api('GET', '/api/whoami', { headers: { authorization: `basic ${Buffer.from('guest:guest').toString('base64')}` } })).status).to.equal(200);
    });

    it('answers /api/auth without credentials', async () => {
      const res = await b.api('GET', '/api/auth', { auth: false });
      expect([res.status, res.text]).to.deep.equal([200, '{"enable_uaa":false,"uaa_client_id":"","uaa_location":""}']);
    });

    it('tells each user who it is (whoami) and lets only monitors read nodes, only administrators feature flags', async () => {
      expect((await b.api('GET', '/api/whoami', as('mgmt'))).json).to.deep.equal({ name: 'mgmt', tags: ['management'] });
      expect((await b.api('GET', '/api/whoami?columns=name', as('mgmt'))).json).to.deep.equal({ name: 'mgmt' });
      expect((await b.api('GET', '/api/nodes', as('mgmt'))).text).to.equal('{"error":"not_authorised","reason":"Not monitor user"}');
      expect((await b.api('GET', '/api/nodes', as('mon'))).status).to.equal(200);
      expect((await b.api('GET', '/api/feature-flags', as('mon'))).text).to.equal('{"error":"not_authorised","reason":"Not administrator user"}');
      expect((await b.api('GET', '/api/vhosts/other', as('mon'))).status).to.equal(401);
    });

    it('shows monitors every vhost but lists only the objects of vhosts a user may open, as 3.10.8 does', async () => {
      const names = (res: { json: Array<{ name: string }> }) => res.json.map((o) => o.name);
      expect(names(await b.api('GET', '/api/vhosts', as('mon')))).to.deep.equal(['/', 'other']);
      expect(names(await b.api('GET', '/api/vhosts', as('mgmt')))).to.deep.equal(['other']);
      expect((await b.api('GET', '/api/exchanges', as('mon'))).json).to.deep.equal([]);
      const mine = (await b.api('GET', '/api/exchanges?columns=vhost', as('mgmt'))).json as Array<{ vhost: string }>;
      expect(new Set(mine.map((x) => x.vhost))).to.deep.equal(new Set(['other']));
      const denied = await b.api('GET', '/api/queues/%2F', as('mgmt'));
      expect([denied.status, denied.text]).to.deep.equal([401, '{"error":"not_authorised","reason":"User not authorised to access virtual host"}']);
      expect((await b.api('GET', '/api/queues/%2F', as('guest'))).status).to.equal(200);
    });

    it('lets a management user declare in its own vhost', async () => {
      expect((await b.api('PUT', '/api/queues/other/mine', { ...as('mgmt'), body: {} })).status).to.equal(201);
      expect((await b.api('DELETE', '/api/queues/other/mine', as('mgmt'))).status).to.equal(204);
    });
  });

  describe('paths', () => {
    it('decodes each segment on its own: %2F is the vhost "/", a trailing slash is tolerated', async () => {
      expect((await b.api('GET', '/api/queues/%2F')).status).to.equal(200);
      expect((await b.api('GET', '/api/queues/')).status).to.equal(200);
      expect((await b.api('GET', '/api/vhosts/%2F')).json.name).to.equal('/');
    });

    it('answers an unknown path 404 Object Not Found, or a bare 400 when a segment holds an encoded "/"', async () => {
      for (const path of ['/api/nothing', '/api/queues/other/q/nothing', '/api/overview/x']) {
        const res = await b.api('GET', path, { auth: false });
        expect([res.status, res.text], path).to.deep.equal([404, '{"error":"Object Not Found","reason":"Not Found"}']);
        expect(res.headers.get('content-type')).to.equal('application/json');
      }
      const res = await b.api('GET', '/api/queues/%2F/q/nothing');
      expect([res.status, res.text]).to.deep.equal([400, '']);
    });

    it('answers a method a path does not take 405 with RabbitMQ\'s allow header, before authentication', async () => {
      const res = await b.api('PATCH', '/api/queues', { auth: false });
      expect([res.status, res.text, res.headers.get('allow')]).to.deep.equal([405, '', 'HEAD, GET, OPTIONS']);
      const post = await b.api('POST', '/api/queues/%2F/q');
      expect(post.headers.get('allow')).to.equal('HEAD, GET, PUT, DELETE, OPTIONS');
      const options = await b.api('OPTIONS', '/api/queues/%2F/q/get', { auth: false });
      expect([options.status, options.headers.get('allow')]).to.deep.equal([200, 'POST, OPTIONS']);
    });
  });

  describe('bodies and replies', () => {
    it('writes compact JSON with content-type application/json and cache-control no-cache', async () => {
      const res = await b.api('GET', '/api/aliveness-test/%2F');
      expect(res.text).to.equal('{"status":"ok"}');
      expect(res.headers.get('content-type')).to.equal('application/json');
      expect(res.headers.get('cache-control')).to.equal('no-cache');
    });

    it('takes "true" and "false" strings, ignores unknown keys, answers PUT 201 then 204 and DELETE 204', async () => {
      const body = { durable: 'true', auto_delete: 'false', vhost: 'ignored', extra: 1 };
      expect((await b.api('PUT', '/api/queues/%2F/strings', { body })).status).to.equal(201);
      expect((await b.api('PUT', '/api/queues/%2F/strings', { body })).status).to.equal(204);
      const q = (await b.api('GET', '/api/queues/%2F/strings')).json;
      expect([q.durable, q.auto_delete]).to.deep.equal([true, false]);
      expect((await b.api('DELETE', '/api/queues/%2F/strings')).status).to.equal(204);
      expect((await b.api('DELETE', '/api/queues/%2F/strings')).status).to.equal(404);
    });

    it('refuses bodies as RabbitMQ words it', async () => {
      const cases: Array<[unknown, string]> = [
        ['not json', '{"error":"bad_request","reason":"not_json"}'],
        ['[1]', '{"error":"bad_request","reason":"not_json"}'],
        ['"x"', '{"error":"bad_request","reason":"invalid payload: the request body JSON-decoded to a string. Is the input doubly-JSON-encoded?"}'],
        [{ durable: 'maybe' }, '{"error":"bad_request","reason":["not_boolean","maybe"]}'],
        [{ durable: 1 }, '{"error":"bad_request","reason":["not_boolean",1]}'],
        // JSON null is a value to rabbit_mgmt_format:format_accept_content, and not a boolean.
        [{ durable: null }, '{"error":"bad_request","reason":["not_boolean",null]}'],
        [{ auto_delete: null }, '{"error":"bad_request","reason":["not_boolean",null]}'],
        [{ arguments: { 'x-max-length': '10' } }, `{"error":"bad_request","reason":"invalid arg 'x-max-length' for queue 'refused' in vhost '/': \\"expected integer, got longstr\\""}`],
      ];
      for (const [body, text] of cases) {
        const res = await b.api('PUT', '/api/queues/%2F/refused', { body });
        expect([res.status, res.text], JSON.stringify(body)).to.deep.equal([400, text]);
      }
      const missing = await b.api('PUT', '/api/queues/nope/q', { body: {} });
      expect([missing.status, missing.text]).to.deep.equal([404, '{"error":"not_found","reason":"vhost_not_found"}']);
      const internal = await b.api('PUT', '/api/exchanges/%2F/refused', { body: { type: 'direct', internal: null } });
      expect([internal.status, internal.text]).to.deep.equal([400, '{"error":"bad_request","reason":["not_boolean",null]}']);
    });

    it('takes an empty JSON array as empty arguments or headers, as RabbitMQ does (what PHP sends for an empty map)', async () => {
      expect((await b.api('PUT', '/api/queues/%2F/empty.args', { body: { durable: true, arguments: [] } })).status).to.equal(201);
      expect((await b.api('GET', '/api/queues/%2F/empty.args')).json.arguments).to.deep.equal({});
      expect((await b.api('PUT', '/api/exchanges/%2F/empty.args', { body: { type: 'direct', arguments: [] } })).status).to.equal(201);
      const published = await b.api('POST', '/api/exchanges/%2F/amq.default/publish', { body: { routing_key: 'empty.args', payload: 'x', payload_encoding: 'string', properties: { headers: [] } } });
      expect([published.status, published.text]).to.deep.equal([200, '{"routed":true}']);
      // A list that is not empty is no table.
      expect((await b.api('PUT', '/api/queues/%2F/list.args', { body: { arguments: [1] } })).status).to.equal(400);
      for (const path of ['/api/queues/%2F/empty.args', '/api/exchanges/%2F/empty.args']) await b.api('DELETE', path);
    });
  });

  describe('content negotiation and Vary (recorded from 3.10.8)', () => {
    it('answers 406 to an Accept header without JSON in it, after authentication', async () => {
      const html = await b.api('GET', '/api/queues', { headers: { accept: 'text/html' } });
      expect([html.status, html.text, html.headers.get('vary')]).to.deep.equal([406, '', 'origin']);
      for (const accept of ['text/html, */*;q=0.1', 'application/*', 'application/json;q=0']) {
        expect((await b.api('GET', '/api/queues', { headers: { accept } })).status, accept).to.equal(200);
      }
      expect((await b.api('GET', '/api/queues', { auth: false, headers: { accept: 'text/html' } })).status).to.equal(401);
    });

    it('varies on accept where RabbitMQ offers JSON and BERT, not where it offers one type; not before negotiation, nor on a crash', async () => {
      const vary = async (method: string, path: string, opts = {}) => (await b.api(method, path, opts)).headers.get('vary');
      expect(await vary('GET', '/api/queues')).to.equal('accept, accept-encoding, origin');
      expect(await vary('GET', '/api/queues/%2F/missing')).to.equal('accept, accept-encoding, origin');
      expect(await vary('GET', '/api/queues?page=0')).to.equal('accept, accept-encoding, origin');
      expect(await vary('GET', '/api/vhost-limits')).to.equal('accept-encoding, origin');
      expect(await vary('GET', '/api/topic-permissions')).to.equal('accept-encoding, origin');
      expect(await vary('GET', '/api/nonexistent')).to.equal('origin');
      expect(await vary('PATCH', '/api/queues')).to.equal('origin');
      expect(await vary('OPTIONS', '/api/queues')).to.equal('origin');
      expect(await vary('GET', '/api/overview', { auth: false })).to.equal('origin');
      expect(await vary('POST', '/api/queues/%2F/missing/get', { body: { count: 1, ackmode: 'bogus', encoding: 'auto' } })).to.equal(null);
    });
  });

  describe('columns, sort and pagination', () => {
    before(async () => {
      for (const [name, n] of [['pg.a', 1], ['pg.b', 3], ['pg.c', 2]] as const) {
        await b.api('PUT', `/api/queues/other/${name}`, { body: {} });
        for (let i = 0; i < n; i++) await b.api('POST', '/api/exchanges/other/amq.default/publish', { body: { routing_key: name, payload: 'x', payload_encoding: 'string', properties: {} } });
      }
    });

    it('keeps only the columns asked for; sorts by a field, reversed on request', async () => {
      const res = await b.api('GET', '/api/queues/other?columns=name,messages&sort=messages&sort_reverse=true');
      expect(res.json).to.deep.equal([{ name: 'pg.b', messages: 3 }, { name: 'pg.c', messages: 2 }, { name: 'pg.a', messages: 1 }]);
    });

    it('descends a dotted column into a proplist but returns a map whole', async () => {
      const [q] = (await b.api('GET', '/api/queues/other?columns=name,garbage_collection.minor_gcs,arguments.x,messages_details.rate&name=pg.a&page=1')).json.items;
      expect(q).to.deep.equal({ arguments: {}, garbage_collection: { minor_gcs: -1 }, messages_details: { rate: 0 }, name: 'pg.a' });
    });

    it('paginates with RabbitMQ\'s envelope, filtering by name or regular expression', async () => {
      const res = await b.api('GET', '/api/queues/other?page=2&page_size=2&columns=name');
      expect(res.text).to.equal('{"filtered_count":3,"item_count":1,"items":[{"name":"pg.c"}],"page":2,"page_count":2,"page_size":2,"total_count":3}');
      const named = await b.api('GET', '/api/queues/other?page=1&name=PG.B&columns=name');
      expect(named.json.items).to.deep.equal([{ name: 'pg.b' }]);
      const regex = await b.api('GET', '/api/queues/other?page=1&name=%5Epg%5C.%5Bac%5D&use_regex=true&columns=name');
      expect(regex.json.items).to.deep.equal([{ name: 'pg.a' }, { name: 'pg.c' }]);
    });

    it('refuses bad pagination as RabbitMQ words it', async () => {
      expect((await b.api('GET', '/api/queues?page=0')).text).to.equal('{"error":"invalid_pagination_parameters","reason":"Invalid pagination parameters: page number 0, page size undefined"}');
      expect((await b.api('GET', '/api/queues?page=x')).text).to.equal('{"error":"bad_request","reason":"Pagination parameters are invalid"}');
      expect((await b.api('GET', '/api/queues/other?page=9')).text).to.equal('{"error":"page_out_of_range","reason":"Page out of range, page: 9 page size: 100, len: 3"}');
    });
  });
});

describe('management API: server', () => {
  it('logs "Server startup complete" once AMQP and the management API listen, and closes with the broker', async () => {
    const capture = captureLog('info');
    const running = await startBroker({ port: 0, managementPort: 0, logger: capture.log });
    const complete = capture.entries.findIndex((e) => e.msg === 'Server startup complete');
    const http = capture.entries.findIndex((e) => e.msg.startsWith('management API listening'));
    expect(complete).to.be.greaterThan(http);
    expect(http).to.be.greaterThan(capture.entries.findIndex((e) => e.msg.startsWith('warren listening')));
    expect(capture.entries[complete]!.level).to.equal(30);
    expect(running.managementUrl).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await call(running.managementUrl!, 'GET', '/api/overview')).status).to.equal(200);
    await running.close();
    const refused = await fetch(`${running.managementUrl}/api/overview`).then(() => false, () => true);
    expect(refused, 'the management port is closed').to.equal(true);
  });

  it('has no management API in an embedded broker unless asked (startBroker), and logs startup complete all the same', async () => {
    const capture = captureLog('info');
    const running = await startBroker({ port: 0, logger: capture.log });
    expect(running.managementUrl).to.equal(undefined);
    expect(capture.entries.some((e) => e.msg === 'Server startup complete')).to.equal(true);
    await running.close();
  });

  it('applies loopback_users to HTTP logins: guest from another address gets "User can only log in via localhost"', async function () {
    const external = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal);
    if (!external) this.skip();
    const running = await startBroker({ port: 0, managementPort: 0, host: '0.0.0.0', logLevel: 'silent' });
    try {
      const port = new URL(running.managementUrl!).port;
      const res = await call(`http://${external!.address}:${port}`, 'GET', '/api/overview');
      expect([res.status, res.text]).to.deep.equal([401, '{"error":"not_authorised","reason":"User can only log in via localhost"}']);
      expect((await call(`http://127.0.0.1:${port}`, 'GET', '/api/overview')).status).to.equal(200);
    } finally {
      await running.close();
    }
  });
});
