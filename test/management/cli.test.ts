import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { debianRabbitmqadminPath, debianRabbitmqadminUnavailable, PYTHON, SERVED_RABBITMQADMIN } from '../support/rabbitmqadmin.js';
import { useManagedBroker } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/** sha256 of what RabbitMQ 3.10.8 serves at /cli/rabbitmqadmin (recorded from the reference with curl). */
const RABBITMQ_3_10_8_SHA256 = '82c6f51ef1e665d4c434bca638e26638512a6b6dac6d2159a3b1f2bf4fda4906';

/**
 * The management port's /cli/, where RabbitMQ's documentation sends users to download
 * rabbitmqadmin: the same file as RabbitMQ 3.10.8 serves, and the same redirects and method
 * answers as its static handler (recorded from the reference).
 */
describe('management port: /cli/rabbitmqadmin', function () {
  this.timeout(30000);
  const b = useManagedBroker();
  const get = (path: string, init: RequestInit = {}) => fetch(b.base + path, { redirect: 'manual', ...init });

  it('serves the rabbitmqadmin RabbitMQ 3.10.8 serves, as a download', async () => {
    const res = await get('/cli/rabbitmqadmin');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('application/octet-stream');
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.headers.get('content-length')).to.equal(String(body.length));
    expect(body.length).to.equal(42416);
    expect(createHash('sha256').update(body).digest('hex')).to.equal(RABBITMQ_3_10_8_SHA256);
    expect(body.subarray(0, 23).toString()).to.equal('#!/usr/bin/env python3\n');
  });

  it('is Debian\'s rabbitmqadmin 3.10.8 but for the interpreter line', async function () {
    const why = debianRabbitmqadminUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
    const debian = readFileSync(debianRabbitmqadminPath());
    const served = Buffer.from(await (await get('/cli/rabbitmqadmin')).arrayBuffer());
    const afterFirstLine = (b: Buffer) => b.subarray(b.indexOf(10) + 1);
    expect(afterFirstLine(served).equals(afterFirstLine(debian))).to.equal(true);
    // The copy the management API tests run (test/support/rabbitmqadmin.ts) is the one served.
    expect(readFileSync(SERVED_RABBITMQADMIN).equals(served)).to.equal(true);
  });

  it('a copy downloaded from the broker drives it', async function () {
    if (!existsSync(PYTHON)) {
      console.log(`      skipped: ${PYTHON} is missing`);
      this.skip();
    }
    const dir = makeTmpDir('warren-cli-');
    try {
      const script = join(dir, 'rabbitmqadmin');
      writeFileSync(script, Buffer.from(await (await get('/cli/rabbitmqadmin')).arrayBuffer()), { mode: 0o755 });
      const port = new URL(b.base).port;
      const run = (...args: string[]) =>
        new Promise<string>((resolve, reject) => {
          execFile(PYTHON, [script, '-H', '127.0.0.1', '-P', port, ...args], { timeout: 20000 }, (err, stdout, stderr) => (err ? reject(new Error(`${args.join(' ')}: ${stderr}`)) : resolve(stdout)));
        });
      expect((await run('--version')).trim()).to.equal('rabbitmqadmin 3.10.8');
      expect(await run('declare', 'queue', 'name=downloaded', 'durable=true')).to.equal('queue declared\n');
      expect(await run('publish', 'routing_key=downloaded', 'payload=from the download')).to.equal('Message published\n');
      expect(JSON.parse(await run('-f', 'raw_json', 'list', 'queues', 'name', 'messages'))).to.deep.equal([{ messages: 1, name: 'downloaded' }]);
      const [got] = JSON.parse(await run('-f', 'raw_json', 'get', 'queue=downloaded'));
      expect(got.payload).to.equal('from the download');
    } finally {
      removeDir(dir);
    }
  });

  it('/cli and /cli/ redirect to /cli/index.html, whose page links the download', async () => {
    for (const path of ['/cli', '/cli/']) {
      for (const method of ['GET', 'PUT']) {
        const res = await get(path, { method });
        expect([path, method, res.status, res.headers.get('location')]).to.deep.equal([path, method, 301, '/cli/index.html']);
      }
    }
    const page = await get('/cli/index.html');
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).to.contain('<title>rabbitmqadmin</title>');
    expect(html).to.contain('href="rabbitmqadmin"');
  });

  it('answers HEAD, OPTIONS and other methods as RabbitMQ\'s static files do (the UI\'s too)', async () => {
    for (const path of ['/cli/rabbitmqadmin', '/cli/index.html', '/', '/index.html']) {
      const head = await get(path, { method: 'HEAD' });
      expect(head.status).to.equal(200);
      expect(Number(head.headers.get('content-length'))).to.be.greaterThan(0);
      expect(await head.text()).to.equal('');
      const options = await get(path, { method: 'OPTIONS' });
      expect([path, options.status, options.headers.get('allow')]).to.deep.equal([path, 200, 'HEAD, GET, OPTIONS']);
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const res = await get(path, { method });
        expect([path, method, res.status, res.headers.get('allow'), await res.text()]).to.deep.equal([path, method, 405, 'HEAD, GET, OPTIONS', '']);
      }
    }
  });

  it('skips empty segments as cowboy does; another name under /cli is 404', async () => {
    for (const path of ['/cli//rabbitmqadmin', '/cli/rabbitmqadmin/']) {
      const res = await get(path);
      expect([path, res.status, res.headers.get('content-type')]).to.deep.equal([path, 200, 'application/octet-stream']);
      await res.arrayBuffer();
    }
    for (const path of ['/cli/nothing', '/cli/README.md']) {
      const res = await get(path);
      expect([path, res.status, await res.json()]).to.deep.equal([path, 404, { error: 'Object Not Found', reason: 'Not Found' }]);
    }
  });
});
