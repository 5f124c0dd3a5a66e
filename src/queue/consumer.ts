import { decodeTable, encodeTable, type FieldTable } from '../frame/field-table.js';
import type { Queue } from './queue.js';
import type { QueuedMessage } from './queued-message.js';

/** What a queue needs from the channel a consumer lives on. */
export interface ConsumerHost {
  /** True when consumer may take one more message now (prefetch limits, flow, closing). */
  canDeliver(consumer: Consumer): boolean;
  /** Sends one message to consumer (basic.deliver + content) and tracks it until acknowledged. */
  deliver(consumer: Consumer, queue: Queue, message: QueuedMessage): void;
  /** The queue went away under the consumer (queue.delete): server-initiated basic.cancel. */
  cancelledByServer(consumer: Consumer): void;
}

/** A consumer's settings from basic.consume (and the channel's basic.qos). */
export interface ConsumerOptions {
  noAck: boolean;
  exclusive: boolean;
  /** Per-consumer prefetch (basic.qos with global=false, as RabbitMQ defines it); 0 = unlimited. */
  prefetch: number;
  /** x-priority from basic.consume arguments. */
  priority: number;
  /** basic.consume's arguments as given (the management API shows them). */
  arguments?: FieldTable;
}

export class Consumer {
  readonly noAck: boolean;
  readonly exclusive: boolean;
  readonly prefetch: number;
  readonly priority: number;
  readonly arguments: FieldTable;
  /** Messages delivered to this consumer and not yet acknowledged. */
  unacked = 0;
  /**
   * The channel's encoding of the start of every basic.deliver to this consumer (frame header,
   * method ids, consumer tag: src/frame/fast.ts basicDeliverPrefix), made at its first delivery.
   */
  deliverPrefix: Buffer | undefined = undefined;

  constructor(
    readonly tag: string,
    readonly host: ConsumerHost,
    readonly queue: Queue,
    options: ConsumerOptions,
  ) {
    this.noAck = options.noAck;
    this.exclusive = options.exclusive;
    this.prefetch = options.prefetch;
    this.priority = options.priority;
    // Decoded values are views into a socket chunk: a copy keeps the consumer from pinning it.
    const args = options.arguments;
    this.arguments = args && Object.keys(args).length > 0 ? decodeTable(encodeTable(args), 0).table : {};
  }

  /** Whether the per-consumer prefetch limit leaves room for one more delivery. */
  get hasCredit(): boolean {
    return this.noAck || this.prefetch === 0 || this.unacked < this.prefetch;
  }
}
