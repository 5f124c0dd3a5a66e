/** queue.declare / bind / purge / delete rules, exclusivity, auto-delete, arguments, quorum declare rules. */
import type { Options } from 'amqplib';
import { F } from '../../src/frame/field-table.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('queues');

const Q: Options.AssertQueue = { durable: false, exclusive: false, autoDelete: false };
const counts = (r: { messageCount: number; consumerCount: number }): unknown => ({ messageCount: r.messageCount, consumerCount: r.consumerCount });
const full = (r: { queue: string; messageCount: number; consumerCount: number }): unknown => ({ queue: r.queue, messageCount: r.messageCount, consumerCount: r.consumerCount });

test('declare-ok-fields', 'spec 1.8.2.2 queue.declare-ok: queue, message-count, consumer-count', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertQueue(t.q(), Q), full);
});

test('server-named', 'spec 1.8.2.1 queue.declare queue: "if empty the server generates a name"; RabbitMQ: amq.gen-…', async (t) => {
  const ch = await t.channel();
  const r = await t.step('declare', ch.assertQueue('', { exclusive: true }), full);
  if (r) await t.step('passive', ch.checkQueue(r.queue), full);
});

test('server-named-queue-usable-by-empty-name', 'spec 1.8.2.3 queue.bind queue: "if empty, the server uses the last queue declared on the channel"', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  await ch.assertExchange(x, 'fanout', { durable: false });
  const r = await ch.assertQueue('', { exclusive: true });
  await t.stepOk('bind-empty-name', ch.bindQueue('', x, ''));
  ch.publish(x, '', Buffer.from('via default queue name'));
  await ch.waitForConfirms();
  await t.step('get-empty-name', ch.get('', { noAck: true }), (m) => t.msg(m));
  await t.step('purge-empty-name', ch.purgeQueue(''));
  await t.step('delete-empty-name', ch.deleteQueue(''));
  await t.step('check', ch.checkQueue(r.queue));
});

test('empty-name-without-previous-declare', 'spec 1.8.2.3 queue.bind rule: "if the queue name is empty and no queue was declared, 530 NOT_ALLOWED"', async (t) => {
  const ch = await t.channel();
  await t.step('get', ch.get('', { noAck: true }));
});

test('empty-name-bind-without-previous-declare', 'spec 1.8.2.3 queue.bind rule "if the client did not declare a queue, and the queue name is empty, the server MUST raise a connection exception with reply code 530"', async (t) => {
  const ch = await t.channel();
  await t.step('bind', ch.bindQueue('', 'amq.fanout', ''));
});

test('redeclare-same', 'spec 1.8.2.1 queue.declare: declaring an existing queue with the same properties succeeds', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('m'));
  await ch.waitForConfirms();
  await t.step('redeclare', ch.assertQueue(q, Q), full);
});

for (const [what, a, b] of [
  ['durable', Q, { ...Q, durable: true }],
  ['auto-delete', Q, { ...Q, autoDelete: true }],
  ['exclusive', Q, { ...Q, exclusive: true }],
  ['message-ttl', { ...Q, messageTtl: 1000 }, { ...Q, messageTtl: 2000 }],
  ['message-ttl-added', Q, { ...Q, messageTtl: 1000 }],
  ['max-length', { ...Q, maxLength: 10 }, { ...Q, maxLength: 11 }],
  ['dead-letter-exchange', { ...Q, deadLetterExchange: 'a' }, { ...Q, deadLetterExchange: 'b' }],
  ['unknown-x-argument', { ...Q, arguments: { 'x-foo': 1 } }, { ...Q, arguments: { 'x-foo': 2 } }],
  ['queue-type', Q, { ...Q, arguments: { 'x-queue-type': 'classic' } }],
] as const) {
  test(`redeclare-different-${what}`, 'spec 1.8.2.1 queue.declare: "if the queue exists with different properties, 406 PRECONDITION_FAILED"; RabbitMQ wording "inequivalent arg"', async (t) => {
    const ch = await t.channel();
    const q = t.q();
    await t.stepOk('declare', ch.assertQueue(q, a));
    await t.step('redeclare', ch.assertQueue(q, b), full);
  });
}

test('redeclare-ttl-other-integer-type', 'rabbitmq.com/queues.html#optional-arguments; RabbitMQ compares numeric argument values across integer types', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-message-ttl': { '!': 'int', value: 5000 } } });
  await t.step('redeclare-long', ch.assertQueue(q, { ...Q, arguments: { 'x-message-ttl': { '!': 'long', value: 5000 } } }), counts);
});

test('passive-missing', 'spec 1.8.2.1 queue.declare passive: 404 NOT_FOUND if the queue does not exist', async (t) => {
  const ch = await t.channel();
  await t.step('check', ch.checkQueue(t.q()));
});

test('passive-counts', 'spec 1.8.2.1 passive declare returns message and consumer counts', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  for (let i = 0; i < 3; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  await ch.consume(q, () => {}, { noAck: false });
  await ch.consume(q, () => {}, { noAck: false });
  await t.sleep(50);
  await t.step('check', ch.checkQueue(q), full);
});

test('reserved-amq-prefix', 'spec 1.8.2.1 queue.declare rule: "queue names starting with amq. are reserved"; 403', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertQueue(`amq.cf-${t.token}`, Q));
});

test('reserved-amq-prefix-passive', 'spec 1.8.2.1: passive declare with amq. prefix is allowed (404 if missing)', async (t) => {
  const ch = await t.channel();
  await t.step('check', ch.checkQueue(`amq.cf-${t.token}`));
});

test('exclusive-other-connection', 'spec 1.8.2.1 exclusive: "other connections ... 405 RESOURCE_LOCKED"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  const other = await t.channel(await t.connect());
  await t.step('declare-from-other', other.assertQueue(q, { ...Q, exclusive: true }));
});

test('exclusive-passive-other-connection', 'spec 1.8.2.1 exclusive; RabbitMQ 3.10: passive declare from another connection is 405', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  const other = await t.channel(await t.connect());
  await t.step('check-from-other', other.checkQueue(q));
});

test('exclusive-consume-other-connection', 'spec 1.8.2.1 exclusive: "may only be accessed by the current connection"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  const other = await t.channel(await t.connect());
  await t.step('consume-from-other', other.consume(q, () => {}), () => true);
});

test('exclusive-publish-other-connection', 'spec 1.8.2.1 exclusive; publishing through an exchange is not access', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  const other = await t.confirmChannel(await t.connect());
  other.sendToQueue(q, Buffer.from('from another connection'));
  await t.stepOk('confirm', other.waitForConfirms());
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m));
});

test('exclusive-purge-delete-other-connection', 'spec 1.8.2.1 exclusive', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  const conn = await t.connect();
  await t.step('purge-from-other', (await t.channel(conn)).purgeQueue(q));
  await t.step('delete-from-other', (await t.channel(conn)).deleteQueue(q));
  await t.step('bind-from-other', (await t.channel(conn)).bindQueue(q, 'amq.fanout', ''));
});

test('exclusive-same-connection-other-channel', 'spec 1.8.2.1 exclusive: scoped to the connection, not the channel', async (t) => {
  const conn = await t.connect();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  const q = t.q();
  await a.assertQueue(q, { ...Q, exclusive: true });
  await t.step('declare-other-channel', b.assertQueue(q, { ...Q, exclusive: true }), counts);
  await t.step('non-exclusive-redeclare', b.assertQueue(q, Q), counts);
});

test('exclusive-deleted-with-connection', 'spec 1.8.2.1 exclusive: "deleted when the connection closes"', async (t) => {
  const conn = await t.connect();
  const ch = await t.channel(conn);
  const q = t.q();
  await ch.assertQueue(q, { ...Q, exclusive: true });
  await conn.close();
  const other = await t.channel();
  await t.waitFor(async () => {
    const c = await t.channel();
    return c.checkQueue(q).then(() => false, () => true);
  });
  await t.step('check', other.checkQueue(q));
});

test('auto-delete-after-last-consumer', 'spec 1.8.2.1 auto-delete: "deleted when all consumers have finished using it"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, autoDelete: true });
  const c1 = await ch.consume(q, () => {});
  const c2 = await ch.consume(q, () => {});
  await ch.cancel(c1.consumerTag);
  await t.step('check-after-first-cancel', ch.checkQueue(q), counts);
  await ch.cancel(c2.consumerTag);
  await t.sleep(50);
  await t.step('check-after-last-cancel', ch.checkQueue(q));
});

test('auto-delete-never-consumed-stays', 'rabbitmq.com/queues.html#temporary-queues: an auto-delete queue that never had a consumer is not deleted', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, autoDelete: true });
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  await t.step('check', ch.checkQueue(q), counts);
});

test('auto-delete-consumer-channel-closed', 'spec 1.8.2.1 auto-delete; closing the consuming channel cancels its consumers', async (t) => {
  const conn = await t.connect();
  const ch = await t.channel(conn);
  const q = t.q();
  await ch.assertQueue(q, { ...Q, autoDelete: true });
  await ch.consume(q, () => {});
  await ch.close();
  const other = await t.channel();
  await t.sleep(50);
  await t.step('check', other.checkQueue(q));
});

test('purge', 'spec 1.8.2.5 queue.purge: returns the number of messages purged', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  for (let i = 0; i < 4; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  await t.step('purge', ch.purgeQueue(q));
  await t.step('purge-again', ch.purgeQueue(q));
  await t.step('check', ch.checkQueue(q), counts);
});

test('purge-leaves-unacked', 'spec 1.8.2.5 queue.purge: "does not affect messages that are awaiting acknowledgment"', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  for (let i = 0; i < 3; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  await t.step('purge', ch.purgeQueue(q));
  if (m) ch.nack(m, false, true);
  await t.waitForCount(q, (n) => n === 1);
  await t.step('get-requeued', ch.get(q, { noAck: true }), (x) => t.msg(x));
});

test('purge-missing', 'spec 1.8.2.5 queue.purge: 404 when the queue does not exist', async (t) => {
  const ch = await t.channel();
  await t.step('purge', ch.purgeQueue(t.q()));
});

test('delete-returns-count', 'spec 1.8.2.9 queue.delete-ok message-count', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  for (let i = 0; i < 5; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  await t.step('delete', ch.deleteQueue(q));
  await t.step('check', ch.checkQueue(q));
});

test('delete-missing', 'spec 1.8.2.9 queue.delete; RabbitMQ 3.10: deleting a missing queue succeeds with 0', async (t) => {
  const ch = await t.channel();
  await t.step('delete', ch.deleteQueue(t.q()));
});

test('delete-if-empty-nonempty', 'spec 1.8.2.9 queue.delete if-empty: 406 PRECONDITION_FAILED when not empty', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  await t.step('delete-if-empty', ch.deleteQueue(q, { ifEmpty: true }));
});

test('delete-if-empty-empty', 'spec 1.8.2.9 queue.delete if-empty', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await t.step('delete-if-empty', ch.deleteQueue(q, { ifEmpty: true }));
});

test('delete-if-empty-with-unacked', 'spec 1.8.2.9 if-empty; are unacknowledged messages counted?', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  await ch.get(q, { noAck: false });
  await t.step('delete-if-empty', (await t.channel()).deleteQueue(q, { ifEmpty: true }));
});

test('delete-if-unused-with-consumer', 'spec 1.8.2.9 queue.delete if-unused: 406 when the queue has consumers', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await ch.consume(q, () => {});
  await t.step('delete-if-unused', (await t.channel()).deleteQueue(q, { ifUnused: true }));
});

test('delete-if-unused-without-consumer', 'spec 1.8.2.9 if-unused', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  await t.step('delete-if-unused', ch.deleteQueue(q, { ifUnused: true }));
});

test('delete-cancels-consumers', 'rabbitmq.com/consumer-cancel.html: deleting a queue sends basic.cancel to its consumers', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  const events: unknown[] = [];
  const done = new Promise<void>((resolve) => {
    void ch.consume(q, (m) => {
      events.push(m === null ? 'cancelled by server' : m.content.toString());
      if (m === null) resolve();
    });
  });
  await t.sleep(20);
  await (await t.channel()).deleteQueue(q);
  await Promise.race([done, t.sleep(1000)]);
  t.log('events', events);
  t.log('channel-open', t.isOpen(ch));
});

test('declare-nowait', 'spec 1.8.2.1 no-wait', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  const q = t.q();
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: true });
  c.method(1, 'queue.declare', { queue: q, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('declare-server-named-nowait', 'spec 1.8.2.1 no-wait with an empty name: the client never learns the name', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: '', passive: false, durable: false, exclusive: true, autoDelete: false, noWait: true });
  c.method(1, 'queue.declare', { queue: '', passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('long-name', 'spec 1.8.2.1 queue name: shortstr up to 255 octets', async (t) => {
  const ch = await t.channel();
  const base = t.q('');
  const q = base + 'x'.repeat(255 - Buffer.byteLength(base));
  t.queues.add(q);
  await t.step('declare', ch.assertQueue(q, Q), (r) => ({ length: r.queue.length, messageCount: r.messageCount }));
});

test('unicode-name', 'spec 4.2.5.3 shortstr is UTF-8', async (t) => {
  const ch = await t.channel();
  const q = t.q('ünïcødé-キュー');
  await t.step('declare', ch.assertQueue(q, Q), full);
  await t.step('check', ch.checkQueue(q), full);
});

// --- argument validation -------------------------------------------------------------------

for (const [name, args] of [
  ['message-ttl-negative', { 'x-message-ttl': -1 }],
  ['message-ttl-string', { 'x-message-ttl': 'soon' }],
  ['expires-zero', { 'x-expires': 0 }],
  ['expires-negative', { 'x-expires': -5 }],
  ['max-length-negative', { 'x-max-length': -1 }],
  ['max-length-bytes-string', { 'x-max-length-bytes': 'lots' }],
  ['max-priority-too-big', { 'x-max-priority': 256 }],
  ['max-priority-negative', { 'x-max-priority': -1 }],
  ['overflow-unknown', { 'x-overflow': 'explode' }],
  ['queue-type-unknown', { 'x-queue-type': 'fancy' }],
  ['dead-letter-routing-key-without-exchange', { 'x-dead-letter-routing-key': 'rk' }],
  ['dead-letter-exchange-number', { 'x-dead-letter-exchange': 5 }],
  ['single-active-consumer-string', { 'x-single-active-consumer': 'yes' }],
  ['queue-mode-unknown', { 'x-queue-mode': 'sleepy' }],
  ['max-length-zero', { 'x-max-length': 0 }],
  ['message-ttl-zero', { 'x-message-ttl': 0 }],
  ['max-priority-zero', { 'x-max-priority': 0 }],
] as const) {
  test(`argument-${name}`, 'rabbitmq.com/queues.html#optional-arguments; RabbitMQ validates x- arguments (406 PRECONDITION_FAILED "invalid arg")', async (t) => {
    const ch = await t.channel();
    await t.step('declare', ch.assertQueue(t.q(), { ...Q, arguments: args }), counts);
  });
}

// --- quorum queues -------------------------------------------------------------------------

async function declareRaw(t: CaseContext, opts: { durable: boolean; exclusive: boolean; autoDelete: boolean; arguments: Record<string, ReturnType<typeof F.str>> }): Promise<void> {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: t.q(), passive: false, noWait: false, ...opts });
  const m = await c.nextMethod(['queue.declare-ok', 'channel.close', 'connection.close'], 3000);
  t.log('reply', m ? (m.name === 'queue.declare-ok' ? { name: m.name, messageCount: m.args.messageCount, consumerCount: m.args.consumerCount } : { name: m.name, args: m.args }) : null);
}

test('quorum-declare', 'rabbitmq.com/quorum-queues.html', async (t) => {
  await declareRaw(t, { durable: true, exclusive: false, autoDelete: false, arguments: { 'x-queue-type': F.str('quorum') } });
});

test('quorum-non-durable', 'rabbitmq.com/quorum-queues.html#feature-comparison: quorum queues are always durable', async (t) => {
  await declareRaw(t, { durable: false, exclusive: false, autoDelete: false, arguments: { 'x-queue-type': F.str('quorum') } });
});

test('quorum-exclusive', 'rabbitmq.com/quorum-queues.html#feature-comparison: no exclusive quorum queues', async (t) => {
  await declareRaw(t, { durable: true, exclusive: true, autoDelete: false, arguments: { 'x-queue-type': F.str('quorum') } });
});

test('quorum-auto-delete', 'rabbitmq.com/quorum-queues.html#feature-comparison: no auto-delete quorum queues', async (t) => {
  await declareRaw(t, { durable: true, exclusive: false, autoDelete: true, arguments: { 'x-queue-type': F.str('quorum') } });
});

test('quorum-max-priority', 'rabbitmq.com/quorum-queues.html#feature-comparison: no priorities in 3.10 quorum queues', async (t) => {
  await declareRaw(t, { durable: true, exclusive: false, autoDelete: false, arguments: { 'x-queue-type': F.str('quorum'), 'x-max-priority': F.int8(5) } as never });
});

test('quorum-redeclare-as-classic', 'rabbitmq.com/quorum-queues.html: the queue type is fixed at declaration', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await t.stepOk('declare-quorum', ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  await t.step('redeclare-classic', ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'classic' } }), counts);
});

test('quorum-redeclare-without-type', 'rabbitmq.com/quorum-queues.html: redeclaring without x-queue-type', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await t.stepOk('declare-quorum', ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
  await t.step('redeclare-plain', ch.assertQueue(q, { durable: true }), counts);
});

test('quorum-overflow-drop-head-and-reject-publish', 'rabbitmq.com/quorum-queues.html: x-overflow reject-publish is supported', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertQueue(t.q(), { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-overflow': 'reject-publish-dlx' } }), counts);
});

// --- arguments by queue type (rabbit_amqqueue:check_declare_arguments) ---------------------

/**
 * Each type validates only the arguments it takes (its capabilities' queue_arguments), and
 * refuses the ones another type takes. x-delivery-limit has no validator; an unknown classic
 * x-queue-master-locator crashes the channel.
 */
for (const [name, type, args] of [
  ['classic-dead-letter-strategy', 'classic', { 'x-dead-letter-strategy': F.str('at-least-once') }],
  ['classic-delivery-limit-negative', 'classic', { 'x-delivery-limit': F.int32(-1) }],
  ['classic-leader-locator', 'classic', { 'x-queue-leader-locator': F.str('balanced') }],
  ['classic-initial-group-size', 'classic', { 'x-quorum-initial-group-size': F.int32(3) }],
  ['classic-queue-version-3', 'classic', { 'x-queue-version': F.int32(3) }],
  ['classic-queue-version-2', 'classic', { 'x-queue-version': F.int32(2) }],
  ['classic-master-locator-unknown', 'classic', { 'x-queue-master-locator': F.str('bogus') }],
  ['classic-master-locator-number', 'classic', { 'x-queue-master-locator': F.int32(1) }],
  ['classic-master-locator-min-masters', 'classic', { 'x-queue-master-locator': F.str('min-masters') }],
  ['quorum-master-locator', 'quorum', { 'x-queue-master-locator': F.str('client-local') }],
  ['quorum-queue-version', 'quorum', { 'x-queue-version': F.int32(2) }],
  ['quorum-dead-letter-strategy-unknown', 'quorum', { 'x-dead-letter-strategy': F.str('bogus') }],
  ['quorum-dead-letter-strategy-number', 'quorum', { 'x-dead-letter-strategy': F.int32(1) }],
  ['quorum-dead-letter-strategy-at-least-once', 'quorum', { 'x-dead-letter-strategy': F.str('at-least-once') }],
  ['quorum-initial-group-size-zero', 'quorum', { 'x-quorum-initial-group-size': F.int32(0) }],
  ['quorum-initial-group-size-negative', 'quorum', { 'x-quorum-initial-group-size': F.int32(-1) }],
  ['quorum-initial-group-size-string', 'quorum', { 'x-quorum-initial-group-size': F.str('3') }],
  ['quorum-max-in-memory-length-negative', 'quorum', { 'x-max-in-memory-length': F.int32(-1) }],
  ['quorum-max-in-memory-length-string', 'quorum', { 'x-max-in-memory-length': F.str('1') }],
  ['quorum-max-in-memory-bytes-negative', 'quorum', { 'x-max-in-memory-bytes': F.int32(-1) }],
  ['quorum-leader-locator-unknown', 'quorum', { 'x-queue-leader-locator': F.str('nearest') }],
  ['quorum-delivery-limit-negative', 'quorum', { 'x-delivery-limit': F.int32(-1) }],
  ['quorum-delivery-limit-string', 'quorum', { 'x-delivery-limit': F.str('3') }],
] as const) {
  test(`argument-by-type-${name}`, 'rabbit_amqqueue:check_declare_arguments (3.10.8): a type validates its own queue_arguments and refuses the other types\'', async (t) => {
    const typed = type === 'quorum' ? { 'x-queue-type': F.str('quorum'), ...args } : args;
    const c = await t.raw();
    await c.openChannel(1);
    c.method(1, 'queue.declare', { queue: t.q(), passive: false, noWait: false, durable: true, exclusive: false, autoDelete: false, arguments: typed as never });
    const m = await c.nextMethod(['queue.declare-ok', 'channel.close', 'connection.close'], 3000);
    t.log('reply', m ? (m.name === 'queue.declare-ok' ? { name: m.name } : { name: m.name, args: m.args }) : null);
  });
}

test('quorum-delivery-limit-any-integer', 'rabbitmq.com/quorum-queues.html#poison-message-handling: x-delivery-limit is not validated; a negative limit drops a message at its first return, a string is no limit', async (t) => {
  const ch = await t.channel();
  for (const [label, limit] of [['negative', -1], ['string', '3']] as const) {
    const q = t.q(label);
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': limit } });
    ch.sendToQueue(q, Buffer.from('m'), { persistent: true });
    await t.sleep(200); // a quorum queue takes it after its log has it
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const m = await ch.get(q);
      if (!m) {
        seen.push('empty');
        break;
      }
      seen.push(`redelivered=${String(m.fields.redelivered)} x-delivery-count=${String(m.properties.headers?.['x-delivery-count'])}`);
      ch.nack(m, false, true);
      await t.sleep(150);
    }
    t.log(label, seen);
    await ch.deleteQueue(q);
  }
});

test('unbind-missing-binding-of-others-exclusive-queue', 'rabbit_binding:remove checks an exclusive queue\'s owner only for a binding it removes: unbinding nothing is unbind-ok', async (t) => {
  const owner = await t.channel(await t.connect());
  const q = t.q('x');
  const x = t.x('ex');
  await owner.assertExchange(x, 'direct', { durable: false });
  await owner.assertQueue(q, { exclusive: true });
  await owner.bindQueue(q, x, 'bound');
  for (const key of ['not-bound', 'bound']) {
    const other = await t.channel(await t.connect());
    await t.step(`unbind ${key} from another connection`, other.unbindQueue(q, x, key), () => 'unbind-ok', other);
  }
  await owner.deleteExchange(x);
});

test('delete-own-consumed-queue-reply-order', 'rabbit_channel answers queue.delete; the queue process sends its consumers\' basic.cancel: on the consumer\'s own channel delete-ok comes first', async (t) => {
  const q = t.q();
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  await c.expect('queue.declare-ok');
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'victim', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: {} });
  await c.expect('basic.consume-ok');
  c.drain();
  c.method(1, 'queue.delete', { queue: q, ifUnused: false, ifEmpty: false, noWait: false });
  await c.until(() => c.frames.some((f) => f.method?.name === 'queue.delete-ok') && c.frames.some((f) => f.method?.name === 'basic.cancel'));
  t.log('order', c.drain().map((f) => (f as { method?: string }).method));
});
