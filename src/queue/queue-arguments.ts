import { internalError, preconditionFailed } from '../errors.js';
import { formatParts } from '../erlang/pretty.js';
import { atom, int, tuple } from '../erlang/term.js';
import { fieldInteger, fieldTypeName, type FieldTable, type FieldValue } from '../frame/field-table.js';
import { LEADER_LOCATORS, parseStreamArguments } from '../stream/stream-arguments.js';
import { refuseOtherTypesArguments, refuseOtherTypesConsumerArguments } from './type-arguments.js';

/** RabbitMQ 3.10's largest TTL / expiry value in ms (rabbit_misc:check_expiry: ten years). */
const MAX_EXPIRY_TIMER = 315_360_000_000;
/** rabbit_priority_queue: priorities above this are refused. */
const MAX_SUPPORTED_PRIORITY = 255;

export type Overflow = 'drop-head' | 'reject-publish' | 'reject-publish-dlx';

/** Queue settings read from x-arguments, validated as RabbitMQ validates them. */
export interface QueueSettings {
  messageTtl: number | undefined;
  expires: number | undefined;
  deadLetterExchange: string | undefined;
  deadLetterRoutingKey: string | undefined;
  maxLength: number | undefined;
  maxLengthBytes: number | undefined;
  overflow: Overflow;
  maxPriority: number | undefined;
  singleActiveConsumer: boolean;
  queueType: 'classic' | 'quorum' | 'stream';
  deliveryLimit: number | undefined;
  /**
   * Quorum queues: x-dead-letter-strategy (the argument wins over a policy's). In force only
   * with a dead-letter exchange and x-overflow reject-publish (deadLettersAtLeastOnce).
   */
  deadLetterStrategy?: 'at-most-once' | 'at-least-once' | undefined;
  /** Streams: x-max-age in ms (src/stream). */
  maxAge?: number | undefined;
  /** Streams: x-stream-max-segment-size-bytes. */
  streamMaxSegmentSizeBytes?: number | undefined;
  /**
   * x-message-deduplication (the message-deduplication plugin's queue argument): any value but
   * false turns it on, as the plugin reads it; classic queues only (the plugin's backing-queue
   * hook never sees quorum queues). Declared only: policies do not change it.
   */
  deduplication?: boolean;
  /** x-last-value-key and x-last-value-version (Warren's versioned last-value queues). */
  lastValue?: LastValueSettings;
}

export interface LastValueSettings {
  /** The header whose value identifies what a message is the last value of. */
  keyHeader: string;
  /** The header holding a message's version (a number), if versions are checked. */
  versionHeader: string | undefined;
}

/** A header name argument: a non-empty longstr. */
function headerName(v: FieldValue): string {
  const s = longstr(v);
  if (s === '') throw new ArgError('empty_header_name');
  return s;
}

class ArgError {
  constructor(readonly term: string) {}
}

/** RabbitMQ 3.10's integer check, whose error is a quoted string. */
function intValue(v: FieldValue): number {
  const n = fieldInteger(v);
  if (n === undefined) throw new ArgError(`"expected integer, got ${fieldTypeName(v.type)}"`);
  return n;
}

function nonNegInt(v: FieldValue): number {
  const n = intValue(v);
  if (n < 0) throw new ArgError(`{value_negative,${n}}`);
  return n;
}

function expiry(v: FieldValue): number {
  const n = intValue(v);
  if (n < 0) throw new ArgError(`{value_negative,${n}}`);
  if (n > MAX_EXPIRY_TIMER) throw new ArgError(`{value_too_large,${n}}`);
  return n;
}

function longstr(v: FieldValue): string {
  if (v.type !== 'S') throw new ArgError(`{unacceptable_type,${fieldTypeName(v.type)}}`);
  return v.value.toString('utf8');
}

function bool(v: FieldValue): boolean {
  if (v.type !== 't') throw new ArgError(`{unacceptable_type,${fieldTypeName(v.type)}}`);
  return v.value;
}

/**
 * The settings of every queue declared without arguments: one frozen object shared by all of
 * them (100,000 plain queues hold one, not 100,000 copies). Settings are never changed in
 * place: a policy gives a queue a new object (Queue.applySettings).
 */
export const NO_ARGUMENT_SETTINGS: QueueSettings = Object.freeze({
  messageTtl: undefined, expires: undefined, deadLetterExchange: undefined, deadLetterRoutingKey: undefined,
  maxLength: undefined, maxLengthBytes: undefined, overflow: 'drop-head', maxPriority: undefined,
  singleActiveConsumer: false, queueType: 'classic', deliveryLimit: undefined,
});

/** Whether a table of queue arguments is empty (then its settings are NO_ARGUMENT_SETTINGS). */
export function hasNoArguments(args: FieldTable): boolean {
  for (const _ in args) return false;
  return true;
}

/**
 * Parses and validates queue.declare arguments as rabbit_amqqueue:check_declare_arguments does:
 * x-queue-type first; then, in declare_args/0's order, the validators of the arguments the
 * queue's type takes (its capabilities' queue_arguments), an invalid value being 406 "invalid
 * arg 'x-…' for queue 'q' in vhost '/': {term}"; then, in the table's order, any argument another
 * type takes and this one does not is 406 "invalid arg 'x-…' for queue 'q' in vhost '/' of queue
 * type rabbit_…_queue". Other keys (x-foo, Warren's own) are not refused.
 */
export function parseQueueArguments(args: FieldTable, resource: string): QueueSettings {
  if (hasNoArguments(args)) return NO_ARGUMENT_SETTINGS;
  const settings: QueueSettings = {
    messageTtl: undefined, expires: undefined, deadLetterExchange: undefined, deadLetterRoutingKey: undefined,
    maxLength: undefined, maxLengthBytes: undefined, overflow: 'drop-head', maxPriority: undefined,
    singleActiveConsumer: false, queueType: 'classic', deliveryLimit: undefined,
  };
  const check = (key: string, read: (v: FieldValue) => void) => checkedArg(args, key, resource, read);
  check('x-queue-type', (v) => {
    const s = longstr(v);
    if (s !== 'classic' && s !== 'quorum' && s !== 'stream') throw new ArgError(`"unsupported queue type '${s}'"`);
    settings.queueType = s;
  });
  if (settings.queueType === 'stream') {
    const stream = parseStreamArguments(args, resource);
    return { ...settings, maxLengthBytes: stream.maxLengthBytes, maxAge: stream.maxAge, streamMaxSegmentSizeBytes: stream.maxSegmentSizeBytes };
  }
  const quorum = settings.queueType === 'quorum';
  const classic = !quorum;
  check('x-expires', (v) => {
    const n = intValue(v);
    if (n === 0) throw new ArgError('{value_zero,0}');
    settings.expires = expiry(v);
  });
  check('x-message-ttl', (v) => (settings.messageTtl = expiry(v)));
  check('x-dead-letter-exchange', (v) => (settings.deadLetterExchange = longstr(v)));
  check('x-dead-letter-routing-key', (v) => {
    settings.deadLetterRoutingKey = longstr(v);
    if (args['x-dead-letter-exchange'] === undefined) throw new ArgError('routing_key_but_no_dlx_defined');
  });
  if (quorum) {
    check('x-dead-letter-strategy', (v) => {
      const strategy = longstr(v);
      if (strategy !== 'at-most-once' && strategy !== 'at-least-once') throw new ArgError('invalid_dlx_strategy');
      settings.deadLetterStrategy = strategy;
    });
  }
  check('x-max-length', (v) => (settings.maxLength = nonNegInt(v)));
  check('x-max-length-bytes', (v) => (settings.maxLengthBytes = nonNegInt(v)));
  if (quorum) {
    // Memory limits of rabbit_fifo's in-memory copies; Warren keeps no such copies.
    check('x-max-in-memory-length', nonNegInt);
    check('x-max-in-memory-bytes', nonNegInt);
  }
  if (classic) {
    check('x-max-priority', (v) => {
      const n = nonNegInt(v);
      if (n > MAX_SUPPORTED_PRIORITY) throw new ArgError(`{max_value_exceeded,${n}}`);
      settings.maxPriority = n;
    });
  }
  check('x-overflow', (v) => {
    const s = longstr(v);
    if (s !== 'drop-head' && s !== 'reject-publish' && s !== 'reject-publish-dlx') throw new ArgError('invalid_overflow');
    settings.overflow = s;
  });
  if (classic) {
    check('x-queue-mode', (v) => {
      const s = longstr(v);
      if (s !== 'default' && s !== 'lazy') throw new ArgError(`"unsupported queue mode '${s}'"`);
    });
    check('x-queue-version', (v) => {
      const n = nonNegInt(v);
      if (n !== 1 && n !== 2) throw new ArgError(`"unsupported queue version '${n}'"`);
    });
  }
  check('x-single-active-consumer', (v) => (settings.singleActiveConsumer = bool(v)));
  if (quorum) {
    check('x-quorum-initial-group-size', (v) => {
      if (nonNegInt(v) === 0) throw new ArgError('{value_zero,0}');
    });
    check('x-queue-leader-locator', (v) => {
      if (!LEADER_LOCATORS.includes(longstr(v))) throw new ArgError('invalid_queue_locator_arg');
    });
    // Not validated by RabbitMQ 3.10: any integer is a limit (a negative one drops a message at
    // its first return, as 0 does); a value of another type is no limit.
    const limit = args['x-delivery-limit'];
    if (limit !== undefined) settings.deliveryLimit = fieldInteger(limit);
  }
  const dedup = args['x-message-deduplication'];
  if (dedup !== undefined && !(dedup.type === 't' && !dedup.value) && classic) settings.deduplication = true;
  check('x-last-value-key', (v) => (settings.lastValue = { keyHeader: headerName(v), versionHeader: undefined }));
  check('x-last-value-version', (v) => {
    const name = headerName(v);
    if (settings.lastValue === undefined) throw new ArgError('version_but_no_key_defined');
    settings.lastValue.versionHeader = name;
  });
  refuseOtherTypesArguments(settings.queueType, args, resource);
  if (classic) {
    // No validator: rabbit_queue_master_location_misc crashes the channel on a locator it does
    // not know as the queue is placed (541, the connection closed without naming the method).
    const locator = args['x-queue-master-locator'];
    if (locator !== undefined && !(locator.type === 'S' && MASTER_LOCATORS.includes(locator.value.toString('utf8')))) throw internalError('').withoutMethod();
  }
  return settings;
}

/** Reads args[key], if present, with read; an ArgError is 406 "invalid arg 'key' for resource: term". */
function checkedArg<T>(args: FieldTable, key: string, resource: string, read: (v: FieldValue) => T): T | undefined {
  const v = args[key];
  if (v === undefined) return undefined;
  try {
    return read(v);
  } catch (err) {
    if (err instanceof ArgError) throw preconditionFailed(`invalid arg '${key}' for ${resource}: ${err.term}`);
    throw err;
  }
}

/** rabbit_queue_master_location_misc's locators of classic queues. */
const MASTER_LOCATORS = ['min-masters', 'client-local', 'random'];

/**
 * basic.consume's arguments on a classic or quorum queue (rabbit_amqqueue:check_consume_arguments):
 * x-priority an integer, x-cancel-on-ha-failover (classic queues) a boolean, then the consumer
 * arguments of other types refused. Returns the consumer's priority.
 */
export function parseConsumeArguments(queueType: 'classic' | 'quorum', args: FieldTable, resource: string): number {
  const priority = checkedArg(args, 'x-priority', resource, intValue) ?? 0;
  if (queueType === 'classic') checkedArg(args, 'x-cancel-on-ha-failover', resource, bool);
  refuseOtherTypesConsumerArguments(queueType, args, resource);
  return priority;
}

/**
 * Per-message TTL from the expiration property (rabbit_basic:parse_expiration): a decimal
 * string of milliseconds. Returns undefined when absent; throws 406 like RabbitMQ when invalid.
 */
export function parseExpiration(expiration: string | undefined): number | undefined {
  if (expiration === undefined) return undefined;
  const m = /^([+-]?\d+)(.*)$/s.exec(expiration);
  const prefix = `invalid expiration '${expiration}': `;
  if (!m) throw preconditionFailed(`${prefix}no_integer`);
  if (m[2] !== '') throw preconditionFailed(`${prefix}{leftover_string,"${m[2]}"}`);
  const n = BigInt(m[1]!); // group 1 is not optional
  // The error term is printed with ~p, which wraps long terms as Erlang does.
  if (n < 0n) throw preconditionFailed(formatParts([prefix, { p: tuple(atom('value_negative'), int(n)) }]));
  if (n > BigInt(MAX_EXPIRY_TIMER)) throw preconditionFailed(formatParts([prefix, { p: tuple(atom('value_too_large'), int(n)) }]));
  return Number(n);
}
