import type { MessageStore } from '../store/message-store.js';

/**
 * Group commit for publisher confirms. Everything written to the store during one turn of the
 * event loop (all publishes from all connections) waits on a single store.sync(); every
 * callback registered in that turn runs when it resolves. No promise per message.
 *
 * A writer that holds its writes back (a stream's open chunk, written as one record) registers
 * with the store itself (MessageStore.beforeCommit), which has the sync cover those writes.
 *
 * The batch runs outside any connection's call stack, so nothing it runs may escape: a sync()
 * that throws instead of rejecting fails the batch like a rejection, and a callback that throws
 * is reported to `onCallbackError` while the rest of the batch still runs.
 */
export class CommitBatcher {
  private waiting: Array<(err?: Error) => void> = [];
  private scheduled = false;
  /** Increments each time a batch is handed to the store; callers use it to join a batch. */
  generation = 0;

  constructor(
    private readonly store: MessageStore,
    private readonly onCallbackError: (err: unknown) => void,
  ) {}

  /** Runs done once everything written to the store so far is durable on disk. */
  whenDurable(done: (err?: Error) => void): void {
    this.waiting.push(done);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    this.generation++;
    const batch = this.waiting;
    this.waiting = [];
    let synced: Promise<void>;
    try {
      synced = this.store.sync();
    } catch (err) {
      synced = Promise.reject(err);
    }
    synced.then(
      () => this.run(batch),
      (err: Error) => this.run(batch, err),
    );
  }

  private run(batch: Array<(err?: Error) => void>, err?: Error): void {
    for (const done of batch) {
      try {
        done(err);
      } catch (thrown) {
        this.onCallbackError(thrown);
      }
    }
  }
}
