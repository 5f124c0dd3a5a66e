/**
 * Stream queue arguments and consumer offsets, validated as RabbitMQ 3.10 validates them
 * (rabbit_amqqueue:check_declare_arguments for the stream type, check_max_age,
 * rabbit_stream_queue:parse_offset_arg and check_max_segment_size_bytes).
 */
import { internalError, preconditionFailed } from '../errors.js';
import { printTerm } from '../erlang/pretty.js';
import { atom, binary, tuple, type ErlTerm } from '../erlang/term.js';
import { fieldInteger, fieldTypeName, type FieldTable, type FieldValue } from '../frame/field-table.js';
import { refuseOtherTypesArguments, refuseOtherTypesConsumerArguments } from '../queue/type-arguments.js';

/** osiris' default segment size (rabbit_stream_queue: max_segment_size_bytes absent). */
export const DEFAULT_SEGMENT_SIZE = 500_000_000;
/** ?MAX_STREAM_MAX_SEGMENT_SIZE: larger values are refused at declare. */
export const MAX_SEGMENT_SIZE = 3_000_000_000;

/** What a stream's x-arguments declare. */
export interface StreamArguments {
  maxLengthBytes: number | undefined;
  /** x-max-age in ms. */
  maxAge: number | undefined;
  maxSegmentSizeBytes: number | undefined;
}

/** The queue arguments of the stream type (its capabilities' queue_arguments), in declare_args order. */
const STREAM_ARGS = ['x-max-length-bytes', 'x-max-age', 'x-stream-max-segment-size-bytes', 'x-initial-cluster-size', 'x-queue-leader-locator'];
/** The arguments a redeclare of a stream must repeat (rabbit_amqqueue:assert_args_equivalence, the type's queue_arguments). */
export const STREAM_EQUIVALENCE_KEYS = ['x-max-length-bytes', 'x-max-age', 'x-stream-max-segment-size-bytes', 'x-initial-cluster-size', 'x-queue-leader-locator'] as const;
/** rabbit_queue_location:queue_leader_locators/0 (with the deprecated two). */
export const LEADER_LOCATORS = ['client-local', 'balanced', 'random', 'least-leaders'];

class ArgError {
  constructor(readonly term: string) {}
}

function nonNegInt(v: FieldValue): number {
  const n = fieldInteger(v);
  if (n === undefined) throw new ArgError(`"expected integer, got ${fieldTypeName(v.type)}"`);
  if (n < 0) throw new ArgError(`{value_negative,${n}}`);
  return n;
}

/**
 * rabbit_amqqueue:check_max_age: digits, then one unit of Y M D h m s; a value that does not
 * start with a digit crashes RabbitMQ 3.10's parser (list_to_integer("")), which closes the
 * connection with a bare 541 INTERNAL_ERROR. Returns ms, or undefined for invalid_max_age.
 */
export function parseMaxAge(text: string): number | undefined {
  const m = /^([0-9]*)(.*)$/s.exec(text)!;
  if (m[1] === '') throw internalError('').withoutMethod();
  const n = Number(m[1]);
  const unit = UNIT_MS[m[2]!];
  if (!(n > 0) || unit === undefined) return undefined;
  return n * unit;
}

const UNIT_MS: Record<string, number> = {
  s: 1000, m: 60_000, h: 3_600_000, D: 86_400_000, M: 30 * 86_400_000, Y: 365 * 86_400_000,
};

/**
 * Validates a stream's declare arguments: the stream type's own arguments first (their values),
 * then every argument in table order against those only other types know.
 */
export function parseStreamArguments(args: FieldTable, resource: string): StreamArguments {
  const out: StreamArguments = { maxLengthBytes: undefined, maxAge: undefined, maxSegmentSizeBytes: undefined };
  const readers: Record<string, (v: FieldValue) => void> = {
    'x-max-length-bytes': (v) => (out.maxLengthBytes = nonNegInt(v)),
    'x-max-age': (v) => {
      if (v.type !== 'S') throw new ArgError(`{unacceptable_type,${fieldTypeName(v.type)}}`);
      const ms = parseMaxAge(v.value.toString('utf8'));
      if (ms === undefined) throw new ArgError('invalid_max_age');
      out.maxAge = ms;
    },
    'x-stream-max-segment-size-bytes': (v) => (out.maxSegmentSizeBytes = nonNegInt(v)),
    'x-initial-cluster-size': (v) => {
      if (nonNegInt(v) === 0) throw new ArgError('{value_zero,0}');
    },
    'x-queue-leader-locator': (v) => {
      if (v.type !== 'S') throw new ArgError(`{unacceptable_type,${fieldTypeName(v.type)}}`);
      if (!LEADER_LOCATORS.includes(v.value.toString('utf8'))) throw new ArgError('invalid_queue_locator_arg');
    },
  };
  for (const key of STREAM_ARGS) {
    const v = args[key];
    if (v === undefined) continue;
    try {
      readers[key]!(v);
    } catch (err) {
      if (err instanceof ArgError) throw preconditionFailed(`invalid arg '${key}' for ${resource}: ${err.term}`);
      throw err;
    }
  }
  refuseOtherTypesArguments('stream', args, resource);
  return out;
}

/** Where a stream consumer starts (osiris offset specs). */
export type OffsetSpec =
  | { kind: 'first' }
  | { kind: 'last' }
  | { kind: 'next' }
  | { kind: 'offset'; offset: number }
  | { kind: 'timestamp'; ms: number }
  /** A value parse_offset_arg lets through but osiris cannot read from (a float, a boolean…). */
  | { kind: 'unreadable' };

/**
 * basic.consume's arguments on a stream (rabbit_amqqueue:check_consume_arguments): x-stream-offset
 * is validated as parse_offset_arg validates it (absent = next; an interval such as 10m = that
 * long before now; an AMQP timestamp in seconds; a string without leading digits crashes
 * RabbitMQ's parser: 541), then the keys of other types' consumers are refused in table order.
 */
export function parseStreamConsumeArguments(args: FieldTable, resource: string, nowMs: number): OffsetSpec {
  const v = args['x-stream-offset'];
  let spec: OffsetSpec = { kind: 'next' };
  if (v !== undefined) {
    // RabbitMQ prints the term with ~255p: on one line unless it is longer than that.
    spec = offsetSpec(v, nowMs, (term) => preconditionFailed(`invalid arg 'x-stream-offset' for ${resource}: ${printTerm(term, 0)}`));
  }
  refuseOtherTypesConsumerArguments('stream', args, resource);
  return spec;
}

/**
 * The consumer's reader is opened after the prefetch and no-ack checks; an offset osiris cannot
 * read from crashes RabbitMQ's channel there: 541 INTERNAL_ERROR on the connection.
 */
export function checkReadable(spec: OffsetSpec): void {
  if (spec.kind === 'unreadable') throw internalError('').withoutMethod();
}

function offsetSpec(v: FieldValue, nowMs: number, invalid: (term: ErlTerm) => Error): OffsetSpec {
  if (v.type === 'S') {
    const s = v.value.toString('utf8');
    if (s === 'first' || s === 'last' || s === 'next') return { kind: s };
    const ms = parseMaxAge(s);
    if (ms === undefined) throw invalid(tuple(atom('invalid_stream_offset_arg'), tuple(atom('longstr'), binary(v.value))));
    return { kind: 'timestamp', ms: nowMs - ms };
  }
  if (v.type === 'T') return { kind: 'timestamp', ms: Number(v.value) * 1000 };
  const n = fieldInteger(v);
  if (n === undefined) return { kind: 'unreadable' };
  return { kind: 'offset', offset: n };
}

/**
 * rabbit_stream_queue:declare's checks, in its order: auto-delete, exclusive, non-durable,
 * then the segment size limit.
 */
export function checkStreamDeclare(d: { durable: boolean; exclusive: boolean; autoDelete: boolean }, settings: { streamMaxSegmentSizeBytes?: number | undefined }, rs: string): void {
  if (d.autoDelete) throw preconditionFailed(`invalid property 'auto-delete' for ${rs}`);
  if (d.exclusive) throw preconditionFailed(`invalid property 'exclusive-owner' for ${rs}`);
  if (!d.durable) throw preconditionFailed(`invalid property 'non-durable' for ${rs}`);
  const size = settings.streamMaxSegmentSizeBytes;
  if (size !== undefined && size > MAX_SEGMENT_SIZE) throw preconditionFailed('Exceeded max value for x-stream-max-segment-size-bytes');
}
