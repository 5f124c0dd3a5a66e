/**
 * The space kept allocated past the LMDB data file's end (src/store/lmdb/space-reserve.ts): a
 * disk that fills up under the store fails a commit before LMDB writes it, never inside LMDB
 * (where lmdb-js 3.5.6 can abort the process when a spill's write fails), and what the reserve
 * holds is written and durable meanwhile.
 */

import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import { dataFilePath } from '../../src/store/lmdb/file-check.js';
import { makeEntry, makeMessage } from './store-contract.js';
import { SmallDisk } from '../support/small-disk.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const MiB = 1 << 20;

/** Bytes allocated to the data file past its size. */
function reservedPastEnd(dir: string): number {
  const st = fs.statSync(dataFilePath(dir));
  return st.blocks * 512 - st.size;
}

describe('LMDB store: space reserved past the data file (a full disk fails a commit before LMDB writes it)', function () {
  this.timeout(60_000);
  let store: LmdbStore | undefined;
  let disk: SmallDisk | undefined;
  let scratch: string | undefined;

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = undefined;
    disk?.unmount();
    disk = undefined;
    if (scratch) removeDir(scratch);
    scratch = undefined;
  });

  it('keeps writing into the reserve on a full disk, then refuses before LMDB, and writes it all once space returns', async function () {
    disk = SmallDisk.mount(48);
    if (!disk) this.skip();
    const dir = path.join(disk.dir, 'data');
    const logged: string[] = [];
    const failures: Error[] = [];
    store = openLmdbStore(dir, { reserveBytes: 16 * MiB, log: (m) => logged.push(m), onError: (e) => failures.push(e) });
    expect(await store.reserveSpace()).to.equal(true);
    expect(reservedPastEnd(dir)).to.be.at.least(16 * MiB);
    expect(logged.some((m) => /MiB reserved past its end/.test(m))).to.equal(true);

    disk.fill(0);
    const ms = store.messages;
    const body = Buffer.alloc(64 * 1024, 0x66);
    const put = (seq: number): void => {
      const m = { ...makeMessage(ms.nextMessageId()), body };
      ms.enqueue('q', makeEntry(seq, m.id), m);
    };
    // One commit per message: each waits for its own sync, as a confirm does.
    let durable = 0;
    let refused: Error | undefined;
    for (let seq = 1; seq <= 1000 && !refused; seq++) {
      put(seq);
      await ms.sync().then(
        () => durable++,
        (e: Error) => (refused = e),
      );
    }
    // The disk was full before the first of them: the reserve took several MiB of commits,
    // then the guard refused one without handing it to LMDB.
    expect(durable * body.length).to.be.at.least(4 * MiB);
    expect(refused?.message).to.match(/ENOSPC: no space left on device \(the space reserved past the data file's end cannot take a commit/);
    expect(refused?.message).to.match(/LMDB was not asked to write it/);
    expect(failures).to.have.length(1);
    // Still full: a retry renews nothing and fails the same way.
    const again = await store.resume().then(() => undefined, (e: Error) => e);
    expect(again?.message).to.match(/the space reserved past the data file's end/);

    disk.free();
    await store.resume();
    expect(reservedPastEnd(dir)).to.be.at.least(4 * MiB);
    put(durable + 2);
    await ms.sync();
    await store.close();
    store = openLmdbStore(dir, { reserveBytes: 0 });
    const seqs = store.messages.readEntries('q', 0, 2000).map((e) => e.seq);
    expect(seqs).to.deep.equal(Array.from({ length: durable + 2 }, (_, i) => i + 1));
    expect(store.verify().problems).to.deep.equal([]);
  });

  it('goes on without a reserve, and says so once, where fallocate cannot be run', async function () {
    if (process.platform !== 'linux') this.skip();
    scratch = makeTmpDir('warren-reserve-');
    // A PATH with a shell and no fallocate in it.
    const bin = path.join(scratch, 'bin');
    fs.mkdirSync(bin);
    fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
    const logged: string[] = [];
    const saved = process.env['PATH'];
    process.env['PATH'] = bin;
    try {
      store = openLmdbStore(path.join(scratch, 'data'), { log: (m) => logged.push(m) });
      expect(await store.reserveSpace()).to.equal(false);
    } finally {
      process.env['PATH'] = saved;
    }
    const said = logged.filter((m) => /no space can be reserved past its end/.test(m));
    expect(said).to.have.length(1);
    expect(said[0]).to.match(/fallocate is not installed/);
    const ms = store.messages;
    const m = makeMessage(ms.nextMessageId(), 'kept');
    ms.enqueue('q', makeEntry(1, m.id), m);
    await ms.sync();
    expect(await store.reserveSpace()).to.equal(false);
    expect(logged.filter((x) => /no space can be reserved/.test(x))).to.have.length(1);
    expect(ms.countEntries('q').messages).to.equal(1);
  });

  it('takes a commit larger than the reserve when the disk has room for it', async () => {
    scratch = makeTmpDir('warren-reserve-');
    const failures: Error[] = [];
    store = openLmdbStore(scratch, { reserveBytes: 1 * MiB, onError: (e) => failures.push(e) });
    const reserved = await store.reserveSpace();
    const ms = store.messages;
    const body = Buffer.alloc(256 * 1024, 0x62);
    // 8 MiB in one commit, eight times the reserve.
    for (let seq = 1; seq <= 32; seq++) {
      const m = { ...makeMessage(ms.nextMessageId()), body };
      ms.enqueue('big', makeEntry(seq, m.id), m);
    }
    await ms.sync();
    expect(failures).to.deep.equal([]);
    expect(ms.countEntries('big').messages).to.equal(32);
    // Where fallocate works (Linux), the reserve was made and renewed past the grown file.
    if (reserved) {
      await store.reserveSpace();
      expect(reservedPastEnd(scratch)).to.be.at.least(1 * MiB);
    }
  });
});
