/**
 * A Queue on its own, without a broker: a FakeClock, a message store (memory or LMDB), a
 * recording dead-letter hook and a fake channel (ConsumerHost) that counts credit the way
 * Channel does and records what it was given.
 */

import { FakeClock } from '../../src/clock.js';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { encodeContentHeaderPayload, type BasicProperties } from '../../src/frame/generated/properties.js';
import { createLogger } from '../../src/log.js';
import { Consumer, type ConsumerHost } from '../../src/queue/consumer.js';
import { Message } from '../../src/queue/message.js';
import { parseQueueArguments } from '../../src/queue/queue-arguments.js';
import { Queue, type DeadLetterReason, type QueueDeps } from '../../src/queue/queue.js';
import type { QueuedMessage } from '../../src/queue/queued-message.js';
import type { MessageStore } from '../../src/store/message-store.js';
import { openMemoryStore } from '../../src/store/memory-store.js';

export { F };

export interface QueueHarness {
  queue: Queue;
  clock: FakeClock;
  store: MessageStore;
  /** Every dead-lettering the queue asked for, as [reason, body] in order. */
  deadLettered: Array<[DeadLetterReason, string]>;
  /** Every count of messages dropped without a dead-letter exchange and not handed over, as [reason, count]. */
  dropped: Array<[DeadLetterReason, number]>;
  /** Set when the queue asked to be deleted (auto-delete, x-expires). */
  autoDeleted: boolean;
}

export interface HarnessOptions {
  name?: string;
  durable?: boolean;
  args?: FieldTable;
  store?: MessageStore;
  clock?: FakeClock;
  /** Ready messages kept in memory (queueMemoryWindow). */
  window?: number;
  /** The window's limit in bytes of headers and bodies. */
  windowBytes?: number;
  /** Memory-pressure paging of transient messages (the broker's TransientPager). */
  transientPaging?: QueueDeps['transientPaging'];
}

const silent = createLogger('silent');

export function makeQueue(options: HarnessOptions = {}): QueueHarness {
  const name = options.name ?? 'q';
  const args = options.args ?? {};
  const clock = options.clock ?? new FakeClock();
  const store = options.store ?? openMemoryStore().messages;
  const h: QueueHarness = { queue: undefined as unknown as Queue, clock, store, deadLettered: [], dropped: [], autoDeleted: false };
  h.queue = new Queue(
    {
      vhost: '/', name, durable: options.durable ?? false, exclusiveOwner: null, autoDelete: false, arguments: args,
      settings: parseQueueArguments(args, `queue '${name}' in vhost '/'`),
    },
    {
      log: silent, clock, store, memoryWindow: options.window ?? 4096, memoryWindowBytes: options.windowBytes, transientPaging: options.transientPaging,
      onAutoDelete: () => { h.autoDeleted = true; },
      deadLetter: (q, entries, reason) => {
        // As VHost.deadLetter: only a queue with a dead-letter exchange republishes.
        if (q.settings.deadLetterExchange === undefined) return;
        for (const e of entries) h.deadLettered.push([reason, e.msg.body.toString()]);
      },
      dropped: (_q, reason, count) => { h.dropped.push([reason, count]); },
      // No exchanges here: a dead-letter held at least once stays held.
      forwardDeadLetter: () => false,
    },
  );
  return h;
}

/** A message as Publisher.publish builds it; ids come from the store, as the broker's do. */
export function message(store: MessageStore, body: string, properties: BasicProperties = {}, ttl?: number): Message {
  const buf = Buffer.from(body);
  const m = new Message(store.nextMessageId(), '', 'q', encodeContentHeaderPayload(60, buf.length, properties), buf, properties);
  m.ttl = ttl;
  return m;
}

export const PERSISTENT: BasicProperties = { deliveryMode: 2 };

/** Enqueues each body in order (persistent when persistent(i)); returns each EnqueueResult. */
export function publish(h: QueueHarness, bodies: string[], persistent: (i: number) => boolean = () => false): number[] {
  return bodies.map((b, i) => h.queue.enqueue(message(h.store, b, persistent(i) ? PERSISTENT : {})));
}

export const range = (n: number, from = 0): string[] => Array.from({ length: n }, (_, i) => String(from + i));

/** basic.get no-ack until the queue is empty: the bodies, in order. */
export function takeAll(q: Queue): string[] {
  const out: string[] = [];
  for (let e = q.take(); e; e = q.take()) {
    q.settle(e);
    out.push(e.msg.body.toString());
  }
  return out;
}

/** basic.get with ack: the entry is delivered and unacknowledged until settled or requeued. */
export function get(q: Queue): QueuedMessage {
  const e = q.take();
  if (!e) throw new Error('queue is empty');
  q.delivered(e);
  return e;
}

export interface Delivery {
  consumer: Consumer;
  entry: QueuedMessage;
}

/** A channel as the queue sees it: per-consumer prefetch, deliveries recorded, acks by hand. */
export class FakeChannel implements ConsumerHost {
  /** Deliveries not acknowledged yet. */
  readonly deliveries: Delivery[] = [];
  /** "tag:body" of every delivery, in order. */
  readonly log: string[] = [];
  readonly cancelled: string[] = [];
  private nextTag = 0;

  consume(queue: Queue, options: { prefetch?: number; priority?: number; tag?: string; exclusive?: boolean } = {}): Consumer {
    const c = new Consumer(options.tag ?? `ctag-${++this.nextTag}`, this, queue, {
      noAck: false, exclusive: options.exclusive ?? false, prefetch: options.prefetch ?? 0, priority: options.priority ?? 0,
    });
    queue.addConsumer(c);
    return c;
  }

  canDeliver(consumer: Consumer): boolean {
    return consumer.hasCredit;
  }

  deliver(consumer: Consumer, queue: Queue, entry: QueuedMessage): void {
    consumer.unacked++;
    queue.delivered(entry);
    this.deliveries.push({ consumer, entry });
    this.log.push(`${consumer.tag}:${entry.msg.body.toString()}`);
  }

  cancelledByServer(consumer: Consumer): void {
    this.cancelled.push(consumer.tag);
  }

  /** basic.ack of the delivery of body. */
  ack(body: string): void {
    const i = this.deliveries.findIndex((d) => d.entry.msg.body.toString() === body);
    if (i < 0) throw new Error(`no delivery of ${body}`);
    const { consumer, entry } = this.deliveries[i] as Delivery;
    this.deliveries.splice(i, 1);
    consumer.unacked--;
    consumer.queue.ack(entry);
  }
}
