/** Publisher confirms (acks, nacks on overflow) and transactions (tx.select / commit / rollback). */
import type { Channel, Options } from 'amqplib';
import { F } from '../../src/frame/field-table.js';
import type { BasicProperties } from '../../src/frame/generated/properties.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';
import { plainArgs, type RawClient } from '../lib/raw-client.js';

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

// --- when a transaction checks, routes and enqueues (rabbit_channel: basic.publish checks and
// routes at once and queues the routed delivery; tx.commit enqueues in the queues routed to that
// exist then, by name, and sends the returns) -------------------------------------------------

/** A raw client with channel 1 open and transactional. */
async function rawTx(t: CaseContext): Promise<RawClient> {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'tx.select', {});
  await c.expect('tx.select-ok');
  return c;
}

/** A round trip on channel 1 (a passive exchange.declare): everything sent before it has been handled. */
async function roundTrip(c: RawClient): Promise<string | undefined> {
  c.method(1, 'exchange.declare', { exchange: 'amq.direct', type: 'direct', passive: true, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  return (await c.nextMethod(['exchange.declare-ok', 'channel.close']))?.name;
}

/** The names of the methods received on channel 1 since the last call (or since mark(c)). */
const seen = new WeakMap<RawClient, number>();
function mark(c: RawClient): void {
  seen.set(c, c.frames.length);
}
function methodsSince(c: RawClient): string[] {
  const frames = c.frames.slice(seen.get(c) ?? 0);
  mark(c);
  return frames.flatMap((f) => (f.channel === 1 && f.method ? [f.method.name] : []));
}

/** The bodies of the messages basic.return brought back to c. */
const returned = (c: RawClient): string[] => c.messages.filter((m) => m.method.name === 'basic.return').map((m) => m.body.toString());

/**
 * After publishes on c's transaction have been handled (a round trip), changes something with
 * `between` and commits; logs the methods tx.commit brought.
 */
async function commitAfter(t: CaseContext, c: RawClient, between: () => Promise<unknown>): Promise<void> {
  t.log('round-trip', await roundTrip(c));
  mark(c);
  await between();
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  t.log('methods', methodsSince(c));
}

test('tx-missing-exchange-at-publish', 'rabbit_channel basic.publish: the exchange is looked up at publish inside a transaction too (404 names basic.publish)', async (t) => {
  const c = await rawTx(t);
  mark(c);
  c.publish(1, t.name('missing'), 'k', 'x');
  c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
  t.log('close', await c.nextClose());
  t.log('methods', methodsSince(c));
});

test('tx-message-checks-at-publish', 'rabbit_channel basic.publish: internal exchange, user_id, expiration, CC type and delivery-mode are checked at publish, not at tx.commit', async (t) => {
  const internal = t.x('internal');
  await (await t.channel()).assertExchange(internal, 'fanout', { durable: false, internal: true });
  const bad: Array<[string, string, BasicProperties]> = [
    ['internal-exchange', internal, {}],
    ['user-id', 'amq.direct', { userId: 'someone-else' }],
    ['expiration', 'amq.direct', { expiration: 'abc' }],
    ['cc-type', 'amq.direct', { headers: { CC: F.str('a') } }],
    ['delivery-mode', 'amq.direct', { deliveryMode: 3 }],
  ];
  for (const [label, exchange, props] of bad) {
    const c = await rawTx(t);
    c.publish(1, exchange, 'k', 'x', props);
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
    t.log(label, await c.nextClose());
  }
});

/** A channel, a fanout exchange and a queue bound to it. */
async function boundFanout(t: CaseContext): Promise<{ ch: Channel; x: string; q: string }> {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'fanout', { durable: false });
  await ch.assertQueue(q, Q);
  await ch.bindQueue(q, x, '');
  return { ch, x, q };
}

test('tx-exchange-deleted-before-commit', 'rabbit_channel: a transactional publish is routed at publish; deleting its exchange before tx.commit does not fail the commit', async (t) => {
  const { ch, x, q } = await boundFanout(t);
  const c = await rawTx(t);
  c.publish(1, x, '', 'held', {}, { mandatory: true });
  await commitAfter(t, c, () => ch.deleteExchange(x));
  t.log('queued', t.bodies(await t.drainQueue(ch, q)));
});

test('tx-alternate-exchange-deleted-before-commit', 'rabbit_exchange:route: alternate exchanges are followed at publish; deleting one before tx.commit changes nothing', async (t) => {
  const { ch, x: ae, q } = await boundFanout(t);
  const x = t.x('main');
  await ch.assertExchange(x, 'direct', { durable: false, alternateExchange: ae });
  const c = await rawTx(t);
  c.publish(1, x, 'no-binding', 'via-ae', {}, { mandatory: true });
  await commitAfter(t, c, () => ch.deleteExchange(ae));
  t.log('queued', t.bodies(await t.drainQueue(ch, q)));
});

test('tx-queue-deleted-before-commit', 'rabbit_channel deliver_to_queues: at tx.commit a routed queue that is gone drops the message, or returns it when mandatory', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  const c = await rawTx(t);
  c.publish(1, '', q, 'mandatory', {}, { mandatory: true });
  c.publish(1, '', q, 'not-mandatory');
  await commitAfter(t, c, () => ch.deleteQueue(q));
  t.log('returned', c.messages.map((m) => ({ method: m.method.name, body: m.body.toString(), ...plainArgs(m.method.args as Record<string, unknown>) })));
});

test('tx-queue-redeclared-before-commit', 'rabbit_channel: routing at publish yields queue names, looked up at tx.commit: a queue deleted and declared again (unbound) gets the message', async (t) => {
  const { ch, x, q } = await boundFanout(t);
  const c = await rawTx(t);
  c.publish(1, x, '', 'routed-by-name', {}, { mandatory: true });
  await commitAfter(t, c, async () => {
    await ch.deleteQueue(q);
    await ch.assertQueue(q, Q);
  });
  t.log('queued', t.bodies(await t.drainQueue(ch, q)));
});

test('tx-queue-declared-before-commit', 'rabbit_exchange:route: the default exchange routes to queue names without looking them up; a queue (or BCC queue) declared before tx.commit gets the message', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  const bcc = t.q('bcc');
  const c = await rawTx(t);
  c.publish(1, '', q, 'early', { headers: { BCC: F.array([F.str(bcc)]) } }, { mandatory: true });
  await commitAfter(t, c, async () => {
    await ch.assertQueue(q, Q);
    await ch.assertQueue(bcc, Q);
  });
  t.log('queued', t.bodies(await t.drainQueue(ch, q)));
  t.log('queued-bcc', t.bodies(await t.drainQueue(ch, bcc)));
});

test('tx-binding-added-before-commit', 'rabbit_channel: routing happens at publish; a binding added before tx.commit does not catch the message, which is returned at commit', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'fanout', { durable: false });
  await ch.assertQueue(q, Q);
  const c = await rawTx(t);
  c.publish(1, x, '', 'before-bind', {}, { mandatory: true });
  await commitAfter(t, c, () => ch.bindQueue(q, x, ''));
  t.log('returned', returned(c));
  t.log('queued', t.bodies(await t.drainQueue(ch, q)));
});

test('tx-mandatory-return-at-commit', 'rabbit_channel: basic.return of an unroutable mandatory publish in a transaction goes out at tx.commit (before commit-ok), in publish order, and not at all after tx.rollback', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  const c = await rawTx(t);
  mark(c);
  c.publish(1, 'amq.direct', t.name('r1'), 'ret1', {}, { mandatory: true });
  c.publish(1, '', q, 'routed', {}, { mandatory: true });
  c.publish(1, 'amq.direct', t.name('r2'), 'ret2', {}, { mandatory: true });
  await roundTrip(c);
  t.log('before-commit', methodsSince(c));
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  t.log('at-commit', methodsSince(c));
  t.log('returned', returned(c));
  c.publish(1, 'amq.direct', t.name('r3'), 'rolled-back', {}, { mandatory: true });
  c.method(1, 'tx.rollback', {});
  await c.expect('tx.rollback-ok');
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  t.log('after-rollback', methodsSince(c));
});

test('tx-ttl-from-commit', 'rabbitmq.com/ttl.html: a message\'s TTL runs from when it is enqueued, i.e. from tx.commit', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  const c = await rawTx(t);
  c.publish(1, '', q, 'ttl', { expiration: '100' });
  await roundTrip(c);
  await t.sleep(250);
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  await t.step('count', ch.checkQueue(q), (r) => r.messageCount);
});

test('tx-reject-publish-partial-completion', 'rabbit_channel: a publish a queue refuses (reject-publish) fails tx.commit with 406 "partial tx completion"; the other publishes, returns and acks of the transaction are committed', async (t) => {
  const ch = await t.channel();
  const full = t.q('full');
  const open = t.q('open');
  const src = t.q('src');
  await ch.assertQueue(full, { ...Q, maxLength: 0, overflow: 'reject-publish' });
  await ch.assertQueue(open, Q);
  await ch.assertQueue(src, Q);
  await confirmOutcomes(t, src, ['m0', 'm1']);
  const c = await rawTx(t);
  const acked = await c.get(1, src, false);
  await c.get(1, src, false);
  c.method(1, 'basic.ack', { deliveryTag: (acked?.method.args as { deliveryTag: number }).deliveryTag, multiple: false });
  mark(c);
  c.publish(1, '', open, 'kept-1');
  c.publish(1, '', full, 'refused');
  c.publish(1, 'amq.direct', t.name('nowhere'), 'unroutable', {}, { mandatory: true });
  c.publish(1, '', open, 'kept-2');
  c.method(1, 'tx.commit', {});
  t.log('close', await c.nextClose());
  t.log('methods', methodsSince(c));
  t.log('returned', returned(c));
  t.log('open', t.bodies(await t.drainQueue(ch, open)));
  // m0's ack was committed; m1 (unacked) came back when the channel closed.
  t.log('src', t.bodies(await t.drainQueue(ch, src)));
});

test('tx-reject-publish-dlx-partial-completion', 'rabbit_channel: reject-publish-dlx refuses too: 406 "partial tx completion"', async (t) => {
  const ch = await t.channel();
  const full = t.q('full');
  await ch.assertQueue(full, { ...Q, maxLength: 0, overflow: 'reject-publish-dlx' });
  const c = await rawTx(t);
  c.publish(1, '', full, 'refused');
  c.method(1, 'tx.commit', {});
  t.log('close', await c.nextClose());
});

/** A raw requester consuming from amq.rabbitmq.reply-to, and the reply address a request of it carried. */
async function replyAddress(t: CaseContext): Promise<{ requester: RawClient; address: string }> {
  const requester = await t.raw();
  await requester.openChannel(1);
  requester.method(1, 'basic.consume', { queue: 'amq.rabbitmq.reply-to', consumerTag: '', noLocal: false, noAck: true, exclusive: false, noWait: false, arguments: {} });
  await requester.expect('basic.consume-ok');
  const ch = await t.channel();
  const q = t.q('requests');
  await ch.assertQueue(q, Q);
  requester.publish(1, '', q, 'request', { replyTo: 'amq.rabbitmq.reply-to' });
  const request = await t.waitFor(() => ch.get(q, { noAck: true }), 1000);
  const address = request ? (request.properties.replyTo as string) : 'missing';
  return { requester, address };
}

test('tx-direct-reply-at-publish', 'rabbitmq.com/direct-reply-to.html + rabbit_exchange:route: a reply is delivered when published, even in a transaction that is rolled back; a mandatory one is returned at tx.commit', async (t) => {
  const { requester, address } = await replyAddress(t);
  const c = await rawTx(t);
  mark(c);
  c.publish(1, '', address, 'first', {}, { mandatory: true });
  c.publish(1, '', address, 'second');
  await roundTrip(c);
  await requester.until(() => requester.messages.length >= 2, 1000);
  t.log('delivered-before-commit', requester.messages.map((m) => m.body.toString()));
  t.log('before-rollback', methodsSince(c));
  c.method(1, 'tx.rollback', {});
  await c.expect('tx.rollback-ok');
  c.publish(1, '', address, 'third', {}, { mandatory: true });
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  t.log('at-commit', methodsSince(c));
  t.log('returned', returned(c));
  await requester.until(() => requester.messages.length >= 3, 1000);
  t.log('delivered', requester.messages.map((m) => m.body.toString()));
});

test('confirm-direct-reply-mandatory', 'rabbit_exchange:route delivers a direct reply and routes it to no queue: a mandatory reply is delivered and also returned (then confirmed)', async (t) => {
  const { requester, address } = await replyAddress(t);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'confirm.select', { nowait: false });
  await c.expect('confirm.select-ok');
  mark(c);
  c.publish(1, '', address, 'reply', {}, { mandatory: true });
  await c.expect('basic.ack');
  await requester.until(() => requester.messages.length >= 1, 1000);
  t.log('methods', methodsSince(c));
  t.log('returned', returned(c));
  t.log('delivered', requester.messages.map((m) => m.body.toString()));
});

// --- acknowledgements in a transaction ---------------------------------------------------------

test('tx-ack-twice-unknown-tag', 'rabbit_channel collect_acks: an ack inside a transaction takes the tag at once; acking it again is 406 unknown delivery tag (at basic.ack)', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0']);
  const c = await rawTx(t);
  const m = await c.get(1, q, false);
  const tag = (m?.method.args as { deliveryTag: number }).deliveryTag;
  c.method(1, 'basic.ack', { deliveryTag: tag, multiple: false });
  c.method(1, 'basic.ack', { deliveryTag: tag, multiple: false });
  t.log('close', await c.nextClose());
});

test('tx-ack-rollback-then-commit', 'rabbit_channel tx.rollback: rolled-back acks put the tags back as unacked; acking them again and committing settles them', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0', 'm1']);
  const c = await rawTx(t);
  await c.get(1, q, false);
  const m1 = await c.get(1, q, false);
  const tag = (m1?.method.args as { deliveryTag: number }).deliveryTag;
  c.method(1, 'basic.ack', { deliveryTag: tag, multiple: true });
  c.method(1, 'tx.rollback', {});
  await c.expect('tx.rollback-ok');
  c.method(1, 'basic.ack', { deliveryTag: tag, multiple: true });
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  c.method(1, 'channel.close', { replyCode: 200, replyText: '', classId: 0, methodId: 0 });
  await c.expect('channel.close-ok');
  await t.step('count-after-close', ch.checkQueue(q), (r) => r.messageCount);
});

test('tx-reject-requeue-rolled-back', 'rabbit_channel tx.rollback: a rolled-back basic.reject requeue=true requeues nothing; basic.nack multiple with tag 0 then commit requeues', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0']);
  const c = await rawTx(t);
  const m = await c.get(1, q, false);
  c.method(1, 'basic.reject', { deliveryTag: (m?.method.args as { deliveryTag: number }).deliveryTag, requeue: true });
  c.method(1, 'tx.rollback', {});
  await c.expect('tx.rollback-ok');
  await t.step('count-after-rollback', ch.checkQueue(q), (r) => r.messageCount);
  c.method(1, 'basic.nack', { deliveryTag: 0, multiple: true, requeue: true });
  c.method(1, 'tx.commit', {});
  await c.expect('tx.commit-ok');
  await t.step('count-after-commit', ch.checkQueue(q), (r) => r.messageCount);
});

/** A transactional raw client consuming q with prefetch 1, after its first delivery. */
async function txConsumer(t: CaseContext, q: string): Promise<{ c: RawClient; first: number }> {
  const c = await rawTx(t);
  c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false });
  await c.expect('basic.qos-ok');
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'ct', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: {} });
  await c.expect('basic.consume-ok');
  const d = await c.expect('basic.deliver');
  return { c, first: d.deliveryTag };
}

test('tx-ack-credit-after-commit-ok', 'rabbit_channel: acks inside a transaction release prefetch credit only at tx.commit; with nothing published, commit-ok comes before the next delivery', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, Q);
  await confirmOutcomes(t, q, ['m0', 'm1']);
  const { c, first } = await txConsumer(t, q);
  c.method(1, 'basic.ack', { deliveryTag: first, multiple: false });
  await roundTrip(c);
  mark(c);
  await t.sleep(50);
  t.log('before-commit', methodsSince(c));
  c.method(1, 'tx.commit', {});
  await c.until(() => c.frames.slice(seen.get(c)).filter((f) => f.method?.name === 'basic.deliver' || f.method?.name === 'tx.commit-ok').length >= 2, 1000);
  t.log('at-commit', methodsSince(c));
});
