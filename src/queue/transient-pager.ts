import type { Logger } from '../log.js';
import type { MessageStore } from '../store/message-store.js';
import type { Queue } from './queue.js';

/** What is written per store commit while paging out (see pageOutCost): 4 MiB, or 4096 tiny messages. */
const BATCH_COST = 4 * 1024 * 1024;

/**
 * RabbitMQ pages transient messages to disk when memory runs short; so does Warren, with a
 * data directory: while memory is above the paging share of the watermark (MemoryMonitor's
 * PAGING_RATIO), the transient messages every queue holds in memory beyond its window are
 * written to the store (Queue.pageOut), a batch of about BATCH_COST per store commit, one
 * commit at a time. So the store's write buffers (which cost more than the messages they hold
 * until the commit) never hold more than a batch, whatever the backlog or the rate messages
 * arrive at; the memory of a batch is released once its commit is done. A queue that gets
 * more transient messages than its window wakes the pager up (QueueDeps.transientPaging).
 */
export class TransientPager {
  private running = false;
  /** Woken while running: queues done with may have more now. */
  private woken = false;
  private stopped = false;

  constructor(
    private readonly queues: () => Iterable<Queue>,
    private readonly store: Pick<MessageStore, 'sync'>,
    /** Whether paging should go on (memory pressure, and the store works). */
    readonly active: () => boolean,
    private readonly log: Logger,
    private readonly batchCost = BATCH_COST,
  ) {}

  /** Starts a page-out unless one is running; it ends when nothing is left or pressure is gone. */
  wake(): void {
    if (this.stopped || !this.active()) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    this.running = true;
    this.run().then(
      () => {
        this.running = false;
      },
      (err: Error) => {
        this.running = false;
        // A commit refused while the broker shuts down is no news.
        if (!this.stopped) this.log.error({ err: err.message }, 'paging transient messages out failed');
      },
    );
  }

  /** For shutdown: no batch starts after this. */
  stop(): void {
    this.stopped = true;
  }

  private async run(): Promise<void> {
    // A queue with nothing more to page out is not asked again, unless a queue wakes the pager.
    const done = new Set<Queue>();
    let total = 0;
    while (!this.stopped && this.active()) {
      if (this.woken) {
        this.woken = false;
        done.clear();
      }
      let written = 0;
      for (const q of this.queues()) {
        if (done.has(q)) continue;
        const budget = this.batchCost - written;
        const n = q.pageOut(budget);
        written += n;
        if (n < budget) done.add(q);
        if (written >= this.batchCost) break;
      }
      if (written === 0 && !this.woken) break;
      total += written;
      await this.store.sync();
    }
    if (total > 0) this.log.debug({ cost: total }, 'paged transient messages out to the store');
  }
}
