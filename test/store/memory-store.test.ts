import { openMemoryStore } from '../../src/store/memory-store.js';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('memory', () => ({ open: (opts) => openMemoryStore({ log: opts?.log }) }));
