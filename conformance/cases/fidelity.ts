/**
 * Message fidelity: every basic property and every field-table type survives the broker; large
 * bodies are split into frames and reassembled; empty bodies have no body frame.
 */
import { createHash } from 'node:crypto';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeContentHeaderPayload, type BasicProperties } from '../../src/frame/generated/properties.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';
import { summariseMessage, type RawClient, type RawMessage } from '../lib/raw-client.js';
import { typedTable } from '../lib/typed.js';

const test = area('fidelity');

/** A field table with every type RabbitMQ's parser knows (rabbitmq.com/amqp-0-9-1-errata.html#section_3). */
function everyType(): FieldTable {
  return {
    bool: F.bool(true),
    int8: F.int8(-7),
    uint8: F.uint8(200),
    int16: F.int16(-1234),
    uint16: F.uint16(54321),
    int32: F.int32(-123456789),
    uint32: F.uint32(4000000000),
    int64: F.int64(-1234567890123n),
    float: F.float(1.5),
    double: F.double(-2.25),
    decimal: F.decimal(2, 12345),
    timestamp: F.timestamp(1700000000),
    string: F.str('tëxt'),
    bytes: F.bytes(Buffer.from([0, 1, 2, 255])),
    array: F.array([F.int8(1), F.str('two'), F.array([F.bool(false)]), F.table({ k: F.str('v') }), F.void()]),
    table: F.table({ nested: F.table({ deep: F.int32(1) }), s: F.str('x') }),
    void: F.void(),
  };
}

function allProperties(headers: FieldTable): BasicProperties {
  return {
    contentType: 'application/octet-stream',
    contentEncoding: 'gzip',
    headers,
    deliveryMode: 2,
    priority: 7,
    correlationId: 'corr-1',
    replyTo: 'reply-queue',
    expiration: '600000',
    messageId: 'msg-1',
    timestamp: 1234567890,
    type: 'my.type',
    userId: 'guest',
    appId: 'conformance',
    clusterId: 'cluster-x',
  };
}

async function rawWithQueue(t: CaseContext, opts: { frameMax?: number } = {}): Promise<{ c: RawClient; q: string }> {
  const c = await t.raw(opts.frameMax ? { frameMax: opts.frameMax } : {});
  await c.openChannel(1);
  const q = t.q();
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  c.method(1, 'confirm.select', { nowait: false });
  await c.expect('confirm.select-ok');
  return { c, q };
}

/** Publishes on channel 1 and waits for its confirm. */
async function publishConfirmed(c: RawClient, exchange: string, rk: string, body: Buffer | string, props: BasicProperties, frameMax?: number): Promise<void> {
  const before = c.frames.filter((f) => f.method?.name === 'basic.ack' || f.method?.name === 'basic.nack').length;
  c.publish(1, exchange, rk, body, props, frameMax ? { frameMax } : {});
  await c.until(() => c.frames.filter((f) => f.method?.name === 'basic.ack' || f.method?.name === 'basic.nack').length > before);
}

function bodyFrames(c: RawClient, m: RawMessage): number[] {
  const i = c.frames.findIndex((f) => f.method === m.method);
  const sizes: number[] = [];
  for (let j = i + 2; j < c.frames.length && c.frames[j]?.type === 3 && c.frames[j]?.channel === m.channel; j++) sizes.push((c.frames[j] as { payload: Buffer }).payload.length);
  return sizes;
}

test('all-properties-round-trip', 'spec 1.8 basic class properties (14 fields); RabbitMQ passes the content header through unchanged', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const props = allProperties({ h: F.str('v') });
  await publishConfirmed(c, '', q, 'body', props);
  const m = await c.get(1, q);
  t.log('message', m ? summariseMessage(m) : null);
  t.log('header-bytes-identical', m ? m.headerPayload.equals(encodeContentHeaderPayload(60, 4, props)) : null);
});

test('every-field-type-pass-through', 'rabbitmq.com/amqp-0-9-1-errata.html#section_3 field types; spec 4.2.5.5', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'types', { headers: everyType() });
  const m = await c.get(1, q);
  t.log('headers', m?.header.properties.headers ? typedTable(m.header.properties.headers) : null);
});

test('every-field-type-after-dead-letter', 'rabbitmq.com/dlx.html: headers are re-encoded when x-death is added', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const src = t.q('src');
  c.method(1, 'queue.declare', { queue: src, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: { 'x-dead-letter-exchange': F.str(''), 'x-dead-letter-routing-key': F.str(q) } });
  await c.expect('queue.declare-ok');
  await publishConfirmed(c, '', src, 'types', { headers: everyType() });
  const got = await c.get(1, src, false);
  if (got) c.method(1, 'basic.reject', { deliveryTag: (got.method.args as { deliveryTag: number }).deliveryTag, requeue: false });
  const m = await t.waitFor(() => c.get(1, q), 2000, 10);
  const h = m?.header.properties.headers ? typedTable(m.header.properties.headers) : null;
  t.log('headers', h);
});

test('every-field-type-headers-exchange', 'spec 3.1.3.5 headers exchange reads header values of every type', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const x = t.x();
  c.method(1, 'exchange.declare', { exchange: x, type: 'headers', passive: false, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  await c.expect('exchange.declare-ok');
  const binding: FieldTable = { 'x-match': F.str('all'), ...everyType() };
  delete binding['float'];
  c.method(1, 'queue.bind', { queue: q, exchange: x, routingKey: '', noWait: false, arguments: binding });
  await c.expect('queue.bind-ok');
  await publishConfirmed(c, x, '', 'matched', { headers: everyType() });
  const m = await c.get(1, q);
  t.log('routed', m ? m.body.toString() : null);
});

test('every-field-type-bcc-rewrite', 'rabbitmq.com/sender-selected.html: removing BCC re-encodes the headers', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', 'nowhere-else', 'types', { headers: { ...everyType(), BCC: F.array([F.str(q)]) } });
  const m = await c.get(1, q);
  t.log('headers', m?.header.properties.headers ? typedTable(m.header.properties.headers) : null);
});

test('amqplib-field-types', 'amqplib type notation {"!": type}; spec 4.2.5.5', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('x'), {
    headers: {
      str: 'string', bool: false, byte: 5, short: 1000, int: 100000, long: 2 ** 40, double: 0.5, neg: -3, nul: null, buf: Buffer.from('ab'),
      arr: [1, 'a'], obj: { a: 1 }, ts: { '!': 'timestamp', value: 99 }, dec: { '!': 'decimal', value: { places: 1, digits: 15 } },
      float: { '!': 'float', value: 2.5 }, ubyte: { '!': 'unsignedbyte', value: 250 }, ushort: { '!': 'unsignedshort', value: 60000 }, uint: { '!': 'unsignedint', value: 3000000000 },
    },
  });
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: true });
  t.log('typed', m ? t.typedHeaders(ch, m) : null);
  t.log('amqplib-view', m ? m.properties.headers : null);
});

test('large-body-frames', 'spec 4.2.6.2 content body frames: bodies are split at frame-max - 8', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const body = Buffer.alloc(300000);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + 7) & 0xff;
  await publishConfirmed(c, '', q, body, {});
  const m = await c.get(1, q);
  t.log('size', m?.body.length ?? null);
  t.log('sha256', m ? createHash('sha256').update(m.body).digest('hex') === createHash('sha256').update(body).digest('hex') : null);
  t.log('frames', m ? bodyFrames(c, m) : null);
});

test('large-body-small-frame-max', 'spec 4.2.6.2: the receiver\'s negotiated frame-max governs delivery framing', async (t) => {
  const { c, q } = await rawWithQueue(t, { frameMax: 4096 });
  const body = Buffer.alloc(10000, 0x61);
  await publishConfirmed(c, '', q, body, {}, 4096);
  const m = await c.get(1, q);
  t.log('frames', m ? bodyFrames(c, m) : null);
  t.log('intact', m ? m.body.equals(body) : null);
});

test('body-frame-boundary', 'spec 4.2.6.2: a body of exactly frame-max - 8 octets fits one frame', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, Buffer.alloc(131064, 1), {});
  await publishConfirmed(c, '', q, Buffer.alloc(131065, 2), {});
  const a = await c.get(1, q);
  const b = await c.get(1, q);
  t.log('exact', a ? bodyFrames(c, a) : null);
  t.log('one-more', b ? bodyFrames(c, b) : null);
});

test('empty-body', 'spec 4.2.6.2: a zero-size body has no body frames', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, Buffer.alloc(0), { contentType: 'text/plain' });
  const m = await c.get(1, q);
  t.log('message', m ? summariseMessage(m) : null);
  t.log('body-frames', m ? bodyFrames(c, m) : null);
});

test('empty-body-amqplib', 'spec 4.2.6.2; an empty body through a client library', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.alloc(0));
  await ch.waitForConfirms();
  const got = await t.consumeN(ch, q, 1);
  t.log('got', got.map((m) => ({ size: m.content.length })));
});

test('body-in-one-byte-frames', 'spec 4.2.6.2: a body may arrive in many small frames', async (t) => {
  const { c, q } = await rawWithQueue(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: q, mandatory: false, immediate: false });
  c.write(encodeFrame(2, 1, encodeContentHeaderPayload(60, 5, {})));
  for (const ch of 'hello') c.frame(3, 1, Buffer.from(ch));
  await c.until(() => c.frames.some((f) => f.method?.name === 'basic.ack'));
  const m = await c.get(1, q);
  t.log('body', m?.body.toString() ?? null);
  t.log('frames', m ? bodyFrames(c, m) : null);
});

test('binary-body', 'spec 4.2.6.2: bodies are opaque octets', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const body = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  await publishConfirmed(c, '', q, body, {});
  const m = await c.get(1, q);
  t.log('intact', m ? m.body.equals(body) : null);
});

test('no-properties', 'spec 4.2.6.1: property flags 0', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'bare', {});
  const m = await c.get(1, q);
  t.log('flags', m ? m.headerPayload.readUInt16BE(12) : null);
  t.log('message', m ? summariseMessage(m) : null);
});

test('empty-headers-table-kept', 'spec 4.2.6.1: an empty headers table is still a present property', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'x', { headers: {} });
  const m = await c.get(1, q);
  t.log('flags', m ? m.headerPayload.readUInt16BE(12) : null);
});

test('empty-string-properties', 'spec 4.2.5.3: empty shortstr properties', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'x', { contentType: '', messageId: '', correlationId: '', type: '' });
  const m = await c.get(1, q);
  t.log('message', m ? summariseMessage(m) : null);
});

test('long-shortstr-properties', 'spec 4.2.5.3: shortstr up to 255 octets', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'x', { messageId: 'm'.repeat(255), correlationId: 'é'.repeat(127) });
  const m = await c.get(1, q);
  t.log('lengths', m ? { messageId: m.header.properties.messageId?.length, correlationId: m.header.properties.correlationId?.length } : null);
});

test('large-header-value', 'spec 4.2.5.5: longstr values of any size', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const big = 'z'.repeat(70000);
  await publishConfirmed(c, '', q, 'x', { headers: { big: F.str(big) } });
  const m = await c.get(1, q);
  const v = m?.header.properties.headers?.['big'];
  t.log('intact', v ? v.type === 'S' && v.value.toString() === big : null);
});

test('deeply-nested-headers', 'spec 4.2.5.5: nested tables', async (t) => {
  const { c, q } = await rawWithQueue(t);
  let table: FieldTable = { leaf: F.int32(1) };
  for (let i = 0; i < 30; i++) table = { [`l${i}`]: F.table(table) };
  await publishConfirmed(c, '', q, 'x', { headers: table });
  const m = await c.get(1, q);
  t.log('header-bytes-identical', m ? m.headerPayload.equals(encodeContentHeaderPayload(60, 1, { headers: table })) : null);
});

test('octet-and-timestamp-extremes', 'spec 1.8 basic properties: priority 0..255, timestamp 64-bit', async (t) => {
  const { c, q } = await rawWithQueue(t);
  await publishConfirmed(c, '', q, 'a', { deliveryMode: 1, priority: 255, timestamp: 2 ** 40 });
  await publishConfirmed(c, '', q, 'b', { deliveryMode: 2, priority: 0, timestamp: 0 });
  const a = await c.get(1, q);
  const b = await c.get(1, q);
  t.log('a', a ? a.header.properties : null);
  t.log('b', b ? b.header.properties : null);
});

for (const mode of [0, 3, 255]) {
  test(`delivery-mode-${mode}`, 'spec 1.8 basic delivery-mode: 1 non-persistent, 2 persistent; RabbitMQ rejects other values', async (t) => {
    const { c, q } = await rawWithQueue(t);
    c.publish(1, '', q, 'x', { deliveryMode: mode });
    const m = await c.nextMethod(['basic.ack', 'basic.nack', 'channel.close', 'connection.close'], 2000);
    t.log('reply', m ? { name: m.name, args: m.name === 'basic.ack' ? null : m.args } : null);
  });
}

test('properties-kept-on-requeue', 'spec 1.8.2.3 redelivery delivers the same message', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const props = allProperties(everyType());
  await publishConfirmed(c, '', q, 'requeued', props);
  const first = await c.get(1, q, false);
  if (first) c.method(1, 'basic.reject', { deliveryTag: (first.method.args as { deliveryTag: number }).deliveryTag, requeue: true });
  const again = await t.waitFor(() => c.get(1, q), 1000, 10);
  t.log('identical', first && again ? first.headerPayload.equals(again.headerPayload) && first.body.equals(again.body) : null);
  t.log('redelivered', again ? (again.method.args as { redelivered: boolean }).redelivered : null);
});

test('deliver-equals-get', 'spec 1.8.2.7 basic.deliver and 1.8.2.11 get-ok carry the same content', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const props = allProperties(everyType());
  await publishConfirmed(c, '', q, 'one', props);
  await publishConfirmed(c, '', q, 'two', props);
  const g = await c.get(1, q);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'cmp', noLocal: false, noAck: true, exclusive: false, noWait: false });
  const d = await c.until(() => c.messages.find((m) => m.method.name === 'basic.deliver'));
  t.log('same-header', g && d ? g.headerPayload.equals(d.headerPayload) : null);
});

test('fanout-copies-identical', 'spec 3.1.3.2: each queue gets the same message', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const q2 = t.q('two');
  c.method(1, 'queue.declare', { queue: q2, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  const x = t.x();
  c.method(1, 'exchange.declare', { exchange: x, type: 'fanout', passive: false, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  await c.expect('exchange.declare-ok');
  for (const qq of [q, q2]) {
    c.method(1, 'queue.bind', { queue: qq, exchange: x, routingKey: '', noWait: false, arguments: {} });
    await c.expect('queue.bind-ok');
  }
  await publishConfirmed(c, x, 'rk', 'copy', allProperties(everyType()));
  const a = await c.get(1, q);
  const b = await c.get(1, q2);
  t.log('identical', a && b ? a.headerPayload.equals(b.headerPayload) && a.body.equals(b.body) : null);
});

test('user-id-matches', 'rabbitmq.com/validated-user-id.html: user-id equal to the connection user is accepted', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('x'), { userId: 'guest' });
  await t.stepOk('confirm', ch.waitForConfirms(), ch);
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m, { props: true }));
});

test('user-id-mismatch', 'rabbitmq.com/validated-user-id.html: "if the user-id property does not match the connection user, 406 PRECONDITION_FAILED"', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('x'), { userId: 'mallory' });
  await t.step('confirm', ch.waitForConfirms(), () => true, ch);
});

test('header-weight-nonzero', 'spec 4.2.6.1 content header weight "must be zero"', async (t) => {
  const { c, q } = await rawWithQueue(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: q, mandatory: false, immediate: false });
  const h = encodeContentHeaderPayload(60, 1, {});
  h.writeUInt16BE(7, 2);
  c.write(encodeFrame(2, 1, h));
  c.frame(3, 1, Buffer.from('w'));
  const next = await c.nextMethod(['basic.ack', 'channel.close', 'connection.close'], 1500);
  t.log('next', next ? { name: next.name, args: next.name === 'basic.ack' ? null : next.args } : null);
});

test('routing-key-255', 'spec 4.2.5.3: routing keys are shortstrs up to 255 octets', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  const q = t.q();
  const rk = 'k'.repeat(255);
  await ch.assertExchange(x, 'direct', { durable: false });
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, rk);
  ch.publish(x, rk, Buffer.from('long key'));
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: true });
  t.log('got', m ? { body: m.content.toString(), keyLength: m.fields.routingKey.length } : null);
});

test('utf8-header-keys-and-values', 'spec 4.2.5.5: field names are shortstrs (UTF-8)', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('ü'), { headers: { 'ключ': 'значение', '鍵': '値' } });
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: true });
  t.log('got', m ? { body: m.content.toString(), headers: t.typedHeaders(ch, m) } : null);
});

test('client-supplied-x-death-kept', 'rabbitmq.com/dlx.html: headers a publisher sets, even x-death, are passed through', async (t) => {
  const { c, q } = await rawWithQueue(t);
  const headers: FieldTable = { 'x-death': F.array([F.table({ count: F.int8(3), reason: F.str('made-up'), queue: F.str('q'), time: F.timestamp(5), exchange: F.str(''), 'routing-keys': F.array([]) })]) };
  await publishConfirmed(c, '', q, 'x', { headers });
  const m = await c.get(1, q);
  t.log('headers', m?.header.properties.headers ? typedTable(m.header.properties.headers) : null);
});
