/** Message TTL, per-message expiration, queue expiry (x-expires) and dead-lettering with x-death. */
import type { Channel, ConfirmChannel, GetMessage, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('ttl-dlx');

const Q: Options.AssertQueue = { durable: false };

/** Polls basic.get (no-ack) until a message arrives or timeoutMs passes. */
async function getOne(t: CaseContext, ch: Channel, q: string, timeoutMs = 2000): Promise<GetMessage | false> {
  return t.waitFor(() => ch.get(q, { noAck: true }), timeoutMs, 10);
}

/** A dead-lettered message: body, routing, properties and headers with wire types. */
function dead(t: CaseContext, ch: Channel, m: GetMessage | false): unknown {
  if (!m) return null;
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m.properties)) if (v !== undefined && k !== 'headers') props[k] = v;
  return { body: m.content.toString(), exchange: m.fields.exchange, routingKey: m.fields.routingKey, redelivered: m.fields.redelivered, properties: props, headers: t.typedHeaders(ch, m) };
}

/**
 * basic.get then basic.nack with requeue, up to n times or until q is empty: each delivery's
 * redelivered flag and headers (x-delivery-count), in order.
 */
async function getAndRequeue(t: CaseContext, ch: Channel, q: string, n: number): Promise<unknown[]> {
  const seen: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const m = await t.waitFor(() => ch.get(q, { noAck: false }), 1000);
    if (!m) break;
    seen.push({ redelivered: m.fields.redelivered, headers: t.typedHeaders(ch, m) });
    ch.nack(m, false, true);
  }
  return seen;
}

/** Publishes body (persistent) to q on a confirm channel: `body:ack` or `body:nack`. */
function publishOutcome(ch: ConfirmChannel, q: string, body: string): Promise<string> {
  return new Promise((resolve) => ch.sendToQueue(q, Buffer.from(body), { persistent: true }, (err) => resolve(`${body}:${err ? 'nack' : 'ack'}`)));
}

/** A queue that dead-letters into a fresh queue through the default exchange. */
async function withDlq(t: CaseContext, ch: Channel, args: Record<string, unknown>, opts: Options.AssertQueue = Q): Promise<{ q: string; dlq: string }> {
  const q = t.q('src');
  const dlq = t.q('dlq');
  await ch.assertQueue(dlq, Q);
  await ch.assertQueue(q, { ...opts, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq, ...args } });
  return { q, dlq };
}

test('message-ttl-expires', 'rabbitmq.com/ttl.html#per-queue-message-ttl', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 300 });
  ch.sendToQueue(q, Buffer.from('fresh'));
  await ch.waitForConfirms();
  await t.step('get-fresh', ch.get(q, { noAck: true }), (m) => t.msg(m));
  ch.sendToQueue(q, Buffer.from('will expire'));
  await ch.waitForConfirms();
  t.log('count-until-expired', await t.waitForCount(q, (n) => n === 0));
  await t.step('get-after', ch.get(q, { noAck: true }), (m) => t.msg(m));
});

test('message-ttl-zero-without-consumer', 'rabbitmq.com/ttl.html: TTL 0 expires a message unless it can be delivered at once', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 0 });
  ch.sendToQueue(q, Buffer.from('gone'));
  await ch.waitForConfirms();
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m));
});

test('message-ttl-zero-with-consumer', 'rabbitmq.com/ttl.html: TTL 0 messages are delivered to a waiting consumer', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 0 });
  const got: string[] = [];
  await ch.consume(q, (m) => m && got.push(m.content.toString()), { noAck: true });
  ch.sendToQueue(q, Buffer.from('delivered'));
  await ch.waitForConfirms();
  await t.waitFor(() => got.length > 0, 1000);
  t.log('got', got);
});

test('per-message-expiration', 'rabbitmq.com/ttl.html#per-message-ttl-in-publishers', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('short'), { expiration: '100' });
  ch.sendToQueue(q, Buffer.from('long'), { expiration: '60000' });
  await ch.waitForConfirms();
  t.log('count-until-one', await t.waitForCount(q, (n) => n === 1));
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m, { props: true }));
});

test('per-message-expiration-zero', 'rabbitmq.com/ttl.html: expiration "0" without a consumer', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('zero'), { expiration: '0' });
  ch.sendToQueue(q, Buffer.from('kept'));
  await ch.waitForConfirms();
  t.log('bodies', t.bodies(await t.drainQueue(ch, q)));
});

test('per-message-expiration-zero-with-consumer', 'rabbitmq.com/ttl.html: expiration "0" with a ready consumer is delivered', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  const got: unknown[] = [];
  await ch.consume(q, (m) => m && got.push(t.msg(m, { props: true, tag: false })), { noAck: true });
  ch.sendToQueue(q, Buffer.from('zero'), { expiration: '0' });
  await ch.waitForConfirms();
  await t.waitFor(() => got.length > 0, 1000);
  t.log('got', got);
});

for (const [name, expiration] of [
  ['not-a-number', 'soon'],
  ['negative', '-1'],
  ['fraction', '1.5'],
  ['empty', ''],
  ['leading-space', ' 100'],
  ['too-large', '99999999999999999999'],
] as const) {
  test(`expiration-${name}`, 'rabbitmq.com/ttl.html#per-message-ttl-in-publishers: "the value must be a string representation of a non-negative integer"', async (t) => {
    const ch = await t.confirmChannel();
    const q = t.q();
    await ch.assertQueue(q, Q);
    ch.sendToQueue(q, Buffer.from('x'), { expiration });
    await t.stepOk('confirm', ch.waitForConfirms(), ch);
    const reader = t.isOpen(ch) ? ch : await t.channel();
    await t.step('get', reader.get(q, { noAck: true }), (m) => t.msg(m, { props: true }));
  });
}

test('ttl-lower-of-queue-and-message', 'rabbitmq.com/ttl.html: "the lower of the two values is used"', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 100 });
  ch.sendToQueue(q, Buffer.from('message says 60s'), { expiration: '60000' });
  await ch.waitForConfirms();
  t.log('count-until-expired', await t.waitForCount(q, (n) => n === 0));
});

test('expiry-only-at-head', 'rabbitmq.com/ttl.html#per-message-ttl-caveats: expired messages are removed only when they reach the head', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('head, long ttl'), { expiration: '60000' });
  ch.sendToQueue(q, Buffer.from('behind, short ttl'), { expiration: '30' });
  await ch.waitForConfirms();
  await t.sleep(150);
  await t.step('count', ch.checkQueue(q), (r) => r.messageCount);
  await t.step('get1', ch.get(q, { noAck: true }), (m) => t.msg(m));
  await t.step('get2', ch.get(q, { noAck: true }), (m) => t.msg(m));
});

test('expired-not-delivered-to-new-consumer', 'rabbitmq.com/ttl.html: expired messages are never delivered', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 50 });
  ch.sendToQueue(q, Buffer.from('old'));
  await ch.waitForConfirms();
  await t.sleep(120);
  const got = await t.consumeN(ch, q, 1, { timeoutMs: 150 });
  t.log('got', t.bodies(got));
});

test('requeued-keeps-original-expiry', 'rabbitmq.com/ttl.html: "when a message is requeued ... it retains its original expiry"', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, messageTtl: 100 });
  ch.sendToQueue(q, Buffer.from('held'));
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  await t.sleep(200);
  if (m) ch.nack(m, false, true);
  t.log('count-until-expired', await t.waitForCount(q, (n) => n === 0, 1000));
  await t.step('get', ch.get(q, { noAck: true }), (x) => t.msg(x));
});

test('expiration-property-delivered', 'rabbitmq.com/ttl.html: the expiration property travels with the message', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  ch.sendToQueue(q, Buffer.from('x'), { expiration: '60000' });
  await ch.waitForConfirms();
  await t.step('get', ch.get(q, { noAck: true }), (m) => t.msg(m, { props: true }));
});

// --- dead-lettering ------------------------------------------------------------------------

test('dlx-expired', 'rabbitmq.com/dlx.html: reason expired; x-death fields; x-first-death-*', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, { 'x-message-ttl': 50 });
  ch.sendToQueue(q, Buffer.from('expired'), { messageId: 'm1', headers: { mine: 'kept' } });
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-per-message-expiration', 'rabbitmq.com/dlx.html: the expiration property is removed and recorded as original-expiration', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  ch.sendToQueue(q, Buffer.from('expired'), { expiration: '40' });
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-rejected', 'rabbitmq.com/dlx.html: reason rejected (basic.reject requeue=false)', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  ch.sendToQueue(q, Buffer.from('rejected'), { correlationId: 'c1' });
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  if (m) ch.reject(m, false);
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-nacked', 'rabbitmq.com/dlx.html: basic.nack requeue=false dead-letters with reason rejected', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  ch.sendToQueue(q, Buffer.from('a'));
  ch.sendToQueue(q, Buffer.from('b'));
  await ch.waitForConfirms();
  await ch.get(q, { noAck: false });
  const m2 = await ch.get(q, { noAck: false });
  if (m2) ch.nack(m2, true, false);
  await t.waitForCount(dlq, (n) => n === 2);
  const out = [];
  for (let i = 0; i < 2; i++) out.push(dead(t, ch, await ch.get(dlq, { noAck: true })));
  t.log('dead', out);
});

test('dlx-requeue-true-not-dead-lettered', 'rabbitmq.com/dlx.html: only requeue=false dead-letters', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  ch.sendToQueue(q, Buffer.from('requeued'));
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  if (m) ch.reject(m, true);
  await t.sleep(50);
  await t.step('dlq', ch.checkQueue(dlq), (r) => r.messageCount);
  await t.step('src', ch.checkQueue(q), (r) => r.messageCount);
});

test('dlx-maxlen', 'rabbitmq.com/dlx.html: reason maxlen (x-overflow drop-head)', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, { 'x-max-length': 1 });
  ch.sendToQueue(q, Buffer.from('first'));
  ch.sendToQueue(q, Buffer.from('second'));
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('dlx-keeps-routing-key-without-override', 'rabbitmq.com/dlx.html#routing: without x-dead-letter-routing-key the original routing keys are used', async (t) => {
  const ch = await t.confirmChannel();
  const dlx = t.x('dlx');
  const dlq = t.q('dlq');
  const q = t.q('src');
  await ch.assertExchange(dlx, 'topic', { durable: false });
  await ch.assertQueue(dlq, Q);
  await ch.bindQueue(dlq, dlx, '#');
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': dlx, 'x-message-ttl': 30 } });
  ch.publish('', q, Buffer.from('keeps key'));
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-cc-routing-keys', 'rabbitmq.com/dlx.html#routing: CC keys are dead-lettered too and listed in routing-keys; BCC is not', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x('src');
  const dlx = t.x('dlx');
  const dlq = t.q('dlq');
  const q = t.q('src');
  await ch.assertExchange(x, 'direct', { durable: false });
  await ch.assertExchange(dlx, 'fanout', { durable: false });
  await ch.assertQueue(dlq, Q);
  await ch.bindQueue(dlq, dlx, '');
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': dlx, 'x-message-ttl': 30 } });
  await ch.bindQueue(q, x, 'main');
  ch.publish(x, 'main', Buffer.from('with cc'), { headers: { CC: ['cc1'], BCC: ['bcc1'] } });
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-missing-exchange-drops', 'rabbitmq.com/dlx.html: if the DLX does not exist, messages are silently dropped', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': t.name('missing-dlx'), 'x-message-ttl': 30 } });
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  t.log('count-until-gone', await t.waitForCount(q, (n) => n === 0));
  t.log('channel-open', t.isOpen(ch));
});

test('dlx-twice-x-death-order', 'rabbitmq.com/dlx.html#effects: x-death entries, most recent first; x-first-death-* kept; existing entries kept as received', async (t) => {
  const ch = await t.confirmChannel();
  const q1 = t.q('one');
  const q2 = t.q('two');
  const end = t.q('end');
  await ch.assertQueue(end, Q);
  await ch.assertQueue(q2, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': end } });
  await ch.assertQueue(q1, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q2, 'x-message-ttl': 30 } });
  ch.sendToQueue(q1, Buffer.from('twice'));
  await ch.waitForConfirms();
  // Take the once-dead-lettered message out of q2 and publish it back with the headers amqplib
  // decoded (x-death count re-encoded as a byte), then reject it so q2 dead-letters it again.
  const m = await getOne(t, ch, q2);
  ch.sendToQueue(q2, m ? m.content : Buffer.from('missing'), m ? { headers: m.properties.headers } : {});
  await ch.waitForConfirms();
  const again = await ch.get(q2, { noAck: false });
  if (again) ch.reject(again, false);
  t.log('first-hop', dead(t, ch, m));
  t.log('second-hop', dead(t, ch, await getOne(t, ch, end)));
});

test('dlx-chain-x-death', 'rabbitmq.com/dlx.html: a message dead-lettered by two queues carries two x-death entries', async (t) => {
  const ch = await t.confirmChannel();
  const q1 = t.q('one');
  const q2 = t.q('two');
  const end = t.q('end');
  await ch.assertQueue(end, Q);
  await ch.assertQueue(q2, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': end, 'x-message-ttl': 30 } });
  await ch.assertQueue(q1, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q2, 'x-message-ttl': 30 } });
  ch.sendToQueue(q1, Buffer.from('two hops'));
  await ch.waitForConfirms();
  t.log('dead', dead(t, ch, await getOne(t, ch, end)));
});

test('dlx-reject-cycle-counts', 'rabbitmq.com/dlx.html: rejecting into the same queue again increments x-death count', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q } });
  ch.sendToQueue(q, Buffer.from('loop'));
  await ch.waitForConfirms();
  const seen = [];
  for (let i = 0; i < 3; i++) {
    const m = await t.waitFor(() => ch.get(q, { noAck: false }), 1000);
    if (!m) break;
    seen.push(dead(t, ch, m));
    ch.reject(m, false);
  }
  t.log('seen', seen);
});

test('dlx-expired-cycle-dropped', 'rabbitmq.com/dlx.html: an automatic dead-letter cycle (all expired) is detected and the message dropped', async (t) => {
  const ch = await t.confirmChannel();
  const a = t.q('a');
  const b = t.q('b');
  await ch.assertQueue(a, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': b, 'x-message-ttl': 20 } });
  await ch.assertQueue(b, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': a, 'x-message-ttl': 20 } });
  ch.sendToQueue(a, Buffer.from('cycle'));
  await ch.waitForConfirms();
  await t.sleep(300);
  const na = (await ch.checkQueue(a)).messageCount;
  const nb = (await ch.checkQueue(b)).messageCount;
  t.log('left-after-300ms', na + nb);
});

test('dlx-self-expired', 'rabbitmq.com/dlx.html: dead-lettering to the same queue on expiry', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q, 'x-message-ttl': 20 } });
  ch.sendToQueue(q, Buffer.from('self'));
  await ch.waitForConfirms();
  await t.sleep(300);
  await t.step('left-after-300ms', ch.checkQueue(q), (r) => r.messageCount);
});

test('dlx-to-fanout-exchange', 'rabbitmq.com/dlx.html: the DLX is a normal exchange', async (t) => {
  const ch = await t.confirmChannel();
  const dlx = t.x('dlx');
  const d1 = t.q('d1');
  const d2 = t.q('d2');
  const q = t.q('src');
  await ch.assertExchange(dlx, 'fanout', { durable: false });
  for (const d of [d1, d2]) {
    await ch.assertQueue(d, Q);
    await ch.bindQueue(d, dlx, '');
  }
  await ch.assertQueue(q, { ...Q, arguments: { 'x-dead-letter-exchange': dlx } });
  ch.sendToQueue(q, Buffer.from('to both'));
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  if (m) ch.nack(m, false, false);
  t.log('d1', t.bodies([await getOne(t, ch, d1)].filter(Boolean) as GetMessage[]));
  t.log('d2', t.bodies([await getOne(t, ch, d2)].filter(Boolean) as GetMessage[]));
});

test('dlx-properties-preserved', 'rabbitmq.com/dlx.html#effects: properties other than expiration are kept', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  ch.sendToQueue(q, Buffer.from('props'), {
    contentType: 'text/plain', contentEncoding: 'utf-8', persistent: true, priority: 3, correlationId: 'corr', replyTo: 'reply',
    messageId: 'mid', timestamp: 1700000000, type: 'kind', appId: 'app', headers: { a: 1, s: 'str' },
  });
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  if (m) ch.reject(m, false);
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq)));
});

test('dlx-overflow-reject-publish-dlx', 'rabbitmq.com/maxlength.html#overflow-behaviour: reject-publish-dlx dead-letters the rejected message', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, { 'x-max-length': 1, 'x-overflow': 'reject-publish-dlx' });
  const outcomes: string[] = [];
  ch.sendToQueue(q, Buffer.from('fits'), {}, (err) => outcomes.push(err ? 'nack' : 'ack'));
  ch.sendToQueue(q, Buffer.from('overflow'), {}, (err) => outcomes.push(err ? 'nack' : 'ack'));
  await ch.waitForConfirms().catch(() => {});
  t.log('confirms', outcomes);
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq, 500)));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('dlx-quorum-delivery-limit', 'rabbitmq.com/quorum-queues.html#poison-message-handling: x-delivery-limit dead-letters after too many redeliveries', async (t) => {
  const ch = await t.confirmChannel();
  const dlq = t.q('dlq');
  const q = t.q('src');
  await ch.assertQueue(dlq, Q);
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 2, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq } });
  ch.sendToQueue(q, Buffer.from('poison'));
  await ch.waitForConfirms();
  t.log('deliveries', await getAndRequeue(t, ch, q, 4));
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq, 1000)));
});

test('quorum-delivery-count-header', 'rabbitmq.com/quorum-queues.html#poison-message-handling: x-delivery-count header on redeliveries', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  ch.sendToQueue(q, Buffer.from('counted'));
  await ch.waitForConfirms();
  t.log('deliveries', await getAndRequeue(t, ch, q, 3));
});

// --- x-expires -----------------------------------------------------------------------------

test('queue-expires', 'rabbitmq.com/ttl.html#queue-ttl: an unused queue is deleted after x-expires', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 100 });
  await t.stepOk('check-at-once', ch.checkQueue(q));
  // A passive declare counts as use, so look only once, well after the expiry.
  await t.sleep(400);
  await t.step('check-after-400ms', ch.checkQueue(q));
});

test('queue-expires-with-messages', 'rabbitmq.com/ttl.html#queue-ttl: messages do not keep a queue alive', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 100 });
  ch.sendToQueue(q, Buffer.from('x'));
  await ch.waitForConfirms();
  await t.sleep(400);
  await t.step('check-after-400ms', ch.checkQueue(q));
});

test('queue-expires-consumer-keeps-alive', 'rabbitmq.com/ttl.html#queue-ttl: "unused" means no consumers', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 80 });
  await ch.consume(q, () => {});
  await t.sleep(250);
  await t.step('check', (await t.channel()).checkQueue(q), (r) => r.consumerCount);
});

test('queue-expires-redeclare-resets', 'rabbitmq.com/ttl.html#queue-ttl: redeclaring counts as use', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 300 });
  for (let i = 0; i < 4; i++) {
    await t.sleep(100);
    await ch.assertQueue(q, { ...Q, expires: 300 });
  }
  await t.step('check-after-400ms', ch.checkQueue(q), (r) => r.messageCount);
});

test('queue-expires-passive-declare-resets', 'rabbitmq.com/ttl.html#queue-ttl: "unused" also means not redeclared; a passive declare counts', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 300 });
  for (let i = 0; i < 4; i++) {
    await t.sleep(100);
    await ch.checkQueue(q);
  }
  await t.step('check-after-400ms', ch.checkQueue(q), (r) => r.messageCount);
});

test('queue-expires-get-resets', 'rabbitmq.com/ttl.html#queue-ttl: basic.get counts as use', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, expires: 300 });
  for (let i = 0; i < 4; i++) {
    await t.sleep(100);
    await ch.get(q, { noAck: true });
  }
  await t.step('check-after-400ms', ch.checkQueue(q), (r) => r.messageCount);
});

test('dlx-chain-x-death-order-grouped', 'rabbit_dead_letter:update_x_death_header (3.10.8): each death regroups the older entries (group_by_queue_and_reason), which reverses them: A, B, C, D dead in turn read [D, B, A, C]', async (t) => {
  const ch = await t.confirmChannel();
  const names = ['a', 'b', 'c', 'd', 'e'].map((s) => t.q(s));
  for (let i = names.length - 1; i >= 0; i--) {
    const next = names[i + 1];
    await ch.assertQueue(names[i]!, { ...Q, arguments: next ? { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': next } : {} });
  }
  ch.sendToQueue(names[0]!, Buffer.from('chain'));
  await ch.waitForConfirms();
  for (const q of names) {
    const m = await t.waitFor(() => ch.get(q, { noAck: false }), 1000);
    if (!m) {
      t.log(q, 'missing');
      break;
    }
    const deaths = (m.properties.headers?.['x-death'] ?? []) as unknown as Array<Record<string, unknown>>;
    t.log(`in ${q.split('.').pop()!}`, deaths.map((d) => `${String(d['queue']).split('.').pop()}/${String(d['reason'])}/${String(d['count'])}`));
    if (q !== names.at(-1)) ch.reject(m, false);
  }
});

test('dlx-client-x-death-merged', 'rabbit_dead_letter:group_by_queue_and_reason: x-death entries a client sent are merged by (queue, reason), the first kept, counts added where missing, before the new death is counted', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, {});
  const entry = (queue: string, reason: string, extra: Record<string, unknown>) => ({ queue, reason, ...extra });
  for (const [label, deaths] of [
    ['duplicates', [entry('q1', 'rejected', { count: 5, exchange: 'e1' }), entry('q2', 'expired', { exchange: 'e2' }), entry('q1', 'rejected', { count: 7, exchange: 'e3' }), entry('q3', 'maxlen', { count: 2 })]],
    ['this queue without a count', [entry('zz', 'expired', { count: 1 }), entry(q, 'rejected', { exchange: 'old' })]],
  ] as const) {
    ch.sendToQueue(q, Buffer.from(label), { headers: { 'x-death': deaths } });
    await ch.waitForConfirms();
    const m = await t.waitFor(() => ch.get(q, { noAck: false }), 1000);
    if (m) ch.reject(m, false);
    const out = await getOne(t, ch, dlq);
    const got = out ? ((out.properties.headers?.['x-death'] ?? []) as unknown as Array<Record<string, unknown>>) : [];
    t.log(label, got.map((d) => Object.entries(d).filter(([k]) => k !== 'time').map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`).join(' ')));
  }
});

test('dlx-reject-then-expire-cycle-delivered', 'rabbit_dead_letter:is_cycle looks up to the first entry of the queue in the regrouped x-death: a rejection before it makes the cycle not automatic, so the message keeps going', async (t) => {
  const ch = await t.confirmChannel();
  const a = t.q('a');
  const b = t.q('b');
  const c = t.q('c');
  await ch.assertQueue(b, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': c, 'x-message-ttl': 300 } });
  await ch.assertQueue(c, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': b, 'x-message-ttl': 300 } });
  await ch.assertQueue(a, { ...Q, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': b } });
  ch.sendToQueue(a, Buffer.from('loop'));
  await ch.waitForConfirms();
  const m = await t.waitFor(() => ch.get(a, { noAck: false }), 1000);
  if (m) ch.reject(m, false);
  await t.sleep(450); // expired out of b into c
  const got: string[] = [];
  await ch.consume(b, (x) => { if (x) got.push(x.content.toString()); }, { noAck: true });
  await t.waitFor(() => got.length > 0, 1500);
  t.log('delivered from b again', got);
  for (const q of [a, b, c]) await ch.deleteQueue(q);
});

test('quorum-reject-publish-soft-limit', 'rabbit_fifo:evaluate_limit (3.10): a quorum queue refuses publishes once an enqueue took it over x-max-length, and takes them again at 80 % of it', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length': 5, 'x-overflow': 'reject-publish' } });
  const publish = (body: string) => publishOutcome(ch, q, body);
  const outcomes: string[] = [];
  for (let i = 1; i <= 8; i++) outcomes.push(await publish(`m${i}`));
  t.log('one at a time', outcomes);
  t.log('count', (await ch.checkQueue(q)).messageCount);
  for (const label of ['x1', 'x2', 'x3']) {
    await ch.get(q, { noAck: true });
    await t.sleep(50);
    t.log(`after a get, ${label}`, await publish(label));
  }
  const left: string[] = [];
  for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true })) left.push(m.content.toString());
  t.log('left', left);
});

test('quorum-drop-head-dead-letters-newest-first', 'rabbit_fifo:drop_head (3.10): messages dropped together over a quorum queue\'s limit are dead-lettered newest first', async (t) => {
  const ch = await t.confirmChannel();
  const dlq = t.q('dlq');
  await ch.assertQueue(dlq, Q);
  const q = t.q('bytes');
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length-bytes': 10, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq } });
  for (const body of ['aaa', 'bbb', 'ccc', 'ddddddddd']) {
    ch.sendToQueue(q, Buffer.from(body), { persistent: true });
    await ch.waitForConfirms();
  }
  await t.sleep(200);
  const dead: string[] = [];
  for (let m = await ch.get(dlq, { noAck: true }); m; m = await ch.get(dlq, { noAck: true })) dead.push(m.content.toString());
  t.log('dead-lettered', dead);
  const left: string[] = [];
  for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true })) left.push(m.content.toString());
  t.log('left', left);
});

test('reject-publish-requeue-over-limit-kept', 'rabbit_amqqueue_process:maybe_drop_head drops only for drop-head: a requeue taking a reject-publish queue over x-max-length keeps every message', async (t) => {
  const ch = await t.confirmChannel();
  for (const type of ['classic', 'quorum']) {
    const q = t.q(type);
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': type, 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
    ch.sendToQueue(q, Buffer.from('a'), { persistent: true });
    await ch.waitForConfirms();
    await t.sleep(50);
    const m = await ch.get(q);
    ch.sendToQueue(q, Buffer.from('b'), { persistent: true });
    await ch.waitForConfirms();
    if (m) ch.nack(m, false, true);
    await t.sleep(150);
    const left: string[] = [];
    for (let x = await ch.get(q, { noAck: true }); x; x = await ch.get(q, { noAck: true })) left.push(x.content.toString());
    t.log(type, left);
  }
});

/**
 * x-dead-letter-strategy at-least-once (rabbit_fifo_dlx, 3.10): a quorum queue with a dead-letter
 * exchange and x-overflow reject-publish keeps a dead-letter that routes nowhere, and it counts
 * in the queue's x-max-length (rabbit_fifo:is_over_limit), where at most once drops it. Without
 * reject-publish the strategy falls back to at most once.
 */
/** A quorum queue that dead-letters at least once (with withDlq's exchange and routing key). */
const AT_LEAST_ONCE = { 'x-queue-type': 'quorum', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' };

test('quorum-at-least-once-held-counts-in-limit', 'rabbit_fifo_dlx (3.10): a dead-letter held at least once counts in x-max-length; at most once, or under drop-head, it is dropped', async (t) => {
  const ch = await t.confirmChannel();
  const dlx = t.x('nowhere');
  await ch.assertExchange(dlx, 'fanout', { durable: true });
  const cases: Array<[string, Record<string, string>]> = [
    ['at-least-once', { 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' }],
    ['at-most-once', { 'x-dead-letter-strategy': 'at-most-once', 'x-overflow': 'reject-publish' }],
    ['at-least-once under drop-head', { 'x-dead-letter-strategy': 'at-least-once' }],
  ];
  for (const [label, args] of cases) {
    const q = t.q(label.replace(/ /g, '-'));
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': dlx, 'x-max-length': 1, ...args } });
    ch.sendToQueue(q, Buffer.from('dead'), { persistent: true });
    await ch.waitForConfirms();
    const m = await ch.get(q, { noAck: false });
    if (m) ch.nack(m, false, false);
    await ch.checkQueue(q);
    const outcomes: string[] = [];
    for (const body of ['m1', 'm2', 'm3']) outcomes.push(await publishOutcome(ch, q, body));
    t.log(`${label}: publishes`, outcomes);
    t.log(`${label}: ready`, t.bodies(await t.drainQueue(ch, q)));
  }
});

test('quorum-at-least-once-routed', 'rabbit_fifo_dlx_worker (3.10): a dead-letter that routes is forwarded at once, with the x-death of at most once, and leaves the source', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, { ...AT_LEAST_ONCE, 'x-max-length': 1 }, { durable: true });
  ch.sendToQueue(q, Buffer.from('poison'), { persistent: true, headers: { h: 1 } });
  await ch.waitForConfirms();
  const m = await ch.get(q, { noAck: false });
  if (m) ch.nack(m, false, false);
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq, 1000)));
  const outcomes: string[] = [];
  for (const body of ['m1', 'm2']) outcomes.push(await publishOutcome(ch, q, body));
  t.log('publishes after', outcomes);
});

test('quorum-at-least-once-delivery-limit', 'rabbit_fifo_dlx (3.10): a message returned past x-delivery-limit is dead-lettered at least once, its x-death reason delivery_limit', async (t) => {
  const ch = await t.confirmChannel();
  const { q, dlq } = await withDlq(t, ch, { ...AT_LEAST_ONCE, 'x-delivery-limit': 1 }, { durable: true });
  ch.sendToQueue(q, Buffer.from('poison'), { persistent: true });
  await ch.waitForConfirms();
  t.log('deliveries', await getAndRequeue(t, ch, q, 3));
  t.log('dead', dead(t, ch, await getOne(t, ch, dlq, 1000)));
  t.log('source left', (await ch.checkQueue(q)).messageCount);
});
