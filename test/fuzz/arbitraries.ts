/**
 * fast-check generators for the fuzz targets. Inputs are built from structure (real methods with
 * arguments drawn per spec field type, tables, content headers, frames, scripts of client
 * actions) and then optionally damaged by a list of byte mutations, so most of them get past the
 * first length check while some hit every error path. Everything shrinks: fewer frames, fewer
 * mutations, smaller values.
 */
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { loadSpec, type FieldSpec, type MethodSpec } from '../../src/frame/codegen/spec-model.js';
import { encodeTable, type FieldTable, type FieldValue } from '../../src/frame/field-table.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame, type MethodArgsInput, type MethodName } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderPayload, type BasicProperties } from '../../src/frame/generated/properties.js';
import { camel } from '../support/random-methods.js';
import { HANDSHAKE, OP } from './connection-harness.js';

const SPEC = loadSpec(readFileSync(new URL('../../spec/amqp0-9-1.stripped.extended.xml', import.meta.url), 'utf8'));
const ALL_METHODS: MethodSpec[] = SPEC.flatMap((c) => c.methods);
const byName = new Map(ALL_METHODS.map((m) => [`${m.className}.${m.name}`, m]));

/**
 * Methods a client sends on a channel, with how often the script generator picks each: the ones
 * that build and use state (declare, bind, publish, consume, get, ack) most.
 */
const CLIENT_METHODS: Array<[string, number]> = [
  ['channel.open', 1], ['channel.flow', 1], ['channel.flow-ok', 1], ['channel.close', 1], ['channel.close-ok', 1],
  ['exchange.declare', 3], ['exchange.delete', 1], ['exchange.bind', 2], ['exchange.unbind', 1],
  ['queue.declare', 6], ['queue.bind', 4], ['queue.unbind', 1], ['queue.purge', 1], ['queue.delete', 1],
  ['basic.qos', 2], ['basic.consume', 4], ['basic.cancel', 2], ['basic.get', 3], ['basic.ack', 4], ['basic.reject', 2],
  ['basic.recover-async', 1], ['basic.recover', 1], ['basic.nack', 2], ['tx.select', 1], ['tx.commit', 1], ['tx.rollback', 1],
  ['confirm.select', 2],
];

// --- values ------------------------------------------------------------------------------------

/** Names that make a script's methods refer to each other's queues, exchanges and tags. */
const NAMES = ['', 'q', 'q2', 'x', 'x2', 'amq.direct', 'amq.fanout', 'amq.topic', 'amq.headers', 'amq.match', 'amq.rabbitmq.reply-to', 'amq.gen-1', 'dlx'];
const QUEUES = ['q', 'q2', ''];
const EXCHANGES = ['x', 'x2', 'dlx'];
const KEYS = ['', 'q', 'q2', 'k', '#', '*', 'a.b', 'a.*', '#.b', 'x'];
const TAGS = ['', 'c1', 'c2', 'amq.ctag-1'];
const EXCHANGE_TYPES = ['direct', 'fanout', 'topic', 'headers', 'x-consistent-hash', 'x-delayed-message', 'x-nope', ''];

const anyShortstr = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('latin1')) },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(255), '😀'.repeat(63)) },
);
const pooled = (pool: string[], likely: string[] = []) =>
  fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...likely, ...pool) }, { weight: likely.length ? 6 : 0, arbitrary: fc.constantFrom('', ...likely) }, { weight: 1, arbitrary: anyShortstr });

const u8 = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(127, 128, 255), fc.integer({ min: 0, max: 255 }));
const u16 = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(255, 256, 2047, 2048, 32767, 32768, 65535), fc.integer({ min: 0, max: 65535 }));
const u32 = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(4095, 4096, 131072, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1), fc.integer({ min: 0, max: 2 ** 32 - 1 }));
const u53 = fc.oneof(fc.integer({ min: 0, max: 10 }), fc.constantFrom(2 ** 32, Number.MAX_SAFE_INTEGER), fc.maxSafeNat());
const ms = fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom(1000, 60000, 2 ** 31), fc.integer({ min: -5, max: 2 ** 32 }));

/** A field value of any wire type, nested up to `depth`. */
function fieldValue(depth: number): fc.Arbitrary<FieldValue> {
  const leaves: fc.Arbitrary<FieldValue>[] = [
    fc.boolean().map((value) => ({ type: 't', value })),
    fc.integer({ min: -128, max: 127 }).map((value) => ({ type: 'b', value })),
    u8.map((value) => ({ type: 'B', value })),
    fc.integer({ min: -32768, max: 32767 }).map((value) => ({ type: 's', value })),
    u16.map((value) => ({ type: 'u', value })),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((value) => ({ type: 'I', value })),
    u32.map((value) => ({ type: 'i', value })),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((value) => ({ type: 'l', value })),
    fc.float({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ type: 'f', value })),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => ({ type: 'd', value })),
    u53.map((value) => ({ type: 'T', value })),
    fc.record({ places: u8, digits: u32 }).map((value) => ({ type: 'D', value })),
    pooled(NAMES).map((s) => ({ type: 'S', value: Buffer.from(s) })),
    fc.uint8Array({ maxLength: 16 }).map((b) => ({ type: 'x', value: Buffer.from(b) })),
    fc.constant({ type: 'V', value: null }),
  ];
  if (depth <= 0) return fc.oneof(...leaves);
  return fc.oneof(
    { weight: 10, arbitrary: fc.oneof(...leaves) },
    { weight: 1, arbitrary: fc.array(fieldValue(depth - 1), { maxLength: 4 }).map((value): FieldValue => ({ type: 'A', value })) },
    { weight: 1, arbitrary: table(depth - 1).map((value): FieldValue => ({ type: 'F', value })) },
  );
}

/** The arguments and headers RabbitMQ gives meaning to, so tables reach the code that reads them. */
const TABLE_KEYS = [
  'x-message-ttl', 'x-expires', 'x-max-length', 'x-max-length-bytes', 'x-overflow', 'x-dead-letter-exchange',
  'x-dead-letter-routing-key', 'x-max-priority', 'x-queue-type', 'x-queue-mode', 'x-single-active-consumer',
  'x-delivery-limit', 'alternate-exchange', 'x-delayed-type', 'x-match', 'x-priority', 'x-cancel-on-ha-failover',
  'x-consumer-timeout', 'x-delay', 'CC', 'BCC', 'hash-header', 'hash-property', 'a', 'capabilities',
];
const MEANINGFUL: Record<string, fc.Arbitrary<FieldValue>> = {
  'x-overflow': fc.constantFrom('drop-head', 'reject-publish', 'reject-publish-dlx', 'nope').map((s) => ({ type: 'S', value: Buffer.from(s) })),
  'x-queue-type': fc.constantFrom('classic', 'quorum', 'stream', 'nope').map((s) => ({ type: 'S', value: Buffer.from(s) })),
  'x-match': fc.constantFrom('all', 'any', 'all-with-x', 'any-with-x', 'nope').map((s) => ({ type: 'S', value: Buffer.from(s) })),
  'x-delayed-type': fc.constantFrom(...EXCHANGE_TYPES).map((s) => ({ type: 'S', value: Buffer.from(s) })),
  CC: fc.array(fc.constantFrom(...KEYS).map((s): FieldValue => ({ type: 'S', value: Buffer.from(s) })), { maxLength: 3 }).map((value) => ({ type: 'A', value })),
  BCC: fc.array(fc.constantFrom(...KEYS).map((s): FieldValue => ({ type: 'S', value: Buffer.from(s) })), { maxLength: 3 }).map((value) => ({ type: 'A', value })),
};
const numeric = fc.oneof(
  ms.map((v): FieldValue => ({ type: 'l', value: BigInt(v) })),
  ms.filter((v) => v >= -(2 ** 31) && v < 2 ** 31).map((v): FieldValue => ({ type: 'I', value: v })),
  u8.map((v): FieldValue => ({ type: 'b', value: v > 127 ? 127 : v })),
);

function table(depth: number): fc.Arbitrary<FieldTable> {
  const entry = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...TABLE_KEYS).chain((k) => fc.tuple(fc.constant(k), fc.oneof(MEANINGFUL[k] ?? numeric, numeric, fieldValue(depth)))) },
    { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 10 }), fieldValue(depth)) },
  );
  return fc.array(entry, { maxLength: 5 }).map((entries) => {
    const t = Object.create(null) as FieldTable;
    for (const [k, v] of entries) t[k] = v;
    return t;
  });
}

const fieldTable = table(3);

/** Input for fuzzFieldTable: an encoded table whose length prefix is sometimes off by a few. */
export const encodedTable: fc.Arbitrary<Buffer> = fc
  .tuple(fieldTable, fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -4, max: 4 }) }))
  .map(([t, delta]) => {
    const b = Buffer.concat([Buffer.from([0]), encodeTable(t)]);
    b.writeUInt32BE(Math.max(0, b.readUInt32BE(1) + delta), 1);
    return b;
  });

/** Method arguments: mostly none or one, as clients send them (random ones mostly get refused). */
const argumentsTable = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0).map(() => Object.create(null) as FieldTable) },
  { weight: 3, arbitrary: table(1).map((t) => Object.fromEntries(Object.entries(t).slice(0, 1)) as FieldTable) },
  { weight: 1, arbitrary: fieldTable },
);

/** A value for one method argument, by spec type, with pools for names that link methods. */
function argument(m: MethodSpec, f: FieldSpec): fc.Arbitrary<unknown> {
  const name = f.name;
  if (f.type === 'shortstr') {
    if (name === 'exchange' && m.name === 'publish') return fc.oneof({ weight: 4, arbitrary: fc.constant('') }, { weight: 2, arbitrary: fc.constantFrom('amq.direct', 'amq.fanout', 'amq.topic', 'x') }, { weight: 1, arbitrary: pooled(NAMES) });
    if (name === 'queue') return pooled(NAMES, QUEUES);
    if (name === 'exchange' || name === 'destination' || name === 'source') return pooled(NAMES, EXCHANGES);
    if (name === 'routing-key') return pooled(KEYS, QUEUES);
    if (name === 'consumer-tag') return pooled(TAGS);
    if (name === 'type' && m.className === 'exchange') return fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...EXCHANGE_TYPES.slice(0, 6)) }, { weight: 1, arbitrary: pooled(EXCHANGE_TYPES) });
    return anyShortstr;
  }
  switch (f.type) {
    case 'octet':
      return u8;
    case 'short':
      return name === 'reply-code' ? fc.constantFrom(200, 320, 404, 406, 541) : u16;
    case 'long':
      return name === 'prefetch-count' ? fc.integer({ min: 0, max: 5 }) : u32;
    case 'longlong':
      return name === 'delivery-tag' ? fc.integer({ min: 0, max: 8 }) : u53;
    case 'timestamp':
      return u53;
    case 'bit':
      // Mostly off: passive, if-unused, exclusive and no-wait change what the rest does, and
      // immediate is a connection error.
      return fc.oneof({ weight: name === 'immediate' ? 40 : 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) });
    case 'longstr':
      return fc.uint8Array({ maxLength: 32 }).map((b) => Buffer.from(b));
    case 'table':
      return argumentsTable;
  }
}

const argsOf = (m: MethodSpec): fc.Arbitrary<Record<string, unknown>> =>
  fc.record(Object.fromEntries(m.fields.map((f) => [camel(f.name), argument(m, f)])));

/** A method frame for `m` on `channel`. */
const methodFrame = (m: MethodSpec, channel: number): fc.Arbitrary<Buffer> =>
  argsOf(m).map((args) => encodeMethodFrame(channel, `${m.className}.${m.name}` as MethodName, args as unknown as MethodArgsInput<MethodName>));

export const methodPayload: fc.Arbitrary<Buffer> = fc
  .constantFrom(...ALL_METHODS)
  .chain((m) => methodFrame(m, 0))
  .map((f) => f.subarray(7, f.length - 1));

const properties: fc.Arbitrary<BasicProperties> = fc.record(
  {
    contentType: anyShortstr,
    contentEncoding: anyShortstr,
    headers: fieldTable,
    deliveryMode: fc.constantFrom(1, 2, 0, 3),
    priority: u8,
    correlationId: anyShortstr,
    replyTo: pooled(NAMES),
    expiration: fc.oneof(fc.constantFrom('0', '1', '1000', '', '-1', 'x', '99999999999'), anyShortstr),
    messageId: anyShortstr,
    timestamp: u53,
    type: anyShortstr,
    userId: fc.constantFrom('guest', 'other', ''),
    appId: anyShortstr,
    clusterId: anyShortstr,
  },
  { requiredKeys: [] },
);

/** Properties a publisher usually sends (the wild ones above mostly get the publish refused). */
const sensibleProperties: fc.Arbitrary<BasicProperties> = fc.record(
  {
    contentType: fc.constant('text/plain'),
    headers: argumentsTable,
    deliveryMode: fc.constantFrom(1, 2),
    priority: fc.integer({ min: 0, max: 10 }),
    correlationId: fc.constantFrom('c1', 'c2'),
    replyTo: fc.constantFrom('q', 'q2'),
    expiration: fc.constantFrom('0', '1', '1000', '60000'),
    messageId: fc.constantFrom('m1', 'm2'),
    timestamp: u53,
    userId: fc.constant('guest'),
  },
  { requiredKeys: [] },
);

const publishProperties = fc.oneof({ weight: 4, arbitrary: sensibleProperties }, { weight: 1, arbitrary: properties });

export const contentHeaderPayload: fc.Arbitrary<Buffer> = fc
  .tuple(fc.constantFrom(60, 60, 60, 10, 0, 65535), u53, properties)
  .map(([classId, size, props]) => encodeContentHeaderPayload(classId, size, props));

// --- damage ------------------------------------------------------------------------------------

type Mutation = { at: number; kind: number; value: number };
const mutation: fc.Arbitrary<Mutation> = fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), kind: fc.nat(6), value: u32 });

/**
 * Applies byte mutations at relative positions: set, flip, insert, delete, overwrite a u32,
 * add or subtract a little from a u32 (a length off by a few), truncate.
 */
function damage(buf: Buffer, ms: Mutation[]): Buffer {
  let b = Buffer.from(buf);
  for (const m of ms) {
    const at = Math.min(b.length, Math.floor(m.at * b.length));
    switch (m.kind) {
      case 0:
        if (at < b.length) b[at] = m.value & 0xff;
        break;
      case 1:
        if (at < b.length) b[at]! ^= 1 << (m.value & 7);
        break;
      case 2:
        b = Buffer.concat([b.subarray(0, at), Buffer.from([m.value & 0xff]), b.subarray(at)]);
        break;
      case 3:
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + (m.value % 8))]);
        break;
      case 4:
        if (at + 4 <= b.length) b.writeUInt32BE(m.value >>> 0, at);
        break;
      case 5:
        if (at + 4 <= b.length) b.writeUInt32BE((b.readUInt32BE(at) + (m.value % 9) - 4) >>> 0, at);
        break;
      default:
        b = b.subarray(0, at);
    }
  }
  return b;
}

/** Mostly intact structured input, sometimes damaged, sometimes plain random bytes. */
export function damaged(structured: fc.Arbitrary<Buffer>, maxRandom = 64): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 4, arbitrary: structured },
    { weight: 5, arbitrary: fc.tuple(structured, fc.array(mutation, { minLength: 1, maxLength: 4 })).map(([b, m]) => damage(b, m)) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: maxRandom }).map((b) => Buffer.from(b)) },
  );
}

// --- frames and streams ------------------------------------------------------------------------

const channelNo = fc.oneof({ weight: 40, arbitrary: fc.integer({ min: 1, max: 6 }) }, { weight: 1, arbitrary: fc.constantFrom(0, 7, 2047, 2048, 65535) });

/** Content for a publish: a header announcing `size`, then bodies that may not add up to it. */
const content = (channel: number): fc.Arbitrary<Buffer[]> =>
  fc
    .tuple(publishProperties, fc.integer({ min: 0, max: 300 }), fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 3 }), fc.boolean(), fc.nat(9))
    .map(([props, size, extra, exact, sometimes]) => {
      const bodies = exact || sometimes > 0 ? splitBody(size) : extra;
      return [
        encodeFrame(2, channel, encodeContentHeaderPayload(60, size, props)),
        ...bodies.map((n) => encodeFrame(3, channel, Buffer.alloc(n, 0x62))),
      ];
    });

function splitBody(size: number): number[] {
  const out: number[] = [];
  for (let left = size; left > 0; left -= 128) out.push(Math.min(128, left));
  return out;
}

/** One client action on a connection, as the frames it sends; `weight` weighs the methods. */
function frames(methods: Array<[MethodSpec, number]>, odd = 1, stories = 0): fc.Arbitrary<Buffer[]> {
  const method = fc.oneof(...methods.map(([m, weight]) => ({ weight, arbitrary: fc.constant(m) })));
  return channelNo.chain((ch) =>
    fc.oneof(
      { weight: stories, arbitrary: story },
      { weight: 40, arbitrary: method.chain((m) => methodFrame(m, ch)).map((f) => [f]) },
      { weight: 12, arbitrary: fc.tuple(methodFrame(byName.get('basic.publish')!, ch), content(ch)).map(([p, c]) => [p, ...c]) },
      { weight: odd, arbitrary: content(ch) },
      { weight: odd, arbitrary: fc.constant(0).map(() => [encodeFrame(8, ch === 1 ? 0 : ch, Buffer.alloc(0))]) },
      { weight: odd, arbitrary: fc.tuple(u8, fc.uint8Array({ maxLength: 20 })).map(([t, p]) => [encodeFrame(t, ch, Buffer.from(p))]) },
    ),
  );
}

const frameOf = (ch: number, name: MethodName, args: Record<string, unknown>): Buffer =>
  encodeMethodFrame(ch, name, args as unknown as MethodArgsInput<MethodName>);

/**
 * A coherent little story on one channel, so that messages reach queues and get delivered,
 * acknowledged, rejected and requeued: declare a queue, publish to it, take messages by
 * basic.get or basic.consume, then settle some delivery tags.
 */
const story: fc.Arbitrary<Buffer[]> = fc
  .record({
    ch: fc.integer({ min: 1, max: 6 }),
    queue: fc.constantFrom('q', 'q2', 'dlx'),
    args: argumentsTable,
    messages: fc.array(fc.tuple(sensibleProperties, fc.integer({ min: 0, max: 200 })), { minLength: 1, maxLength: 4 }),
    take: fc.constantFrom('get', 'consume', 'consume-no-ack', 'none'),
    prefetch: fc.integer({ min: 0, max: 3 }),
    settle: fc.array(fc.record({ how: fc.constantFrom('basic.ack', 'basic.nack', 'basic.reject'), tag: fc.integer({ min: 0, max: 5 }), multiple: fc.boolean(), requeue: fc.boolean() }), { maxLength: 3 }),
  })
  .map(({ ch, queue, args, messages, take, prefetch, settle }) => {
    const out = [frameOf(ch, 'queue.declare', { queue, arguments: args })];
    for (const [props, size] of messages) {
      out.push(frameOf(ch, 'basic.publish', { exchange: '', routingKey: queue }), encodeFrame(2, ch, encodeContentHeaderPayload(60, size, props)));
      for (const n of splitBody(size)) out.push(encodeFrame(3, ch, Buffer.alloc(n, 0x62)));
    }
    if (prefetch) out.push(frameOf(ch, 'basic.qos', { prefetchCount: prefetch }));
    if (take === 'get') for (let i = 0; i < messages.length; i++) out.push(frameOf(ch, 'basic.get', { queue }));
    if (take.startsWith('consume')) out.push(frameOf(ch, 'basic.consume', { queue, consumerTag: `c${ch}`, noAck: take === 'consume-no-ack' }));
    for (const s of settle) {
      if (s.how === 'basic.reject') out.push(frameOf(ch, 'basic.reject', { deliveryTag: s.tag, requeue: s.requeue }));
      else out.push(frameOf(ch, s.how as MethodName, { deliveryTag: s.tag, multiple: s.multiple, requeue: s.requeue }));
    }
    return out;
  });

const weighted = (ms: MethodSpec[]): Array<[MethodSpec, number]> => ms.map((m) => [m, 1]);

/** Input for fuzzFrameReader: frame-max choice, chunk seed, a stream of frames. */
export const frameStream: fc.Arbitrary<Buffer> = fc
  .tuple(u8, u32, fc.array(frames(weighted(ALL_METHODS), 10), { maxLength: 12 }))
  .map(([fm, seed, fs]) => {
    const head = Buffer.alloc(5);
    head[0] = fm;
    head.writeUInt32BE(seed >>> 0, 1);
    return Buffer.concat([head, ...fs.flat()]);
  });

export const protocolHeader: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constantFrom('AMQP\x00\x00\x09\x01', 'AMQP\x01\x01\x00\x09', 'AMQP\x01\x01\x08\x00', 'AMQP\x01\x01\x09\x01', 'AMQP\x03\x01\x00\x00', 'AMQP\x00\x00\x09\x00').map((s) => Buffer.from(s, 'latin1')),
  fc.uint8Array({ minLength: 4, maxLength: 4 }).map((b) => Buffer.concat([Buffer.from('AMQP'), b])),
  fc.uint8Array({ maxLength: 12 }).map((b) => Buffer.from(b)),
);

// --- connection scripts ------------------------------------------------------------------------

/** Splits bytes into feed records of at most 255 octets (at sizes the script chose). */
function feedRecords(conn: number, bytes: Buffer, cut: number): Buffer[] {
  const out: Buffer[] = [];
  const step = cut > 0 ? Math.min(255, cut) : 255;
  for (let o = 0; o < bytes.length; o += step) {
    const part = bytes.subarray(o, o + step);
    out.push(Buffer.from([OP.feed | (conn ? OP.second : 0), part.length]), part);
  }
  return out;
}

type Step = { conn: number; cut: number; action: Buffer[] | { op: number; arg: number } };

const step = (methods: Array<[MethodSpec, number]>, stories = 0): fc.Arbitrary<Step> =>
  fc.record({
    conn: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.constant(1) }),
    cut: fc.oneof({ weight: 5, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 40 }) }),
    action: fc.oneof(
      { weight: 30, arbitrary: frames(methods, 1, stories) },
      { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => [Buffer.from(b)]) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant(OP.clock), arg: u8 }) },
      { weight: 3, arbitrary: fc.record({ op: fc.constant(OP.turn), arg: fc.constant(0) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant(OP.backpressure), arg: fc.constant(0) }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant(OP.reconnect), arg: fc.constant(0) }) },
    ),
  });

function encodeScript(prefix: Buffer[], steps: Step[]): Buffer {
  const parts: Buffer[] = [...prefix];
  for (const s of steps) {
    if (Array.isArray(s.action)) parts.push(...feedRecords(s.conn, Buffer.concat(s.action), s.cut));
    else parts.push(Buffer.from([s.action.op | (s.conn ? OP.second : 0), s.action.arg]));
  }
  return Buffer.concat(parts);
}

/** A script for fuzzConnection(…, handshake = true): well-framed client actions on many channels. */
export const connectionScript: fc.Arbitrary<Buffer> = fc
  .array(step(CLIENT_METHODS.map(([n, w]) => [byName.get(n)!, w]), 10), { maxLength: 80, size: 'large' })
  .map((steps) => encodeScript([], steps));

/** A script for fuzzConnection(…, handshake = false): the handshake too, damaged or not. */
export const rawConnectionScript: fc.Arbitrary<Buffer> = fc
  .tuple(damaged(fc.constant(HANDSHAKE), 16), fc.array(step(weighted(ALL_METHODS)), { maxLength: 12 }))
  .map(([hs, steps]) => encodeScript(feedRecords(0, hs, 0), steps));
