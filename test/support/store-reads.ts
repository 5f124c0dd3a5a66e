import type { MessageStore } from '../../src/store/message-store.js';

/** How many messages fn reads back from store (MessageStore.readMessage calls) while it runs. */
export async function countingReads(store: MessageStore, fn: () => Promise<void> | void): Promise<number> {
  const readMessage = store.readMessage.bind(store);
  let reads = 0;
  store.readMessage = (queue, e) => {
    reads++;
    return readMessage(queue, e);
  };
  try {
    await fn();
  } finally {
    store.readMessage = readMessage;
  }
  return reads;
}
