import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { connect as tlsConnect } from 'node:tls';
import { parseCli, readyLine } from '../../src/main.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { channel, connect } from '../support/amqp.js';
import { TestPki } from '../support/tls-certs.js';

/**
 * `warren --port 0 --ready-json` (docs/testing.md, "Other languages"): once every listener is
 * up the command prints one JSON line with their URLs on stdout — and nothing else there: the
 * logs go to stderr — so a harness in any language can spawn it and read one line.
 */
describe('test toolkit: --ready-json', () => {
  it('parses the flag; the line has a URL per listener, a wildcard address given as loopback', () => {
    expect(parseCli(['--ready-json'], {})).to.include({ readyJson: true });
    const urls = { managementUrl: 'http://localhost:15672', prometheusUrl: 'http://localhost:15692' };
    expect(readyLine({ config: { host: '0.0.0.0' } as never, tlsPort: undefined, ...urls }, 5672)).to.deep.equal({
      amqp: 'amqp://127.0.0.1:5672', management: 'http://127.0.0.1:15672', prometheus: 'http://127.0.0.1:15692',
    });
    expect(parseCli([], {})).not.to.have.property('readyJson');
    const line = (host: string, tlsPort?: number) => readyLine({ config: { host } as never, tlsPort }, 5672);
    expect(line('0.0.0.0')).to.deep.equal({ amqp: 'amqp://127.0.0.1:5672' });
    expect(line('::')).to.deep.equal({ amqp: 'amqp://[::1]:5672' });
    expect(line('::1', 5671)).to.deep.equal({ amqp: 'amqp://[::1]:5672', amqps: 'amqps://[::1]:5671' });
    expect(line('localhost')).to.deep.equal({ amqp: 'amqp://localhost:5672' });
  });

  it('the warren command prints one JSON line once its listeners are up; a client connects to the URLs', async function () {
    this.timeout(30_000);
    const dir = makeTmpDir('warren-ready-');
    const pki = new TestPki();
    const server = pki.server();
    // As bin/warren.js runs it (the launcher, then the broker in a second Node), from the sources.
    const child = spawn(process.execPath, [
      '--import', 'tsx', 'test/fixtures/launch.ts', '--port', '0', '--data-dir', dir, '--ready-json',
      '--tls-port', '0', '--tls-cert', server.cert, '--tls-key', server.key, '--management-port', '0', '--prometheus-port', '0',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const lines: string[] = [];
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on('line', (line) => {
          lines.push(line);
          if (lines.length === 1) resolve(line);
        });
        void exited.then((code) => reject(new Error(`warren exited with ${code}: ${stderr}`)));
      });
      const ready = JSON.parse(first) as { amqp: string; amqps: string; management: string; prometheus: string };
      expect(Object.keys(ready)).to.deep.equal(['amqp', 'amqps', 'management', 'prometheus']);
      expect(ready.amqp).to.match(/^amqp:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.amqps).to.match(/^amqps:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.management).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(ready.prometheus).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);

      // Every listener is up when the line is out: both take connections at once.
      const conn = await connect(ready.amqp); // clients default to guest/guest and vhost '/'
      const ch = await channel(conn);
      expect(await ch.assertQueue('harness')).to.include({ queue: 'harness' });
      await conn.close();
      const tlsPort = Number(new URL(ready.amqps).port);
      await new Promise<void>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: tlsPort, ca: pki.ca.certPem, servername: 'localhost' }, () => {
          socket.end();
          resolve();
        });
        socket.once('error', reject);
      });
      const auth = { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` };
      const overview = await fetch(`${ready.management}/api/overview`, { headers: auth });
      expect(overview.status).to.equal(200);
      expect(((await overview.json()) as { product_name: string }).product_name).to.equal('RabbitMQ');
      expect((await fetch(`${ready.prometheus}/metrics`)).status).to.equal(200);
    } finally {
      child.kill('SIGTERM');
      expect(await exited).to.equal(0);
      pki.dispose();
      removeDir(dir);
    }
    // stdout held the ready line only; the logs went to stderr.
    expect(lines).to.have.length(1);
    expect(stderr).to.include('warren listening');
  });
});
