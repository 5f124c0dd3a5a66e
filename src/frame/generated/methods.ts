// GENERATED — DO NOT EDIT (npm run gen)

/**
 * AMQP 0-9-1 methods: argument types, decoders and encoders, generated from
 * spec/amqp0-9-1.stripped.extended.xml by src/frame/codegen/generate.ts.
 */
import type { FieldTable } from '../field-table.js';
import { parseTable, tableSize, writeTable, wrapRange } from '../field-table.js';
import { cannotDecodeError, malformedUtf8Error, unknownFrameError, unknownMethodCrash } from '../frame-errors.js';
import {
  isRabbitUtf8,
  longstrBytes,
  readU64,
  replyTextBytes,
  shortstrLength,
  writeBytes,
  writeShortstr,
  writeU64,
} from '../wire.js';

/** connection.start (10.10) — synchronous */
export interface ConnectionStartArgs {
  versionMajor: number;
  versionMinor: number;
  serverProperties: FieldTable;
  mechanisms: Buffer;
  locales: Buffer;
}

/** connection.start-ok (10.11) — synchronous */
export interface ConnectionStartOkArgs {
  clientProperties: FieldTable;
  mechanism: string;
  response: Buffer;
  locale: string;
}

/** connection.secure (10.20) — synchronous */
export interface ConnectionSecureArgs {
  challenge: Buffer;
}

/** connection.secure-ok (10.21) — synchronous */
export interface ConnectionSecureOkArgs {
  response: Buffer;
}

/** connection.tune (10.30) — synchronous */
export interface ConnectionTuneArgs {
  channelMax: number;
  frameMax: number;
  heartbeat: number;
}

/** connection.tune-ok (10.31) — synchronous */
export interface ConnectionTuneOkArgs {
  channelMax: number;
  frameMax: number;
  heartbeat: number;
}

/** connection.open (10.40) — synchronous */
export interface ConnectionOpenArgs {
  virtualHost: string;
  reserved1: string;
  reserved2: boolean;
}

/** connection.open-ok (10.41) — synchronous */
export interface ConnectionOpenOkArgs {
  reserved1: string;
}

/** connection.close (10.50) — synchronous */
export interface ConnectionCloseArgs {
  replyCode: number;
  replyText: string;
  classId: number;
  methodId: number;
}

/** connection.close-ok (10.51) — synchronous */
export type ConnectionCloseOkArgs = Record<string, never>;

/**
 * connection.blocked (10.60)
 * Not in the spec XML: RabbitMQ extension: https://www.rabbitmq.com/connection-blocked.html.
 */
export interface ConnectionBlockedArgs {
  reason: string;
}

/**
 * connection.unblocked (10.61)
 * Not in the spec XML: RabbitMQ extension: https://www.rabbitmq.com/connection-blocked.html.
 */
export type ConnectionUnblockedArgs = Record<string, never>;

/**
 * connection.update-secret (10.70) — synchronous
 * Not in the spec XML: RabbitMQ extension: connection.update-secret (OAuth 2 token refresh).
 */
export interface ConnectionUpdateSecretArgs {
  newSecret: Buffer;
  reason: string;
}

/**
 * connection.update-secret-ok (10.71) — synchronous
 * Not in the spec XML: RabbitMQ extension: connection.update-secret (OAuth 2 token refresh).
 */
export type ConnectionUpdateSecretOkArgs = Record<string, never>;

/** channel.open (20.10) — synchronous */
export interface ChannelOpenArgs {
  reserved1: string;
}

/** channel.open-ok (20.11) — synchronous */
export interface ChannelOpenOkArgs {
  reserved1: Buffer;
}

/** channel.flow (20.20) — synchronous */
export interface ChannelFlowArgs {
  active: boolean;
}

/** channel.flow-ok (20.21) */
export interface ChannelFlowOkArgs {
  active: boolean;
}

/** channel.close (20.40) — synchronous */
export interface ChannelCloseArgs {
  replyCode: number;
  replyText: string;
  classId: number;
  methodId: number;
}

/** channel.close-ok (20.41) — synchronous */
export type ChannelCloseOkArgs = Record<string, never>;

/**
 * access.request (30.10) — synchronous
 * Not in the spec XML: AMQP 0-9 access class, still decoded (and answered) by RabbitMQ 3.10.
 */
export interface AccessRequestArgs {
  realm: string;
  exclusive: boolean;
  passive: boolean;
  active: boolean;
  write: boolean;
  read: boolean;
}

/**
 * access.request-ok (30.11) — synchronous
 * Not in the spec XML: AMQP 0-9 access class, still decoded (and answered) by RabbitMQ 3.10.
 */
export interface AccessRequestOkArgs {
  reserved1: number;
}

/** exchange.declare (40.10) — synchronous */
export interface ExchangeDeclareArgs {
  reserved1: number;
  exchange: string;
  type: string;
  passive: boolean;
  durable: boolean;
  autoDelete: boolean;
  internal: boolean;
  noWait: boolean;
  arguments: FieldTable;
}

/** exchange.declare-ok (40.11) — synchronous */
export type ExchangeDeclareOkArgs = Record<string, never>;

/** exchange.delete (40.20) — synchronous */
export interface ExchangeDeleteArgs {
  reserved1: number;
  exchange: string;
  ifUnused: boolean;
  noWait: boolean;
}

/** exchange.delete-ok (40.21) — synchronous */
export type ExchangeDeleteOkArgs = Record<string, never>;

/** exchange.bind (40.30) — synchronous */
export interface ExchangeBindArgs {
  reserved1: number;
  destination: string;
  source: string;
  routingKey: string;
  noWait: boolean;
  arguments: FieldTable;
}

/** exchange.bind-ok (40.31) — synchronous */
export type ExchangeBindOkArgs = Record<string, never>;

/** exchange.unbind (40.40) — synchronous */
export interface ExchangeUnbindArgs {
  reserved1: number;
  destination: string;
  source: string;
  routingKey: string;
  noWait: boolean;
  arguments: FieldTable;
}

/** exchange.unbind-ok (40.51) — synchronous */
export type ExchangeUnbindOkArgs = Record<string, never>;

/** queue.declare (50.10) — synchronous */
export interface QueueDeclareArgs {
  reserved1: number;
  queue: string;
  passive: boolean;
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
  noWait: boolean;
  arguments: FieldTable;
}

/** queue.declare-ok (50.11) — synchronous */
export interface QueueDeclareOkArgs {
  queue: string;
  messageCount: number;
  consumerCount: number;
}

/** queue.bind (50.20) — synchronous */
export interface QueueBindArgs {
  reserved1: number;
  queue: string;
  exchange: string;
  routingKey: string;
  noWait: boolean;
  arguments: FieldTable;
}

/** queue.bind-ok (50.21) — synchronous */
export type QueueBindOkArgs = Record<string, never>;

/** queue.unbind (50.50) — synchronous */
export interface QueueUnbindArgs {
  reserved1: number;
  queue: string;
  exchange: string;
  routingKey: string;
  arguments: FieldTable;
}

/** queue.unbind-ok (50.51) — synchronous */
export type QueueUnbindOkArgs = Record<string, never>;

/** queue.purge (50.30) — synchronous */
export interface QueuePurgeArgs {
  reserved1: number;
  queue: string;
  noWait: boolean;
}

/** queue.purge-ok (50.31) — synchronous */
export interface QueuePurgeOkArgs {
  messageCount: number;
}

/** queue.delete (50.40) — synchronous */
export interface QueueDeleteArgs {
  reserved1: number;
  queue: string;
  ifUnused: boolean;
  ifEmpty: boolean;
  noWait: boolean;
}

/** queue.delete-ok (50.41) — synchronous */
export interface QueueDeleteOkArgs {
  messageCount: number;
}

/** basic.qos (60.10) — synchronous */
export interface BasicQosArgs {
  prefetchSize: number;
  prefetchCount: number;
  global: boolean;
}

/** basic.qos-ok (60.11) — synchronous */
export type BasicQosOkArgs = Record<string, never>;

/** basic.consume (60.20) — synchronous */
export interface BasicConsumeArgs {
  reserved1: number;
  queue: string;
  consumerTag: string;
  noLocal: boolean;
  noAck: boolean;
  exclusive: boolean;
  noWait: boolean;
  arguments: FieldTable;
}

/** basic.consume-ok (60.21) — synchronous */
export interface BasicConsumeOkArgs {
  consumerTag: string;
}

/** basic.cancel (60.30) — synchronous */
export interface BasicCancelArgs {
  consumerTag: string;
  noWait: boolean;
}

/** basic.cancel-ok (60.31) — synchronous */
export interface BasicCancelOkArgs {
  consumerTag: string;
}

/** basic.publish (60.40) — carries content */
export interface BasicPublishArgs {
  reserved1: number;
  exchange: string;
  routingKey: string;
  mandatory: boolean;
  immediate: boolean;
}

/** basic.return (60.50) — carries content */
export interface BasicReturnArgs {
  replyCode: number;
  replyText: string;
  exchange: string;
  routingKey: string;
}

/** basic.deliver (60.60) — carries content */
export interface BasicDeliverArgs {
  consumerTag: string;
  deliveryTag: number;
  redelivered: boolean;
  exchange: string;
  routingKey: string;
}

/** basic.get (60.70) — synchronous */
export interface BasicGetArgs {
  reserved1: number;
  queue: string;
  noAck: boolean;
}

/** basic.get-ok (60.71) — synchronous, carries content */
export interface BasicGetOkArgs {
  deliveryTag: number;
  redelivered: boolean;
  exchange: string;
  routingKey: string;
  messageCount: number;
}

/** basic.get-empty (60.72) — synchronous */
export interface BasicGetEmptyArgs {
  reserved1: string;
}

/** basic.ack (60.80) */
export interface BasicAckArgs {
  deliveryTag: number;
  multiple: boolean;
}

/** basic.reject (60.90) */
export interface BasicRejectArgs {
  deliveryTag: number;
  requeue: boolean;
}

/** basic.recover-async (60.100) */
export interface BasicRecoverAsyncArgs {
  requeue: boolean;
}

/** basic.recover (60.110) */
export interface BasicRecoverArgs {
  requeue: boolean;
}

/** basic.recover-ok (60.111) — synchronous */
export type BasicRecoverOkArgs = Record<string, never>;

/** basic.nack (60.120) */
export interface BasicNackArgs {
  deliveryTag: number;
  multiple: boolean;
  requeue: boolean;
}

/**
 * basic.credit (60.200) — synchronous
 * Not in the spec XML: RabbitMQ extension (credit flow for AMQP 1.0 links), decoded by RabbitMQ 3.10.
 */
export interface BasicCreditArgs {
  consumerTag: string;
  credit: number;
  drain: boolean;
}

/**
 * basic.credit-ok (60.201) — synchronous
 * Not in the spec XML: RabbitMQ extension (credit flow for AMQP 1.0 links), decoded by RabbitMQ 3.10.
 */
export interface BasicCreditOkArgs {
  available: number;
}

/**
 * basic.credit-drained (60.202)
 * Not in the spec XML: RabbitMQ extension (credit flow for AMQP 1.0 links), decoded by RabbitMQ 3.10.
 */
export interface BasicCreditDrainedArgs {
  consumerTag: string;
  creditDrained: number;
}

/** tx.select (90.10) — synchronous */
export type TxSelectArgs = Record<string, never>;

/** tx.select-ok (90.11) — synchronous */
export type TxSelectOkArgs = Record<string, never>;

/** tx.commit (90.20) — synchronous */
export type TxCommitArgs = Record<string, never>;

/** tx.commit-ok (90.21) — synchronous */
export type TxCommitOkArgs = Record<string, never>;

/** tx.rollback (90.30) — synchronous */
export type TxRollbackArgs = Record<string, never>;

/** tx.rollback-ok (90.31) — synchronous */
export type TxRollbackOkArgs = Record<string, never>;

/** confirm.select (85.10) — synchronous */
export interface ConfirmSelectArgs {
  nowait: boolean;
}

/** confirm.select-ok (85.11) — synchronous */
export type ConfirmSelectOkArgs = Record<string, never>;

export interface MethodArgsByName {
  'connection.start': ConnectionStartArgs;
  'connection.start-ok': ConnectionStartOkArgs;
  'connection.secure': ConnectionSecureArgs;
  'connection.secure-ok': ConnectionSecureOkArgs;
  'connection.tune': ConnectionTuneArgs;
  'connection.tune-ok': ConnectionTuneOkArgs;
  'connection.open': ConnectionOpenArgs;
  'connection.open-ok': ConnectionOpenOkArgs;
  'connection.close': ConnectionCloseArgs;
  'connection.close-ok': ConnectionCloseOkArgs;
  'connection.blocked': ConnectionBlockedArgs;
  'connection.unblocked': ConnectionUnblockedArgs;
  'connection.update-secret': ConnectionUpdateSecretArgs;
  'connection.update-secret-ok': ConnectionUpdateSecretOkArgs;
  'channel.open': ChannelOpenArgs;
  'channel.open-ok': ChannelOpenOkArgs;
  'channel.flow': ChannelFlowArgs;
  'channel.flow-ok': ChannelFlowOkArgs;
  'channel.close': ChannelCloseArgs;
  'channel.close-ok': ChannelCloseOkArgs;
  'access.request': AccessRequestArgs;
  'access.request-ok': AccessRequestOkArgs;
  'exchange.declare': ExchangeDeclareArgs;
  'exchange.declare-ok': ExchangeDeclareOkArgs;
  'exchange.delete': ExchangeDeleteArgs;
  'exchange.delete-ok': ExchangeDeleteOkArgs;
  'exchange.bind': ExchangeBindArgs;
  'exchange.bind-ok': ExchangeBindOkArgs;
  'exchange.unbind': ExchangeUnbindArgs;
  'exchange.unbind-ok': ExchangeUnbindOkArgs;
  'queue.declare': QueueDeclareArgs;
  'queue.declare-ok': QueueDeclareOkArgs;
  'queue.bind': QueueBindArgs;
  'queue.bind-ok': QueueBindOkArgs;
  'queue.unbind': QueueUnbindArgs;
  'queue.unbind-ok': QueueUnbindOkArgs;
  'queue.purge': QueuePurgeArgs;
  'queue.purge-ok': QueuePurgeOkArgs;
  'queue.delete': QueueDeleteArgs;
  'queue.delete-ok': QueueDeleteOkArgs;
  'basic.qos': BasicQosArgs;
  'basic.qos-ok': BasicQosOkArgs;
  'basic.consume': BasicConsumeArgs;
  'basic.consume-ok': BasicConsumeOkArgs;
  'basic.cancel': BasicCancelArgs;
  'basic.cancel-ok': BasicCancelOkArgs;
  'basic.publish': BasicPublishArgs;
  'basic.return': BasicReturnArgs;
  'basic.deliver': BasicDeliverArgs;
  'basic.get': BasicGetArgs;
  'basic.get-ok': BasicGetOkArgs;
  'basic.get-empty': BasicGetEmptyArgs;
  'basic.ack': BasicAckArgs;
  'basic.reject': BasicRejectArgs;
  'basic.recover-async': BasicRecoverAsyncArgs;
  'basic.recover': BasicRecoverArgs;
  'basic.recover-ok': BasicRecoverOkArgs;
  'basic.nack': BasicNackArgs;
  'basic.credit': BasicCreditArgs;
  'basic.credit-ok': BasicCreditOkArgs;
  'basic.credit-drained': BasicCreditDrainedArgs;
  'tx.select': TxSelectArgs;
  'tx.select-ok': TxSelectOkArgs;
  'tx.commit': TxCommitArgs;
  'tx.commit-ok': TxCommitOkArgs;
  'tx.rollback': TxRollbackArgs;
  'tx.rollback-ok': TxRollbackOkArgs;
  'confirm.select': ConfirmSelectArgs;
  'confirm.select-ok': ConfirmSelectOkArgs;
}

export type MethodName = keyof MethodArgsByName;

export type Method = {
  [N in MethodName]: { name: N; classId: number; methodId: number; args: MethodArgsByName[N] };
}[MethodName];

/** Fields an encoder fills in when left out: reserved ones (0 or '') and method arguments ({}). */
type DefaultedKey = 'reserved1' | 'reserved2' | 'arguments';
type Widen<T> = T extends Buffer ? Buffer | string : T;

/** What encoders accept: longstrs may be strings, reserved fields and arguments may be left out. */
export type MethodArgsInput<N extends MethodName> = {
  [K in keyof MethodArgsByName[N] as K extends DefaultedKey ? never : K]: Widen<MethodArgsByName[N][K]>;
} & {
  [K in keyof MethodArgsByName[N] as K extends DefaultedKey ? K : never]?: Widen<MethodArgsByName[N][K]>;
};

export interface MethodInfo {
  classId: number;
  methodId: number;
  hasContent: boolean;
  synchronous: boolean;
  responses: MethodName[];
}

export const METHODS: Record<MethodName, MethodInfo> = {
  'connection.start': { classId: 10, methodId: 10, hasContent: false, synchronous: true, responses: ['connection.start-ok'] },
  'connection.start-ok': { classId: 10, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'connection.secure': { classId: 10, methodId: 20, hasContent: false, synchronous: true, responses: ['connection.secure-ok'] },
  'connection.secure-ok': { classId: 10, methodId: 21, hasContent: false, synchronous: true, responses: [] },
  'connection.tune': { classId: 10, methodId: 30, hasContent: false, synchronous: true, responses: ['connection.tune-ok'] },
  'connection.tune-ok': { classId: 10, methodId: 31, hasContent: false, synchronous: true, responses: [] },
  'connection.open': { classId: 10, methodId: 40, hasContent: false, synchronous: true, responses: ['connection.open-ok'] },
  'connection.open-ok': { classId: 10, methodId: 41, hasContent: false, synchronous: true, responses: [] },
  'connection.close': { classId: 10, methodId: 50, hasContent: false, synchronous: true, responses: ['connection.close-ok'] },
  'connection.close-ok': { classId: 10, methodId: 51, hasContent: false, synchronous: true, responses: [] },
  'connection.blocked': { classId: 10, methodId: 60, hasContent: false, synchronous: false, responses: [] },
  'connection.unblocked': { classId: 10, methodId: 61, hasContent: false, synchronous: false, responses: [] },
  'connection.update-secret': { classId: 10, methodId: 70, hasContent: false, synchronous: true, responses: ['connection.update-secret-ok'] },
  'connection.update-secret-ok': { classId: 10, methodId: 71, hasContent: false, synchronous: true, responses: [] },
  'channel.open': { classId: 20, methodId: 10, hasContent: false, synchronous: true, responses: ['channel.open-ok'] },
  'channel.open-ok': { classId: 20, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'channel.flow': { classId: 20, methodId: 20, hasContent: false, synchronous: true, responses: ['channel.flow-ok'] },
  'channel.flow-ok': { classId: 20, methodId: 21, hasContent: false, synchronous: false, responses: [] },
  'channel.close': { classId: 20, methodId: 40, hasContent: false, synchronous: true, responses: ['channel.close-ok'] },
  'channel.close-ok': { classId: 20, methodId: 41, hasContent: false, synchronous: true, responses: [] },
  'access.request': { classId: 30, methodId: 10, hasContent: false, synchronous: true, responses: ['access.request-ok'] },
  'access.request-ok': { classId: 30, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'exchange.declare': { classId: 40, methodId: 10, hasContent: false, synchronous: true, responses: ['exchange.declare-ok'] },
  'exchange.declare-ok': { classId: 40, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'exchange.delete': { classId: 40, methodId: 20, hasContent: false, synchronous: true, responses: ['exchange.delete-ok'] },
  'exchange.delete-ok': { classId: 40, methodId: 21, hasContent: false, synchronous: true, responses: [] },
  'exchange.bind': { classId: 40, methodId: 30, hasContent: false, synchronous: true, responses: ['exchange.bind-ok'] },
  'exchange.bind-ok': { classId: 40, methodId: 31, hasContent: false, synchronous: true, responses: [] },
  'exchange.unbind': { classId: 40, methodId: 40, hasContent: false, synchronous: true, responses: ['exchange.unbind-ok'] },
  'exchange.unbind-ok': { classId: 40, methodId: 51, hasContent: false, synchronous: true, responses: [] },
  'queue.declare': { classId: 50, methodId: 10, hasContent: false, synchronous: true, responses: ['queue.declare-ok'] },
  'queue.declare-ok': { classId: 50, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'queue.bind': { classId: 50, methodId: 20, hasContent: false, synchronous: true, responses: ['queue.bind-ok'] },
  'queue.bind-ok': { classId: 50, methodId: 21, hasContent: false, synchronous: true, responses: [] },
  'queue.unbind': { classId: 50, methodId: 50, hasContent: false, synchronous: true, responses: ['queue.unbind-ok'] },
  'queue.unbind-ok': { classId: 50, methodId: 51, hasContent: false, synchronous: true, responses: [] },
  'queue.purge': { classId: 50, methodId: 30, hasContent: false, synchronous: true, responses: ['queue.purge-ok'] },
  'queue.purge-ok': { classId: 50, methodId: 31, hasContent: false, synchronous: true, responses: [] },
  'queue.delete': { classId: 50, methodId: 40, hasContent: false, synchronous: true, responses: ['queue.delete-ok'] },
  'queue.delete-ok': { classId: 50, methodId: 41, hasContent: false, synchronous: true, responses: [] },
  'basic.qos': { classId: 60, methodId: 10, hasContent: false, synchronous: true, responses: ['basic.qos-ok'] },
  'basic.qos-ok': { classId: 60, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'basic.consume': { classId: 60, methodId: 20, hasContent: false, synchronous: true, responses: ['basic.consume-ok'] },
  'basic.consume-ok': { classId: 60, methodId: 21, hasContent: false, synchronous: true, responses: [] },
  'basic.cancel': { classId: 60, methodId: 30, hasContent: false, synchronous: true, responses: ['basic.cancel-ok'] },
  'basic.cancel-ok': { classId: 60, methodId: 31, hasContent: false, synchronous: true, responses: [] },
  'basic.publish': { classId: 60, methodId: 40, hasContent: true, synchronous: false, responses: [] },
  'basic.return': { classId: 60, methodId: 50, hasContent: true, synchronous: false, responses: [] },
  'basic.deliver': { classId: 60, methodId: 60, hasContent: true, synchronous: false, responses: [] },
  'basic.get': { classId: 60, methodId: 70, hasContent: false, synchronous: true, responses: ['basic.get-ok', 'basic.get-empty'] },
  'basic.get-ok': { classId: 60, methodId: 71, hasContent: true, synchronous: true, responses: [] },
  'basic.get-empty': { classId: 60, methodId: 72, hasContent: false, synchronous: true, responses: [] },
  'basic.ack': { classId: 60, methodId: 80, hasContent: false, synchronous: false, responses: [] },
  'basic.reject': { classId: 60, methodId: 90, hasContent: false, synchronous: false, responses: [] },
  'basic.recover-async': { classId: 60, methodId: 100, hasContent: false, synchronous: false, responses: [] },
  'basic.recover': { classId: 60, methodId: 110, hasContent: false, synchronous: false, responses: [] },
  'basic.recover-ok': { classId: 60, methodId: 111, hasContent: false, synchronous: true, responses: [] },
  'basic.nack': { classId: 60, methodId: 120, hasContent: false, synchronous: false, responses: [] },
  'basic.credit': { classId: 60, methodId: 200, hasContent: false, synchronous: true, responses: ['basic.credit-ok'] },
  'basic.credit-ok': { classId: 60, methodId: 201, hasContent: false, synchronous: true, responses: [] },
  'basic.credit-drained': { classId: 60, methodId: 202, hasContent: false, synchronous: false, responses: [] },
  'tx.select': { classId: 90, methodId: 10, hasContent: false, synchronous: true, responses: ['tx.select-ok'] },
  'tx.select-ok': { classId: 90, methodId: 11, hasContent: false, synchronous: true, responses: [] },
  'tx.commit': { classId: 90, methodId: 20, hasContent: false, synchronous: true, responses: ['tx.commit-ok'] },
  'tx.commit-ok': { classId: 90, methodId: 21, hasContent: false, synchronous: true, responses: [] },
  'tx.rollback': { classId: 90, methodId: 30, hasContent: false, synchronous: true, responses: ['tx.rollback-ok'] },
  'tx.rollback-ok': { classId: 90, methodId: 31, hasContent: false, synchronous: true, responses: [] },
  'confirm.select': { classId: 85, methodId: 10, hasContent: false, synchronous: true, responses: ['confirm.select-ok'] },
  'confirm.select-ok': { classId: 85, methodId: 11, hasContent: false, synchronous: true, responses: [] },
};

const NAMES = new Map<number, MethodName>(
  (Object.keys(METHODS) as MethodName[]).map((n) => [METHODS[n].classId * 0x10000 + METHODS[n].methodId, n]),
);

/** The dotted spec name of a class/method id pair, e.g. (60, 40) → 'basic.publish'. */
export function methodNameOf(classId: number, methodId: number): MethodName | undefined {
  return NAMES.get(classId * 0x10000 + methodId);
}

const EMPTY_TABLE: FieldTable = Object.freeze(Object.create(null) as FieldTable);

function fail(p: Buffer, classId: number, methodId: number): never {
  throw cannotDecodeError(p.subarray(4), classId, methodId);
}

function decodeConnectionStart(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 10, 10);
  const v0 = p[o]!;
  const v1 = p[o + 1]!;
  o += 2;
  if (o + 4 > n) return fail(p, 10, 10);
  const s2 = o + 4;
  o = s2 + p.readUInt32BE(o);
  const e2 = o;
  if (o + 4 > n) return fail(p, 10, 10);
  const s3 = o + 4;
  o = s3 + p.readUInt32BE(o);
  const e3 = o;
  if (o + 4 > n) return fail(p, 10, 10);
  const s4 = o + 4;
  o = s4 + p.readUInt32BE(o);
  const e4 = o;
  if (o !== n) return fail(p, 10, 10);
  const v2 = parseTable(p, s2, e2);
  return {
    name: 'connection.start',
    classId: 10,
    methodId: 10,
    args: {
      versionMajor: v0,
      versionMinor: v1,
      serverProperties: v2,
      mechanisms: p.subarray(s3, e3),
      locales: p.subarray(s4, e4),
    },
  };
}

function decodeConnectionStartOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 10, 11);
  const s0 = o + 4;
  o = s0 + p.readUInt32BE(o);
  const e0 = o;
  if (o + 1 > n) return fail(p, 10, 11);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 4 > n) return fail(p, 10, 11);
  const s2 = o + 4;
  o = s2 + p.readUInt32BE(o);
  const e2 = o;
  if (o + 1 > n) return fail(p, 10, 11);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o !== n) return fail(p, 10, 11);
  const v0 = parseTable(p, s0, e0);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s3, e3)) throw malformedUtf8Error();
  return {
    name: 'connection.start-ok',
    classId: 10,
    methodId: 11,
    args: {
      clientProperties: v0,
      mechanism: p.toString('utf8', s1, e1),
      response: p.subarray(s2, e2),
      locale: p.toString('utf8', s3, e3),
    },
  };
}

function decodeConnectionSecure(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 10, 20);
  const s0 = o + 4;
  o = s0 + p.readUInt32BE(o);
  const e0 = o;
  if (o !== n) return fail(p, 10, 20);
  return {
    name: 'connection.secure',
    classId: 10,
    methodId: 20,
    args: {
      challenge: p.subarray(s0, e0),
    },
  };
}

function decodeConnectionSecureOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 10, 21);
  const s0 = o + 4;
  o = s0 + p.readUInt32BE(o);
  const e0 = o;
  if (o !== n) return fail(p, 10, 21);
  return {
    name: 'connection.secure-ok',
    classId: 10,
    methodId: 21,
    args: {
      response: p.subarray(s0, e0),
    },
  };
}

function decodeConnectionTune(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 8 > n) return fail(p, 10, 30);
  const v0 = p.readUInt16BE(o);
  const v1 = p.readUInt32BE(o + 2);
  const v2 = p.readUInt16BE(o + 6);
  o += 8;
  if (o !== n) return fail(p, 10, 30);
  return {
    name: 'connection.tune',
    classId: 10,
    methodId: 30,
    args: {
      channelMax: v0,
      frameMax: v1,
      heartbeat: v2,
    },
  };
}

function decodeConnectionTuneOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 8 > n) return fail(p, 10, 31);
  const v0 = p.readUInt16BE(o);
  const v1 = p.readUInt32BE(o + 2);
  const v2 = p.readUInt16BE(o + 6);
  o += 8;
  if (o !== n) return fail(p, 10, 31);
  return {
    name: 'connection.tune-ok',
    classId: 10,
    methodId: 31,
    args: {
      channelMax: v0,
      frameMax: v1,
      heartbeat: v2,
    },
  };
}

function decodeConnectionOpen(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 10, 40);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 1 > n) return fail(p, 10, 40);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 10, 40);
  const b2 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 10, 40);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'connection.open',
    classId: 10,
    methodId: 40,
    args: {
      virtualHost: p.toString('utf8', s0, e0),
      reserved1: p.toString('utf8', s1, e1),
      reserved2: (b2 & 1) !== 0,
    },
  };
}

function decodeConnectionOpenOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 10, 41);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 10, 41);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'connection.open-ok',
    classId: 10,
    methodId: 41,
    args: {
      reserved1: p.toString('utf8', s0, e0),
    },
  };
}

function decodeConnectionClose(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 10, 50);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 10, 50);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 4 > n) return fail(p, 10, 50);
  const v2 = p.readUInt16BE(o);
  const v3 = p.readUInt16BE(o + 2);
  o += 4;
  if (o !== n) return fail(p, 10, 50);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'connection.close',
    classId: 10,
    methodId: 50,
    args: {
      replyCode: v0,
      replyText: p.toString('utf8', s1, e1),
      classId: v2,
      methodId: v3,
    },
  };
}

function decodeConnectionCloseOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 10, 51);
  return {
    name: 'connection.close-ok',
    classId: 10,
    methodId: 51,
    args: {},
  };
}

function decodeConnectionBlocked(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 10, 60);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 10, 60);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'connection.blocked',
    classId: 10,
    methodId: 60,
    args: {
      reason: p.toString('utf8', s0, e0),
    },
  };
}

function decodeConnectionUnblocked(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 10, 61);
  return {
    name: 'connection.unblocked',
    classId: 10,
    methodId: 61,
    args: {},
  };
}

function decodeConnectionUpdateSecret(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 10, 70);
  const s0 = o + 4;
  o = s0 + p.readUInt32BE(o);
  const e0 = o;
  if (o + 1 > n) return fail(p, 10, 70);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o !== n) return fail(p, 10, 70);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'connection.update-secret',
    classId: 10,
    methodId: 70,
    args: {
      newSecret: p.subarray(s0, e0),
      reason: p.toString('utf8', s1, e1),
    },
  };
}

function decodeConnectionUpdateSecretOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 10, 71);
  return {
    name: 'connection.update-secret-ok',
    classId: 10,
    methodId: 71,
    args: {},
  };
}

function decodeChannelOpen(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 20, 10);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 20, 10);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'channel.open',
    classId: 20,
    methodId: 10,
    args: {
      reserved1: p.toString('utf8', s0, e0),
    },
  };
}

function decodeChannelOpenOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 20, 11);
  const s0 = o + 4;
  o = s0 + p.readUInt32BE(o);
  const e0 = o;
  if (o !== n) return fail(p, 20, 11);
  return {
    name: 'channel.open-ok',
    classId: 20,
    methodId: 11,
    args: {
      reserved1: p.subarray(s0, e0),
    },
  };
}

function decodeChannelFlow(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 20, 20);
  const b0 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 20, 20);
  return {
    name: 'channel.flow',
    classId: 20,
    methodId: 20,
    args: {
      active: (b0 & 1) !== 0,
    },
  };
}

function decodeChannelFlowOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 20, 21);
  const b0 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 20, 21);
  return {
    name: 'channel.flow-ok',
    classId: 20,
    methodId: 21,
    args: {
      active: (b0 & 1) !== 0,
    },
  };
}

function decodeChannelClose(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 20, 40);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 20, 40);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 4 > n) return fail(p, 20, 40);
  const v2 = p.readUInt16BE(o);
  const v3 = p.readUInt16BE(o + 2);
  o += 4;
  if (o !== n) return fail(p, 20, 40);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'channel.close',
    classId: 20,
    methodId: 40,
    args: {
      replyCode: v0,
      replyText: p.toString('utf8', s1, e1),
      classId: v2,
      methodId: v3,
    },
  };
}

function decodeChannelCloseOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 20, 41);
  return {
    name: 'channel.close-ok',
    classId: 20,
    methodId: 41,
    args: {},
  };
}

function decodeAccessRequest(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 30, 10);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 1 > n) return fail(p, 30, 10);
  const b1 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 30, 10);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'access.request',
    classId: 30,
    methodId: 10,
    args: {
      realm: p.toString('utf8', s0, e0),
      exclusive: (b1 & 1) !== 0,
      passive: (b1 & 2) !== 0,
      active: (b1 & 4) !== 0,
      write: (b1 & 8) !== 0,
      read: (b1 & 16) !== 0,
    },
  };
}

function decodeAccessRequestOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 30, 11);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o !== n) return fail(p, 30, 11);
  return {
    name: 'access.request-ok',
    classId: 30,
    methodId: 11,
    args: {
      reserved1: v0,
    },
  };
}

function decodeExchangeDeclare(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 40, 10);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 40, 10);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 40, 10);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 40, 10);
  const b3 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 40, 10);
  const s8 = o + 4;
  o = s8 + p.readUInt32BE(o);
  const e8 = o;
  if (o !== n) return fail(p, 40, 10);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  const v8 = parseTable(p, s8, e8);
  return {
    name: 'exchange.declare',
    classId: 40,
    methodId: 10,
    args: {
      reserved1: v0,
      exchange: p.toString('utf8', s1, e1),
      type: p.toString('utf8', s2, e2),
      passive: (b3 & 1) !== 0,
      durable: (b3 & 2) !== 0,
      autoDelete: (b3 & 4) !== 0,
      internal: (b3 & 8) !== 0,
      noWait: (b3 & 16) !== 0,
      arguments: v8,
    },
  };
}

function decodeExchangeDeclareOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 40, 11);
  return {
    name: 'exchange.declare-ok',
    classId: 40,
    methodId: 11,
    args: {},
  };
}

function decodeExchangeDelete(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 40, 20);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 40, 20);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 40, 20);
  const b2 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 40, 20);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'exchange.delete',
    classId: 40,
    methodId: 20,
    args: {
      reserved1: v0,
      exchange: p.toString('utf8', s1, e1),
      ifUnused: (b2 & 1) !== 0,
      noWait: (b2 & 2) !== 0,
    },
  };
}

function decodeExchangeDeleteOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 40, 21);
  return {
    name: 'exchange.delete-ok',
    classId: 40,
    methodId: 21,
    args: {},
  };
}

function decodeExchangeBind(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 40, 30);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 40, 30);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 40, 30);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 40, 30);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 1 > n) return fail(p, 40, 30);
  const b4 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 40, 30);
  const s5 = o + 4;
  o = s5 + p.readUInt32BE(o);
  const e5 = o;
  if (o !== n) return fail(p, 40, 30);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s3, e3)) throw malformedUtf8Error();
  const v5 = parseTable(p, s5, e5);
  return {
    name: 'exchange.bind',
    classId: 40,
    methodId: 30,
    args: {
      reserved1: v0,
      destination: p.toString('utf8', s1, e1),
      source: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
      noWait: (b4 & 1) !== 0,
      arguments: v5,
    },
  };
}

function decodeExchangeBindOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 40, 31);
  return {
    name: 'exchange.bind-ok',
    classId: 40,
    methodId: 31,
    args: {},
  };
}

function decodeExchangeUnbind(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 40, 40);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 40, 40);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 40, 40);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 40, 40);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 1 > n) return fail(p, 40, 40);
  const b4 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 40, 40);
  const s5 = o + 4;
  o = s5 + p.readUInt32BE(o);
  const e5 = o;
  if (o !== n) return fail(p, 40, 40);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s3, e3)) throw malformedUtf8Error();
  const v5 = parseTable(p, s5, e5);
  return {
    name: 'exchange.unbind',
    classId: 40,
    methodId: 40,
    args: {
      reserved1: v0,
      destination: p.toString('utf8', s1, e1),
      source: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
      noWait: (b4 & 1) !== 0,
      arguments: v5,
    },
  };
}

function decodeExchangeUnbindOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 40, 51);
  return {
    name: 'exchange.unbind-ok',
    classId: 40,
    methodId: 51,
    args: {},
  };
}

function decodeQueueDeclare(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 50, 10);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 50, 10);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 50, 10);
  const b2 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 50, 10);
  const s7 = o + 4;
  o = s7 + p.readUInt32BE(o);
  const e7 = o;
  if (o !== n) return fail(p, 50, 10);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  const v7 = parseTable(p, s7, e7);
  return {
    name: 'queue.declare',
    classId: 50,
    methodId: 10,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      passive: (b2 & 1) !== 0,
      durable: (b2 & 2) !== 0,
      exclusive: (b2 & 4) !== 0,
      autoDelete: (b2 & 8) !== 0,
      noWait: (b2 & 16) !== 0,
      arguments: v7,
    },
  };
}

function decodeQueueDeclareOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 50, 11);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 8 > n) return fail(p, 50, 11);
  const v1 = p.readUInt32BE(o);
  const v2 = p.readUInt32BE(o + 4);
  o += 8;
  if (o !== n) return fail(p, 50, 11);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'queue.declare-ok',
    classId: 50,
    methodId: 11,
    args: {
      queue: p.toString('utf8', s0, e0),
      messageCount: v1,
      consumerCount: v2,
    },
  };
}

function decodeQueueBind(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 50, 20);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 50, 20);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 50, 20);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 50, 20);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 1 > n) return fail(p, 50, 20);
  const b4 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 50, 20);
  const s5 = o + 4;
  o = s5 + p.readUInt32BE(o);
  const e5 = o;
  if (o !== n) return fail(p, 50, 20);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s3, e3)) throw malformedUtf8Error();
  const v5 = parseTable(p, s5, e5);
  return {
    name: 'queue.bind',
    classId: 50,
    methodId: 20,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      exchange: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
      noWait: (b4 & 1) !== 0,
      arguments: v5,
    },
  };
}

function decodeQueueBindOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 50, 21);
  return {
    name: 'queue.bind-ok',
    classId: 50,
    methodId: 21,
    args: {},
  };
}

function decodeQueueUnbind(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 50, 50);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 50, 50);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 50, 50);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 50, 50);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 4 > n) return fail(p, 50, 50);
  const s4 = o + 4;
  o = s4 + p.readUInt32BE(o);
  const e4 = o;
  if (o !== n) return fail(p, 50, 50);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s3, e3)) throw malformedUtf8Error();
  const v4 = parseTable(p, s4, e4);
  return {
    name: 'queue.unbind',
    classId: 50,
    methodId: 50,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      exchange: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
      arguments: v4,
    },
  };
}

function decodeQueueUnbindOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 50, 51);
  return {
    name: 'queue.unbind-ok',
    classId: 50,
    methodId: 51,
    args: {},
  };
}

function decodeQueuePurge(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 50, 30);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 50, 30);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 50, 30);
  const b2 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 50, 30);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'queue.purge',
    classId: 50,
    methodId: 30,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      noWait: (b2 & 1) !== 0,
    },
  };
}

function decodeQueuePurgeOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 50, 31);
  const v0 = p.readUInt32BE(o);
  o += 4;
  if (o !== n) return fail(p, 50, 31);
  return {
    name: 'queue.purge-ok',
    classId: 50,
    methodId: 31,
    args: {
      messageCount: v0,
    },
  };
}

function decodeQueueDelete(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 50, 40);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 50, 40);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 50, 40);
  const b2 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 50, 40);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'queue.delete',
    classId: 50,
    methodId: 40,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      ifUnused: (b2 & 1) !== 0,
      ifEmpty: (b2 & 2) !== 0,
      noWait: (b2 & 4) !== 0,
    },
  };
}

function decodeQueueDeleteOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 50, 41);
  const v0 = p.readUInt32BE(o);
  o += 4;
  if (o !== n) return fail(p, 50, 41);
  return {
    name: 'queue.delete-ok',
    classId: 50,
    methodId: 41,
    args: {
      messageCount: v0,
    },
  };
}

function decodeBasicQos(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 7 > n) return fail(p, 60, 10);
  const v0 = p.readUInt32BE(o);
  const v1 = p.readUInt16BE(o + 4);
  const b2 = p[o + 6]!;
  o += 7;
  if (o !== n) return fail(p, 60, 10);
  return {
    name: 'basic.qos',
    classId: 60,
    methodId: 10,
    args: {
      prefetchSize: v0,
      prefetchCount: v1,
      global: (b2 & 1) !== 0,
    },
  };
}

function decodeBasicQosOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 60, 11);
  return {
    name: 'basic.qos-ok',
    classId: 60,
    methodId: 11,
    args: {},
  };
}

function decodeBasicConsume(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 60, 20);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 60, 20);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 60, 20);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 60, 20);
  const b3 = p[o]!;
  o += 1;
  if (o + 4 > n) return fail(p, 60, 20);
  const s7 = o + 4;
  o = s7 + p.readUInt32BE(o);
  const e7 = o;
  if (o !== n) return fail(p, 60, 20);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  if (!isRabbitUtf8(p, s2, e2)) throw malformedUtf8Error();
  const v7 = parseTable(p, s7, e7);
  return {
    name: 'basic.consume',
    classId: 60,
    methodId: 20,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      consumerTag: p.toString('utf8', s2, e2),
      noLocal: (b3 & 1) !== 0,
      noAck: (b3 & 2) !== 0,
      exclusive: (b3 & 4) !== 0,
      noWait: (b3 & 8) !== 0,
      arguments: v7,
    },
  };
}

function decodeBasicConsumeOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 21);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 60, 21);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.consume-ok',
    classId: 60,
    methodId: 21,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
    },
  };
}

function decodeBasicCancel(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 30);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 1 > n) return fail(p, 60, 30);
  const b1 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 60, 30);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.cancel',
    classId: 60,
    methodId: 30,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
      noWait: (b1 & 1) !== 0,
    },
  };
}

function decodeBasicCancelOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 31);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 60, 31);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.cancel-ok',
    classId: 60,
    methodId: 31,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
    },
  };
}

function decodeBasicPublish(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 60, 40);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 60, 40);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 60, 40);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 60, 40);
  const b3 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 60, 40);
  return {
    name: 'basic.publish',
    classId: 60,
    methodId: 40,
    args: {
      reserved1: v0,
      exchange: p.toString('utf8', s1, e1),
      routingKey: p.toString('utf8', s2, e2),
      mandatory: (b3 & 1) !== 0,
      immediate: (b3 & 2) !== 0,
    },
  };
}

function decodeBasicReturn(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 60, 50);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 60, 50);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 60, 50);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 60, 50);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o !== n) return fail(p, 60, 50);
  return {
    name: 'basic.return',
    classId: 60,
    methodId: 50,
    args: {
      replyCode: v0,
      replyText: p.toString('utf8', s1, e1),
      exchange: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
    },
  };
}

function decodeBasicDeliver(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 60);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 9 > n) return fail(p, 60, 60);
  const v1 = readU64(p, o);
  const b2 = p[o + 8]!;
  o += 9;
  if (o + 1 > n) return fail(p, 60, 60);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 1 > n) return fail(p, 60, 60);
  const s4 = o + 1;
  o = s4 + p[o]!;
  const e4 = o;
  if (o !== n) return fail(p, 60, 60);
  return {
    name: 'basic.deliver',
    classId: 60,
    methodId: 60,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
      deliveryTag: v1,
      redelivered: (b2 & 1) !== 0,
      exchange: p.toString('utf8', s3, e3),
      routingKey: p.toString('utf8', s4, e4),
    },
  };
}

function decodeBasicGet(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 2 > n) return fail(p, 60, 70);
  const v0 = p.readUInt16BE(o);
  o += 2;
  if (o + 1 > n) return fail(p, 60, 70);
  const s1 = o + 1;
  o = s1 + p[o]!;
  const e1 = o;
  if (o + 1 > n) return fail(p, 60, 70);
  const b2 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 60, 70);
  if (!isRabbitUtf8(p, s1, e1)) throw malformedUtf8Error();
  return {
    name: 'basic.get',
    classId: 60,
    methodId: 70,
    args: {
      reserved1: v0,
      queue: p.toString('utf8', s1, e1),
      noAck: (b2 & 1) !== 0,
    },
  };
}

function decodeBasicGetOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 9 > n) return fail(p, 60, 71);
  const v0 = readU64(p, o);
  const b1 = p[o + 8]!;
  o += 9;
  if (o + 1 > n) return fail(p, 60, 71);
  const s2 = o + 1;
  o = s2 + p[o]!;
  const e2 = o;
  if (o + 1 > n) return fail(p, 60, 71);
  const s3 = o + 1;
  o = s3 + p[o]!;
  const e3 = o;
  if (o + 4 > n) return fail(p, 60, 71);
  const v4 = p.readUInt32BE(o);
  o += 4;
  if (o !== n) return fail(p, 60, 71);
  return {
    name: 'basic.get-ok',
    classId: 60,
    methodId: 71,
    args: {
      deliveryTag: v0,
      redelivered: (b1 & 1) !== 0,
      exchange: p.toString('utf8', s2, e2),
      routingKey: p.toString('utf8', s3, e3),
      messageCount: v4,
    },
  };
}

function decodeBasicGetEmpty(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 72);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o !== n) return fail(p, 60, 72);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.get-empty',
    classId: 60,
    methodId: 72,
    args: {
      reserved1: p.toString('utf8', s0, e0),
    },
  };
}

function decodeBasicAck(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 9 > n) return fail(p, 60, 80);
  const v0 = readU64(p, o);
  const b1 = p[o + 8]!;
  o += 9;
  if (o !== n) return fail(p, 60, 80);
  return {
    name: 'basic.ack',
    classId: 60,
    methodId: 80,
    args: {
      deliveryTag: v0,
      multiple: (b1 & 1) !== 0,
    },
  };
}

function decodeBasicReject(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 9 > n) return fail(p, 60, 90);
  const v0 = readU64(p, o);
  const b1 = p[o + 8]!;
  o += 9;
  if (o !== n) return fail(p, 60, 90);
  return {
    name: 'basic.reject',
    classId: 60,
    methodId: 90,
    args: {
      deliveryTag: v0,
      requeue: (b1 & 1) !== 0,
    },
  };
}

function decodeBasicRecoverAsync(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 100);
  const b0 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 60, 100);
  return {
    name: 'basic.recover-async',
    classId: 60,
    methodId: 100,
    args: {
      requeue: (b0 & 1) !== 0,
    },
  };
}

function decodeBasicRecover(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 110);
  const b0 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 60, 110);
  return {
    name: 'basic.recover',
    classId: 60,
    methodId: 110,
    args: {
      requeue: (b0 & 1) !== 0,
    },
  };
}

function decodeBasicRecoverOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 60, 111);
  return {
    name: 'basic.recover-ok',
    classId: 60,
    methodId: 111,
    args: {},
  };
}

function decodeBasicNack(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 9 > n) return fail(p, 60, 120);
  const v0 = readU64(p, o);
  const b1 = p[o + 8]!;
  o += 9;
  if (o !== n) return fail(p, 60, 120);
  return {
    name: 'basic.nack',
    classId: 60,
    methodId: 120,
    args: {
      deliveryTag: v0,
      multiple: (b1 & 1) !== 0,
      requeue: (b1 & 2) !== 0,
    },
  };
}

function decodeBasicCredit(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 200);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 5 > n) return fail(p, 60, 200);
  const v1 = p.readUInt32BE(o);
  const b2 = p[o + 4]!;
  o += 5;
  if (o !== n) return fail(p, 60, 200);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.credit',
    classId: 60,
    methodId: 200,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
      credit: v1,
      drain: (b2 & 1) !== 0,
    },
  };
}

function decodeBasicCreditOk(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 4 > n) return fail(p, 60, 201);
  const v0 = p.readUInt32BE(o);
  o += 4;
  if (o !== n) return fail(p, 60, 201);
  return {
    name: 'basic.credit-ok',
    classId: 60,
    methodId: 201,
    args: {
      available: v0,
    },
  };
}

function decodeBasicCreditDrained(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 60, 202);
  const s0 = o + 1;
  o = s0 + p[o]!;
  const e0 = o;
  if (o + 4 > n) return fail(p, 60, 202);
  const v1 = p.readUInt32BE(o);
  o += 4;
  if (o !== n) return fail(p, 60, 202);
  if (!isRabbitUtf8(p, s0, e0)) throw malformedUtf8Error();
  return {
    name: 'basic.credit-drained',
    classId: 60,
    methodId: 202,
    args: {
      consumerTag: p.toString('utf8', s0, e0),
      creditDrained: v1,
    },
  };
}

function decodeTxSelect(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 10);
  return {
    name: 'tx.select',
    classId: 90,
    methodId: 10,
    args: {},
  };
}

function decodeTxSelectOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 11);
  return {
    name: 'tx.select-ok',
    classId: 90,
    methodId: 11,
    args: {},
  };
}

function decodeTxCommit(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 20);
  return {
    name: 'tx.commit',
    classId: 90,
    methodId: 20,
    args: {},
  };
}

function decodeTxCommitOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 21);
  return {
    name: 'tx.commit-ok',
    classId: 90,
    methodId: 21,
    args: {},
  };
}

function decodeTxRollback(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 30);
  return {
    name: 'tx.rollback',
    classId: 90,
    methodId: 30,
    args: {},
  };
}

function decodeTxRollbackOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 90, 31);
  return {
    name: 'tx.rollback-ok',
    classId: 90,
    methodId: 31,
    args: {},
  };
}

function decodeConfirmSelect(p: Buffer): Method {
  const n = p.length;
  let o = 4;
  if (o + 1 > n) return fail(p, 85, 10);
  const b0 = p[o]!;
  o += 1;
  if (o !== n) return fail(p, 85, 10);
  return {
    name: 'confirm.select',
    classId: 85,
    methodId: 10,
    args: {
      nowait: (b0 & 1) !== 0,
    },
  };
}

function decodeConfirmSelectOk(p: Buffer): Method {
  if (p.length !== 4) return fail(p, 85, 11);
  return {
    name: 'confirm.select-ok',
    classId: 85,
    methodId: 11,
    args: {},
  };
}

/**
 * Decodes a method frame's payload (class-id, method-id, arguments). Longstrs are zero-copy views
 * of `payload`. Throws, as RabbitMQ 3.10 answers: an unknown class/method → AbruptClose (its
 * reader crashes); arguments of the wrong length → 501 "cannot decode <<...>>" naming the method;
 * a bad UTF-8 shortstr → 501 "Malformed UTF-8 in shortstr"; an unparseable table → AbruptClose.
 */
export function decodeMethod(payload: Buffer): Method {
  const p = payload;
  if (p.length < 4) throw unknownFrameError(1, p);
  switch (p.readUInt32BE(0)) {
    case 0x000a000a:
      return decodeConnectionStart(p);
    case 0x000a000b:
      return decodeConnectionStartOk(p);
    case 0x000a0014:
      return decodeConnectionSecure(p);
    case 0x000a0015:
      return decodeConnectionSecureOk(p);
    case 0x000a001e:
      return decodeConnectionTune(p);
    case 0x000a001f:
      return decodeConnectionTuneOk(p);
    case 0x000a0028:
      return decodeConnectionOpen(p);
    case 0x000a0029:
      return decodeConnectionOpenOk(p);
    case 0x000a0032:
      return decodeConnectionClose(p);
    case 0x000a0033:
      return decodeConnectionCloseOk(p);
    case 0x000a003c:
      return decodeConnectionBlocked(p);
    case 0x000a003d:
      return decodeConnectionUnblocked(p);
    case 0x000a0046:
      return decodeConnectionUpdateSecret(p);
    case 0x000a0047:
      return decodeConnectionUpdateSecretOk(p);
    case 0x0014000a:
      return decodeChannelOpen(p);
    case 0x0014000b:
      return decodeChannelOpenOk(p);
    case 0x00140014:
      return decodeChannelFlow(p);
    case 0x00140015:
      return decodeChannelFlowOk(p);
    case 0x00140028:
      return decodeChannelClose(p);
    case 0x00140029:
      return decodeChannelCloseOk(p);
    case 0x001e000a:
      return decodeAccessRequest(p);
    case 0x001e000b:
      return decodeAccessRequestOk(p);
    case 0x0028000a:
      return decodeExchangeDeclare(p);
    case 0x0028000b:
      return decodeExchangeDeclareOk(p);
    case 0x00280014:
      return decodeExchangeDelete(p);
    case 0x00280015:
      return decodeExchangeDeleteOk(p);
    case 0x0028001e:
      return decodeExchangeBind(p);
    case 0x0028001f:
      return decodeExchangeBindOk(p);
    case 0x00280028:
      return decodeExchangeUnbind(p);
    case 0x00280033:
      return decodeExchangeUnbindOk(p);
    case 0x0032000a:
      return decodeQueueDeclare(p);
    case 0x0032000b:
      return decodeQueueDeclareOk(p);
    case 0x00320014:
      return decodeQueueBind(p);
    case 0x00320015:
      return decodeQueueBindOk(p);
    case 0x00320032:
      return decodeQueueUnbind(p);
    case 0x00320033:
      return decodeQueueUnbindOk(p);
    case 0x0032001e:
      return decodeQueuePurge(p);
    case 0x0032001f:
      return decodeQueuePurgeOk(p);
    case 0x00320028:
      return decodeQueueDelete(p);
    case 0x00320029:
      return decodeQueueDeleteOk(p);
    case 0x003c000a:
      return decodeBasicQos(p);
    case 0x003c000b:
      return decodeBasicQosOk(p);
    case 0x003c0014:
      return decodeBasicConsume(p);
    case 0x003c0015:
      return decodeBasicConsumeOk(p);
    case 0x003c001e:
      return decodeBasicCancel(p);
    case 0x003c001f:
      return decodeBasicCancelOk(p);
    case 0x003c0028:
      return decodeBasicPublish(p);
    case 0x003c0032:
      return decodeBasicReturn(p);
    case 0x003c003c:
      return decodeBasicDeliver(p);
    case 0x003c0046:
      return decodeBasicGet(p);
    case 0x003c0047:
      return decodeBasicGetOk(p);
    case 0x003c0048:
      return decodeBasicGetEmpty(p);
    case 0x003c0050:
      return decodeBasicAck(p);
    case 0x003c005a:
      return decodeBasicReject(p);
    case 0x003c0064:
      return decodeBasicRecoverAsync(p);
    case 0x003c006e:
      return decodeBasicRecover(p);
    case 0x003c006f:
      return decodeBasicRecoverOk(p);
    case 0x003c0078:
      return decodeBasicNack(p);
    case 0x003c00c8:
      return decodeBasicCredit(p);
    case 0x003c00c9:
      return decodeBasicCreditOk(p);
    case 0x003c00ca:
      return decodeBasicCreditDrained(p);
    case 0x005a000a:
      return decodeTxSelect(p);
    case 0x005a000b:
      return decodeTxSelectOk(p);
    case 0x005a0014:
      return decodeTxCommit(p);
    case 0x005a0015:
      return decodeTxCommitOk(p);
    case 0x005a001e:
      return decodeTxRollback(p);
    case 0x005a001f:
      return decodeTxRollbackOk(p);
    case 0x0055000a:
      return decodeConfirmSelect(p);
    case 0x0055000b:
      return decodeConfirmSelectOk(p);
    default:
      throw unknownMethodCrash(p.readUInt16BE(0), p.readUInt16BE(2));
  }
}

function encodeConnectionStart(ch: number, a: MethodArgsInput<'connection.start'>): Buffer {
  const t2 = a.serverProperties ?? EMPTY_TABLE;
  const l2 = tableSize(t2);
  const x3 = longstrBytes(a.mechanisms);
  const x4 = longstrBytes(a.locales);
  const size = 14 + l2 + x3.length + x4.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a000a, 7);
  let o = 11;
  b.writeUInt8(a.versionMajor, o);
  o += 1;
  b.writeUInt8(a.versionMinor, o);
  o += 1;
  o = writeTable(b, o, t2);
  b.writeUInt32BE(x3.length, o);
  o = writeBytes(b, o + 4, x3);
  b.writeUInt32BE(x4.length, o);
  o = writeBytes(b, o + 4, x4);
  b[o] = 0xce;
  return b;
}

function encodeConnectionStartOk(ch: number, a: MethodArgsInput<'connection.start-ok'>): Buffer {
  const t0 = a.clientProperties ?? EMPTY_TABLE;
  const l0 = tableSize(t0);
  const l1 = shortstrLength(a.mechanism);
  const x2 = longstrBytes(a.response);
  const l3 = shortstrLength(a.locale);
  const size = 10 + l0 + l1 + x2.length + l3;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a000b, 7);
  let o = 11;
  o = writeTable(b, o, t0);
  o = writeShortstr(b, o, a.mechanism, l1);
  b.writeUInt32BE(x2.length, o);
  o = writeBytes(b, o + 4, x2);
  o = writeShortstr(b, o, a.locale, l3);
  b[o] = 0xce;
  return b;
}

function encodeConnectionSecure(ch: number, a: MethodArgsInput<'connection.secure'>): Buffer {
  const x0 = longstrBytes(a.challenge);
  const size = 8 + x0.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0014, 7);
  let o = 11;
  b.writeUInt32BE(x0.length, o);
  o = writeBytes(b, o + 4, x0);
  b[o] = 0xce;
  return b;
}

function encodeConnectionSecureOk(ch: number, a: MethodArgsInput<'connection.secure-ok'>): Buffer {
  const x0 = longstrBytes(a.response);
  const size = 8 + x0.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0015, 7);
  let o = 11;
  b.writeUInt32BE(x0.length, o);
  o = writeBytes(b, o + 4, x0);
  b[o] = 0xce;
  return b;
}

function encodeConnectionTune(ch: number, a: MethodArgsInput<'connection.tune'>): Buffer {
  const size = 12;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a001e, 7);
  let o = 11;
  b.writeUInt16BE(a.channelMax, o);
  o += 2;
  b.writeUInt32BE(a.frameMax, o);
  o += 4;
  b.writeUInt16BE(a.heartbeat, o);
  o += 2;
  b[o] = 0xce;
  return b;
}

function encodeConnectionTuneOk(ch: number, a: MethodArgsInput<'connection.tune-ok'>): Buffer {
  const size = 12;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a001f, 7);
  let o = 11;
  b.writeUInt16BE(a.channelMax, o);
  o += 2;
  b.writeUInt32BE(a.frameMax, o);
  o += 4;
  b.writeUInt16BE(a.heartbeat, o);
  o += 2;
  b[o] = 0xce;
  return b;
}

function encodeConnectionOpen(ch: number, a: MethodArgsInput<'connection.open'>): Buffer {
  const l0 = shortstrLength(a.virtualHost);
  const l1 = shortstrLength(a.reserved1 ?? '');
  const size = 7 + l0 + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0028, 7);
  let o = 11;
  o = writeShortstr(b, o, a.virtualHost, l0);
  o = writeShortstr(b, o, a.reserved1 ?? '', l1);
  b[o++] = (a.reserved2 ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeConnectionOpenOk(ch: number, a: MethodArgsInput<'connection.open-ok'>): Buffer {
  const l0 = shortstrLength(a.reserved1 ?? '');
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0029, 7);
  let o = 11;
  o = writeShortstr(b, o, a.reserved1 ?? '', l0);
  b[o] = 0xce;
  return b;
}

function encodeConnectionClose(ch: number, a: MethodArgsInput<'connection.close'>): Buffer {
  const x1 = replyTextBytes(a.replyText);
  const size = 11 + x1.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0032, 7);
  let o = 11;
  b.writeUInt16BE(a.replyCode, o);
  o += 2;
  b[o] = x1.length;
  o = writeBytes(b, o + 1, x1);
  b.writeUInt16BE(a.classId, o);
  o += 2;
  b.writeUInt16BE(a.methodId, o);
  o += 2;
  b[o] = 0xce;
  return b;
}

function encodeConnectionCloseOk(ch: number, _a: MethodArgsInput<'connection.close-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0033, 7);
  b[11] = 0xce;
  return b;
}

function encodeConnectionBlocked(ch: number, a: MethodArgsInput<'connection.blocked'>): Buffer {
  const l0 = shortstrLength(a.reason);
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a003c, 7);
  let o = 11;
  o = writeShortstr(b, o, a.reason, l0);
  b[o] = 0xce;
  return b;
}

function encodeConnectionUnblocked(ch: number, _a: MethodArgsInput<'connection.unblocked'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a003d, 7);
  b[11] = 0xce;
  return b;
}

function encodeConnectionUpdateSecret(ch: number, a: MethodArgsInput<'connection.update-secret'>): Buffer {
  const x0 = longstrBytes(a.newSecret);
  const l1 = shortstrLength(a.reason);
  const size = 9 + x0.length + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0046, 7);
  let o = 11;
  b.writeUInt32BE(x0.length, o);
  o = writeBytes(b, o + 4, x0);
  o = writeShortstr(b, o, a.reason, l1);
  b[o] = 0xce;
  return b;
}

function encodeConnectionUpdateSecretOk(ch: number, _a: MethodArgsInput<'connection.update-secret-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x000a0047, 7);
  b[11] = 0xce;
  return b;
}

function encodeChannelOpen(ch: number, a: MethodArgsInput<'channel.open'>): Buffer {
  const l0 = shortstrLength(a.reserved1 ?? '');
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0014000a, 7);
  let o = 11;
  o = writeShortstr(b, o, a.reserved1 ?? '', l0);
  b[o] = 0xce;
  return b;
}

function encodeChannelOpenOk(ch: number, a: MethodArgsInput<'channel.open-ok'>): Buffer {
  const x0 = longstrBytes(a.reserved1 ?? '');
  const size = 8 + x0.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0014000b, 7);
  let o = 11;
  b.writeUInt32BE(x0.length, o);
  o = writeBytes(b, o + 4, x0);
  b[o] = 0xce;
  return b;
}

function encodeChannelFlow(ch: number, a: MethodArgsInput<'channel.flow'>): Buffer {
  const size = 5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00140014, 7);
  let o = 11;
  b[o++] = (a.active ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeChannelFlowOk(ch: number, a: MethodArgsInput<'channel.flow-ok'>): Buffer {
  const size = 5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00140015, 7);
  let o = 11;
  b[o++] = (a.active ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeChannelClose(ch: number, a: MethodArgsInput<'channel.close'>): Buffer {
  const x1 = replyTextBytes(a.replyText);
  const size = 11 + x1.length;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00140028, 7);
  let o = 11;
  b.writeUInt16BE(a.replyCode, o);
  o += 2;
  b[o] = x1.length;
  o = writeBytes(b, o + 1, x1);
  b.writeUInt16BE(a.classId, o);
  o += 2;
  b.writeUInt16BE(a.methodId, o);
  o += 2;
  b[o] = 0xce;
  return b;
}

function encodeChannelCloseOk(ch: number, _a: MethodArgsInput<'channel.close-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00140029, 7);
  b[11] = 0xce;
  return b;
}

function encodeAccessRequest(ch: number, a: MethodArgsInput<'access.request'>): Buffer {
  const l0 = shortstrLength(a.realm);
  const size = 6 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x001e000a, 7);
  let o = 11;
  o = writeShortstr(b, o, a.realm, l0);
  b[o++] = (a.exclusive ? 1 : 0) | (a.passive ? 2 : 0) | (a.active ? 4 : 0) | (a.write ? 8 : 0) | (a.read ? 16 : 0);
  b[o] = 0xce;
  return b;
}

function encodeAccessRequestOk(ch: number, a: MethodArgsInput<'access.request-ok'>): Buffer {
  const size = 6;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x001e000b, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  b[o] = 0xce;
  return b;
}

function encodeExchangeDeclare(ch: number, a: MethodArgsInput<'exchange.declare'>): Buffer {
  const l1 = shortstrLength(a.exchange);
  const l2 = shortstrLength(a.type);
  const t8 = a.arguments ?? EMPTY_TABLE;
  const l8 = tableSize(t8);
  const size = 9 + l1 + l2 + l8;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0028000a, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.exchange, l1);
  o = writeShortstr(b, o, a.type, l2);
  b[o++] = (a.passive ? 1 : 0) | (a.durable ? 2 : 0) | (a.autoDelete ? 4 : 0) | (a.internal ? 8 : 0) | (a.noWait ? 16 : 0);
  o = writeTable(b, o, t8);
  b[o] = 0xce;
  return b;
}

function encodeExchangeDeclareOk(ch: number, _a: MethodArgsInput<'exchange.declare-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0028000b, 7);
  b[11] = 0xce;
  return b;
}

function encodeExchangeDelete(ch: number, a: MethodArgsInput<'exchange.delete'>): Buffer {
  const l1 = shortstrLength(a.exchange);
  const size = 8 + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00280014, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.exchange, l1);
  b[o++] = (a.ifUnused ? 1 : 0) | (a.noWait ? 2 : 0);
  b[o] = 0xce;
  return b;
}

function encodeExchangeDeleteOk(ch: number, _a: MethodArgsInput<'exchange.delete-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00280015, 7);
  b[11] = 0xce;
  return b;
}

function encodeExchangeBind(ch: number, a: MethodArgsInput<'exchange.bind'>): Buffer {
  const l1 = shortstrLength(a.destination);
  const l2 = shortstrLength(a.source);
  const l3 = shortstrLength(a.routingKey);
  const t5 = a.arguments ?? EMPTY_TABLE;
  const l5 = tableSize(t5);
  const size = 10 + l1 + l2 + l3 + l5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0028001e, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.destination, l1);
  o = writeShortstr(b, o, a.source, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  b[o++] = (a.noWait ? 1 : 0);
  o = writeTable(b, o, t5);
  b[o] = 0xce;
  return b;
}

function encodeExchangeBindOk(ch: number, _a: MethodArgsInput<'exchange.bind-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0028001f, 7);
  b[11] = 0xce;
  return b;
}

function encodeExchangeUnbind(ch: number, a: MethodArgsInput<'exchange.unbind'>): Buffer {
  const l1 = shortstrLength(a.destination);
  const l2 = shortstrLength(a.source);
  const l3 = shortstrLength(a.routingKey);
  const t5 = a.arguments ?? EMPTY_TABLE;
  const l5 = tableSize(t5);
  const size = 10 + l1 + l2 + l3 + l5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00280028, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.destination, l1);
  o = writeShortstr(b, o, a.source, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  b[o++] = (a.noWait ? 1 : 0);
  o = writeTable(b, o, t5);
  b[o] = 0xce;
  return b;
}

function encodeExchangeUnbindOk(ch: number, _a: MethodArgsInput<'exchange.unbind-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00280033, 7);
  b[11] = 0xce;
  return b;
}

function encodeQueueDeclare(ch: number, a: MethodArgsInput<'queue.declare'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const t7 = a.arguments ?? EMPTY_TABLE;
  const l7 = tableSize(t7);
  const size = 8 + l1 + l7;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0032000a, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  b[o++] = (a.passive ? 1 : 0) | (a.durable ? 2 : 0) | (a.exclusive ? 4 : 0) | (a.autoDelete ? 8 : 0) | (a.noWait ? 16 : 0);
  o = writeTable(b, o, t7);
  b[o] = 0xce;
  return b;
}

function encodeQueueDeclareOk(ch: number, a: MethodArgsInput<'queue.declare-ok'>): Buffer {
  const l0 = shortstrLength(a.queue);
  const size = 13 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0032000b, 7);
  let o = 11;
  o = writeShortstr(b, o, a.queue, l0);
  b.writeUInt32BE(a.messageCount, o);
  o += 4;
  b.writeUInt32BE(a.consumerCount, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeQueueBind(ch: number, a: MethodArgsInput<'queue.bind'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const l2 = shortstrLength(a.exchange);
  const l3 = shortstrLength(a.routingKey);
  const t5 = a.arguments ?? EMPTY_TABLE;
  const l5 = tableSize(t5);
  const size = 10 + l1 + l2 + l3 + l5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320014, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  o = writeShortstr(b, o, a.exchange, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  b[o++] = (a.noWait ? 1 : 0);
  o = writeTable(b, o, t5);
  b[o] = 0xce;
  return b;
}

function encodeQueueBindOk(ch: number, _a: MethodArgsInput<'queue.bind-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320015, 7);
  b[11] = 0xce;
  return b;
}

function encodeQueueUnbind(ch: number, a: MethodArgsInput<'queue.unbind'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const l2 = shortstrLength(a.exchange);
  const l3 = shortstrLength(a.routingKey);
  const t4 = a.arguments ?? EMPTY_TABLE;
  const l4 = tableSize(t4);
  const size = 9 + l1 + l2 + l3 + l4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320032, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  o = writeShortstr(b, o, a.exchange, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  o = writeTable(b, o, t4);
  b[o] = 0xce;
  return b;
}

function encodeQueueUnbindOk(ch: number, _a: MethodArgsInput<'queue.unbind-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320033, 7);
  b[11] = 0xce;
  return b;
}

function encodeQueuePurge(ch: number, a: MethodArgsInput<'queue.purge'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const size = 8 + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0032001e, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  b[o++] = (a.noWait ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeQueuePurgeOk(ch: number, a: MethodArgsInput<'queue.purge-ok'>): Buffer {
  const size = 8;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0032001f, 7);
  let o = 11;
  b.writeUInt32BE(a.messageCount, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeQueueDelete(ch: number, a: MethodArgsInput<'queue.delete'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const size = 8 + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320028, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  b[o++] = (a.ifUnused ? 1 : 0) | (a.ifEmpty ? 2 : 0) | (a.noWait ? 4 : 0);
  b[o] = 0xce;
  return b;
}

function encodeQueueDeleteOk(ch: number, a: MethodArgsInput<'queue.delete-ok'>): Buffer {
  const size = 8;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x00320029, 7);
  let o = 11;
  b.writeUInt32BE(a.messageCount, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeBasicQos(ch: number, a: MethodArgsInput<'basic.qos'>): Buffer {
  const size = 11;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c000a, 7);
  let o = 11;
  b.writeUInt32BE(a.prefetchSize, o);
  o += 4;
  b.writeUInt16BE(a.prefetchCount, o);
  o += 2;
  b[o++] = (a.global ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicQosOk(ch: number, _a: MethodArgsInput<'basic.qos-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c000b, 7);
  b[11] = 0xce;
  return b;
}

function encodeBasicConsume(ch: number, a: MethodArgsInput<'basic.consume'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const l2 = shortstrLength(a.consumerTag);
  const t7 = a.arguments ?? EMPTY_TABLE;
  const l7 = tableSize(t7);
  const size = 9 + l1 + l2 + l7;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0014, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  o = writeShortstr(b, o, a.consumerTag, l2);
  b[o++] = (a.noLocal ? 1 : 0) | (a.noAck ? 2 : 0) | (a.exclusive ? 4 : 0) | (a.noWait ? 8 : 0);
  o = writeTable(b, o, t7);
  b[o] = 0xce;
  return b;
}

function encodeBasicConsumeOk(ch: number, a: MethodArgsInput<'basic.consume-ok'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0015, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  b[o] = 0xce;
  return b;
}

function encodeBasicCancel(ch: number, a: MethodArgsInput<'basic.cancel'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const size = 6 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c001e, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  b[o++] = (a.noWait ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicCancelOk(ch: number, a: MethodArgsInput<'basic.cancel-ok'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c001f, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  b[o] = 0xce;
  return b;
}

function encodeBasicPublish(ch: number, a: MethodArgsInput<'basic.publish'>): Buffer {
  const l1 = shortstrLength(a.exchange);
  const l2 = shortstrLength(a.routingKey);
  const size = 9 + l1 + l2;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0028, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.exchange, l1);
  o = writeShortstr(b, o, a.routingKey, l2);
  b[o++] = (a.mandatory ? 1 : 0) | (a.immediate ? 2 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicReturn(ch: number, a: MethodArgsInput<'basic.return'>): Buffer {
  const x1 = replyTextBytes(a.replyText);
  const l2 = shortstrLength(a.exchange);
  const l3 = shortstrLength(a.routingKey);
  const size = 9 + x1.length + l2 + l3;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0032, 7);
  let o = 11;
  b.writeUInt16BE(a.replyCode, o);
  o += 2;
  b[o] = x1.length;
  o = writeBytes(b, o + 1, x1);
  o = writeShortstr(b, o, a.exchange, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  b[o] = 0xce;
  return b;
}

function encodeBasicDeliver(ch: number, a: MethodArgsInput<'basic.deliver'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const l3 = shortstrLength(a.exchange);
  const l4 = shortstrLength(a.routingKey);
  const size = 16 + l0 + l3 + l4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c003c, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  writeU64(b, o, a.deliveryTag);
  o += 8;
  b[o++] = (a.redelivered ? 1 : 0);
  o = writeShortstr(b, o, a.exchange, l3);
  o = writeShortstr(b, o, a.routingKey, l4);
  b[o] = 0xce;
  return b;
}

function encodeBasicGet(ch: number, a: MethodArgsInput<'basic.get'>): Buffer {
  const l1 = shortstrLength(a.queue);
  const size = 8 + l1;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0046, 7);
  let o = 11;
  b.writeUInt16BE(a.reserved1 ?? 0, o);
  o += 2;
  o = writeShortstr(b, o, a.queue, l1);
  b[o++] = (a.noAck ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicGetOk(ch: number, a: MethodArgsInput<'basic.get-ok'>): Buffer {
  const l2 = shortstrLength(a.exchange);
  const l3 = shortstrLength(a.routingKey);
  const size = 19 + l2 + l3;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0047, 7);
  let o = 11;
  writeU64(b, o, a.deliveryTag);
  o += 8;
  b[o++] = (a.redelivered ? 1 : 0);
  o = writeShortstr(b, o, a.exchange, l2);
  o = writeShortstr(b, o, a.routingKey, l3);
  b.writeUInt32BE(a.messageCount, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeBasicGetEmpty(ch: number, a: MethodArgsInput<'basic.get-empty'>): Buffer {
  const l0 = shortstrLength(a.reserved1 ?? '');
  const size = 5 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0048, 7);
  let o = 11;
  o = writeShortstr(b, o, a.reserved1 ?? '', l0);
  b[o] = 0xce;
  return b;
}

function encodeBasicAck(ch: number, a: MethodArgsInput<'basic.ack'>): Buffer {
  const size = 13;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0050, 7);
  let o = 11;
  writeU64(b, o, a.deliveryTag);
  o += 8;
  b[o++] = (a.multiple ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicReject(ch: number, a: MethodArgsInput<'basic.reject'>): Buffer {
  const size = 13;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c005a, 7);
  let o = 11;
  writeU64(b, o, a.deliveryTag);
  o += 8;
  b[o++] = (a.requeue ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicRecoverAsync(ch: number, a: MethodArgsInput<'basic.recover-async'>): Buffer {
  const size = 5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0064, 7);
  let o = 11;
  b[o++] = (a.requeue ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicRecover(ch: number, a: MethodArgsInput<'basic.recover'>): Buffer {
  const size = 5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c006e, 7);
  let o = 11;
  b[o++] = (a.requeue ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicRecoverOk(ch: number, _a: MethodArgsInput<'basic.recover-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c006f, 7);
  b[11] = 0xce;
  return b;
}

function encodeBasicNack(ch: number, a: MethodArgsInput<'basic.nack'>): Buffer {
  const size = 13;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c0078, 7);
  let o = 11;
  writeU64(b, o, a.deliveryTag);
  o += 8;
  b[o++] = (a.multiple ? 1 : 0) | (a.requeue ? 2 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicCredit(ch: number, a: MethodArgsInput<'basic.credit'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const size = 10 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c00c8, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  b.writeUInt32BE(a.credit, o);
  o += 4;
  b[o++] = (a.drain ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeBasicCreditOk(ch: number, a: MethodArgsInput<'basic.credit-ok'>): Buffer {
  const size = 8;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c00c9, 7);
  let o = 11;
  b.writeUInt32BE(a.available, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeBasicCreditDrained(ch: number, a: MethodArgsInput<'basic.credit-drained'>): Buffer {
  const l0 = shortstrLength(a.consumerTag);
  const size = 9 + l0;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x003c00ca, 7);
  let o = 11;
  o = writeShortstr(b, o, a.consumerTag, l0);
  b.writeUInt32BE(a.creditDrained, o);
  o += 4;
  b[o] = 0xce;
  return b;
}

function encodeTxSelect(ch: number, _a: MethodArgsInput<'tx.select'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a000a, 7);
  b[11] = 0xce;
  return b;
}

function encodeTxSelectOk(ch: number, _a: MethodArgsInput<'tx.select-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a000b, 7);
  b[11] = 0xce;
  return b;
}

function encodeTxCommit(ch: number, _a: MethodArgsInput<'tx.commit'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a0014, 7);
  b[11] = 0xce;
  return b;
}

function encodeTxCommitOk(ch: number, _a: MethodArgsInput<'tx.commit-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a0015, 7);
  b[11] = 0xce;
  return b;
}

function encodeTxRollback(ch: number, _a: MethodArgsInput<'tx.rollback'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a001e, 7);
  b[11] = 0xce;
  return b;
}

function encodeTxRollbackOk(ch: number, _a: MethodArgsInput<'tx.rollback-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x005a001f, 7);
  b[11] = 0xce;
  return b;
}

function encodeConfirmSelect(ch: number, a: MethodArgsInput<'confirm.select'>): Buffer {
  const size = 5;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0055000a, 7);
  let o = 11;
  b[o++] = (a.nowait ? 1 : 0);
  b[o] = 0xce;
  return b;
}

function encodeConfirmSelectOk(ch: number, _a: MethodArgsInput<'confirm.select-ok'>): Buffer {
  const size = 4;
  const b = Buffer.allocUnsafe(size + 8);
  b[0] = 1;
  b.writeUInt16BE(ch, 1);
  b.writeUInt32BE(size, 3);
  b.writeUInt32BE(0x0055000b, 7);
  b[11] = 0xce;
  return b;
}

const ENCODERS: { [N in MethodName]: (ch: number, a: MethodArgsInput<N>) => Buffer } = {
  'connection.start': encodeConnectionStart,
  'connection.start-ok': encodeConnectionStartOk,
  'connection.secure': encodeConnectionSecure,
  'connection.secure-ok': encodeConnectionSecureOk,
  'connection.tune': encodeConnectionTune,
  'connection.tune-ok': encodeConnectionTuneOk,
  'connection.open': encodeConnectionOpen,
  'connection.open-ok': encodeConnectionOpenOk,
  'connection.close': encodeConnectionClose,
  'connection.close-ok': encodeConnectionCloseOk,
  'connection.blocked': encodeConnectionBlocked,
  'connection.unblocked': encodeConnectionUnblocked,
  'connection.update-secret': encodeConnectionUpdateSecret,
  'connection.update-secret-ok': encodeConnectionUpdateSecretOk,
  'channel.open': encodeChannelOpen,
  'channel.open-ok': encodeChannelOpenOk,
  'channel.flow': encodeChannelFlow,
  'channel.flow-ok': encodeChannelFlowOk,
  'channel.close': encodeChannelClose,
  'channel.close-ok': encodeChannelCloseOk,
  'access.request': encodeAccessRequest,
  'access.request-ok': encodeAccessRequestOk,
  'exchange.declare': encodeExchangeDeclare,
  'exchange.declare-ok': encodeExchangeDeclareOk,
  'exchange.delete': encodeExchangeDelete,
  'exchange.delete-ok': encodeExchangeDeleteOk,
  'exchange.bind': encodeExchangeBind,
  'exchange.bind-ok': encodeExchangeBindOk,
  'exchange.unbind': encodeExchangeUnbind,
  'exchange.unbind-ok': encodeExchangeUnbindOk,
  'queue.declare': encodeQueueDeclare,
  'queue.declare-ok': encodeQueueDeclareOk,
  'queue.bind': encodeQueueBind,
  'queue.bind-ok': encodeQueueBindOk,
  'queue.unbind': encodeQueueUnbind,
  'queue.unbind-ok': encodeQueueUnbindOk,
  'queue.purge': encodeQueuePurge,
  'queue.purge-ok': encodeQueuePurgeOk,
  'queue.delete': encodeQueueDelete,
  'queue.delete-ok': encodeQueueDeleteOk,
  'basic.qos': encodeBasicQos,
  'basic.qos-ok': encodeBasicQosOk,
  'basic.consume': encodeBasicConsume,
  'basic.consume-ok': encodeBasicConsumeOk,
  'basic.cancel': encodeBasicCancel,
  'basic.cancel-ok': encodeBasicCancelOk,
  'basic.publish': encodeBasicPublish,
  'basic.return': encodeBasicReturn,
  'basic.deliver': encodeBasicDeliver,
  'basic.get': encodeBasicGet,
  'basic.get-ok': encodeBasicGetOk,
  'basic.get-empty': encodeBasicGetEmpty,
  'basic.ack': encodeBasicAck,
  'basic.reject': encodeBasicReject,
  'basic.recover-async': encodeBasicRecoverAsync,
  'basic.recover': encodeBasicRecover,
  'basic.recover-ok': encodeBasicRecoverOk,
  'basic.nack': encodeBasicNack,
  'basic.credit': encodeBasicCredit,
  'basic.credit-ok': encodeBasicCreditOk,
  'basic.credit-drained': encodeBasicCreditDrained,
  'tx.select': encodeTxSelect,
  'tx.select-ok': encodeTxSelectOk,
  'tx.commit': encodeTxCommit,
  'tx.commit-ok': encodeTxCommitOk,
  'tx.rollback': encodeTxRollback,
  'tx.rollback-ok': encodeTxRollbackOk,
  'confirm.select': encodeConfirmSelect,
  'confirm.select-ok': encodeConfirmSelectOk,
};

/**
 * A complete method frame (type 1, channel, size, payload, frame-end), sized first and allocated
 * once. A reply-text longer than 255 octets is cut to 252 + "..." as RabbitMQ does; any other
 * value the wire cannot carry throws a 541 ConnectionError (a broker bug).
 */
export function encodeMethodFrame<N extends MethodName>(channel: number, name: N, args: MethodArgsInput<N>): Buffer {
  const enc = ENCODERS[name] as (ch: number, a: MethodArgsInput<N>) => Buffer;
  return wrapRange(() => enc(channel, args));
}
