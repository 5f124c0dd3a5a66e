/**
 * Durable topology: exchanges, queues and bindings of durable entities, plus delayed messages
 * of durable x-delayed-message exchanges. Writes share the message store's group commit (one
 * LMDB environment), so a queue.declare and the publishes that follow it in the same turn land
 * in the same transaction.
 */

import type { PersistedMessage } from './message-store.js';

export interface ExchangeRecord {
  vhost: string;
  name: string;
  type: string;
  durable: true;
  autoDelete: boolean;
  internal: boolean;
  /** Encoded field table, opaque to the store. */
  arguments: Buffer;
}

export interface QueueRecord {
  vhost: string;
  name: string;
  durable: true;
  autoDelete: boolean;
  arguments: Buffer;
}

/** A binding is identified by all of its fields, arguments included (as in RabbitMQ). */
export interface BindingRecord {
  vhost: string;
  source: string;
  destination: string;
  destinationKind: 'queue' | 'exchange';
  routingKey: string;
  arguments: Buffer;
}

/**
 * A delayed message of a durable x-delayed-message exchange, identified by all four fields
 * (`seq` is any number the broker makes unique per delayed message, e.g. its message id).
 */
export interface DelayedRecord {
  vhost: string;
  exchange: string;
  /** Absolute ms epoch at which the message is due. */
  dueAt: number;
  seq: number;
}

export interface DelayedMessage {
  record: DelayedRecord;
  message: PersistedMessage;
}

export interface MetadataLoad {
  exchanges: ExchangeRecord[];
  queues: QueueRecord[];
  bindings: BindingRecord[];
}

export interface MetadataStore {
  putExchange(r: ExchangeRecord): void;
  deleteExchange(vhost: string, name: string): void;
  putQueue(r: QueueRecord): void;
  deleteQueue(vhost: string, name: string): void;
  putBinding(r: BindingRecord): void;
  deleteBinding(r: BindingRecord): void;
  /** Stores a delayed message until deleteDelayed (when it is delivered or its exchange deleted). */
  putDelayed(r: DelayedRecord, msg: PersistedMessage): void;
  deleteDelayed(r: DelayedRecord): void;
  /** Every stored delayed message, in dueAt order. */
  loadDelayed(): DelayedMessage[];
  load(): MetadataLoad;
  /** Same group commit as MessageStore.sync(). */
  sync(): Promise<void>;
}
