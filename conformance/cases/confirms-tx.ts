/** Publisher confirms (acks, nacks on overflow) and transactions (tx.select / commit / rollback). */
import type { Channel, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('confirms-tx');

const Q: Options.AssertQueue = { durable: false };

// amqplib has no tx API; its generic rpc takes method ids (class << 16 | method).
const TX_SELECT = (90 << 16) | 10;
const TX_COMMIT = (90 << 16) | 20;
const TX_ROLLBACK = (90 << 16) | 30;
const CONFIRM_SELECT = (85 << 16) | 10;
const rpc = (ch: Channel, id: number, fields: Record<string, unknown> = {}): Promise<unknown> =>
  (ch as unknown as { rpc(method: number, fields: unknown, expect: number): Promise<unknown> }).rpc(id, fields, id + 1);
const txSelect = (ch: Channel): Promise<unknown> => rpc(ch, TX_SELECT);
const txCommit = (ch: Channel): Promise<unknown> => rpc(ch, TX_COMMIT);
const txRollback = (ch: Channel): Promise<unknown> => rpc(ch, TX_ROLLBACK);

/** Publishes bodies on a confirm channel; each one's outcome (ack/nack) in publish order. */
async function confirmOutcomes(t: CaseContext, q: string, bodies: string[], opts: Options.Publish = {}): Promise<string[]> {
  const ch = await t.confirmChannel();
  const outcomes: string[] = new Array(bodies.length).fill('pending');
  bodies.forEach((b, i) => ch.sendToQueue(q, Buffer.from(b), opts, (err) => (outcomes[i] = err ? 'nack' : 'ack')));
  await ch.waitForConfirms().catch(() => {});
  return outcomes;
}

test('confirm-select-ok', 'rabbitmq.com/confirms.html#publisher-confirms: confirm.select / select-ok', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'confirm.select', { nowait: false });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('confirm-acks-cover-every-publish', 'rabbitmq.com/confirms.html#publisher-confirms: delivery tags start at 1 and every publish is confirmed', async (t) => {
  const q = t.q();
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  c.method(1, 'confirm.select', { nowait: true });
  for (let i = 0; i < 10; i++) c.publish(1, '', q, `m${i}`);
  const acked = new Set<number>();
  await c.until(() => {
    for (const f of c.frames) {
      if (f.method?.name !== 'basic.ack') continue;
      const a = f.method.args;
      if (a.multiple) for (let i = 1; i <= a.deliveryTag; i++) acked.add(i);
      else acked.add(a.deliveryTag);
    }
    return acked.size >= 10;
  });
  t.log('acked-tags', [...acked].sort((x, y) => x - y));
  t.log('nacks', c.frames.filter((f) => f.method?.name === 'basic.nack').length);
});

test('confirm-unroutable-acked', 'rabbitmq.com/confirms.html#when-publishes-are-confirmed: unroutable messages are confirmed once the exchange has no route', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', { durable: false });
  const outcome = await new Promise<string>((resolve) => ch.publish(x, 'nowhere', Buffer.from('x'), {}, (err) => resolve(err ? 'nack' : 'ack')));
  t.log('outcome', outcome);
});

test('confirm-fanout-one-ack', 'rabbitmq.com/confirms.html: a message routed to several queues is confirmed once', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  await ch.assertExchange(x, 'fanout', { durable: false });
  for (const s of ['a', 'b', 'c']) {
    const q = t.q(s);
    await ch.assertQueue(q, Q);
    await ch.bindQueue(q, x, '');
  }
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'confirm.select', { nowait: false });
  await c.expect('confirm.select-ok');
  c.publish(1, x, '', 'one');
  const ack = await c.expect('basic.ack');
  await t.sleep(30);
  t.log('ack', ack);
  t.log('more', c.drain());
});

test('confirm-persistent-durable', 'rabbitmq.com/confirms.html#when-publishes-are-confirmed: persistent messages to durable queues are confirmed after they are written', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: true });
  t.log('outcomes', await confirmOutcomes(t, q, ['p1', 'p2'], { persistent: true }));
  await t.step('count', ch.checkQueue(q), (r) => r.messageCount);
});

test('confirm-nack-reject-publish', 'rabbitmq.com/maxlength.html#overflow-behaviour: reject-publish nacks publishes to a full queue', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxLength: 2, overflow: 'reject-publish' });
  t.log('outcomes', await confirmOutcomes(t, q, ['m0', 'm1', 'm2', 'm3']));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('confirm-drop-head-acks', 'rabbitmq.com/maxlength.html#overflow-behaviour: drop-head (default) drops the oldest and acks', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxLength: 2 });
  t.log('outcomes', await confirmOutcomes(t, q, ['m0', 'm1', 'm2', 'm3']));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('max-length-bytes-drop-head', 'rabbitmq.com/maxlength.html: x-max-length-bytes counts body bytes', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-max-length-bytes': 10 } });
  t.log('outcomes', await confirmOutcomes(t, q, ['12345', '67890', 'abc']));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('max-length-bytes-reject-publish', 'rabbitmq.com/maxlength.html: x-max-length-bytes with reject-publish', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, arguments: { 'x-max-length-bytes': 10, 'x-overflow': 'reject-publish' } });
  t.log('outcomes', await confirmOutcomes(t, q, ['12345', '67890', 'a', '']));
  t.log('kept', t.bodies(await t.drainQueue(ch, q)));
});

test('max-length-zero-reject-publish', 'rabbitmq.com/maxlength.html: x-max-length 0 with reject-publish', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxLength: 0, overflow: 'reject-publish' });
  t.log('outcomes', await confirmOutcomes(t, q, ['m0']));
});

test('max-length-zero-drop-head', 'rabbitmq.com/maxlength.html: x-max-length 0 drops everything', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxLength: 0 });
  t.log('outcomes', await confirmOutcomes(t, q, ['m0']));
  await t.step('count', ch.checkQueue(q), (r) => r.messageCount);
});

test('max-length-with-consumer-reject-publish', 'rabbitmq.com/maxlength.html: the limit counts ready messages only', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { ...Q, maxLength: 1, overflow: 'reject-publish' });
  t.log('first', await confirmOutcomes(t, q, ['m0']));
  await ch.get(q, { noAck: false });
  t.log('second', await confirmOutcomes(t, q, ['m1', 'm2']));
});

test('reject-publish-fanout-partial', 'rabbitmq.com/maxlength.html: a message rejected by one of several queues is nacked', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const full = t.q('full');
  const open = t.q('open');
  await ch.assertExchange(x, 'fanout', { durable: false });
  await ch.assertQueue(full, { ...Q, maxLength: 0, overflow: 'reject-publish' });
  await ch.assertQueue(open, Q);
  await ch.bindQueue(full, x, '');
  await ch.bindQueue(open, x, '');
  const cc = await t.confirmChannel();
  const outcome = await new Promise<string>((resolve) => cc.publish(x, '', Buffer.from('x'), {}, (err) => resolve(err ? 'nack' : 'ack')));
  t.log('outcome', outcome);
  t.log('open-got', t.bodies(await t.drainQueue(ch, open)));
});

test('confirm-publish-missing-exchange', 'rabbitmq.com/confirms.html: a channel error fails outstanding confirms', async (t) => {
  const ch = await t.confirmChannel();
  let outcome = 'pending';
  ch.publish(t.x(), 'k', Buffer.from('x'), {}, (err) => (outcome = err ? 'error' : 'ack'));
  t.log('close', await t.closeOf(ch));
  await t.sleep(20);
  t.log('outcome', outcome);
});

test('confirm-select-nowait', 'rabbitmq.com/confirms.html: confirm.select nowait', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'confirm.select', { nowait: true });
  c.publish(1, 'amq.direct', 'nowhere', 'x');
  const m = await c.nextMethod([]);
  t.log('first-reply', m ? { name: m.name, args: m.args } : null);
});

test('confirm-select-twice', 'rabbitmq.com/confirms.html: confirm.select on a confirm channel is fine', async (t) => {
  const ch = await t.confirmChannel();
  await t.stepOk('select-again', rpc(ch, CONFIRM_SELECT, { nowait: false }));
});

// --- transactions --------------------------------------------------------------------------

test('tx-select-ok', 'spec 1.9.2.1 tx.select', async (t) => {
  const ch = await t.channel();
  await t.stepOk('select', txSelect(ch));
  await t.stepOk('select-again', txSelect(ch));
});

test('tx-commit-without-select', 'spec 1.9.2.3 tx.commit rule: "the client MUST NOT use the Commit method on non-transacted channels"; 406', async (t) => {
  const ch = await t.channel();
  await t.step('commit', txCommit(ch));
});

test('tx-rollback-without-select', 'spec 1.9.2.5 tx.rollback: 406 on non-transacted channels', async (t) => {
  const ch = await t.channel();
  await t.step('rollback', txRollback(ch));
});

test('tx-publish-visible-after-commit', 'spec 1.9: "publishes are not visible until committed"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await txSelect(ch);
  ch.sendToQueue(q, Buffer.from('m0'));
  ch.sendToQueue(q, Buffer.from('m1'));
  const other = await t.channel();
  await t.sleep(30);
  await t.step('count-before-commit', other.checkQueue(q), (r) => r.messageCount);
  await t.stepOk('commit', txCommit(ch));
  await t.step('count-after-commit', other.checkQueue(q), (r) => r.messageCount);
  t.log('bodies', t.bodies(await t.drainQueue(other, q)));
});

test('tx-rollback-discards-publishes', 'spec 1.9.2.5 tx.rollback: "abandons all message publications"', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await txSelect(ch);
  ch.sendToQueue(q, Buffer.from('discarded'));
  await t.stepOk('rollback', txRollback(ch));
  ch.sendToQueue(q, Buffer.from('kept'));
  await t.stepOk('commit', txCommit(ch));
  t.log('bodies', t.bodies(await t.drainQueue(ch, q)));
});

test('tx-ack-applied-on-commit', 'spec 1.9: acknowledgements are transactional', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0']);
  await txSelect(ch);
  const m = await ch.get(q, { noAck: false });
  if (m) ch.ack(m);
  await t.stepOk('commit', txCommit(ch));
  await ch.close();
  await t.step('count-after-close', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

test('tx-ack-rolled-back', 'spec 1.9.2.5 tx.rollback; RabbitMQ: rolled-back acks leave the messages unacknowledged (not requeued)', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0']);
  await txSelect(ch);
  const m = await ch.get(q, { noAck: false });
  if (m) ch.ack(m);
  await t.stepOk('rollback', txRollback(ch));
  await t.step('count-after-rollback', (await t.channel()).checkQueue(q), (r) => r.messageCount);
  await ch.close();
  await t.step('count-after-close', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

test('tx-reject-requeue-on-commit', 'spec 1.9: basic.reject inside a transaction takes effect on commit', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0']);
  await txSelect(ch);
  const m = await ch.get(q, { noAck: false });
  if (m) ch.reject(m, true);
  await t.sleep(20);
  await t.step('count-before-commit', (await t.channel()).checkQueue(q), (r) => r.messageCount);
  await t.stepOk('commit', txCommit(ch));
  await t.step('count-after-commit', (await t.channel()).checkQueue(q), (r) => r.messageCount);
});

test('tx-mandatory-return', 'spec 1.9 + 1.8.2.5 mandatory: returns inside a transaction (raw frame order)', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'tx.select', {});
  await c.expect('tx.select-ok');
  c.publish(1, '', t.name('nowhere'), 'unroutable', {}, { mandatory: true });
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  await t.sleep(30);
  const all = c.frames.filter((f) => f.channel === 1 && f.method).map((f) => f.method?.name);
  t.log('methods', all);
});

test('tx-commit-empty', 'spec 1.9.2.3: committing an empty transaction', async (t) => {
  const ch = await t.channel();
  await txSelect(ch);
  await t.stepOk('commit', txCommit(ch));
  await t.stepOk('rollback', txRollback(ch));
});

test('tx-then-confirm-select', 'rabbitmq.com/confirms.html: "a transactional channel cannot be put into confirm mode"; 406', async (t) => {
  const ch = await t.channel();
  await txSelect(ch);
  await t.step('confirm-select', rpc(ch, CONFIRM_SELECT, { nowait: false }));
});

test('confirm-then-tx-select', 'rabbitmq.com/confirms.html: "a channel in confirm mode cannot be made transactional"; 406', async (t) => {
  const ch = await t.confirmChannel();
  await t.step('tx-select', txSelect(ch));
});

test('tx-publish-to-missing-exchange', 'spec 1.9; a publish to a missing exchange inside a transaction', async (t) => {
  const ch = await t.channel();
  await txSelect(ch);
  ch.publish(t.x(), 'k', Buffer.from('x'));
  await t.step('commit', txCommit(ch));
});

test('tx-many-publishes-order', 'spec 1.9: committed publishes keep their order', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await txSelect(ch);
  for (let i = 0; i < 20; i++) ch.sendToQueue(q, Buffer.from(`m${i}`));
  await txCommit(ch);
  const got = t.bodies(await t.drainQueue(ch, q));
  t.log('in-order', got.every((b, i) => b === `m${i}`) && got.length === 20);
});

test('tx-consumer-sees-after-commit', 'spec 1.9: a consumer receives transactional publishes only after commit', async (t) => {
  const conn = await t.conn();
  const pub = await t.channel(conn);
  const sub = await t.channel(conn);
  const q = t.q();
  await pub.assertQueue(q, Q);
  const got: string[] = [];
  await sub.consume(q, (m) => m && got.push(m.content.toString()), { noAck: true });
  await txSelect(pub);
  pub.sendToQueue(q, Buffer.from('m0'));
  await t.sleep(50);
  t.log('before-commit', [...got]);
  await txCommit(pub);
  await t.waitFor(() => got.length >= 1, 1000);
  t.log('after-commit', got);
});
