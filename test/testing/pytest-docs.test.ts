import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const PYTHON = '/usr/bin/python3';
const REPO = resolve('.');

/** Whether Debian's python3-pytest, python3-requests and python3-pika are installed (.ci/run installs them). */
function havePytest(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import pytest, requests, pika'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The ```python block of docs/testing.md whose first line is `first`. */
function pythonBlock(doc: string, first: string): string {
  const block = [...doc.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.startsWith(first));
  if (block === undefined) throw new Error(`docs/testing.md has no python block starting with ${JSON.stringify(first)}`);
  return block;
}

/**
 * The application the docs leave to the reader ("your app"): a worker that consumes `jobs` and
 * reconnects on its own, and a publisher in confirm mode that retries a nacked order.
 */
const APP_FIXTURES = `
import threading

@pytest.fixture
def start_worker(warren):
    stop = threading.Event()
    threads = []

    def start(connection_name):
        def run():
            while not stop.is_set():
                try:
                    params = pika.URLParameters(warren["amqp"])
                    params.client_properties = {"connection_name": connection_name}
                    conn = pika.BlockingConnection(params)
                    ch = conn.channel()
                    ch.queue_declare(queue="jobs")
                    ch.basic_qos(prefetch_count=1)
                    for method, _, _ in ch.consume("jobs", inactivity_timeout=0.05):
                        if stop.is_set():
                            break
                        if method is not None:
                            ch.basic_ack(method.delivery_tag)
                    conn.close()
                except (pika.exceptions.AMQPError, OSError):
                    stop.wait(0.05)  # the worker's reconnect back-off
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)

    yield start
    stop.set()
    for thread in threads:
        thread.join(5)

@pytest.fixture
def publish_order(warren):
    conn = pika.BlockingConnection(pika.URLParameters(warren["amqp"]))
    ch = conn.channel()
    ch.queue_declare(queue="orders")
    ch.confirm_delivery()

    def publish(order):
        for _ in range(5):
            try:
                ch.basic_publish(exchange="", routing_key="orders", body=order.encode())
                return
            except pika.exceptions.NackError:
                continue
        raise AssertionError("every attempt was nacked")

    yield publish
    conn.close()
`;

/**
 * docs/testing.md's pytest examples, run as written: its conftest.py (spawning `warren
 * --ready-json`), the reset fixture, test_greetings.py and test_worker.py (waits and faults over
 * HTTP), with only the application fixtures the docs leave to the reader added.
 */
describe('test toolkit: the pytest examples of docs/testing.md', () => {
  it('pass under pytest against the warren command', async function () {
    if (!havePytest()) this.skip();
    this.timeout(60_000);
    const doc = readFileSync('docs/testing.md', 'utf8');
    const dir = makeTmpDir('warren-pytest-');
    try {
      const conftest = [
        pythonBlock(doc, '# conftest.py'),
        'import pika, requests\n',
        pythonBlock(doc, '# pytest: a clean broker for each test'),
        APP_FIXTURES,
      ].join('\n');
      writeFileSync(join(dir, 'conftest.py'), conftest);
      writeFileSync(join(dir, 'test_greetings.py'), pythonBlock(doc, '# test_greetings.py'));
      writeFileSync(join(dir, 'test_worker.py'), pythonBlock(doc, '# test_worker.py'));
      // `warren` on PATH, as bin/warren.js runs it (the launcher, then the broker), from the sources.
      const bin = join(dir, 'bin');
      execFileSync('mkdir', [bin]);
      writeFileSync(join(bin, 'warren'), `#!/bin/sh\ncd '${REPO}' && exec '${process.execPath}' --import tsx test/fixtures/launch.ts "$@"\n`);
      chmodSync(join(bin, 'warren'), 0o755);
      const out = await new Promise<string>((done, fail) =>
        execFile(PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', dir], {
          cwd: dir, env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
        }, (err, stdout, stderr) => (err ? fail(new Error(`${stdout}\n${stderr}`)) : done(stdout))),
      );
      expect(out).to.match(/\b3 passed\b/);
    } finally {
      removeDir(dir);
    }
  });
});
