import { expect } from 'chai';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess, runWarren } from '../support/broker-process.js';
import { publishDurable } from '../support/data-files.js';

/**
 * Issue 10, "Damaged files": LMDB keeps no checksums and trusts its file. A truncated data file
 * killed Warren with SIGBUS and a zeroed meta page with SIGSEGV before it logged a word (or, for
 * the newer meta page, silently reopened the commit before it). The broker now checks the file
 * before LMDB maps it, and refuses it with a clear message and exit code 1.
 */
describe('damaged data files: a broker refuses them instead of crashing', function () {
  this.timeout(60000);
  let dataDir: string;
  const dataFile = (): string => join(dataDir, 'store', 'data.mdb');
  const startArgs = (): string[] => ['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir];

  beforeEach(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'warren-damaged-'));
    const broker = await BrokerProcess.start(dataDir);
    await publishDurable(broker.url, 'kept', Array.from({ length: 300 }, (_, i) => Buffer.alloc(8192, i)));
    expect(await broker.stop()).to.equal(0);
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  function zeroPage(index: number): void {
    const fd = openSync(dataFile(), 'r+');
    writeSync(fd, Buffer.alloc(4096), 0, 4096, index * 4096);
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
    zeroPage(0);
    zeroPage(1);
    await expectRefused(/meta page 0 is all zeros; meta page 1 is all zeros/);
  });

  it('meta page 0 zeroed (SIGSEGV before)', async () => {
    zeroPage(0);
    await expectRefused(/meta page 0 is all zeros/);
  });

  it('meta page 1 zeroed (before: LMDB silently fell back to the other, older commit)', async () => {
    zeroPage(1);
    await expectRefused(/meta page 1 is all zeros/);
  });

  it('starts as usual on the undamaged file', async () => {
    const run = await runWarren(startArgs());
    expect(run.listened, run.stderr).to.equal(true);
  });
});
