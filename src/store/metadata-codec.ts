/**
 * Keys and values of topology records. Both stores use these keys, so "the same record" means
 * the same thing in memory and on disk: exchanges and queues by (vhost, name), bindings by all
 * of their fields (a SHA-256 of them, since arguments can be long), delayed messages by
 * (dueAt, seq, vhost, exchange) so that they load in due order.
 */

import { createHash } from 'node:crypto';
import { DEFINITION_KINDS, type BindingRecord, type DefinitionKind, type DefinitionRecord, type DelayedRecord, type ExchangeRecord, type QueueRecord } from './metadata-store.js';
import type { PersistedMessage } from './message-store.js';
import { checkU53, decodeMessage, encodeMessage, RecordReader, RecordWriter } from './record-codec.js';

const FORMAT = 1;

export function nameKey(vhost: string, name: string): Buffer {
  return new RecordWriter().str(vhost).str(name).done();
}

/** The (vhost, name) of a nameKey, or undefined if b is not one. */
export function decodeNameKey(b: Buffer): { vhost: string; name: string } | undefined {
  if (b.length < 4) return undefined;
  const vhostLen = b.readUInt16BE(0);
  if (2 + vhostLen + 2 > b.length || 2 + vhostLen + 2 + b.readUInt16BE(2 + vhostLen) !== b.length) return undefined;
  const r = new RecordReader(b);
  return { vhost: r.str(), name: r.str() };
}

export function encodeExchange(r: ExchangeRecord): Buffer {
  return new RecordWriter()
    .u8(FORMAT)
    .str(r.vhost)
    .str(r.name)
    .str(r.type)
    .u8((r.autoDelete ? 1 : 0) | (r.internal ? 2 : 0))
    .buf(r.arguments)
    .done();
}

export function decodeExchange(b: Buffer, end = b.length): ExchangeRecord {
  const r = reader(b, 'exchange', end);
  const vhost = r.str();
  const name = r.str();
  const type = r.str();
  const flags = r.u8();
  return { vhost, name, type, durable: true, autoDelete: (flags & 1) !== 0, internal: (flags & 2) !== 0, arguments: r.buf() };
}

export function encodeQueue(r: QueueRecord): Buffer {
  return new RecordWriter().u8(FORMAT).str(r.vhost).str(r.name).u8(r.autoDelete ? 1 : 0).buf(r.arguments).done();
}

/** The arguments of a queue record without any (an empty table), shared: never written to. */
export const NO_ARGUMENTS_RECORD: Buffer = Buffer.alloc(4);

export function decodeQueue(b: Buffer, end = b.length): QueueRecord {
  const r = reader(b, 'queue', end);
  const vhost = r.str();
  const name = r.str();
  const autoDelete = (r.u8() & 1) !== 0;
  // Most queues have no arguments: no copy of the empty table for each (100,000 recovered).
  return { vhost, name, durable: true, autoDelete, arguments: r.buf(NO_ARGUMENTS_RECORD) };
}

export function encodeBinding(r: BindingRecord): Buffer {
  return new RecordWriter()
    .u8(FORMAT)
    .str(r.vhost)
    .str(r.source)
    .str(r.destination)
    .u8(r.destinationKind === 'queue' ? 0 : 1)
    .str(r.routingKey)
    .buf(r.arguments)
    .done();
}

export function bindingKey(r: BindingRecord): Buffer {
  return createHash('sha256').update(encodeBinding(r)).digest();
}

export function decodeBinding(b: Buffer, end = b.length): BindingRecord {
  const r = reader(b, 'binding', end);
  const vhost = r.str();
  const source = r.str();
  const destination = r.str();
  const destinationKind = r.u8() === 0 ? 'queue' : 'exchange';
  const routingKey = r.str();
  return { vhost, source, destination, destinationKind, routingKey, arguments: r.buf() };
}

export function delayedKey(r: DelayedRecord): Buffer {
  if (!(r.dueAt >= 0)) throw new RangeError(`dueAt must be a number >= 0, got ${r.dueAt}`);
  checkU53('delayed seq', r.seq);
  return new RecordWriter().f64(r.dueAt).u64(r.seq).str(r.vhost).str(r.exchange).done();
}

export function decodeDelayedKey(b: Buffer): DelayedRecord {
  const r = new RecordReader(b);
  const dueAt = r.f64();
  const seq = r.u64();
  const vhost = r.str();
  return { vhost, exchange: r.str(), dueAt, seq };
}

/** Delayed value: message id (u64) then the message value layout of record-codec. */
export function encodeDelayedMessage(msg: PersistedMessage): Buffer {
  return Buffer.concat([new RecordWriter().u64(msg.id).done(), encodeMessage(msg)]);
}

export function decodeDelayedMessage(b: Buffer): PersistedMessage {
  const r = new RecordReader(b);
  const id = r.u64();
  return decodeMessage(id, Buffer.from(r.rest()));
}

function reader(b: Buffer, what: string, end: number): RecordReader {
  const r = new RecordReader(b, end);
  const format = r.u8();
  if (format !== FORMAT) throw new Error(`stored ${what} record has unknown format ${format}`);
  return r;
}

/** The prefix of every key of a state space: its name's length (u16 BE), then the name as UTF-8. */
export function stateSpacePrefix(space: string): Buffer {
  const name = Buffer.from(space, 'utf8');
  const prefix = Buffer.alloc(2 + name.length);
  prefix.writeUInt16BE(name.length, 0);
  name.copy(prefix, 2);
  return prefix;
}

/** A state record's key (MetadataStore.putState): the space's prefix, then the key. */
export function stateKey(space: string, key: Buffer): Buffer {
  return Buffer.concat([stateSpacePrefix(space), key]);
}

/** The longest state key (space prefix + key) a store takes: LMDB's key limit (lmdb/databases.ts MAX_KEY). */
export const MAX_STATE_KEY = 1978;

/** Whether putState(space, key, …) fits the key limit. */
export function stateKeyFits(space: string, key: Buffer): boolean {
  return 2 + Buffer.byteLength(space, 'utf8') + key.length <= MAX_STATE_KEY;
}

/** A definition's key: its kind's index (u8), then the key as UTF-8; kinds sort in DEFINITION_KINDS order. */
export function definitionKey(kind: DefinitionKind, key: string): Buffer {
  const index = DEFINITION_KINDS.indexOf(kind);
  if (index < 0) throw new TypeError(`unknown definition kind '${String(kind)}'`);
  return Buffer.concat([Buffer.from([index]), Buffer.from(key, 'utf8')]);
}

export function encodeDefinitionValue(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value) ?? 'null', 'utf8');
}

/** The record of a stored (key, value); throws if the key names no kind or the value is not JSON. */
export function decodeDefinition(key: Buffer, value: Buffer): DefinitionRecord {
  const kind = DEFINITION_KINDS[key[0] ?? 255];
  if (!kind) throw new Error(`definition key of unknown kind ${key[0]}`);
  return { kind, key: key.subarray(1).toString('utf8'), value: JSON.parse(value.toString('utf8')) };
}
