import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { copyFileSync } from 'node:fs';
import { request } from 'node:https';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { TestPki, type Issued } from '../support/tls-certs.js';

/** GET over HTTPS with node:https (fetch cannot present a client certificate); status, body and the server's subject. */
function get(url: string, opts: { ca: Buffer; cert?: Issued }): Promise<{ status: number; body: string; subject: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      ca: opts.ca,
      ...(opts.cert ? { cert: opts.cert.certPem, key: opts.cert.keyPem } : {}),
      headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` },
      agent: false,
    }, (res) => {
      const subject = (res.socket as import('node:tls').TLSSocket).getPeerX509Certificate()?.subject.replaceAll('\n', ',') ?? '';
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, subject }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('TLS: the management API over HTTPS (RabbitMQ\'s management.ssl listener)', function () {
  this.timeout(60_000);
  let pki: TestPki;
  let running: RunningBroker | undefined;
  before(() => (pki = new TestPki()));
  after(() => pki.dispose());
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it('serves the API over HTTPS beside (or instead of) plain HTTP, verifying client certificates as configured', async () => {
    const server = pki.server('mgmt-server');
    const client = pki.client('mgmt-client', '/CN=ops');
    const untrusted = pki.client('mgmt-untrusted', '/CN=ops', pki.otherCa);
    running = await startBroker({
      port: 0,
      logLevel: 'silent',
      managementTls: { port: 0, certfile: server.cert, keyfile: server.key, cacertfile: pki.ca.cert, verify: 'verify_peer', fail_if_no_peer_cert: true },
    });
    const base = running.broker.managementHttpsUrl!;
    expect(running.managementUrl).to.equal(undefined); // the plain listener is off in tests unless asked for
    const ok = await get(`${base}/api/aliveness-test/%2F`, { ca: pki.ca.certPem, cert: client });
    expect([ok.status, ok.body]).to.deep.equal([200, '{"status":"ok"}']);
    const ui = await get(`${base}/`, { ca: pki.ca.certPem, cert: client });
    expect(ui.body).to.include('<html');
    await get(`${base}/api/overview`, { ca: pki.ca.certPem }).then(
      () => expect.fail('a client without a certificate was served'),
      (err: Error) => expect(err.message).to.match(/certificate|socket hang up|ECONNRESET|alert/i),
    );
    await get(`${base}/api/overview`, { ca: pki.ca.certPem, cert: untrusted }).then(
      () => expect.fail('an untrusted client certificate was served'),
      (err: Error) => expect(err.message).to.match(/certificate|socket hang up|ECONNRESET|alert/i),
    );
    const listeners = (JSON.parse((await get(`${base}/api/overview`, { ca: pki.ca.certPem, cert: client })).body) as { listeners: Array<{ protocol: string }> }).listeners;
    expect(listeners.map((l) => l.protocol)).to.include('https');
  });

  it('reports the TLS listeners whose certificates expire within the time asked (certificate-expiration health check)', async () => {
    const server = pki.server('expiring');
    running = await startBroker({
      port: 0,
      logLevel: 'silent',
      tls: { port: 0, certfile: server.cert, keyfile: server.key, cacertfile: pki.ca.cert },
      managementTls: { port: 0, certfile: server.cert, keyfile: server.key },
    });
    const base = running.broker.managementHttpsUrl!;
    const check = async (path: string) => {
      const r = await get(`${base}/api/health/checks/certificate-expiration/${path}`, { ca: pki.ca.certPem });
      return { status: r.status, json: JSON.parse(r.body) as Record<string, unknown> };
    };
    // The test PKI's certificates are valid for two days.
    expect(await check('1/days')).to.deep.equal({ status: 200, json: { status: 'ok' } });
    const printed = (pem: Buffer) => {
      const d = new Date(new X509Certificate(pem).validTo);
      const two = (n: number) => String(n).padStart(2, '0');
      return `${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())} ${d.getUTCHours()}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
    };
    const expiring = await check('1/weeks');
    expect(expiring.status).to.equal(503);
    const { node } = JSON.parse((await get(`${base}/api/overview`, { ca: pki.ca.certPem })).body) as { node: string };
    expect(expiring.json).to.deep.equal({
      status: 'failed',
      reason: 'Certificates expiring',
      expired: [
        { node, protocol: 'https', interface: '127.0.0.1', port: Number(new URL(base).port), certfile: server.cert, cacertfile: null, certfile_expires_on: [printed(server.certPem)], cacertfile_expires_on: [] },
        { node, protocol: 'amqp/ssl', interface: '127.0.0.1', port: running.broker.tlsPort, certfile: server.cert, cacertfile: pki.ca.cert, certfile_expires_on: [printed(server.certPem)], cacertfile_expires_on: [printed(pki.ca.certPem)] },
      ],
    });
  });

  it('takes up a renewed certificate on reloadTls()', async () => {
    const live = pki.server('mgmt-live');
    const renewed = pki.server('mgmt-renewed', '/CN=localhost/O=Renewed');
    running = await startBroker({ port: 0, logLevel: 'silent', managementTls: { port: 0, certfile: live.cert, keyfile: live.key } });
    const base = running.broker.managementHttpsUrl!;
    expect((await get(`${base}/api/whoami`, { ca: pki.ca.certPem })).subject).to.not.include('Renewed');
    copyFileSync(renewed.cert, live.cert);
    copyFileSync(renewed.key, live.key);
    running.broker.reloadTls();
    const after = await get(`${base}/api/whoami`, { ca: pki.ca.certPem });
    expect([after.status, after.subject]).to.deep.equal([200, 'CN=localhost,O=Renewed']);
  });
});
