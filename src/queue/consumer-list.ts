import type { Consumer } from './consumer.js';

/**
 * The consumers of one queue in registration order, and the choice of who gets the next
 * message, as RabbitMQ makes it: the highest x-priority among consumers that can take a message
 * now, round-robin among equals; under x-single-active-consumer only the longest-registered
 * consumer receives, and the next in line takes over when it goes.
 */
export class ConsumerList {
  private items: Consumer[] = [];
  /** Where the round-robin scan starts: just after the consumer served last. */
  private next = 0;

  constructor(private readonly singleActive: boolean) {}

  get length(): number {
    return this.items.length;
  }

  /** In registration order. */
  get all(): readonly Consumer[] {
    return this.items;
  }

  add(consumer: Consumer): void {
    this.items.push(consumer);
  }

  /** Returns false when consumer was not registered. */
  remove(consumer: Consumer): boolean {
    const i = this.items.indexOf(consumer);
    if (i < 0) return false;
    this.items.splice(i, 1);
    if (this.next > i) this.next--;
    return true;
  }

  /** Removes every consumer and returns them (the queue is being deleted). */
  clear(): Consumer[] {
    const all = this.items;
    this.items = [];
    this.next = 0;
    return all;
  }

  hasExclusive(): boolean {
    return this.items.some((c) => c.exclusive);
  }

  /** The consumer that receives under x-single-active-consumer (undefined without it). */
  get active(): Consumer | undefined {
    return this.singleActive ? this.items[0] : undefined;
  }

  /** The consumer that gets the next message, or undefined when none can take one now. */
  pick(): Consumer | undefined {
    const items = this.items;
    if (this.singleActive) {
      const active = items[0];
      return active !== undefined && active.host.canDeliver(active) ? active : undefined;
    }
    const n = items.length;
    let best: Consumer | undefined;
    let bestIndex = -1;
    for (let k = 0; k < n; k++) {
      const i = (this.next + k) % n;
      const c = items[i]!; // i < n
      if (best && c.priority <= best.priority) continue;
      if (!c.host.canDeliver(c)) continue;
      best = c;
      bestIndex = i;
    }
    if (best) this.next = (bestIndex + 1) % n;
    return best;
  }
}
