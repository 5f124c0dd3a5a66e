import type { MessageStore } from './message-store.js';
import type { MetadataStore } from './metadata-store.js';

/** A storage backend: messages and topology, opened together and closed together. */
export interface Store {
  messages: MessageStore;
  metadata: MetadataStore;
  /** Waits for every write issued so far to be committed, then releases the backend. */
  close(): Promise<void>;
}
