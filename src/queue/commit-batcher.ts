import type { MessageStore } from '../store/message-store.js';

/**
 * Group commit for publisher confirms. Everything written to the store during one turn of the
 * event loop (all publishes from all connections) waits on a single store.sync(); every
 * callback registered in that turn runs when it resolves. No promise per message.
 */
export class CommitBatcher {
  private waiting: Array<(err?: Error) => void> = [];
  private scheduled = false;
  /** Increments each time a batch is handed to the store; callers use it to join a batch. */
  generation = 0;

  constructor(private readonly store: MessageStore | undefined) {}

  /** Runs done once everything written to the store so far is durable on disk. */
  whenDurable(done: (err?: Error) => void): void {
    if (!this.store) {
      done();
      return;
    }
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
    this.store!.sync().then(
      () => { for (const done of batch) done(); },
      (err: Error) => { for (const done of batch) done(err); },
    );
  }
}
