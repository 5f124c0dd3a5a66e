import type { MessageStore } from './message-store.js';
import type { MetadataStore } from './metadata-store.js';

/** A storage backend: messages and topology, opened together and closed together. */
export interface Store {
  messages: MessageStore;
  metadata: MetadataStore;
  /**
   * After a failed commit (disk full): tries to write everything not yet written; resolves once
   * that committed and the store takes writes again (sync() resolves again), rejects if it
   * failed. Resolves at once if no commit failed.
   */
  resume(): Promise<void>;
  /**
   * A test fault (the toolkit's faults.failNextCommit): the next commit fails as a full disk
   * makes it fail — sync() rejects, onError is told — and the store stays failed, keeping what
   * it is given, until resume(). With LMDB the next commit is the next batch of writes; the
   * in-memory store commits when a caller waits for durability (sync()). false disarms it.
   */
  failNextCommit(armed: boolean): void;
  /** Waits for every write issued so far to be committed, then releases the backend. */
  close(): Promise<void>;
}
