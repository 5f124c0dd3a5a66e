/** Priority queues, consumer priorities, single active consumer, server-initiated cancels. */
import type { Channel, ConsumeMessage, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('priorities-consumers');

const Q: Options.AssertQueue = { durable: false };

/** Publishes [body, priority?] pairs with confirms. */
async function publishAll(t: CaseContext, q: string, items: Array<[string, number | undefined]>): Promise<void> {
  const ch = await t.confirmChannel();
  for (const [body, priority] of items) ch.sendToQueue(q, Buffer.from(body), priority === undefined ? {} : { priority });
  await ch.waitForConfirms();
  await ch.close();
}

async function collector(_t: CaseContext, ch: Channel, q: string, opts: Options.Consume = {}): Promise<{ got: ConsumeMessage[]; tag: string; cancelled: () => boolean }> {
  const got: ConsumeMessage[] = [];
  let cancelled = false;
  const r = await ch.consume(q, (m) => {
    if (m) got.push(m);
    else cancelled = true;
  }, opts);
  return { got, tag: r.consumerTag, cancelled: () => cancelled };
}

test('priority-order', 'rabbitmq.com/priority.html: higher priority first, FIFO within a priority', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 10 });
  await publishAll(t, q, [['p1-a', 1], ['p5-a', 5], ['none', undefined], ['p9', 9], ['p5-b', 5], ['p0', 0], ['p1-b', 1], ['p10', 10]]);
  t.log('order', t.bodies(await t.drainQueue(ch, q)));
});

test('priority-above-max-capped', 'rabbitmq.com/priority.html: "messages with a priority above the maximum are treated as the maximum"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 3 });
  await publishAll(t, q, [['p3', 3], ['p200', 200], ['p2', 2], ['p4', 4]]);
  t.log('order', t.bodies(await t.drainQueue(ch, q)));
});

test('priority-property-delivered-unchanged', 'rabbitmq.com/priority.html: the priority property is not rewritten', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 3 });
  await publishAll(t, q, [['p200', 200]]);
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m, { props: true }));
});

test('non-priority-queue-fifo', 'rabbitmq.com/priority.html: queues without x-max-priority ignore the priority property', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await publishAll(t, q, [['p1', 1], ['p9', 9], ['p5', 5]]);
  t.log('order', t.bodies(await t.drainQueue(ch, q)));
});

test('priority-requeue', 'rabbitmq.com/priority.html + rabbitmq.com/confirms.html#requeue: a requeued message returns at its priority', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 5 });
  await publishAll(t, q, [['high', 5], ['low-1', 1], ['low-2', 1]]);
  const m = await ch.get(q, { noAck: false });
  await publishAll(t, q, [['mid', 3]]);
  if (m) ch.nack(m, false, true);
  await t.sleep(30);
  t.log('order', (await t.drainQueue(ch, q)).map((x) => ({ body: x.content.toString(), redelivered: x.fields.redelivered })));
});

test('priority-with-consumer-prefetch', 'rabbitmq.com/priority.html#interaction-with-consumers', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 9 });
  await publishAll(t, q, [['a1', 1], ['b1', 1], ['c9', 9], ['d5', 5]]);
  await ch.prefetch(1);
  const c = await collector(t, ch, q);
  const order: string[] = [];
  for (let i = 0; i < 4; i++) {
    await t.waitFor(() => c.got.length > i, 1000, 5);
    const m = c.got[i];
    if (!m) break;
    order.push(m.content.toString());
    ch.ack(m);
  }
  t.log('order', order);
});

test('priority-max-255', 'rabbitmq.com/priority.html: x-max-priority up to 255', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await t.step('declare', ch.assertQueue(q, { ...Q, maxPriority: 255 }), (r) => r.messageCount);
  await publishAll(t, q, [['p254', 254], ['p255', 255], ['p0', 0]]);
  t.log('order', t.bodies(await t.drainQueue(ch, q)));
});

test('priority-get-message-count', 'rabbitmq.com/priority.html; get-ok message-count covers all priorities', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 5 });
  await publishAll(t, q, [['a', 1], ['b', 2], ['c', 3]]);
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m));
});

test('priority-purge-count', 'rabbitmq.com/priority.html', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 5 });
  await publishAll(t, q, [['a', 1], ['b', 2], ['c', undefined]]);
  await t.step('purge', ch.purgeQueue(q));
});

test('priority-with-dead-letter-maxlen', 'rabbitmq.com/priority.html + rabbitmq.com/maxlength.html: which message goes on overflow', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxPriority: 5, maxLength: 2 });
  await publishAll(t, q, [['low', 1], ['high', 5], ['mid', 3]]);
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

// --- consumer priorities -------------------------------------------------------------------

test('consumer-priority-prefers-higher', 'rabbitmq.com/consumer-priority.html: active consumers with higher priority get messages first', async (t) => {
  const q = t.q();
  const conn = await t.conn();
  const lowCh = await t.channel(conn);
  const highCh = await t.channel(conn);
  await lowCh.assertQueue(q, Q);
  const low = await collector(t, lowCh, q, { noAck: true, priority: 1 });
  const high = await collector(t, highCh, q, { noAck: true, priority: 10 });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined], ['m2', undefined]]);
  await t.waitFor(() => low.got.length + high.got.length >= 3);
  t.log('high', t.bodies(high.got));
  t.log('low', t.bodies(low.got));
});

test('consumer-priority-blocked-falls-through', 'rabbitmq.com/consumer-priority.html: when a high-priority consumer is blocked (prefetch), lower ones get messages', async (t) => {
  const q = t.q();
  const conn = await t.conn();
  const lowCh = await t.channel(conn);
  const highCh = await t.channel(conn);
  await lowCh.assertQueue(q, Q);
  await highCh.prefetch(1);
  const high = await collector(t, highCh, q, { priority: 10 });
  const low = await collector(t, lowCh, q, { noAck: true, priority: 1 });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined], ['m2', undefined], ['m3', undefined]]);
  await t.waitFor(() => low.got.length + high.got.length >= 4);
  t.log('high', t.bodies(high.got));
  t.log('low', t.bodies(low.got));
});

test('consumer-priority-equal-round-robin', 'rabbitmq.com/consumer-priority.html: equal priorities share round-robin', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, Q);
  const a = await collector(t, ch, q, { noAck: true, priority: 5 });
  const b = await collector(t, ch, q, { noAck: true, priority: 5 });
  const c = await collector(t, ch, q, { noAck: true, priority: 1 });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined], ['m2', undefined], ['m3', undefined]]);
  await t.waitFor(() => a.got.length + b.got.length + c.got.length >= 4);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
  t.log('c', t.bodies(c.got));
});

test('consumer-priority-negative', 'rabbitmq.com/consumer-priority.html: priorities may be negative; the default is 0', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, Q);
  const neg = await collector(t, ch, q, { noAck: true, priority: -5 });
  const def = await collector(t, ch, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined]]);
  await t.waitFor(() => neg.got.length + def.got.length >= 2);
  t.log('negative', t.bodies(neg.got));
  t.log('default', t.bodies(def.got));
});

test('consumer-priority-invalid-type', 'rabbitmq.com/consumer-priority.html: x-priority must be an integer', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, Q);
  await t.step('consume', ch.consume(q, () => {}, { arguments: { 'x-priority': 'high' } }), () => true);
});

// --- single active consumer ----------------------------------------------------------------

test('sac-only-first-consumer-gets', 'rabbitmq.com/consumers.html#single-active-consumer', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': true } });
  const a = await collector(t, ch, q, { noAck: true });
  const b = await collector(t, ch, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined], ['m2', undefined]]);
  await t.waitFor(() => a.got.length + b.got.length >= 3);
  await t.sleep(30);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
  await t.step('declare-ok-consumers', ch.checkQueue(q), (r) => r.consumerCount);
});

test('sac-failover-on-cancel', 'rabbitmq.com/consumers.html#single-active-consumer: the next consumer takes over when the active one cancels', async (t) => {
  const q = t.q();
  const conn = await t.conn();
  const chA = await t.channel(conn);
  const chB = await t.channel(conn);
  await chA.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': true } });
  const a = await collector(t, chA, q, { noAck: true });
  const b = await collector(t, chB, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined]]);
  await t.waitFor(() => a.got.length >= 1);
  await chA.cancel(a.tag);
  await publishAll(t, q, [['m1', undefined]]);
  await t.waitFor(() => b.got.length >= 1);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
});

test('sac-failover-requeues-unacked', 'rabbitmq.com/consumers.html#single-active-consumer: unacked messages of the active consumer go to the next one', async (t) => {
  const q = t.q();
  const conn = await t.conn();
  const chA = await t.channel(conn);
  const chB = await t.channel(conn);
  await chA.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': true } });
  const a = await collector(t, chA, q);
  const b = await collector(t, chB, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined]]);
  await t.waitFor(() => a.got.length >= 2);
  await chA.close();
  await t.waitFor(() => b.got.length >= 2);
  t.log('b', b.got.map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('sac-redeclare-inequivalent', 'rabbitmq.com/consumers.html#single-active-consumer: x-single-active-consumer is part of queue equivalence', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': true } });
  await t.step('redeclare', ch.assertQueue(q, Q), (r) => r.consumerCount);
});

test('sac-false-is-normal', 'rabbitmq.com/consumers.html#single-active-consumer', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': false } });
  const a = await collector(t, ch, q, { noAck: true });
  const b = await collector(t, ch, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined]]);
  await t.waitFor(() => a.got.length + b.got.length >= 2);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
});

test('sac-exclusive-consumer', 'rabbitmq.com/consumers.html#single-active-consumer: exclusive consume on a SAC queue', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-single-active-consumer': true } });
  await t.step('exclusive-consume', ch.consume(q, () => {}, { exclusive: true }), () => true);
});

test('sac-quorum', 'rabbitmq.com/consumers.html#single-active-consumer: also for quorum queues', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-single-active-consumer': true } });
  const a = await collector(t, ch, q, { noAck: true });
  const b = await collector(t, ch, q, { noAck: true });
  await publishAll(t, q, [['m0', undefined], ['m1', undefined]]);
  await t.waitFor(() => a.got.length + b.got.length >= 2);
  await t.sleep(30);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
});

// --- server-initiated cancel ---------------------------------------------------------------

test('server-cancel-all-consumers', 'rabbitmq.com/consumer-cancel.html: every consumer of a deleted queue is cancelled', async (t) => {
  const q = t.q();
  const conn = await t.conn();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  await a.assertQueue(q, Q);
  const ca = await collector(t, a, q, { noAck: true });
  const cb = await collector(t, b, q, { noAck: true });
  await (await t.channel()).deleteQueue(q);
  await t.waitFor(() => ca.cancelled() && cb.cancelled(), 1000);
  t.log('cancelled', [ca.cancelled(), cb.cancelled()]);
  t.log('channels-open', [t.isOpen(a), t.isOpen(b)]);
});

test('server-cancel-exclusive-queue-owner-closes', 'rabbitmq.com/consumer-cancel.html: consumers on other channels of the same connection when an exclusive queue is deleted', async (t) => {
  const conn = await t.conn();
  const owner = await t.channel(conn);
  const q = t.q();
  await owner.assertQueue(q, { ...Q, exclusive: true });
  const c = await collector(t, owner, q, { noAck: true });
  await owner.deleteQueue(q);
  await t.waitFor(() => c.cancelled(), 1000);
  t.log('cancelled', c.cancelled());
});

test('cancel-then-consume-again', 'spec 1.8.2.5 basic.cancel; a tag may be reused after cancel-ok', async (t) => {
  const q = t.q();
  const ch = await t.channel();
  await ch.assertQueue(q, Q);
  await ch.consume(q, () => {}, { consumerTag: 'again' });
  await ch.cancel('again');
  await t.step('consume-again', ch.consume(q, () => {}, { consumerTag: 'again' }), (r) => r);
});
