import { expect } from 'chai';
import { closeSync, openSync, readSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { BrokerProcess, runWarren } from '../support/broker-process.js';
import { publishDurable } from '../support/data-files.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * Issue 10, "Damaged files": LMDB keeps no checksums and trusts its file. A truncated data file
 * killed Warren with SIGBUS and a zeroed meta page with SIGSEGV before it logged a word (or, for
 * the newer meta page, silently reopened the commit before it). The broker now checks the file
 * before LMDB maps it, and refuses it with a clear message and exit code 1.
 */
describe('damaged data files: a broker refuses them instead of crashing', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-damaged-');
  const dataFile = (): string => join(dataDir.path, 'store', 'data.mdb');
  const startArgs = (): string[] => ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir.path];

  beforeEach(async () => {
    const broker = await BrokerProcess.start(dataDir.path);
    await publishDurable(broker.url, 'kept', Array.from({ length: 300 }, (_, i) => Buffer.alloc(8192, i)));
    expect(await broker.stop()).to.equal(0);
  });

  /** Zeroes the given pages (LMDB's page size is in meta page 0, at byte 48). */
  function zeroPages(...indexes: number[]): void {
    const fd = openSync(dataFile(), 'r+');
    const header = Buffer.alloc(52);
    readSync(fd, header, 0, 52, 0);
    const pageSize = header.readUInt32LE(48);
    for (const index of indexes) writeSync(fd, Buffer.alloc(pageSize), 0, pageSize, index * pageSize);
    closeSync(fd);
  }

  async function expectRefused(pattern: RegExp): Promise<void> {
    const run = await runWarren(startArgs());
    expect(run.signal, `killed by a signal; stderr: ${run.stderr}`).to.equal(null);
    expect(run.listened, 'the broker started').to.equal(false);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/warren: cannot start: store data file .*data\.mdb is damaged and was not opened/);
    expect(run.stderr).to.match(pattern);
  }

  it('a truncated data file (SIGBUS before)', async () => {
    truncateSync(dataFile(), Math.floor(statSync(dataFile()).size / 2));
    await expectRefused(/it was truncated/);
  });

  it('both meta pages zeroed (SIGSEGV before)', async () => {
    zeroPages(0, 1);
    await expectRefused(/meta page 0 is all zeros; meta page 1 is all zeros/);
  });

  it('meta page 0 zeroed (SIGSEGV before)', async () => {
    zeroPages(0);
    await expectRefused(/meta page 0 is all zeros/);
  });

  it('meta page 1 zeroed (before: LMDB silently fell back to the other, older commit)', async () => {
    zeroPages(1);
    await expectRefused(/meta page 1 is all zeros/);
  });

  it('starts as usual on the undamaged file', async () => {
    const run = await runWarren(startArgs());
    expect(run.listened, run.stderr).to.equal(true);
  });
});
