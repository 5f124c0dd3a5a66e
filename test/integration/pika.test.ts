import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import { useBroker } from '../support/broker.js';

const PYTHON = '/usr/bin/python3';

/** Whether Debian's python3-pika is installed (.ci/run installs it; a dev machine may lack it). */
function havePika(): boolean {
  try {
    execFileSync(PYTHON, ['-c', 'import pika'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** pika, a client in another language, drives Warren end to end (test/fixtures/pika_smoke.py). */
describe('pika (Python)', () => {
  const broker = useBroker();

  it('declares, publishes with confirms and mandatory, consumes with qos and acks, and sees RabbitMQ errors', async function () {
    if (!havePika()) this.skip();
    this.timeout(20000);
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON, ['test/fixtures/pika_smoke.py', broker.url], (err, out, errOut) => (err ? reject(new Error(errOut || err.message)) : resolve(out))),
    );
    const result = JSON.parse(stdout.trim().split('\n').pop() as string);
    expect(result).to.deep.equal({
      server_named: true,
      got: [['one', { n: 3 }, false], ['two', { n: 3 }, false], ['three', { n: 5 }, false]],
      unroutable: 'returned',
      passive: [404, "NOT_FOUND - no queue 'no-such-queue' in vhost '/'"],
    });
  });
});
