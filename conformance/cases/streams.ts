/** Stream queues over AMQP 0-9-1 (x-queue-type: stream): declare rules, offsets, credit, refusals. */
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { F } from '../../src/frame/field-table.js';
import { area } from '../lib/case.js';
import type { RawClient } from '../lib/raw-client.js';

const test = area('streams');
const DOC = 'rabbitmq.com/streams.html';
const STREAM = { 'x-queue-type': 'stream' };

async function stream(t: Parameters<Parameters<typeof test>[2]>[0], args: Record<string, unknown> = {}): Promise<{ ch: ConfirmChannel; q: string }> {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { ...STREAM, ...args } });
  return { ch, q };
}

/** Publishes each body as its own confirmed publish: one chunk each in RabbitMQ's log. */
async function publishEach(ch: ConfirmChannel, q: string, bodies: string[]): Promise<void> {
  for (const b of bodies) {
    ch.sendToQueue(q, Buffer.from(b));
    await ch.waitForConfirms();
  }
}

/** Consumes with a prefetch and x-stream-offset; waits for n deliveries (or the timeout). */
async function reader(t: Parameters<Parameters<typeof test>[2]>[0], q: string, prefetch: number, offset: unknown, n: number, timeoutMs = 1000): Promise<{ ch: Channel; got: ConsumeMessage[]; tag: string }> {
  const ch = await t.channel(await t.connect());
  await ch.prefetch(prefetch);
  const got: ConsumeMessage[] = [];
  const args = offset === undefined ? {} : { 'x-stream-offset': offset };
  const r = await ch.consume(q, (m) => { if (m) got.push(m); }, { arguments: args });
  await t.waitFor(() => got.length >= n, timeoutMs);
  return { ch, got, tag: r.consumerTag };
}

const offsets = (ms: ConsumeMessage[]) => ms.map((m) => `${m.content.toString()}@${String(m.properties.headers?.['x-stream-offset'])}`);

test('declare-property-refusals', `${DOC}#limitations: streams are durable, not exclusive, not auto-delete, not server-named`, async (t) => {
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['non-durable', t.q('a'), { durable: false }],
    ['exclusive', t.q('b'), { durable: true, exclusive: true }],
    ['auto-delete', t.q('c'), { durable: true, autoDelete: true }],
    ['server-named', '', { durable: true }],
  ];
  for (const [label, name, opts] of cases) {
    const ch = await t.channel();
    await t.step(label, ch.assertQueue(name, { ...opts, arguments: STREAM }), (r) => r.messageCount, ch);
  }
});

test('declare-refused-arguments', `${DOC}#feature-comparison: queue arguments a stream does not support (rabbit_amqqueue:check_arguments_key)`, async (t) => {
  const refused: Array<[string, unknown]> = [
    ['x-message-ttl', 1000], ['x-expires', 1000], ['x-max-length', 10], ['x-dead-letter-exchange', 'dlx'],
    ['x-dead-letter-routing-key', 'rk'], ['x-max-priority', 5], ['x-overflow', 'drop-head'],
    ['x-single-active-consumer', true], ['x-queue-mode', 'lazy'], ['x-delivery-limit', 3],
    ['x-max-in-memory-length', 3], ['x-max-in-memory-bytes', 3], ['x-quorum-initial-group-size', 3],
    ['x-dead-letter-strategy', 'at-most-once'], ['x-queue-master-locator', 'min-masters'],
    // Not validated first: the key check refuses an invalid value of an unsupported argument too.
    ['x-message-ttl', 'not-a-number'],
  ];
  for (const [i, [key, value]] of refused.entries()) {
    const ch = await t.channel();
    await t.step(`${key}=${String(value)}`, ch.assertQueue(t.q(`r${i}`), { durable: true, arguments: { ...STREAM, [key]: value } }), (r) => r.messageCount, ch);
  }
});

test('declare-argument-values', `${DOC}#retention: x-max-length-bytes, x-max-age, x-stream-max-segment-size-bytes, x-initial-cluster-size values`, async (t) => {
  const values: Array<[string, unknown]> = [
    ['x-max-age', '7D'], ['x-max-age', '12h'], ['x-max-age', '30m'], ['x-max-age', '10s'], ['x-max-age', '1Y'], ['x-max-age', '2M'],
    ['x-max-age', '0s'], ['x-max-age', '10'], ['x-max-age', '10ms'], ['x-max-age', '1.5h'], ['x-max-age', '1h '], ['x-max-age', 10],
    ['x-max-length-bytes', 1000], ['x-max-length-bytes', -1], ['x-max-length-bytes', '10'],
    ['x-stream-max-segment-size-bytes', 3000000000], ['x-stream-max-segment-size-bytes', 3000000001],
    ['x-stream-max-segment-size-bytes', -5], ['x-stream-max-segment-size-bytes', '5'],
    ['x-initial-cluster-size', 3], ['x-initial-cluster-size', 0], ['x-queue-leader-locator', 'balanced'],
    ['x-queue-leader-locator', 'bogus'], ['x-custom', 'kept'],
  ];
  for (const [i, [key, value]] of values.entries()) {
    const ch = await t.channel();
    await t.step(`${key}=${String(value)}`, ch.assertQueue(t.q(`v${i}`), { durable: true, arguments: { ...STREAM, [key]: value } }), (r) => r.messageCount, ch);
  }
});

test('declare-max-age-crash', `${DOC}#retention: an x-max-age without leading digits crashes RabbitMQ 3.10's parser (541)`, async (t) => {
  for (const [i, v] of ['abc', ''].entries()) {
    const ch = await t.channel(await t.connect());
    await t.step(`x-max-age=${JSON.stringify(v)}`, ch.assertQueue(t.q(`c${i}`), { durable: true, arguments: { ...STREAM, 'x-max-age': v } }), (r) => r.messageCount, ch);
  }
});

test('stream-arguments-on-other-types', `${DOC}: stream-only arguments refused by classic and quorum queues`, async (t) => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['classic x-max-age', { 'x-max-age': '1h' }],
    ['classic x-stream-max-segment-size-bytes', { 'x-stream-max-segment-size-bytes': 5 }],
    ['quorum x-max-age', { 'x-queue-type': 'quorum', 'x-max-age': '1h' }],
    ['quorum x-stream-max-segment-size-bytes', { 'x-queue-type': 'quorum', 'x-stream-max-segment-size-bytes': 5 }],
  ];
  for (const [i, [label, args]] of cases.entries()) {
    const ch = await t.channel();
    await t.step(label, ch.assertQueue(t.q(`o${i}`), { durable: true, arguments: args }), (r) => r.messageCount, ch);
  }
});

test('redeclare-equivalence', `${DOC}: redeclaring a stream checks the arguments it was declared with`, async (t) => {
  const { q } = await stream(t, { 'x-max-length-bytes': 100000 });
  const cases: Array<[string, Record<string, unknown>]> = [
    ['same', { ...STREAM, 'x-max-length-bytes': 100000 }],
    ['other max-length-bytes', { ...STREAM, 'x-max-length-bytes': 5 }],
    ['added max-age', { ...STREAM, 'x-max-length-bytes': 100000, 'x-max-age': '1h' }],
    ['added segment size', { ...STREAM, 'x-max-length-bytes': 100000, 'x-stream-max-segment-size-bytes': 1000 }],
    ['as classic', { 'x-max-length-bytes': 100000 }],
  ];
  for (const [label, args] of cases) {
    const ch = await t.channel();
    await t.step(label, ch.assertQueue(q, { durable: true, arguments: args }), (r) => r.messageCount, ch);
  }
});

test('consume-refusals', `${DOC}#consuming: prefetch required, no automatic acknowledgement, no x-priority`, async (t) => {
  const { q } = await stream(t);
  const noQos = await t.channel(await t.connect());
  await t.step('no qos', noQos.consume(q, () => {}), () => true, noQos);
  const global = await t.channel(await t.connect());
  await global.prefetch(10, true);
  await t.step('global qos only', global.consume(q, () => {}), () => true, global);
  const noAck = await t.channel(await t.connect());
  await noAck.prefetch(10);
  await t.step('no-ack', noAck.consume(q, () => {}, { noAck: true }), () => true, noAck);
  const prio = await t.channel(await t.connect());
  await prio.prefetch(10);
  await t.step('x-priority', prio.consume(q, () => {}, { arguments: { 'x-priority': 3 } }), () => true, prio);
  const excl = await t.channel(await t.connect());
  await excl.prefetch(10);
  await t.step('exclusive', excl.consume(q, () => {}, { exclusive: true }), () => true, excl);
  const classic = await t.channel(await t.connect());
  const cq = t.q('classic');
  await classic.assertQueue(cq, { durable: false });
  await classic.prefetch(10);
  await t.step('x-stream-offset on classic', classic.consume(cq, () => {}, { arguments: { 'x-stream-offset': 'first' } }), () => true, classic);
  const haf = await t.channel(await t.connect());
  await haf.prefetch(10);
  await t.step('x-cancel-on-ha-failover', haf.consume(q, () => {}, { arguments: { 'x-cancel-on-ha-failover': true } }), () => true, haf);
  const floatNoQos = await t.channel(await t.connect());
  await t.step('float offset without qos', floatNoQos.consume(q, () => {}, { arguments: { 'x-stream-offset': 1.5 } }), () => true, floatNoQos);
  // Exclusive stream consumers do not keep others out, nor are they kept out.
  const shared = await t.channel(await t.connect());
  await shared.prefetch(10);
  await t.step('after an exclusive one', shared.consume(q, () => {}), () => true, shared);
  await t.step('exclusive again', shared.consume(q, () => {}, { exclusive: true }), () => true, shared);
});

test('offset-argument-values', `${DOC}#consuming: x-stream-offset values RabbitMQ refuses`, async (t) => {
  const { q } = await stream(t);
  const values: Array<[string, unknown]> = [['"10"', '10'], ['"bogus"', 'bogus'], ['1.5', 1.5], ['true', true]];
  for (const [label, v] of values) {
    const ch = await t.channel(await t.connect());
    await ch.prefetch(10);
    await t.step(label, ch.consume(q, () => {}, { arguments: { 'x-stream-offset': v } }), () => true, ch);
  }
});

test('get-purge-refused', `${DOC}#limitations: basic.get and queue.purge are not supported on streams`, async (t) => {
  const { q } = await stream(t);
  const a = await t.channel(await t.connect());
  await t.step('get no-ack', a.get(q, { noAck: true }), (m) => t.msg(m), a);
  const b = await t.channel(await t.connect());
  await t.step('purge', b.purgeQueue(q), (r) => r.messageCount, b);
  const c = await t.channel();
  await t.step('delete if-empty', c.deleteQueue(q, { ifEmpty: true }), (r) => r.messageCount, c);
});

test('replay-first-header', `${DOC}#consuming: offset first replays the log; each delivery carries x-stream-offset (long)`, async (t) => {
  const { ch, q } = await stream(t);
  ch.sendToQueue(q, Buffer.from('p'), {
    headers: { s: 'x', i: 7 }, contentType: 'text/plain', contentEncoding: 'e', priority: 3, deliveryMode: 2,
    correlationId: 'c', replyTo: 'r', expiration: '60000', messageId: 'id', timestamp: 1000, type: 't', userId: 'guest', appId: 'a',
  });
  await ch.waitForConfirms();
  await publishEach(ch, q, ['m1', 'm2']);
  const r = await reader(t, q, 10, 'first', 3);
  t.log('deliveries', r.got.map((m) => t.msg(m, { props: true })));
  t.log('headers', r.got.map((m) => t.typedHeaders(r.ch, m)));
});

test('offset-specs', `${DOC}#consuming: first, last, next, absent, numeric, negative, beyond the end, interval, timestamp`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0', 'm1', 'm2', 'm3']);
  const specs: Array<[string, unknown]> = [
    ['first', 'first'], ['last', 'last'], ['2', 2], ['-3', -3], ['interval 10m', '10m'],
    ['timestamp 0', { '!': 'timestamp', value: 0 }],
  ];
  for (const [label, spec] of specs) {
    const r = await reader(t, q, 10, spec, 4, label === 'last' ? 300 : 1000);
    if (label === 'last') await t.waitFor(() => r.got.length >= 1, 1000);
    t.log(label, offsets(r.got));
    await r.ch.close();
  }
  const next = await reader(t, q, 10, 'next', 1, 200);
  const absent = await reader(t, q, 10, undefined, 1, 200);
  const beyond = await reader(t, q, 10, 6, 1, 200);
  const future = await reader(t, q, 10, { '!': 'timestamp', value: Math.floor(Date.now() / 1000) + 3600 }, 1, 200);
  t.log('before publish', { next: offsets(next.got), absent: offsets(absent.got), beyond: offsets(beyond.got), future: offsets(future.got) });
  await publishEach(ch, q, ['m4', 'm5', 'm6']);
  await t.waitFor(() => next.got.length >= 3 && absent.got.length >= 3 && beyond.got.length >= 1 && future.got.length >= 3, 2000);
  t.log('after publish', { next: offsets(next.got), absent: offsets(absent.got), beyond: offsets(beyond.got), future: offsets(future.got) });
});

test('ack-returns-credit', `${DOC}#consuming: acks return credit; nothing is removed; consumers read independently`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0', 'm1', 'm2', 'm3', 'm4']);
  const a = await reader(t, q, 2, 'first', 2);
  const b = await reader(t, q, 5, 'first', 5);
  await t.sleep(100);
  t.log('a before ack', offsets(a.got));
  a.ch.ack(a.got[0]!);
  await t.waitFor(() => a.got.length >= 3, 1000);
  t.log('a after one ack', offsets(a.got));
  a.ch.ack(a.got[2]!, true);
  await t.waitFor(() => a.got.length >= 5, 1000);
  t.log('a after ack multiple', offsets(a.got));
  t.log('b', offsets(b.got));
  t.log('tags', a.got.map((m) => ({ tag: m.fields.deliveryTag, redelivered: m.fields.redelivered })));
  const c = await reader(t, q, 10, 'first', 5);
  t.log('c after acks', offsets(c.got));
});

test('nack-reject-refused', `${DOC}#consuming: basic.nack and basic.reject are not supported (540)`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0']);
  for (const [label, act] of [
    ['nack requeue', (c: Channel, m: ConsumeMessage) => c.nack(m, false, true)],
    ['nack', (c: Channel, m: ConsumeMessage) => c.nack(m, false, false)],
    ['reject', (c: Channel, m: ConsumeMessage) => c.reject(m, false)],
  ] as const) {
    const r = await reader(t, q, 5, 'first', 1);
    act(r.ch, r.got[0]!);
    t.log(label, await t.closeOf(r.ch));
  }
});

test('nack-mixed-with-classic', `${DOC}#consuming: a nack (multiple) naming a classic queue's delivery and a stream's: the classic one is settled as asked, then 540`, async (t) => {
  for (const requeue of [true, false]) {
    const { ch, q } = await stream(t);
    await publishEach(ch, q, ['s0']);
    const c = t.q(requeue ? 'requeued' : 'dropped');
    const conn = await t.connect();
    const cons = await t.channel(conn);
    await cons.assertQueue(c, { durable: true });
    cons.sendToQueue(c, Buffer.from('c0'), { persistent: true });
    await cons.checkQueue(c);
    await cons.prefetch(10);
    const got: ConsumeMessage[] = [];
    await cons.consume(c, (m) => { if (m) got.push(m); });
    await t.waitFor(() => got.length >= 1, 1000);
    await cons.consume(q, (m) => { if (m) got.push(m); }, { arguments: { 'x-stream-offset': 'first' } });
    await t.waitFor(() => got.length >= 2, 1000);
    cons.nack(got[1]!, true, requeue);
    t.log(`requeue=${String(requeue)}`, await t.closeOf(cons));
    const other = await t.channel();
    const back = await other.get(c, { noAck: true });
    t.log(`requeue=${String(requeue)}: classic queue after`, back ? { body: back.content.toString(), redelivered: back.fields.redelivered } : 'empty');
    await other.deleteQueue(c);
  }
});

test('cancel-then-ack', `${DOC}#consuming: basic.cancel ends a stream consumer; its deliveries can still be acked`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0', 'm1', 'm2']);
  const r = await reader(t, q, 1, 'first', 1);
  await t.step('cancel', r.ch.cancel(r.tag), (x) => x.consumerTag === r.tag);
  r.ch.ack(r.got[0]!);
  await t.sleep(100);
  t.log('deliveries', offsets(r.got));
  await t.step('channel still open', r.ch.checkQueue(q), () => true, r.ch);
});

test('delete-with-messages', `${DOC}: queue.delete of a stream ignores if-empty and if-unused and reports 0 messages`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0', 'm1']);
  const r = await reader(t, q, 1, 'first', 1);
  const cancelled = new Promise<boolean>((resolve) => r.ch.on('cancel', () => resolve(true)));
  await t.step('delete', ch.deleteQueue(q, { ifEmpty: true, ifUnused: true }), (x) => x.messageCount);
  t.log('consumer cancelled', await Promise.race([cancelled, t.sleep(1000).then(() => false)]));
});

test('recover-crashes', `${DOC}#consuming: basic.recover with a stream's deliveries unacknowledged crashes RabbitMQ 3.10's channel (541)`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['m0']);
  const r = await reader(t, q, 1, 'first', 1);
  await t.step('recover', r.ch.recover(), () => true, r.ch);
});

test('header-types', `${DOC}: message headers of every field type after a round trip through a stream (stored as AMQP 1.0 records)`, async (t) => {
  const { ch, q } = await stream(t);
  ch.sendToQueue(q, Buffer.from('x'), {
    headers: {
      str: 'string', bool: false, byte: 5, short: 1000, int: 100000, long: 2 ** 40, double: 0.5, neg: -3, nul: null, buf: Buffer.from('ab'),
      arr: [1, 'a'], obj: { a: 1 }, ts: { '!': 'timestamp', value: 99 },
      float: { '!': 'float', value: 2.5 }, ubyte: { '!': 'unsignedbyte', value: 250 }, ushort: { '!': 'unsignedshort', value: 60000 }, uint: { '!': 'unsignedint', value: 3000000000 },
    },
  });
  await ch.waitForConfirms();
  const r = await reader(t, q, 10, 'first', 1);
  t.log('typed', r.got[0] ? t.typedHeaders(r.ch, r.got[0]) : null);
  // A decimal header crashes RabbitMQ 3.10's conversion of the message for the stream.
  const conn = await t.connect();
  const pub = await t.confirmChannel(conn);
  pub.sendToQueue(q, Buffer.from('d'), { headers: { dec: { '!': 'decimal', value: { places: 1, digits: 15 } } } });
  await t.step('decimal header', pub.waitForConfirms(), () => true, pub);
});

test('no-properties', `${DOC}: a message published without properties comes back with only x-stream-offset`, async (t) => {
  const { ch, q } = await stream(t);
  ch.publish('', q, Buffer.from('bare'));
  await ch.waitForConfirms();
  ch.publish('amq.fanout', 'rk', Buffer.from('via-fanout'));
  await ch.bindQueue(q, 'amq.fanout', '');
  ch.publish('amq.fanout', 'rk', Buffer.from('via-fanout'), { persistent: true, expiration: '1' });
  await ch.waitForConfirms();
  const r = await reader(t, q, 10, 'first', 2);
  t.log('deliveries', r.got.map((m) => t.msg(m, { props: true })));
  await ch.unbindQueue(q, 'amq.fanout', '');
});

test('dead-letter-into-stream', `${DOC}: a message dead-lettered into a stream (x-death is an array: not kept; x-first-death-* are)`, async (t) => {
  const { ch, q } = await stream(t);
  const src = t.q('src');
  await ch.assertQueue(src, { durable: false, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q } });
  ch.sendToQueue(src, Buffer.from('dl'), { headers: { h: 'v' } });
  await ch.waitForConfirms();
  const m = await ch.get(src, { noAck: false });
  if (m) ch.reject(m, false);
  const r = await reader(t, q, 10, 'first', 1);
  t.log('delivery', r.got.map((x) => t.msg(x, { props: true })));
  t.log('headers', r.got.map((x) => t.typedHeaders(r.ch, x)));
});

/** A raw connection consuming (prefetch 10) the classic queue c then the stream q from first, on channel 1; the deliveries in order. */
async function rawMixedConsumer(t: Parameters<Parameters<typeof test>[2]>[0], q: string, c: string): Promise<RawClient> {
  const r = await t.raw();
  await r.openChannel(1);
  r.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 10, global: false });
  await r.expect('basic.qos-ok');
  r.method(1, 'basic.consume', { queue: c, consumerTag: 'tc', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: {} });
  await r.until(() => r.frames.some((f) => f.method?.name === 'basic.deliver' && f.method.args.consumerTag === 'tc'));
  r.method(1, 'basic.consume', { queue: q, consumerTag: 'ts', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: { 'x-stream-offset': F.str('first') } });
  await r.until(() => r.frames.some((f) => f.method?.name === 'basic.deliver' && f.method.args.consumerTag === 'ts'));
  r.drain();
  return r;
}

test('tx-nack-mixed-refused-at-commit', `${DOC}#consuming: inside a transaction a nack naming a stream's delivery is held like any other; tx.commit settles the classic queue's delivery, then closes the connection with 540 (tx.commit)`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['s0']);
  const c = t.q('classic');
  await ch.assertQueue(c, { durable: true });
  ch.sendToQueue(c, Buffer.from('c0'), { persistent: true });
  await ch.waitForConfirms();
  const r = await rawMixedConsumer(t, q, c);
  r.method(1, 'tx.select', {});
  await r.expect('tx.select-ok');
  r.method(1, 'basic.nack', { deliveryTag: 2, multiple: true, requeue: false });
  await t.sleep(200);
  t.log('after the nack', r.drain());
  r.method(1, 'tx.commit', {});
  t.log('commit', await r.connectionOutcome());
  const back = await ch.get(c, { noAck: true });
  t.log('classic queue after', back ? back.content.toString() : 'empty');
  await ch.deleteQueue(c);
});

test('tx-reject-rollback', `${DOC}#consuming: a reject of a stream's delivery inside a transaction is undone by tx.rollback; the delivery can then be acked`, async (t) => {
  const { ch, q } = await stream(t);
  await publishEach(ch, q, ['s0']);
  const r = await t.raw();
  await r.openChannel(1);
  r.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 10, global: false });
  await r.expect('basic.qos-ok');
  r.method(1, 'basic.consume', { queue: q, consumerTag: 'ts', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: { 'x-stream-offset': F.str('first') } });
  await r.until(() => r.frames.some((f) => f.method?.name === 'basic.deliver'));
  r.drain();
  r.method(1, 'tx.select', {});
  await r.expect('tx.select-ok');
  r.method(1, 'basic.reject', { deliveryTag: 1, requeue: false });
  r.method(1, 'tx.rollback', {});
  t.log('rollback', (await r.nextMethod(['tx.rollback-ok', 'channel.close', 'connection.close']))?.name ?? null);
  r.method(1, 'basic.ack', { deliveryTag: 1, multiple: false });
  r.method(1, 'tx.commit', {});
  t.log('commit', (await r.nextMethod(['tx.commit-ok', 'channel.close', 'connection.close']))?.name ?? null);
});

test('tx-commit-ok-after-delivery', `${DOC}: a transaction publishing into a stream its own channel consumes: the delivery comes before tx.commit-ok`, async (t) => {
  const { q } = await stream(t);
  const r = await t.raw();
  await r.openChannel(1);
  r.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 10, global: false });
  await r.expect('basic.qos-ok');
  r.method(1, 'basic.consume', { queue: q, consumerTag: 'ts', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: { 'x-stream-offset': F.str('next') } });
  await r.expect('basic.consume-ok');
  r.method(1, 'tx.select', {});
  await r.expect('tx.select-ok');
  r.publish(1, '', q, 'm0');
  r.method(1, 'tx.commit', {});
  await r.until(() => r.frames.some((f) => f.method?.name === 'tx.commit-ok') && r.frames.some((f) => f.method?.name === 'basic.deliver'));
  t.log('order', r.frames.map((f) => f.method?.name).filter((n) => n === 'tx.commit-ok' || n === 'basic.deliver'));
});
