/** RabbitMQ extensions: direct reply-to, plugins and queue types present or absent in 3.10, consumer timeouts. */
import type { ConsumeMessage } from 'amqplib';
import { area } from '../lib/case.js';

const test = area('extensions');

const REPLY_TO = 'amq.rabbitmq.reply-to';

test('direct-reply-to-round-trip', 'rabbitmq.com/direct-reply-to.html', async (t) => {
  const conn = await t.conn();
  const requester = await t.channel(conn);
  const responder = await t.channel(await t.connect());
  const q = t.q('rpc');
  await responder.assertQueue(q, { durable: false });
  const replies: unknown[] = [];
  await requester.consume(REPLY_TO, (m) => m && replies.push({ body: m.content.toString(), routingKey: m.fields.routingKey, exchange: m.fields.exchange, correlationId: m.properties.correlationId }), { noAck: true });
  const requests: unknown[] = [];
  await responder.consume(q, (m) => {
    if (!m) return;
    requests.push({ body: m.content.toString(), replyTo: m.properties.replyTo });
    responder.sendToQueue(m.properties.replyTo, Buffer.from(`re: ${m.content.toString()}`), { correlationId: m.properties.correlationId });
  }, { noAck: true });
  requester.sendToQueue(q, Buffer.from('ping'), { replyTo: REPLY_TO, correlationId: 'c1' });
  await t.waitFor(() => replies.length > 0, 2000);
  t.log('request', requests);
  t.log('reply', replies);
});

test('direct-reply-to-requires-no-ack', 'rabbitmq.com/direct-reply-to.html: "consume in no-ack mode"; 406 otherwise', async (t) => {
  const ch = await t.channel();
  await t.step('consume', ch.consume(REPLY_TO, () => {}, { noAck: false }), () => true);
});

test('direct-reply-to-publish-without-consumer', 'rabbitmq.com/direct-reply-to.html: publishing with reply-to amq.rabbitmq.reply-to needs a reply consumer on the channel', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('x'), { replyTo: REPLY_TO });
  t.log('close', await t.closeOf(ch, 1000));
});

test('direct-reply-to-passive-declare', 'rabbitmq.com/direct-reply-to.html: the pseudo-queue can be declared passively', async (t) => {
  const ch = await t.channel();
  await t.step('check', ch.checkQueue(REPLY_TO), (r) => r);
});

test('direct-reply-to-requester-gone', 'rabbitmq.com/direct-reply-to.html: replies to a requester that has disconnected are dropped', async (t) => {
  const gone = await t.connect();
  const req = await t.channel(gone);
  const q = t.q();
  await req.assertQueue(q, { durable: false });
  await req.consume(REPLY_TO, () => {}, { noAck: true });
  req.sendToQueue(q, Buffer.from('request'), { replyTo: REPLY_TO });
  const reader = await t.channel();
  const m = await t.waitFor(() => reader.get(q, { noAck: true }), 1000);
  await gone.close();
  const ch = await t.confirmChannel();
  const returned: unknown[] = [];
  ch.on('return', (r: ConsumeMessage) => {
    const f = r.fields as unknown as { replyCode: number; replyText: string };
    returned.push({ replyCode: f.replyCode, replyText: f.replyText });
  });
  ch.sendToQueue(m ? m.properties.replyTo : 'missing', Buffer.from('late reply'), { mandatory: true });
  await t.stepOk('confirm', ch.waitForConfirms(), ch);
  t.log('returns', returned);
});

test('direct-reply-to-second-consumer', 'rabbitmq.com/direct-reply-to.html: one reply consumer per channel', async (t) => {
  const ch = await t.channel();
  await ch.consume(REPLY_TO, () => {}, { noAck: true });
  await t.step('consume-again', ch.consume(REPLY_TO, () => {}, { noAck: true }), () => true);
});

test('direct-reply-to-cancel', 'rabbitmq.com/direct-reply-to.html: the reply consumer can be cancelled', async (t) => {
  const ch = await t.channel();
  const r = await ch.consume(REPLY_TO, () => {}, { noAck: true, consumerTag: 'rt' });
  await t.step('cancel', ch.cancel(r.consumerTag), (x) => x);
});

test('direct-reply-to-reply-fields', 'rabbitmq.com/direct-reply-to.html: the reply arrives from the default exchange with the reply-to name as routing key', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.consume', { queue: REPLY_TO, consumerTag: 'rt', noLocal: false, noAck: true, exclusive: false, noWait: false });
  const ok = await c.expect('basic.consume-ok');
  const q = t.q();
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  c.publish(1, '', q, 'request', { replyTo: REPLY_TO });
  const req = await t.waitFor(async () => (await t.channel()).get(q, { noAck: true }), 1000);
  const replyTo = req ? req.properties.replyTo : '';
  const responder = await t.confirmChannel();
  responder.sendToQueue(replyTo, Buffer.from('reply'));
  await responder.waitForConfirms();
  const d = await c.until(() => c.messages.find((m) => m.method.name === 'basic.deliver'));
  t.log('consume-ok', ok);
  t.log('reply-to-prefix', replyTo.startsWith(`${REPLY_TO}.`));
  t.log('deliver', d ? { ...d.method.args, body: d.body.toString() } : null);
});

test('delayed-message-exchange-type', 'github.com/rabbitmq/rabbitmq-delayed-message-exchange: x-delayed-message needs the plugin (not enabled on the reference)', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange(t.x(), 'x-delayed-message', { durable: false, arguments: { 'x-delayed-type': 'direct' } }));
});

test('random-exchange-type-absent', 'rabbitmq.com/plugins.html: rabbitmq_random_exchange is not enabled on the reference', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange(t.x(), 'x-random', { durable: false }));
});

test('consumer-timeout-argument-ignored', 'rabbitmq.com/consumers.html#acknowledgement-timeout: in 3.10 the timeout is node-wide (consumer_timeout); an x-consumer-timeout queue argument has no effect', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await t.step('declare', ch.assertQueue(q, { durable: false, arguments: { 'x-consumer-timeout': 100 } }), (r) => r.messageCount);
  ch.sendToQueue(q, Buffer.from('held'));
  await ch.waitForConfirms();
  const got: string[] = [];
  await ch.consume(q, (m) => m && got.push(m.content.toString()), { noAck: false });
  await t.sleep(400);
  t.log('got', got);
  t.log('channel-open', t.isOpen(ch));
});

test('lazy-queue-mode', 'rabbitmq.com/lazy-queues.html: x-queue-mode lazy behaves like a classic queue to clients', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false, queueMode: 'lazy' });
  for (let i = 0; i < 3; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  t.log('bodies', t.bodies(await t.drainQueue(ch, q)));
});

test('stream-queue-declare', 'rabbitmq.com/streams.html: x-queue-type stream (durable, not exclusive)', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertQueue(t.q(), { durable: true, arguments: { 'x-queue-type': 'stream' } }), (r) => ({ messageCount: r.messageCount, consumerCount: r.consumerCount }));
});

test('stream-queue-consume-needs-qos', 'rabbitmq.com/streams.html#consuming: a stream consumer needs a prefetch', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'stream' } });
  await t.step('consume', ch.consume(q, () => {}, { noAck: false }), () => true);
});

test('stream-queue-get-refused', 'rabbitmq.com/streams.html: basic.get is not supported on streams', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'stream' } });
  await t.step('get', ch.get(q, { noAck: false }), (m) => t.msg(m));
});

test('quorum-basic-flow', 'rabbitmq.com/quorum-queues.html: publish, consume and ack on a quorum queue', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (let i = 0; i < 3; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  const got = await t.consumeN(ch, q, 3, { noAck: false, ack: true });
  t.log('got', got.map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('quorum-requeue-order', 'rabbitmq.com/quorum-queues.html: requeued messages in a quorum queue', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (let i = 0; i < 3; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  const m0 = await ch.get(q, { noAck: false });
  if (m0) ch.nack(m0, false, true);
  await t.sleep(30);
  t.log('order', (await t.drainQueue(ch, q)).map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('quorum-message-ttl-accepted', 'rabbitmq.com/quorum-queues.html#feature-comparison: 3.10 quorum queues accept x-message-ttl', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertQueue(t.q(), { durable: true, messageTtl: 1000, arguments: { 'x-queue-type': 'quorum' } }), (r) => r.messageCount);
});

test('basic-nack-capability-multiple', 'rabbitmq.com/nack.html: basic.nack is an extension advertised as basic.nack', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  const q = t.q();
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  c.publish(1, '', q, 'a');
  c.publish(1, '', q, 'b');
  await t.waitForCount(q, (n) => n === 2);
  c.method(1, 'basic.get', { queue: q, noAck: false });
  await c.expect('basic.get-ok');
  c.method(1, 'basic.get', { queue: q, noAck: false });
  await c.expect('basic.get-ok');
  c.method(1, 'basic.nack', { deliveryTag: 0, multiple: true, requeue: true });
  await t.sleep(30);
  await t.step('count', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

// ---- firehose tracing (rabbitmq.com/firehose.html) -------------------------------------------

/**
 * The traced copies in queue, each as its routing key and typed headers; the connection name
 * (ports) and node name vary per run and broker, so they are replaced by what they must look like.
 */
async function tracedCopies(t: Parameters<Parameters<typeof test>[2]>[0], ch: Awaited<ReturnType<typeof t.channel>>, queue: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const m of await t.drainQueue(ch, queue)) {
    const headers = t.typedHeaders(ch, m) as Record<string, unknown> | null;
    if (headers) {
      if (typeof headers['connection'] === 'string') headers['connection'] = /^S:127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+$/.test(headers['connection']) ? 'S:<client> -> <server>' : headers['connection'];
      if (typeof headers['node'] === 'string') headers['node'] = /^S:[^@]+@[^@]+$/.test(headers['node']) ? 'S:<node>' : headers['node'];
    }
    out.push({ exchange: m.fields.exchange, routingKey: m.fields.routingKey, properties: Object.keys(m.properties).filter((k) => (m.properties as unknown as Record<string, unknown>)[k] !== undefined), headers, body: m.content.toString() });
  }
  return out;
}

test('firehose-publish-and-deliver', 'rabbitmq.com/firehose.html: with tracing on, amq.rabbitmq.trace gets publish.<exchange> and deliver.<queue> copies (rabbit_trace)', async (t) => {
  const vhost = t.vhost();
  await t.admin.putVhost(vhost);
  const put = await t.mgmt().request('PUT', `/api/vhosts/${encodeURIComponent(vhost)}`, { tracing: true });
  t.log('tracing-on', put.status);
  const conn = await t.connect({ vhost });
  const ch = await t.channel(conn);
  const tq = t.name('trace');
  const q = t.name('q');
  await ch.assertQueue(tq, { durable: false });
  await ch.bindQueue(tq, 'amq.rabbitmq.trace', '#');
  await ch.assertQueue(q, { durable: false });
  ch.sendToQueue(q, Buffer.from('to-queue'), { messageId: 'm1', priority: 2, timestamp: 1700000000, headers: { n: 1 } });
  ch.publish('amq.direct', 'nowhere', Buffer.from('unroutable'));
  ch.publish('', t.name('missing'), Buffer.from('missing-queue'));
  const got = await ch.get(q, { noAck: false });
  if (got) ch.nack(got, false, true);
  await ch.get(q, { noAck: true });
  t.log('copies', await tracedCopies(t, ch, tq));
  // Reading the copies is not traced again.
  t.log('after-drain', (await ch.checkQueue(tq)).messageCount);
});

test('firehose-trace-exchange', 'rabbitmq.com/firehose.html: amq.rabbitmq.trace is an internal topic exchange; tracing off copies nothing', async (t) => {
  const vhost = t.vhost();
  await t.admin.putVhost(vhost);
  const conn = await t.connect({ vhost });
  const ch = await t.channel(conn);
  await t.stepOk('passive', ch.checkExchange('amq.rabbitmq.trace'), ch);
  const tq = t.name('trace');
  await ch.assertQueue(tq, { durable: false });
  await ch.bindQueue(tq, 'amq.rabbitmq.trace', '#');
  ch.sendToQueue(tq, Buffer.from('not traced'));
  t.log('untraced', (await ch.checkQueue(tq)).messageCount);
  const other = await t.channel(conn);
  other.publish('amq.rabbitmq.trace', 'publish.x', Buffer.from('direct'));
  t.log('publish-to-trace', await t.closeOf(other));
});
