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

/**
 * RabbitMQ's definitions other than topology: vhosts, users, permissions, topic permissions,
 * policies, operator policies, runtime parameters and global parameters. The store keeps each
 * as a JSON value under (kind, key), without looking inside; the owner of each kind chooses its
 * key (e.g. a vhost's name, `user\0vhost` for a permission) and its value's shape.
 */
export type DefinitionKind =
  | 'vhost'
  | 'user'
  | 'permission'
  | 'topic-permission'
  | 'policy'
  | 'operator-policy'
  | 'parameter'
  | 'global-parameter';

export const DEFINITION_KINDS: readonly DefinitionKind[] = [
  'vhost', 'user', 'permission', 'topic-permission', 'policy', 'operator-policy', 'parameter', 'global-parameter',
];

export interface DefinitionRecord {
  kind: DefinitionKind;
  key: string;
  /** Any JSON value (written with JSON.stringify, read back with JSON.parse). */
  value: unknown;
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
  /** Stores (or replaces) one definition; throws RangeError if kind + key is too long to be a key. */
  putDefinition(r: DefinitionRecord): void;
  deleteDefinition(kind: DefinitionKind, key: string): void;
  /** Every stored definition, ordered by kind, then key. */
  loadDefinitions(): DefinitionRecord[];
  /**
   * Small keyed state a feature keeps across restarts, in a space its owner names (a
   * deduplication exchange's disk cache, a last-value queue's newest versions): keys and values
   * are opaque bytes, written in the same group commit as everything else. putState replaces;
   * throws RangeError if space + key is too long to be a key (stateKeyFits tells beforehand).
   */
  putState(space: string, key: Buffer, value: Buffer): void;
  deleteState(space: string, key: Buffer): void;
  /** Every (key, value) of a space, in key order. */
  loadState(space: string): Array<[Buffer, Buffer]>;
  /** Drops every key of a space (its owner was deleted). */
  deleteStateSpace(space: string): void;
  /** Same group commit as MessageStore.sync(). */
  sync(): Promise<void>;
}
