import { expect } from 'chai';
import { readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { startBroker } from '../../src/broker.js';
import { channel, connect } from '../support/amqp.js';
import { runWarren } from '../support/broker-process.js';
import { flipBitInEveryCopy, publishDurable } from '../support/data-files.js';
import { useTmpDir } from '../support/tmp-dir.js';

/** `warren check --data-dir D [--repair]` (issue 10): an offline check of a stopped broker's data. */
describe('warren check', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-check-');
  // The second over 4 KiB, so in a message record of its own; the third small, so inside its entry.
  const bodies = ['first', `second ${'FLIPPED-'.repeat(600)}`, `third ${'INLINED-'.repeat(40)}`];

  beforeEach(async () => {
    const broker = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    await publishDurable(broker.url, 'orders', bodies.map((b) => Buffer.from(b)));
    await broker.close();
  });

  const dataFile = (): string => join(dataDir.path, 'store', 'data.mdb');

  /** What a broker started on the data dir delivers from 'orders'. */
  async function delivered(): Promise<string[]> {
    const broker = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      const conn = await connect(broker.url);
      const ch = await channel(conn);
      const got: string[] = [];
      for (let m = await ch.get('orders', { noAck: true }); m; m = await ch.get('orders', { noAck: true })) got.push(m.content.toString());
      await conn.close();
      return got;
    } finally {
      await broker.close();
    }
  }

  it('says a sound data dir is sound (exit 0)', async () => {
    const run = await runWarren(['check', '--data-dir', dataDir.path]);
    expect(run.code, run.stdout + run.stderr).to.equal(0);
    expect(run.stdout).to.match(/every page in place/);
    expect(run.stdout).to.match(/records: 3 entries, 3 messages, every checksum and reference right/);
  });

  it('finds a flipped bit in a message record (exit 1), changes nothing without --repair, quarantines with it', async () => {
    expect(flipBitInEveryCopy(dataFile(), 'FLIPPED-FLIPPED-')).to.be.greaterThan(0);
    const data = readFileSync(dataFile());

    const check = await runWarren(['check', '--data-dir', dataDir.path]);
    expect(check.code, check.stdout + check.stderr).to.equal(1);
    expect(check.stdout).to.match(/message \d+ is damaged → quarantine/);
    expect(check.stdout).to.match(/entry queue 'orders' in vhost '\/' seq \d+ refers to damaged message \d+ → remove/);
    expect(check.stdout).to.match(/--repair` with the broker stopped/);
    expect(readFileSync(dataFile()).equals(data), 'the check wrote to the file').to.equal(true);

    const repair = await runWarren(['check', '--data-dir', dataDir.path, '--repair']);
    expect(repair.code, repair.stdout + repair.stderr).to.equal(1);
    expect(repair.stdout).to.match(/problem\(s\), repaired:/);
    const after = await runWarren(['check', '--data-dir', dataDir.path]);
    expect(after.code, after.stdout).to.equal(0);
    expect(after.stdout).to.match(/1 record\(s\) were already in the quarantine/);
    expect(after.stdout).to.match(/records: 2 entries, 2 messages/);

    expect(await delivered()).to.deep.equal([bodies[0], bodies[2]]);
  });

  it('finds a flipped bit in a small message inside its entry, and quarantines the entry with it', async () => {
    expect(flipBitInEveryCopy(dataFile(), 'INLINED-INLINED-')).to.be.greaterThan(0);
    const check = await runWarren(['check', '--data-dir', dataDir.path]);
    expect(check.code, check.stdout + check.stderr).to.equal(1);
    expect(check.stdout).to.match(/entry queue 'orders' in vhost '\/' seq 3 is damaged → quarantine/);
    const repair = await runWarren(['check', '--data-dir', dataDir.path, '--repair']);
    expect(repair.code, repair.stdout + repair.stderr).to.equal(1);
    const after = await runWarren(['check', '--data-dir', dataDir.path]);
    expect(after.code, after.stdout).to.equal(0);
    expect(after.stdout).to.match(/records: 2 entries, 2 messages/);
    expect(await delivered()).to.deep.equal([bodies[0], bodies[1]]);
  });

  it('reports a truncated file as damage --repair cannot fix (exit 2)', async () => {
    truncateSync(dataFile(), Math.floor(statSync(dataFile()).size / 2));
    for (const args of [[], ['--repair']]) {
      const run = await runWarren(['check', '--data-dir', dataDir.path, ...args]);
      expect(run.signal, run.stderr).to.equal(null);
      expect(run.code, run.stdout + run.stderr).to.equal(2);
      expect(run.stdout).to.match(/the data file is damaged \(\d+ problem\(s\)\); --repair cannot fix this/);
    }
  });

  it('says why it cannot run (exit 2)', async () => {
    const missing = await runWarren(['check', '--data-dir', join(dataDir.path, 'nothing-here')]);
    expect(missing.code).to.equal(2);
    expect(missing.stdout).to.match(/no store in .*nothing-here/);
    const bad = await runWarren(['check', '--bogus']);
    expect(bad.code).to.equal(2);
    expect(bad.stdout).to.match(/Unknown option '--bogus'/);
  });
});
