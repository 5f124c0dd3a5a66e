/** exchange.declare / delete / bind rules, auto-delete, internal exchanges, exchange-to-exchange bindings. */
import type { Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('exchanges');

const X: Options.AssertExchange = { durable: false, autoDelete: false, internal: false };

/** Publishes with confirms (so routing is done when it resolves) and reads back each queue's bodies. */
async function deliveredTo(t: CaseContext, queues: Record<string, string>, publish: (ch: import('amqplib').ConfirmChannel) => void): Promise<Record<string, string[]>> {
  const ch = await t.confirmChannel();
  publish(ch);
  await ch.waitForConfirms();
  const out: Record<string, string[]> = {};
  for (const [label, q] of Object.entries(queues)) out[label] = t.bodies(await t.drainQueue(ch, q));
  return out;
}

test('declare-each-type', 'spec 1.7.2.1 exchange.declare type; rabbitmq.com/tutorials/amqp-concepts.html#exchanges', async (t) => {
  const ch = await t.channel();
  for (const type of ['direct', 'fanout', 'topic', 'headers']) {
    await t.step(`declare-${type}`, ch.assertExchange(t.x(type), type, X));
    await t.step(`redeclare-${type}`, ch.assertExchange(t.x(type), type, X));
  }
});

test('declare-unknown-type', 'spec 1.7.2.1 exchange.declare rule "must be a known type"; RabbitMQ: 503 COMMAND_INVALID (connection)', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange(t.x(), 'no-such-type', X));
});

test('declare-amq-prefix', 'spec 1.7.2.1 exchange.declare rule "exchange names starting with amq. are reserved"; 403', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange(`amq.cf-${t.token}`, 'direct', X));
});

test('declare-amq-direct-again', 'spec 1.7.2.1: amq. names are reserved even for the predeclared exchanges', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange('amq.direct', 'direct', { durable: true }));
});

test('declare-default-exchange', 'spec 1.7.2.1; rabbitmq.com/tutorials/amqp-concepts.html#exchange-default', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange('', 'direct', { durable: true }));
});

test('passive-predeclared', 'spec 3.1.3.1 predeclared exchanges amq.direct, amq.fanout, amq.topic, amq.headers, amq.match', async (t) => {
  const ch = await t.channel();
  for (const x of ['amq.direct', 'amq.fanout', 'amq.topic', 'amq.headers', 'amq.match', 'amq.rabbitmq.trace']) await t.stepOk(x, ch.checkExchange(x));
});

test('passive-missing', 'spec 1.7.2.1 exchange.declare passive: "If set, and the exchange does not already exist, the server MUST raise a channel exception with reply code 404"', async (t) => {
  const ch = await t.channel();
  await t.step('check', ch.checkExchange(t.x()));
});

test('passive-ignores-type', 'spec 1.7.2.1 passive: "arguments other than the name are ignored" (raw exchange.declare passive with another type)', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', X);
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'exchange.declare', { exchange: x, type: 'fanout', passive: true, durable: true, autoDelete: true, internal: true, noWait: false, arguments: {} });
  t.log('reply', (await c.nextMethod(['exchange.declare-ok', 'channel.close', 'connection.close']))?.name ?? null);
});

for (const [what, first, second] of [
  ['type', { type: 'direct', o: X }, { type: 'fanout', o: X }],
  ['durable', { type: 'direct', o: X }, { type: 'direct', o: { ...X, durable: true } }],
  ['auto-delete', { type: 'direct', o: X }, { type: 'direct', o: { ...X, autoDelete: true } }],
  ['internal', { type: 'direct', o: X }, { type: 'direct', o: { ...X, internal: true } }],
  ['alternate-exchange', { type: 'direct', o: { ...X, alternateExchange: 'ae1' } }, { type: 'direct', o: { ...X, alternateExchange: 'ae2' } }],
  ['unknown-argument', { type: 'direct', o: { ...X, arguments: { 'x-foo': 'a' } } }, { type: 'direct', o: { ...X, arguments: { 'x-foo': 'b' } } }],
] as const) {
  test(`redeclare-different-${what}`, 'spec 1.7.2.1 exchange.declare rule "if the exchange exists with different properties, 406 PRECONDITION_FAILED"; RabbitMQ compares type, durable, auto-delete, internal and arguments', async (t) => {
    const ch = await t.channel();
    const x = t.x();
    await t.stepOk('declare', ch.assertExchange(x, first.type, first.o));
    await t.step('redeclare', ch.assertExchange(x, second.type, second.o));
  });
}

test('delete-missing', 'spec 1.7.2.3 exchange.delete; RabbitMQ 3.10: deleting a missing exchange succeeds', async (t) => {
  const ch = await t.channel();
  await t.stepOk('delete', ch.deleteExchange(t.x()));
});

test('delete-if-unused-with-binding', 'spec 1.7.2.3 exchange.delete if-unused: "If the exchange has queue bindings, 406 PRECONDITION_FAILED"', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, 'k');
  await t.step('delete-if-unused', ch.deleteExchange(x, { ifUnused: true }));
});

test('delete-if-unused-only-as-destination', 'spec 1.7.2.3 if-unused; rabbitmq.com/e2e.html (bindings to the exchange are not "use")', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  const dst = t.x('dst');
  await ch.assertExchange(src, 'fanout', X);
  await ch.assertExchange(dst, 'fanout', X);
  await ch.bindExchange(dst, src, '');
  await t.stepOk('delete-destination-if-unused', ch.deleteExchange(dst, { ifUnused: true }));
});

test('delete-if-unused-unbound', 'spec 1.7.2.3 if-unused', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', X);
  await t.stepOk('delete-if-unused', ch.deleteExchange(x, { ifUnused: true }));
  await t.step('check', ch.checkExchange(x));
});

test('delete-default-exchange', 'rabbitmq.com/tutorials/amqp-concepts.html#exchange-default: the default exchange cannot be deleted; 403', async (t) => {
  const ch = await t.channel();
  await t.step('delete', ch.deleteExchange(''));
});

test('delete-amq-direct', 'spec 3.1.3.1 predeclared exchanges; RabbitMQ: 403 ACCESS_REFUSED', async (t) => {
  const ch = await t.channel();
  await t.step('delete', ch.deleteExchange('amq.direct'));
});

test('delete-removes-bindings', 'spec 1.7.2.3 exchange.delete: "all queue bindings ... are cancelled"', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, 'k');
  await ch.deleteExchange(x);
  await ch.assertExchange(x, 'direct', X);
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(x, 'k', Buffer.from('after recreate'))));
});

test('bind-to-default-exchange', 'rabbitmq.com/tutorials/amqp-concepts.html#exchange-default: binding to the default exchange is not permitted; 403', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  await t.step('bind', ch.bindQueue(q, '', 'k'));
});

test('bind-missing-exchange', 'spec 1.8.2.3 queue.bind: "the exchange must exist"; 404', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  await t.step('bind', ch.bindQueue(q, t.x(), 'k'));
});

test('bind-missing-queue', 'spec 1.8.2.3 queue.bind: "the queue must exist"; 404', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', X);
  await t.step('bind', ch.bindQueue(t.q(), x, 'k'));
});

test('bind-both-missing', 'spec 1.8.2.3 queue.bind; which missing resource RabbitMQ names first', async (t) => {
  const ch = await t.channel();
  await t.step('bind', ch.bindQueue(t.q(), t.x(), 'k'));
});

test('bind-twice-is-idempotent', 'spec 1.8.2.3 queue.bind: "bindings ... are idempotent"', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await t.stepOk('bind', ch.bindQueue(q, x, 'k'));
  await t.stepOk('bind-again', ch.bindQueue(q, x, 'k'));
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(x, 'k', Buffer.from('once'))));
});

test('unbind-missing-binding', 'spec 1.8.2.7 queue.unbind; RabbitMQ 3.10: unbinding a binding that does not exist succeeds', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await t.stepOk('unbind', ch.unbindQueue(q, x, 'never-bound'));
});

test('unbind-missing-exchange', 'spec 1.8.2.7 queue.unbind: 404 when the exchange does not exist', async (t) => {
  const ch = await t.channel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  await t.step('unbind', ch.unbindQueue(q, t.x(), 'k'));
});

test('unbind-missing-queue', 'spec 1.8.2.7 queue.unbind: 404 when the queue does not exist', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', X);
  await t.step('unbind', ch.unbindQueue(t.q(), x, 'k'));
});

test('unbind-stops-routing', 'spec 1.8.2.7 queue.unbind', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, 'a');
  await ch.bindQueue(q, x, 'b');
  await ch.unbindQueue(q, x, 'a');
  t.log('delivered', await deliveredTo(t, { q }, (c) => {
    c.publish(x, 'a', Buffer.from('to a'));
    c.publish(x, 'b', Buffer.from('to b'));
  }));
});

test('internal-publish-refused', 'rabbitmq.com/amqp-0-9-1-reference.html#exchange.declare.internal: "cannot be published to directly"; 403', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'fanout', { ...X, internal: true });
  ch.publish(x, '', Buffer.from('x'));
  t.log('close', await t.closeOf(ch));
});

test('internal-reachable-through-e2e', 'rabbitmq.com/e2e.html; internal exchanges receive from other exchanges', async (t) => {
  const ch = await t.channel();
  const front = t.x('front');
  const inner = t.x('inner');
  const q = t.q();
  await ch.assertExchange(front, 'fanout', X);
  await ch.assertExchange(inner, 'fanout', { ...X, internal: true });
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(inner, front, '');
  await ch.bindQueue(q, inner, '');
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(front, '', Buffer.from('through'))));
});

test('auto-delete-after-last-unbind', 'spec 1.7.2.1 auto-delete: "deleted when all queues have finished using it"; RabbitMQ: when its last binding goes', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', { ...X, autoDelete: true });
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, 'a');
  await ch.bindQueue(q, x, 'b');
  await ch.unbindQueue(q, x, 'a');
  await t.stepOk('check-after-first-unbind', ch.checkExchange(x));
  await ch.unbindQueue(q, x, 'b');
  await t.step('check-after-last-unbind', ch.checkExchange(x));
});

test('auto-delete-never-bound-stays', 'rabbitmq.com/exchanges.html auto-delete: an exchange that never had a binding is not deleted', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  await ch.assertExchange(x, 'direct', { ...X, autoDelete: true });
  await t.stepOk('check', ch.checkExchange(x));
});

test('auto-delete-after-queue-delete', 'spec 1.7.2.1 auto-delete; deleting the bound queue removes the last binding', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'fanout', { ...X, autoDelete: true });
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, '');
  await ch.deleteQueue(q);
  await t.step('check', ch.checkExchange(x));
});

test('auto-delete-e2e-source', 'rabbitmq.com/e2e.html: an auto-delete exchange goes when its last exchange binding goes', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  const dst = t.x('dst');
  await ch.assertExchange(src, 'fanout', { ...X, autoDelete: true });
  await ch.assertExchange(dst, 'fanout', X);
  await ch.bindExchange(dst, src, '');
  await ch.unbindExchange(dst, src, '');
  await t.step('check-source', ch.checkExchange(src));
});

test('e2e-routes', 'rabbitmq.com/e2e.html', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  const dst = t.x('dst');
  const q = t.q();
  await ch.assertExchange(src, 'topic', X);
  await ch.assertExchange(dst, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(dst, src, 'a.*');
  await ch.bindQueue(q, dst, 'a.b');
  t.log('delivered', await deliveredTo(t, { q }, (c) => {
    c.publish(src, 'a.b', Buffer.from('a.b'));
    c.publish(src, 'a.c', Buffer.from('a.c matches e2e but not queue binding'));
    c.publish(src, 'x.b', Buffer.from('x.b'));
  }));
});

test('e2e-unbind', 'rabbitmq.com/e2e.html; spec-extension exchange.unbind', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  const dst = t.x('dst');
  const q = t.q();
  await ch.assertExchange(src, 'fanout', X);
  await ch.assertExchange(dst, 'fanout', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(dst, src, '');
  await ch.bindQueue(q, dst, '');
  await t.stepOk('unbind', ch.unbindExchange(dst, src, ''));
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(src, '', Buffer.from('x'))));
});

test('e2e-cycle-delivers-once', 'rabbitmq.com/e2e.html: "messages are delivered at most once to a queue", even with binding cycles', async (t) => {
  const ch = await t.channel();
  const a = t.x('a');
  const b = t.x('b');
  const q = t.q();
  await ch.assertExchange(a, 'fanout', X);
  await ch.assertExchange(b, 'fanout', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(b, a, '');
  await ch.bindExchange(a, b, '');
  await ch.bindQueue(q, a, '');
  await ch.bindQueue(q, b, '');
  t.log('delivered', await deliveredTo(t, { q }, (c) => {
    c.publish(a, '', Buffer.from('via a'));
    c.publish(b, '', Buffer.from('via b'));
  }));
});

test('e2e-diamond-delivers-once', 'rabbitmq.com/e2e.html: a queue reachable by several paths gets one copy', async (t) => {
  const ch = await t.channel();
  const top = t.x('top');
  const l = t.x('l');
  const r = t.x('r');
  const q = t.q();
  for (const x of [top, l, r]) await ch.assertExchange(x, 'fanout', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(l, top, '');
  await ch.bindExchange(r, top, '');
  await ch.bindQueue(q, l, '');
  await ch.bindQueue(q, r, '');
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(top, '', Buffer.from('one copy'))));
});

test('e2e-self-binding', 'rabbitmq.com/e2e.html: an exchange bound to itself', async (t) => {
  const ch = await t.channel();
  const a = t.x('a');
  const q = t.q();
  await ch.assertExchange(a, 'fanout', X);
  await ch.assertQueue(q, { durable: false });
  await t.stepOk('bind-self', ch.bindExchange(a, a, ''));
  await ch.bindQueue(q, a, '');
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(a, '', Buffer.from('self'))));
});

test('e2e-missing-destination', 'rabbitmq.com/e2e.html; exchange.bind: 404 when an exchange is missing', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  await ch.assertExchange(src, 'fanout', X);
  await t.step('bind', ch.bindExchange(t.x('dst'), src, ''));
});

test('e2e-missing-source', 'rabbitmq.com/e2e.html; exchange.bind: 404 when an exchange is missing', async (t) => {
  const ch = await t.channel();
  const dst = t.x('dst');
  await ch.assertExchange(dst, 'fanout', X);
  await t.step('bind', ch.bindExchange(dst, t.x('src'), ''));
});

test('e2e-destination-default-exchange', 'rabbitmq.com/e2e.html; the default exchange cannot be bound', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  await ch.assertExchange(src, 'fanout', X);
  await t.step('bind', ch.bindExchange('', src, ''));
});

test('delete-destination-exchange-removes-e2e', 'rabbitmq.com/e2e.html: deleting an exchange removes bindings where it is the destination', async (t) => {
  const ch = await t.channel();
  const src = t.x('src');
  const dst = t.x('dst');
  const q = t.q();
  await ch.assertExchange(src, 'fanout', X);
  await ch.assertExchange(dst, 'fanout', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindExchange(dst, src, '');
  await ch.deleteExchange(dst);
  await ch.assertExchange(dst, 'fanout', X);
  await ch.bindQueue(q, dst, '');
  t.log('delivered', await deliveredTo(t, { q }, (c) => c.publish(src, '', Buffer.from('old e2e binding is gone'))));
  await t.stepOk('source-now-unused', ch.deleteExchange(src, { ifUnused: true }));
});

test('declare-nowait', 'spec 1.7.2.1 no-wait: the server sends no declare-ok', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  const x = t.x();
  c.method(1, 'exchange.declare', { exchange: x, type: 'direct', passive: false, durable: false, autoDelete: false, internal: false, noWait: true, arguments: {} });
  c.method(1, 'exchange.declare', { exchange: x, type: 'direct', passive: true, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  t.log('replies', [(await c.nextMethod([], 1500))?.name ?? null]);
  await t.sleep(50);
  t.log('more', c.drain());
});

test('passive-nowait-missing', 'spec 1.7.2.1 passive + no-wait: the 404 still closes the channel', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'exchange.declare', { exchange: t.name('missing'), type: 'direct', passive: true, durable: false, autoDelete: false, internal: false, noWait: true, arguments: {} });
  t.log('outcome', await c.outcome());
});

test('declare-consistent-hash-type', 'github.com/rabbitmq/rabbitmq-server/tree/v3.10.x/deps/rabbitmq_consistent_hash_exchange', async (t) => {
  const ch = await t.channel();
  await t.step('declare', ch.assertExchange(t.x(), 'x-consistent-hash', X));
});

test('declare-empty-type', 'spec 1.7.2.1 exchange.declare type', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'exchange.declare', { exchange: t.x(), type: '', passive: false, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  t.log('outcome', await c.outcome());
});

test('redeclare-type-quoted-atom', 'rabbit_exchange:assert_equivalence: the types are printed as Erlang atoms, quoted where their names need it (\'x-consistent-hash\')', async (t) => {
  for (const [first, again] of [['direct', 'x-consistent-hash'], ['x-consistent-hash', 'topic']] as const) {
    const ch = await t.channel();
    const x = t.x(first);
    await ch.assertExchange(x, first, { durable: false });
    await t.step(`redeclare ${first} as ${again}`, ch.assertExchange(x, again, { durable: false }), () => true, ch);
    const cleanup = await t.channel();
    await cleanup.deleteExchange(x);
  }
});
