import { expect } from 'chai';
import amqp, { type ChannelModel } from 'amqplib';
import { startBroker } from '../../src/broker.js';
import { waitUntil } from '../support/broker.js';
import { call, useManagedBroker } from '../support/management.js';
import { TestPki } from '../support/tls-certs.js';
import { nodeName } from '../../src/node-name.js';

const NODE = nodeName();

/** /api/connections, /api/channels, /api/consumers: live values of amqplib connections; closing one. */
describe('management API: connections, channels and consumers', () => {
  const b = useManagedBroker({
    vhosts: ['/', 'other'],
    users: [
      { username: 'guest', password: 'guest', tags: ['administrator'] },
      { username: 'app', password: 'p', tags: ['management'] },
    ],
  });
  const opened: ChannelModel[] = [];
  after(async () => {
    for (const c of opened) await c.close().catch(() => {});
  });

  async function connect(name: string, user = 'guest', password = 'guest', vhost = '') {
    const url = new URL(b.url);
    const conn = await amqp.connect(`amqp://${user}:${password}@${url.host}/${encodeURIComponent(vhost)}`, { clientProperties: { connection_name: name } });
    opened.push(conn);
    return conn;
  }
  const byName = async (name: string) => ((await b.api('GET', '/api/connections')).json as Array<Record<string, any>>).find((c) => c.user_provided_name === name)!;

  it('lists a connection with its peer, user, vhost, negotiated limits and client properties', async () => {
    const conn = await connect('svc-a');
    await conn.createChannel();
    const c = await byName('svc-a');
    const local = (conn.connection as unknown as { stream: { localPort: number } }).stream.localPort;
    expect(c).to.deep.include({
      name: `127.0.0.1:${local} -> 127.0.0.1:${b.running.port}`, user: 'guest', vhost: '/', protocol: 'AMQP 0-9-1', auth_mechanism: 'PLAIN',
      peer_host: '127.0.0.1', peer_port: local, host: '127.0.0.1', port: b.running.port, channels: 1, state: 'running', type: 'network',
      ssl: false, frame_max: 131072, channel_max: 2047, timeout: 60, node: NODE, user_provided_name: 'svc-a',
    });
    expect(c.client_properties).to.deep.include({ connection_name: 'svc-a', product: 'amqplib' });
    expect(c.recv_oct).to.be.greaterThan(0);
    expect(c.send_oct).to.be.greaterThan(0);
    const one = (await b.api('GET', `/api/connections/${encodeURIComponent(c.name)}`)).json;
    expect([one.name, one.ssl_protocol, one.peer_cert_subject]).to.deep.equal([c.name, '', '']);
  });

  it('shows each channel\'s prefetch, confirm mode and unacknowledged messages, and its consumers', async () => {
    const conn = await connect('svc-b');
    const ch = await conn.createChannel();
    await ch.assertQueue('c.q');
    await ch.prefetch(5);
    for (let i = 0; i < 3; i++) ch.sendToQueue('c.q', Buffer.from(`m${i}`));
    let got = 0;
    const delivered = new Promise<void>((resolve) => void ch.consume('c.q', () => { if (++got === 3) resolve(); }, { consumerTag: 'c-tag', arguments: { 'x-priority': 7 } }));
    await delivered;
    await conn.createConfirmChannel();
    const c = await byName('svc-b');
    const channels = (await b.api('GET', `/api/connections/${encodeURIComponent(c.name)}/channels`)).json as Array<Record<string, any>>;
    expect(channels.map((x) => [x.number, x.prefetch_count, x.consumer_count, x.messages_unacknowledged, x.confirm])).to.deep.equal([
      [1, 5, 1, 3, false], [2, 0, 0, 0, true],
    ]);
    expect(channels[0]).to.deep.include({ name: `${c.name} (1)`, user: 'guest', vhost: '/', state: 'running', connection_details: { name: c.name, peer_host: '127.0.0.1', peer_port: c.peer_port } });
    const detail = (await b.api('GET', `/api/channels/${encodeURIComponent(`${c.name} (1)`)}`)).json;
    expect(detail.consumer_details.map((x: { consumer_tag: string }) => x.consumer_tag)).to.deep.equal(['c-tag']);
    const consumers = (await b.api('GET', '/api/consumers/%2F')).json as Array<Record<string, any>>;
    const mine = consumers.find((x) => x.consumer_tag === 'c-tag')!;
    expect(mine).to.deep.include({ ack_required: true, active: true, activity_status: 'up', exclusive: false, prefetch_count: 5, arguments: { 'x-priority': 7 }, queue: { name: 'c.q', vhost: '/' } });
    expect(mine.channel_details).to.deep.include({ connection_name: c.name, name: `${c.name} (1)`, number: 1, user: 'guest' });
    const q = (await b.api('GET', '/api/queues/%2F/c.q')).json;
    expect([q.consumers, q.messages_unacknowledged, q.consumer_details[0].consumer_tag]).to.deep.equal([1, 3, 'c-tag']);
  });

  it('shows a user without the monitoring tag its own connections only; others\' are refused', async () => {
    await connect('svc-app', 'app', 'p');
    const app = { user: 'app', password: 'p' };
    const seen = (await b.api('GET', '/api/connections', app)).json as Array<{ user: string }>;
    expect(seen.map((c) => c.user)).to.deep.equal(['app']);
    const guests = await byName('svc-a');
    expect((await b.api('GET', `/api/connections/${encodeURIComponent(guests.name)}`, app)).text).to.equal('{"error":"not_authorised","reason":"User not authorised to access object"}');
    expect((await b.api('GET', '/api/channels', app)).json.every((c: { user: string }) => c.user === 'app')).to.equal(true);
  });

  it('lists a vhost\'s connections and channels', async () => {
    await connect('svc-other', 'guest', 'guest', 'other');
    const inOther = (await b.api('GET', '/api/vhosts/other/connections')).json as Array<{ user_provided_name: string }>;
    expect(inOther.map((c) => c.user_provided_name)).to.deep.equal(['svc-other']);
    expect((await b.api('GET', '/api/vhosts/other/channels')).json).to.deep.equal([]);
    expect((await b.api('GET', '/api/vhosts/nope/connections')).status).to.equal(404);
  });

  it('closes a connection on DELETE: the client sees 320 CONNECTION_FORCED with the X-Reason text', async () => {
    const conn = await connect('svc-close');
    const closed = new Promise<string>((resolve) => conn.on('close', (err: Error) => resolve(err.message)));
    conn.on('error', () => {});
    const c = await byName('svc-close');
    const res = await b.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`, { headers: { 'x-reason': 'maintenance window' } });
    expect(res.status).to.equal(204);
    expect(await closed).to.equal('Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - maintenance window"');
    // Gone once the broker has the client's close-ok.
    await waitUntil(() => ![...b.running.broker.connections].some((x) => x.name === c.name), 'the connection to go');
    expect((await b.api('GET', `/api/connections/${encodeURIComponent(c.name)}`)).status).to.equal(404);
  });

  it('says "Closed via management plugin" without X-Reason; a non-administrator may close only its own', async () => {
    const conn = await connect('svc-close2');
    const closed = new Promise<string>((resolve) => conn.on('close', (err: Error) => resolve(err.message)));
    conn.on('error', () => {});
    const c = await byName('svc-close2');
    expect((await b.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`, { user: 'app', password: 'p' })).status).to.equal(401);
    expect((await b.api('DELETE', `/api/connections/${encodeURIComponent(c.name)}`)).status).to.equal(204);
    expect(await closed).to.equal('Connection closed: 320 (CONNECTION-FORCED) with message "CONNECTION_FORCED - Closed via management plugin"');
    expect((await b.api('DELETE', '/api/connections/does-not-exist')).status).to.equal(404);
  });
});

describe('management API: a TLS connection', function () {
  this.timeout(60_000);
  let pki: TestPki;
  before(() => {
    pki = new TestPki();
  });
  after(() => pki.dispose());

  it('shows ssl, the protocol and cipher suite as Erlang\'s ssl names them, and the client certificate', async () => {
    const server = pki.server();
    const client = pki.client('mgmt-client', '/C=GB/O=Warren Tests/CN=app-client');
    const running = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent', tls: { port: 0, certfile: server.cert, keyfile: server.key, cacertfile: pki.ca.cert, verify: 'verify_peer' } });
    try {
      const conn = await amqp.connect(`amqps://guest:guest@localhost:${running.tlsPort}`, { ca: [pki.ca.certPem], cert: client.certPem, key: client.keyPem, servername: 'localhost' });
      const [c] = (await call(running.managementUrl!, 'GET', '/api/connections')).json;
      expect(c).to.deep.include({
        ssl: true, ssl_protocol: 'tlsv1.3', ssl_key_exchange: 'any', ssl_cipher: 'aes_256_gcm', ssl_hash: 'aead', port: running.tlsPort,
        peer_cert_subject: 'CN=app-client,O=Warren Tests,C=GB', peer_cert_issuer: 'CN=Warren Test CA,O=Warren Tests,C=GB',
      });
      expect(c.peer_cert_validity).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ - \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      await conn.close();
    } finally {
      await running.close();
    }
  });
});
