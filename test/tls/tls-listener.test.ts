import { expect } from 'chai';
import { copyFileSync } from 'node:fs';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import amqp from 'amqplib';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { TlsConfig } from '../../src/tls/tls-options.js';
import { captureLog } from '../support/capture-log.js';
import { TestPki, type Issued } from '../support/tls-certs.js';

/** What a client sees of an AMQPS listener: amqplib over TLS, or the raw handshake. */
describe('TLS: the AMQPS listener', function () {
  this.timeout(60_000);
  let pki: TestPki;
  let server: Issued;
  let client: Issued;
  let untrusted: Issued;

  before(() => {
    pki = new TestPki();
    server = pki.server();
    client = pki.client('client', '/C=GB/O=Warren Tests/CN=app-client');
    untrusted = pki.client('untrusted', '/CN=app-client', pki.otherCa);
  });
  after(() => pki.dispose());

  async function withBroker(tls: Partial<TlsConfig>, body: (b: RunningBroker) => Promise<void>, users?: Array<{ username: string; password: string }>): Promise<void> {
    const b = await startBroker({
      port: 0,
      logLevel: 'silent',
      tls: { port: 0, certfile: server.cert, keyfile: server.key, cacertfile: pki.ca.cert, ...tls },
      ...(users ? { users: [{ username: 'guest', password: 'guest' }, ...users] } : {}),
    });
    try {
      await body(b);
    } finally {
      await b.close();
    }
  }

  const amqpsUrl = (b: RunningBroker, auth = 'guest:guest@') => `amqps://${auth}localhost:${b.tlsPort}`;
  const trustOnly = (): { ca: Buffer[] } => ({ ca: [pki.ca.certPem] });
  const withCert = (c: Issued) => ({ ca: [pki.ca.certPem], cert: c.certPem, key: c.keyPem });

  /** The connection.start a TLS client receives, as raw bytes. */
  function connectionStart(b: RunningBroker, c?: Issued): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const s: TLSSocket = tlsConnect({ host: '127.0.0.1', port: b.tlsPort!, servername: 'localhost', ca: [pki.ca.certPem], ...(c ? { cert: c.certPem, key: c.keyPem } : {}) }, () => {
        s.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
      });
      const chunks: Buffer[] = [];
      s.on('data', (d: Buffer) => {
        chunks.push(d);
        const all = Buffer.concat(chunks);
        if (all.length >= 7 && all.length >= 8 + all.readUInt32BE(3)) {
          s.destroy();
          resolve(all);
        }
      });
      s.on('error', reject);
    });
  }

  it('carries AMQP over TLS: publish and get through amqps://, with the plain port unchanged', async () => {
    await withBroker({ verify: 'verify_none' }, async (b) => {
      const conn = await amqp.connect(amqpsUrl(b), { ca: [pki.ca.certPem], servername: 'localhost' });
      const ch = await conn.createChannel();
      const { queue } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(queue, Buffer.from('over tls'));
      let got: amqp.GetMessage | false = false;
      while (!got) got = await ch.get(queue, { noAck: true });
      expect(got.content.toString()).to.equal('over tls');
      await conn.close();
      const plain = await amqp.connect(b.url);
      await plain.close();
      expect(b.tlsPort).to.be.a('number').and.not.equal(b.port);
    });
  });

  it('carries large bodies over TLS intact (the writer hands the TLS socket views of them, corked)', async () => {
    await withBroker({ verify: 'verify_none' }, async (b) => {
      const conn = await amqp.connect(amqpsUrl(b), { ca: [pki.ca.certPem], servername: 'localhost' });
      try {
        const ch = await conn.createChannel();
        const { queue } = await ch.assertQueue('', { exclusive: true });
        const bodies = [300 * 1024 + 3, 16385, 5, 131064, 1024 * 1024].map((n, k) => {
          const body = Buffer.allocUnsafe(n);
          for (let i = 0; i < n; i++) body[i] = (i * 7 + k + (i >> 10)) & 0xff;
          return body;
        });
        for (const body of bodies) ch.sendToQueue(queue, body);
        const got: Buffer[] = [];
        await new Promise<void>((resolve) => void ch.consume(queue, (m) => {
          if (m) got.push(m.content);
          if (got.length === bodies.length) resolve();
        }, { noAck: true }));
        expect(got.map((g, i) => g.equals(bodies[i]!))).to.deep.equal(bodies.map(() => true));
      } finally {
        await conn.close();
      }
    });
  });

  it('offers EXTERNAL over TLS only', async () => {
    await withBroker({ verify: 'verify_none' }, async (b) => {
      expect((await connectionStart(b)).toString('latin1')).to.include('PLAIN AMQPLAIN EXTERNAL');
      const plain = await new Promise<Buffer>((resolve, reject) => {
        import('node:net').then(({ connect }) => {
          const s = connect(b.port, '127.0.0.1', () => s.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1')));
          s.once('data', (d: Buffer) => {
            s.destroy();
            resolve(d);
          });
          s.on('error', reject);
        }, reject);
      });
      expect(plain.toString('latin1')).to.include('PLAIN AMQPLAIN').and.not.include('EXTERNAL');
    });
  });

  describe('verify_peer with fail_if_no_peer_cert', () => {
    const tls: Partial<TlsConfig> = { verify: 'verify_peer', fail_if_no_peer_cert: true };

    it('accepts a client certificate the CA signed', async () => {
      await withBroker(tls, async (b) => {
        const conn = await amqp.connect(amqpsUrl(b), { ...withCert(client), servername: 'localhost' });
        await conn.close();
      });
    });

    it('refuses a client without a certificate, and one signed by another CA, and goes on serving', async () => {
      const log = captureLog('warn');
      const b = await startBroker({ port: 0, logger: log.log, tls: { port: 0, certfile: server.cert, keyfile: server.key, cacertfile: pki.ca.cert, ...tls } });
      try {
        await expectRefused(amqp.connect(amqpsUrl(b), { ...trustOnly(), servername: 'localhost' }));
        await expectRefused(amqp.connect(amqpsUrl(b), { ...withCert(untrusted), servername: 'localhost' }));
        expect(b.broker.connections.size).to.equal(0);
        const entry = await log.waitFor(/^TLS client refused/);
        expect(String(entry['reason'])).to.match(/certificate/i);
        const ok = await amqp.connect(amqpsUrl(b), { ...withCert(client), servername: 'localhost' });
        await ok.close();
      } finally {
        await b.close();
      }
    });
  });

  describe('verify_peer without fail_if_no_peer_cert', () => {
    const tls: Partial<TlsConfig> = { verify: 'verify_peer', fail_if_no_peer_cert: false };

    it('lets a client without a certificate in, but not one with an untrusted certificate', async () => {
      await withBroker(tls, async (b) => {
        const conn = await amqp.connect(amqpsUrl(b), { ...trustOnly(), servername: 'localhost' });
        await conn.close();
        await expectRefused(amqp.connect(amqpsUrl(b), { ...withCert(untrusted), servername: 'localhost' }));
      });
    });
  });

  describe('EXTERNAL: the client certificate names the user', () => {
    const dnUser = 'CN=app-client,O=Warren Tests,C=GB';

    it("logs in as the certificate's distinguished name, in RabbitMQ's order", async () => {
      await withBroker({ verify: 'verify_peer', fail_if_no_peer_cert: true }, async (b) => {
        const conn = await amqp.connect(amqpsUrl(b, ''), { ...withCert(client), servername: 'localhost', credentials: amqp.credentials.external() });
        const ch = await conn.createChannel();
        await ch.checkQueue((await ch.assertQueue('', { exclusive: true })).queue);
        const [c] = [...b.broker.connections];
        expect(c!.username).to.equal(dnUser);
        await conn.close();
      }, [{ username: dnUser, password: '' }]);
    });

    it('logs in as the CN with ssl_cert_login_from common_name', async () => {
      await withBroker({ verify: 'verify_peer', fail_if_no_peer_cert: true, ssl_cert_login_from: 'common_name' }, async (b) => {
        const conn = await amqp.connect(amqpsUrl(b, ''), { ...withCert(client), servername: 'localhost', credentials: amqp.credentials.external() });
        expect([...b.broker.connections][0]!.username).to.equal('app-client');
        await conn.close();
      }, [{ username: 'app-client', password: 'unused' }]);
    });

    it('refuses a certificate naming no known user, a client without a certificate, and a listener that does not verify peers', async () => {
      const refused = /ACCESS_REFUSED - Login was refused using authentication mechanism EXTERNAL/;
      await withBroker({ verify: 'verify_peer', fail_if_no_peer_cert: false }, async (b) => {
        await expectRefused(amqp.connect(amqpsUrl(b, ''), { ...withCert(client), servername: 'localhost', credentials: amqp.credentials.external() }), refused);
        await expectRefused(amqp.connect(amqpsUrl(b, ''), { ...trustOnly(), servername: 'localhost', credentials: amqp.credentials.external() }), refused);
      });
      await withBroker({ verify: 'verify_none' }, async (b) => {
        await expectRefused(amqp.connect(amqpsUrl(b, ''), { ...withCert(client), servername: 'localhost', credentials: amqp.credentials.external() }), refused);
      }, [{ username: dnUser, password: '' }]);
    });

    it('is not a mechanism of the plain listener', async () => {
      await withBroker({ verify: 'verify_none' }, async (b) => {
        await expectRefused(amqp.connect(`amqp://localhost:${b.port}`, { credentials: amqp.credentials.external() }));
      });
    });
  });

  it('takes up a renewed certificate on reloadTls() without dropping open connections', async () => {
    const renewed = pki.server('renewed', '/CN=localhost/O=Renewed');
    const live = pki.server('live');
    await withBroker({ verify: 'verify_none', certfile: live.cert, keyfile: live.key }, async (b) => {
      const open = await amqp.connect(amqpsUrl(b), { ...trustOnly(), servername: 'localhost' });
      const ch = await open.createChannel();
      expect(await peerSubject(b)).to.not.include('Renewed');
      copyFileSync(renewed.cert, live.cert);
      copyFileSync(renewed.key, live.key);
      b.broker.reloadTls();
      expect(await peerSubject(b)).to.include('O=Renewed');
      await ch.assertQueue('', { exclusive: true }); // the connection opened before still works
      await open.close();
    });
  });

  it('keeps the old certificate when the reloaded files are bad', async () => {
    const live = pki.server('live2');
    await withBroker({ verify: 'verify_none', certfile: live.cert, keyfile: live.key }, async (b) => {
      copyFileSync(client.key, live.cert); // a key where the certificate should be
      expect(() => b.broker.reloadTls()).to.throw();
      expect(await peerSubject(b)).to.include('CN=localhost');
    });
  });

  it('refuses to start with a TLS setting that cannot work, saying which', async () => {
    for (const [tls, text] of [
      [{ certfile: server.cert }, /certfile and keyfile are required/],
      [{ certfile: server.cert, keyfile: server.key, verify: 'verify_peer' }, /verify_peer needs cacertfile/],
      [{ certfile: server.cert, keyfile: server.key, verify: 'sometimes' }, /verify must be verify_peer or verify_none/],
      [{ certfile: server.cert, keyfile: server.key, versions: ['sslv3'] }, /unsupported TLS version 'sslv3'/],
    ] as const) {
      const started = await startBroker({ port: 0, logLevel: 'silent', tls: tls as TlsConfig }).then(
        (b) => b.close().then(() => 'started'),
        (err: Error) => err.message,
      );
      expect(started).to.match(text);
    }
  });

  async function peerSubject(b: RunningBroker): Promise<string> {
    return new Promise((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: b.tlsPort!, servername: 'localhost', ca: [pki.ca.certPem] }, () => {
        const cert = s.getPeerX509Certificate();
        s.destroy();
        resolve(cert?.subject.replaceAll('\n', ',') ?? '');
      });
      s.on('error', reject);
    });
  }
});

async function expectRefused(p: Promise<amqp.ChannelModel>, text?: RegExp): Promise<void> {
  let conn: amqp.ChannelModel | undefined;
  try {
    conn = await p;
  } catch (err) {
    if (text) expect(String((err as Error).message)).to.match(text);
    return;
  }
  await conn.close();
  expect.fail('the connection was accepted');
}
