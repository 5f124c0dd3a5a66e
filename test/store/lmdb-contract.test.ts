import path from 'node:path';
import { openLmdbStore, type LmdbStore } from '../../src/store/lmdb/index.js';
import type { Store } from '../../src/store/store.js';
import { describeStoreContract } from './store-contract.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

describeStoreContract('lmdb', () => {
  const dir = makeTmpDir();
  const dataDir = path.join(dir, 'store');
  return {
    open: (opts) => openLmdbStore(dataDir, { log: opts?.log }),
    reopen: async (store: Store) => {
      await store.close();
      const reopened = openLmdbStore(dataDir);
      const check = reopened.verify();
      if (check.problems.length > 0) throw new Error(`inconsistent after reopen: ${check.problems.join('; ')}`);
      return reopened as LmdbStore;
    },
    cleanup: () => removeDir(dir),
  };
});
