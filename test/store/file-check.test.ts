/**
 * The data-file check that runs before LMDB maps the file (issue 10, "Damaged files"), at the
 * level of single pages; test/integration/damaged-files.test.ts drives a real broker.
 */

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { checkDataFile } from '../../src/store/lmdb/file-check.js';
import { openLmdbStore } from '../../src/store/lmdb/index.js';
import { makeEntry, makeMessage } from './store-contract.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const LAST_PAGE = 24 + 120; // mm_last_pg in a meta page
const PAGE_SIZE = 24 + 24; // mm_psize (mm_dbs[0].md_pad) in a meta page

describe('LMDB data file check', () => {
  let dir: string;
  let dataDir: string;
  let file: string;
  /** LMDB's page size: the OS page size when the file was made. */
  let ps: number;

  beforeEach(async () => {
    dir = makeTmpDir();
    dataDir = path.join(dir, 'store');
    file = path.join(dataDir, 'data.mdb');
    const store = openLmdbStore(dataDir);
    for (let seq = 0; seq < 200; seq++) {
      const msg = { ...makeMessage(store.messages.nextMessageId()), body: Buffer.alloc(seq % 10 === 0 ? 20_000 : 500, seq) };
      store.messages.enqueue('q', makeEntry(seq, msg.id), msg);
    }
    await store.close();
    ps = fs.readFileSync(file).readUInt32LE(PAGE_SIZE);
  });
  afterEach(() => removeDir(dir));

  function patch(offset: number, fn: (b: Buffer) => void, length = 8): void {
    const fd = fs.openSync(file, 'r+');
    const b = Buffer.alloc(length);
    fs.readSync(fd, b, 0, length, offset);
    fn(b);
    fs.writeSync(fd, b, 0, length, offset);
    fs.closeSync(fd);
  }

  it('passes a sound file without walking it, and walks it on request', () => {
    const quick = checkDataFile(dataDir);
    expect(quick).to.deep.include({ exists: true, walked: false, problems: [], pageSize: ps });
    expect(quick.pagesInUse! * ps).to.equal(quick.size);
    expect(checkDataFile(dataDir, { walk: true })).to.deep.include({ walked: true, problems: [] });
  });

  it('accepts a file shorter than the meta page says when no page in use is missing (LMDB leaves that)', async () => {
    for (const meta of [0, 1]) patch(meta * ps + LAST_PAGE, (b) => b.writeBigUInt64LE(b.readBigUInt64LE(0) + 3n));
    const report = checkDataFile(dataDir);
    expect(report).to.deep.include({ walked: true, problems: [] });
    expect(report.pagesInUse! * ps).to.equal(report.size + 3 * ps);
    const store = openLmdbStore(dataDir);
    expect(store.messages.readEntries('q', 0, 1000)).to.have.length(200);
    await store.close();
  });

  it('finds pages in use cut off the end of the file', () => {
    const size = fs.statSync(file).size;
    fs.truncateSync(file, size - ps);
    const report = checkDataFile(dataDir);
    expect(report.walked).to.equal(true);
    expect(report.problems[0]).to.match(/it was truncated/);
    expect(report.problems.slice(1).join('\n')).to.match(/page \d+.* is not in the file/);
  });

  it('finds a broken B-tree page when walking (what `warren check` does)', () => {
    // The root of the 'entries' tree, as the main tree's leaf says, gets leaf/branch flags of 0.
    const walked = checkDataFile(dataDir, { walk: true });
    expect(walked.problems).to.deep.equal([]);
    const data = fs.readFileSync(file);
    const txnid = (meta: number): bigint => data.readBigUInt64LE(meta * ps + 24 + 128);
    const newer = txnid(1) > txnid(0) ? 1 : 0;
    const mainRoot = Number(data.readBigUInt64LE(newer * ps + 24 + 24 + 48 + 40));
    const mainPage = data.subarray(mainRoot * ps, (mainRoot + 1) * ps);
    const name = mainPage.indexOf(Buffer.from('entries\u0000')); // the node's key; its MDB_db record follows
    const root = Number(mainPage.readBigUInt64LE(name + 8 + 40));
    expect(root).to.be.greaterThan(1);
    patch(root * ps + 18, (b) => b.writeUInt16LE(0), 2);
    expect(checkDataFile(dataDir).problems).to.deep.equal([]); // the quick check cannot see inside
    expect(checkDataFile(dataDir, { walk: true }).problems.join('\n')).to.match(new RegExp(`database 'entries': page ${root} is not a branch or leaf page`));
  });

  it('refuses an empty file and meta pages that are not LMDB meta pages', () => {
    patch(24, (b) => b.writeUInt32LE(0x12345678), 4); // meta page 0 magic
    patch(ps + 24 + 4, (b) => b.writeUInt32LE(3), 4); // meta page 1 version
    expect(checkDataFile(dataDir).problems).to.deep.equal([
      'meta page 0: magic 0x12345678 instead of 0xbeefc0de',
      'meta page 1: file format version 3 instead of 2',
    ]);
    fs.truncateSync(file, 0);
    expect(checkDataFile(dataDir).problems).to.deep.equal(['the file is empty (0 bytes): it was truncated, or never initialised']);
  });
});
