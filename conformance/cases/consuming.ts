/** basic.consume / cancel / get / ack / nack / reject / recover / qos, redelivery and ordering. */
import type { Channel, ConsumeMessage, GetMessage, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('consuming');

const Q: Options.AssertQueue = { durable: false };

/** A queue holding bodies m0..m(n-1), published with confirms. */
async function filled(t: CaseContext, n: number, suffix = 'q', opts: Options.AssertQueue = Q): Promise<string> {
  const ch = await t.confirmChannel();
  const q = t.q(suffix);
  await ch.assertQueue(q, opts);
  for (let i = 0; i < n; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await ch.waitForConfirms();
  await ch.close();
  return q;
}

/** Starts a consumer that records deliveries; wait with `until(n)`. */
async function consumer(t: CaseContext, ch: Channel, q: string, opts: Options.Consume = {}): Promise<{ got: ConsumeMessage[]; tag: string; until(n: number, ms?: number): Promise<ConsumeMessage[]>; cancelled: boolean }> {
  const got: ConsumeMessage[] = [];
  const state = { cancelled: false };
  const r = await ch.consume(q, (m) => {
    if (m === null) state.cancelled = true;
    else got.push(m);
  }, opts);
  return {
    got,
    tag: r.consumerTag,
    get cancelled() {
      return state.cancelled;
    },
    until: async (n: number, ms = 2000) => {
      await t.waitFor(() => got.length >= n, ms, 5);
      return got;
    },
  };
}

const brief = (_t: CaseContext, ms: ConsumeMessage[]): unknown => ms.map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered, deliveryTag: m.fields.deliveryTag }));

test('consume-in-order', 'spec 1.8.2.3 basic.consume; spec 4.7 message ordering', async (t) => {
  const q = await filled(t, 5);
  const ch = await t.channel();
  const c = await consumer(t, ch, q, { noAck: true });
  t.log('got', brief(t, await c.until(5)));
});

test('consume-ok-server-tag', 'spec 1.8.2.4 basic.consume-ok consumer-tag: generated when empty; RabbitMQ: amq.ctag-…', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  await t.step('consume', ch.consume(q, () => {}), (r) => r);
});

test('consume-client-tag', 'spec 1.8.2.3 consumer-tag', async (t) => {
  const q = await filled(t, 1);
  const ch = await t.channel();
  await t.step('consume', ch.consume(q, () => {}, { consumerTag: 'my-tag' }), (r) => r);
  await t.step('cancel', ch.cancel('my-tag'), (r) => r);
});

test('consume-duplicate-tag', 'spec 1.8.2.3 basic.consume rule: "the client MUST NOT specify a tag that refers to an existing consumer"; 530 NOT_ALLOWED', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  await ch.consume(q, () => {}, { consumerTag: 'dup' });
  await t.step('consume-again', ch.consume(q, () => {}, { consumerTag: 'dup' }), (r) => r);
});

test('consume-same-tag-other-channel', 'spec 1.8.2.3: consumer tags are scoped to the channel', async (t) => {
  const q = await filled(t, 0);
  const conn = await t.conn();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  await t.step('consume-a', a.consume(q, () => {}, { consumerTag: 'same' }), (r) => r);
  await t.step('consume-b', b.consume(q, () => {}, { consumerTag: 'same' }), (r) => r);
});

test('consume-missing-queue', 'spec 1.8.2.3: 404 when the queue does not exist', async (t) => {
  const ch = await t.channel();
  await t.step('consume', ch.consume(t.q(), () => {}), (r) => r);
});

test('consume-exclusive-refuses-others', 'spec 1.8.2.3 exclusive: "only this consumer can access the queue"; 403 ACCESS_REFUSED', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  await ch.consume(q, () => {}, { exclusive: true });
  await t.step('second-consumer', (await t.channel()).consume(q, () => {}), () => true);
});

test('consume-exclusive-when-others-exist', 'spec 1.8.2.3 exclusive: "if the queue has consumers, 403 ACCESS_REFUSED"', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  await ch.consume(q, () => {});
  await t.step('exclusive-consumer', (await t.channel()).consume(q, () => {}, { exclusive: true }), () => true);
});

test('round-robin', 'rabbitmq.com/consumers.html: messages are distributed round-robin between consumers', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  const a = await consumer(t, ch, q, { noAck: true });
  const b = await consumer(t, ch, q, { noAck: true });
  const pub = await t.confirmChannel();
  for (let i = 0; i < 6; i++) pub.sendToQueue(q, Buffer.from(`m${i}`));
  await pub.waitForConfirms();
  await t.waitFor(() => a.got.length + b.got.length >= 6);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
});

test('cancel-stops-deliveries', 'spec 1.8.2.5 basic.cancel', async (t) => {
  const q = await filled(t, 0);
  const ch = await t.channel();
  const c = await consumer(t, ch, q, { noAck: true });
  await t.step('cancel', ch.cancel(c.tag), () => true);
  const pub = await t.confirmChannel();
  pub.sendToQueue(q, Buffer.from('after cancel'));
  await pub.waitForConfirms();
  await t.sleep(50);
  t.log('got', c.got.length);
  await t.step('check', pub.checkQueue(q), (r) => r.messageCount);
});

test('cancel-unknown-tag', 'spec 1.8.2.5 basic.cancel: RabbitMQ answers cancel-ok for an unknown tag', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.cancel', { consumerTag: 'never-existed', noWait: false });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('cancel-keeps-unacked', 'spec 1.8.2.5 basic.cancel: "unacknowledged messages remain"; they can still be acked', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(2);
  await ch.cancel(c.tag);
  ch.ack(c.got[0] as ConsumeMessage);
  await t.sleep(30);
  await t.step('check', (await t.channel()).checkQueue(q), (r) => r.messageCount);
  await ch.close();
  await t.step('check-after-close', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

test('ack-multiple', 'spec 1.8.2.13 basic.ack multiple: "up to and including"', async (t) => {
  const q = await filled(t, 4);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(4);
  ch.ack(c.got[2] as ConsumeMessage, true);
  await ch.close();
  const ch2 = await t.channel();
  t.log('left', (await t.drainQueue(ch2, q)).map((m) => t.msg(m)));
});

test('ack-unknown-tag', 'spec 1.8.2.13 basic.ack: "if the delivery tag is invalid, 406 PRECONDITION_FAILED"', async (t) => {
  const ch = await t.channel();
  ch.ack({ fields: { deliveryTag: 5 } } as never);
  t.log('close', await t.closeOf(ch));
});

test('ack-twice', 'spec 1.8.2.13: acknowledging a tag twice is an unknown tag the second time', async (t) => {
  const q = await filled(t, 1);
  const ch = await t.channel();
  const m = await ch.get(q, { noAck: false });
  ch.ack(m as never);
  ch.ack(m as never);
  t.log('close', await t.closeOf(ch));
});

test('ack-zero-multiple-acks-all', 'spec 1.8.2.13 basic.ack: "delivery tag 0 with multiple means all outstanding"', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(3);
  ch.ackAll();
  await t.sleep(30);
  await ch.close();
  await t.step('check', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

test('ack-zero-not-multiple', 'spec 1.8.2.13: tag 0 without multiple', async (t) => {
  const q = await filled(t, 1);
  const ch = await t.channel();
  await ch.get(q, { noAck: false });
  ch.ack({ fields: { deliveryTag: 0 } } as never, false);
  t.log('close', await t.closeOf(ch, 500));
});

test('ack-on-other-channel', 'spec 1.8.2.13: delivery tags are channel-scoped', async (t) => {
  const q = await filled(t, 1);
  const conn = await t.conn();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  const m = await a.get(q, { noAck: false });
  b.ack(m as never);
  t.log('close-b', await t.closeOf(b));
});

test('ack-no-ack-delivery', 'spec 1.8.2.3 no-ack: acking an auto-acked delivery is an unknown tag', async (t) => {
  const q = await filled(t, 1);
  const ch = await t.channel();
  const m = await ch.get(q, { noAck: true });
  ch.ack(m as never);
  t.log('close', await t.closeOf(ch));
});

test('nack-requeue-order', 'spec-extension basic.nack (rabbitmq.com/nack.html); rabbitmq.com/confirms.html#requeue: requeued messages go back to their original position', async (t) => {
  const q = await filled(t, 4);
  const ch = await t.channel();
  const ms = [];
  for (let i = 0; i < 4; i++) ms.push(await ch.get(q, { noAck: false }));
  ch.nack(ms[1] as never, false, true);
  ch.nack(ms[2] as never, false, true);
  await ch.close();
  const ch2 = await t.channel();
  t.log('after', (await t.drainQueue(ch2, q)).map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('nack-multiple-requeue', 'rabbitmq.com/nack.html: nack with multiple', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(3);
  ch.nack(c.got[1] as ConsumeMessage, true, true);
  await c.until(5);
  t.log('got', brief(t, c.got));
});

test('nack-no-requeue-drops', 'rabbitmq.com/nack.html: requeue=false discards (or dead-letters)', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  const m = await ch.get(q, { noAck: false });
  ch.nack(m as never, false, false);
  await t.sleep(30);
  t.log('left', t.bodies(await t.drainQueue(ch, q)));
});

test('reject-requeue', 'spec 1.8.2.14 basic.reject requeue', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  const m = await ch.get(q, { noAck: false });
  ch.reject(m as never, true);
  await t.step('get-again', ch.get(q, { noAck: true }), (x) => t.msg(x));
});

test('reject-no-requeue', 'spec 1.8.2.14 basic.reject requeue=false', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  const m = await ch.get(q, { noAck: false });
  ch.reject(m as never, false);
  await t.step('get-next', ch.get(q, { noAck: true }), (x) => t.msg(x));
});

test('reject-unknown-tag', 'spec 1.8.2.14: 406 for an unknown delivery tag', async (t) => {
  const ch = await t.channel();
  ch.reject({ fields: { deliveryTag: 9 } } as never, true);
  t.log('close', await t.closeOf(ch));
});

test('nack-unknown-tag', 'rabbitmq.com/nack.html: 406 for an unknown delivery tag', async (t) => {
  const ch = await t.channel();
  ch.nack({ fields: { deliveryTag: 9 } } as never, false, true);
  t.log('close', await t.closeOf(ch));
});

test('requeue-redelivered-to-consumer', 'spec 1.8.2.3 redelivered flag; rabbitmq.com/consumers.html#message-redelivery', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  await ch.prefetch(1);
  const got: Array<{ body: string; redelivered: boolean }> = [];
  let rejected = false;
  await ch.consume(q, (m) => {
    if (!m) return;
    got.push({ body: m.content.toString(), redelivered: m.fields.redelivered });
    if (!rejected) {
      rejected = true;
      ch.nack(m, false, true);
    } else ch.ack(m);
  });
  await t.waitFor(() => got.length >= 3);
  t.log('got', got);
});

test('channel-close-requeues-unacked', 'spec 1.8.2.3: unacked messages of a closed channel are requeued, redelivered=true, in order', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(3);
  await ch.close();
  const ch2 = await t.channel();
  t.log('after', (await t.drainQueue(ch2, q)).map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('connection-close-requeues-unacked', 'spec 1.4.2.9: closing the connection requeues unacked deliveries', async (t) => {
  const q = await filled(t, 2);
  const conn = await t.connect();
  const ch = await t.channel(conn);
  await ch.get(q, { noAck: false });
  await conn.close();
  const ch2 = await t.channel();
  await t.waitForCount(q, (n) => n === 2);
  t.log('after', (await t.drainQueue(ch2, q)).map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('requeue-mixed-with-new', 'rabbitmq.com/confirms.html#requeue: requeued messages keep their queue position ahead of newer ones', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  const m0 = await ch.get(q, { noAck: false });
  const pub = await t.confirmChannel();
  pub.sendToQueue(q, Buffer.from('m3'));
  await pub.waitForConfirms();
  ch.nack(m0 as never, false, true);
  await t.sleep(20);
  t.log('order', (await t.drainQueue(ch, q)).map((m) => ({ body: m.content.toString(), redelivered: m.fields.redelivered })));
});

test('recover-requeue', 'spec 1.8.2.16 basic.recover requeue=true', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  const c = await consumer(t, ch, q);
  await c.until(2);
  await t.stepOk('recover', ch.recover());
  t.log('got', brief(t, await c.until(4)));
});

test('recover-no-requeue', 'spec 1.8.2.16 basic.recover requeue=false: "redelivered to the original recipient"', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  const q = await filled(t, 1);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'c1', noLocal: false, noAck: false, exclusive: false, noWait: false });
  await c.expect('basic.consume-ok');
  await c.expect('basic.deliver');
  c.method(1, 'basic.recover', { requeue: false });
  await c.until(() => c.messages.length >= 2 && c.frames.some((f) => f.method?.name === 'basic.recover-ok'));
  t.log('frames', c.drain().filter((f) => (f as { method?: string }).method));
});

test('recover-async', 'spec 1.8.2.15 basic.recover-async (deprecated)', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  const q = await filled(t, 1);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'c1', noLocal: false, noAck: false, exclusive: false, noWait: false });
  await c.expect('basic.consume-ok');
  await c.expect('basic.deliver');
  c.method(1, 'basic.recover-async', { requeue: true });
  const m = await c.nextMethod([], 1000);
  t.log('next', m ? { name: m.name, args: m.args } : null);
});

test('get-ok-and-empty', 'spec 1.8.2.10 basic.get: get-ok message-count, get-empty', async (t) => {
  const q = await filled(t, 2);
  const ch = await t.channel();
  await t.step('get1', ch.get(q, { noAck: true }), (m) => t.msg(m));
  await t.step('get2', ch.get(q, { noAck: true }), (m) => t.msg(m));
  await t.step('get3', ch.get(q, { noAck: true }), (m) => m);
});

test('get-empty-raw', 'spec 1.8.2.12 basic.get-empty', async (t) => {
  const q = await filled(t, 0);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.get', { queue: q, noAck: true });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('get-missing-queue', 'spec 1.8.2.10: 404', async (t) => {
  const ch = await t.channel();
  await t.step('get', ch.get(t.q(), { noAck: true }));
});

test('get-ignores-prefetch', 'rabbitmq.com/consumer-prefetch.html: basic.qos applies to consumers, not basic.get', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  await ch.prefetch(1);
  const ms: Array<GetMessage | false> = [];
  for (let i = 0; i < 3; i++) ms.push(await ch.get(q, { noAck: false }));
  t.log('got', ms.map((m) => t.msg(m)));
});

test('delivery-tags-shared-get-and-consume', 'spec 1.8.2.7 delivery-tag: one sequence per channel', async (t) => {
  const q = await filled(t, 3);
  const ch = await t.channel();
  const g = await ch.get(q, { noAck: false });
  const c = await consumer(t, ch, q);
  await c.until(2);
  t.log('get-tag', g ? g.fields.deliveryTag : null);
  t.log('consume-tags', c.got.map((m) => m.fields.deliveryTag));
});

test('qos-prefetch-count', 'spec 1.8.2.1 basic.qos prefetch-count; rabbitmq.com/consumer-prefetch.html', async (t) => {
  const q = await filled(t, 5);
  const ch = await t.channel();
  await ch.prefetch(2);
  const c = await consumer(t, ch, q);
  await c.until(2);
  await t.sleep(80);
  t.log('before-ack', t.bodies(c.got));
  ch.ack(c.got[0] as ConsumeMessage);
  await c.until(3);
  await t.sleep(50);
  t.log('after-one-ack', t.bodies(c.got));
});

test('qos-prefetch-size-refused', 'rabbitmq.com/specification.html: prefetch-size is not implemented (540)', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.qos', { prefetchSize: 1000, prefetchCount: 0, global: false });
  t.log('outcome', await c.outcome());
});

test('qos-global-shared', 'rabbitmq.com/consumer-prefetch.html: global=true shares the limit across the channel\'s consumers', async (t) => {
  const qa = await filled(t, 3, 'a');
  const qb = await filled(t, 3, 'b');
  const ch = await t.channel();
  await ch.prefetch(2, true);
  const a = await consumer(t, ch, qa);
  const b = await consumer(t, ch, qb);
  await t.waitFor(() => a.got.length + b.got.length >= 2);
  await t.sleep(80);
  t.log('total-unacked', a.got.length + b.got.length);
});

test('qos-per-consumer', 'rabbitmq.com/consumer-prefetch.html: global=false applies to each new consumer', async (t) => {
  const qa = await filled(t, 3, 'a');
  const qb = await filled(t, 3, 'b');
  const ch = await t.channel();
  await ch.prefetch(2, false);
  const a = await consumer(t, ch, qa);
  const b = await consumer(t, ch, qb);
  await t.waitFor(() => a.got.length + b.got.length >= 4);
  await t.sleep(80);
  t.log('a', t.bodies(a.got));
  t.log('b', t.bodies(b.got));
});

test('qos-per-consumer-and-global', 'rabbitmq.com/consumer-prefetch.html: both limits apply', async (t) => {
  const qa = await filled(t, 4, 'a');
  const qb = await filled(t, 4, 'b');
  const ch = await t.channel();
  await ch.prefetch(3, true);
  await ch.prefetch(2, false);
  const a = await consumer(t, ch, qa);
  const b = await consumer(t, ch, qb);
  await t.waitFor(() => a.got.length + b.got.length >= 3);
  await t.sleep(80);
  t.log('counts', [a.got.length, b.got.length]);
});

test('qos-zero-unlimited', 'spec 1.8.2.1 prefetch-count 0 means no limit', async (t) => {
  const q = await filled(t, 20);
  const ch = await t.channel();
  await ch.prefetch(0);
  const c = await consumer(t, ch, q);
  t.log('got', (await c.until(20)).length);
});

test('qos-change-applies-to-new-consumers-only', 'rabbitmq.com/consumer-prefetch.html: per-consumer prefetch (global=false) is fixed when the consumer starts', async (t) => {
  const q = await filled(t, 5);
  const ch = await t.channel();
  await ch.prefetch(1);
  const c = await consumer(t, ch, q);
  await c.until(1);
  await t.sleep(50);
  t.log('before', c.got.length);
  await ch.prefetch(3);
  await t.sleep(80);
  t.log('after-raise', c.got.length);
});

test('no-ack-consumer-ignores-prefetch', 'rabbitmq.com/consumer-prefetch.html: prefetch does not apply to no-ack consumers', async (t) => {
  const q = await filled(t, 6);
  const ch = await t.channel();
  await ch.prefetch(1);
  const c = await consumer(t, ch, q, { noAck: true });
  t.log('got', (await c.until(6)).length);
});

test('no-local-ignored', 'rabbitmq.com/specification.html: RabbitMQ does not implement no-local', async (t) => {
  const conn = await t.connect();
  const ch = await t.channel(conn);
  const q = t.q();
  await ch.assertQueue(q, Q);
  const c = await consumer(t, ch, q, { noLocal: true, noAck: true });
  ch.sendToQueue(q, Buffer.from('own message'));
  t.log('got', t.bodies(await c.until(1, 500)));
});

test('consume-nowait', 'spec 1.8.2.3 no-wait: no consume-ok', async (t) => {
  const q = await filled(t, 1);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'nw', noLocal: false, noAck: true, exclusive: false, noWait: true });
  await c.until(() => c.messages.length >= 1);
  t.log('frames', c.drain().map((f) => (f as { method?: string }).method ?? 'content'));
});

test('server-cancel-on-queue-delete-raw', 'rabbitmq.com/consumer-cancel.html: basic.cancel from the server', async (t) => {
  const q = await filled(t, 0);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'victim', noLocal: false, noAck: true, exclusive: false, noWait: false });
  await c.expect('basic.consume-ok');
  await (await t.channel()).deleteQueue(q);
  const m = await c.nextMethod(['basic.cancel'], 1000);
  t.log('cancel', m ? m.args : null);
});

test('deliver-fields', 'spec 1.8.2.7 basic.deliver: consumer-tag, delivery-tag, redelivered, exchange, routing-key', async (t) => {
  const q = await filled(t, 0);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'fields', noLocal: false, noAck: false, exclusive: false, noWait: false });
  await c.expect('basic.consume-ok');
  const pub = await t.confirmChannel();
  pub.publish('amq.direct', 'unbound', Buffer.from('x'));
  pub.sendToQueue(q, Buffer.from('hello'));
  await pub.waitForConfirms();
  const d = await c.expect('basic.deliver');
  t.log('deliver', d);
});

test('get-ok-fields', 'spec 1.8.2.11 basic.get-ok: delivery-tag, redelivered, exchange, routing-key, message-count', async (t) => {
  const q = await filled(t, 2);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.get', { queue: q, noAck: false });
  t.log('get-ok', await c.expect('basic.get-ok'));
});

test('many-messages-order', 'spec 4.7: messages published on one channel to one queue are delivered in order', async (t) => {
  const q = await filled(t, 200);
  const ch = await t.channel();
  const c = await consumer(t, ch, q, { noAck: true });
  const got = t.bodies(await c.until(200));
  t.log('in-order', got.every((b, i) => b === `m${i}`));
  t.log('count', got.length);
});

test('recover-ok-before-redeliveries', 'spec 1.8.2.16 basic.recover: RabbitMQ answers recover-ok before the queue delivers what went back', async (t) => {
  const q = t.q();
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  await c.expect('queue.declare-ok');
  c.publish(1, '', q, 'm0');
  c.publish(1, '', q, 'm1');
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'c1', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: {} });
  await c.until(() => c.frames.filter((f) => f.method?.name === 'basic.deliver').length >= 2);
  c.drain();
  c.method(1, 'basic.recover', { requeue: true });
  await c.until(() => c.frames.filter((f) => f.method?.name === 'basic.deliver').length >= 4 && c.frames.some((f) => f.method?.name === 'basic.recover-ok'));
  t.log('after recover', c.drain().filter((f) => (f as { method?: string }).method !== undefined));
});

test('quorum-global-qos', 'rabbit_quorum_queue:consume (3.10): a channel-wide prefetch is refused (540 "does not support global qos")', async (t) => {
  for (const [label, qos] of [['global 10', [[10, true]]], ['global 0', [[0, true]]], ['global then per-consumer', [[10, true], [5, false]]]] as const) {
    const q = t.q(label.replace(/ /g, '-'));
    const ch = await t.channel(await t.connect());
    await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (const [n, global] of qos) await ch.prefetch(n, global);
    const r = await ch.consume(q, () => {}, { consumerTag: 'c1' }).then(() => 'consume-ok', () => 'refused');
    t.log(label, r === 'refused' ? await t.closeOf(ch) : r);
    const cleanup = await t.channel();
    await cleanup.deleteQueue(q);
  }
});

test('consume-cancel-on-ha-failover-types', 'rabbit_amqqueue:check_consume_arguments: x-cancel-on-ha-failover must be a boolean (classic queues; other types refuse it)', async (t) => {
  for (const [label, type, value] of [['classic bool', 'classic', true], ['classic string', 'classic', 'yes'], ['quorum bool', 'quorum', true]] as const) {
    const q = t.q(label.replace(/ /g, '-'));
    const ch = await t.channel(await t.connect());
    await ch.assertQueue(q, { durable: true, arguments: type === 'quorum' ? { 'x-queue-type': 'quorum' } : {} });
    const r = await ch.consume(q, () => {}, { consumerTag: 'c1', arguments: { 'x-cancel-on-ha-failover': value } }).then(() => 'consume-ok', () => 'refused');
    t.log(label, r === 'refused' ? await t.closeOf(ch) : r);
    const cleanup = await t.channel();
    await cleanup.deleteQueue(q);
  }
});

test('global-prefetch-holds-no-ack-consumers', 'rabbit_limiter:can_send: once a channel-wide prefetch is used up, no consumer on the channel is sent anything, no-ack ones included (theirs do not count towards it)', async (t) => {
  const conn = await t.connect();
  const ch = await t.channel(conn);
  const a = t.q('a');
  const b = t.q('b');
  await ch.assertQueue(a, { durable: false });
  await ch.assertQueue(b, { durable: false });
  for (const m of ['a1', 'a2', 'a3']) ch.sendToQueue(a, Buffer.from(m));
  for (const m of ['b1', 'b2']) ch.sendToQueue(b, Buffer.from(m));
  await ch.checkQueue(b);
  await ch.prefetch(1, true);
  const got: Array<{ body: string; tag: number; msg: ConsumeMessage }> = [];
  await ch.consume(a, (m) => { if (m) got.push({ body: m.content.toString(), tag: m.fields.deliveryTag, msg: m }); }, { consumerTag: 'manual' });
  await ch.consume(b, (m) => { if (m) got.push({ body: m.content.toString(), tag: m.fields.deliveryTag, msg: m }); }, { consumerTag: 'auto', noAck: true });
  await t.sleep(300);
  t.log('before the ack', got.map((g) => `${g.tag}:${g.body}`));
  ch.ack(got.find((g) => g.body === 'a1')!.msg);
  await t.sleep(300);
  // Which queue is served once there is room again is RabbitMQ's queue processes' race.
  t.log('after the ack, the manual consumer', got.filter((g) => g.body.startsWith('a')).map((g) => g.body));
});
