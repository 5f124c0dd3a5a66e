import type { Connection } from '../connection/connection.js';
import type { Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';

/**
 * head_message_timestamp of classic queues, for one management request or Prometheus scrape, as
 * 3.10.8 reports it (rabbit_variable_queue:head_message_timestamp): the lowest `timestamp`
 * property among the message at the head of the ready list (when held in memory) and the oldest
 * (lowest seq) of the queue's unacknowledged messages; undefined when none of them has one.
 * Queues do not track their unacknowledged messages (channels do), so the first queue asked
 * about that has any makes one pass over every channel's unacknowledged deliveries, and the
 * rest of the request uses it: nothing is paid on the delivery path.
 */
export class HeadTimestamps {
  private oldest: Map<Queue, QueuedMessage> | undefined = undefined;

  constructor(private readonly connections: Iterable<Connection>) {}

  of(q: Queue): number | undefined {
    let ts = q.peekHead()?.msg.properties.timestamp;
    if (q.unackedCount > 0) {
      const t = (this.oldest ??= this.gather()).get(q)?.msg.properties.timestamp;
      if (t !== undefined && (ts === undefined || t < ts)) ts = t;
    }
    return ts;
  }

  /** The oldest unacknowledged message of each queue that has one. */
  private gather(): Map<Queue, QueuedMessage> {
    const oldest = new Map<Queue, QueuedMessage>();
    for (const conn of this.connections) {
      for (const ch of conn.channels.values()) {
        const unacked = ch.unacked;
        for (let i = unacked.first; i < unacked.last; i++) {
          const entry = unacked.entryAt(i);
          if (entry === undefined) continue;
          const q = unacked.counterAt(i).queue;
          const known = oldest.get(q);
          if (known === undefined || entry.seq < known.seq) oldest.set(q, entry);
        }
      }
    }
    return oldest;
  }
}
