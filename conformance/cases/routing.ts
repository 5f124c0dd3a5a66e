/**
 * Routing: default/direct/fanout/topic/headers exchanges, mandatory returns, alternate
 * exchanges, sender-selected distribution (CC/BCC) and x-consistent-hash.
 */
import type { ConfirmChannel, Message, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('routing');

const X: Options.AssertExchange = { durable: false, autoDelete: false, internal: false };

interface Pub {
  rk: string;
  body?: string;
  options?: Options.Publish;
  exchange?: string;
}

/**
 * Declares an exchange of type with bindings (queue label, binding key, arguments), publishes
 * with confirms and returns what each queue got, in order.
 */
async function route(
  t: CaseContext,
  type: string,
  bindings: Array<[string, string, Record<string, unknown>?]>,
  pubs: Pub[],
  xOpts: Options.AssertExchange = X,
): Promise<Record<string, string[]>> {
  const ch = await t.confirmChannel();
  const x = t.x();
  await ch.assertExchange(x, type, xOpts);
  const queues = new Map<string, string>();
  for (const [label, key, args] of bindings) {
    if (!queues.has(label)) {
      const q = t.q(label);
      await ch.assertQueue(q, { durable: false });
      queues.set(label, q);
    }
    await ch.bindQueue(queues.get(label) as string, x, key, args);
  }
  for (const p of pubs) ch.publish(p.exchange ?? x, p.rk, Buffer.from(p.body ?? p.rk), p.options ?? {});
  await ch.waitForConfirms();
  const out: Record<string, string[]> = {};
  for (const [label, q] of queues) out[label] = t.bodies(await t.drainQueue(ch, q));
  return out;
}

const keys = (...rks: string[]): Pub[] => rks.map((rk) => ({ rk, body: rk === '' ? '(empty)' : rk }));

// --- default, direct, fanout ---------------------------------------------------------------

test('default-exchange-by-queue-name', 'spec 3.1.3.1 default exchange: every queue is bound by its name', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.publish('', q, Buffer.from('direct to queue'));
  ch.publish('', q.toUpperCase(), Buffer.from('wrong case'));
  await ch.waitForConfirms();
  t.log('got', t.bodies(await t.drainQueue(ch, q)));
});

test('publish-missing-exchange', 'spec 1.8.2.5 basic.publish exchange: "if the exchange does not exist, 404 NOT_FOUND"', async (t) => {
  const ch = await t.channel();
  ch.publish(t.x(), 'k', Buffer.from('x'));
  t.log('close', await t.closeOf(ch));
});

test('publish-amq-default-name', 'rabbitmq.com/amqp-0-9-1-reference.html: the default exchange is named "" (amq.default is an alias in 3.10)', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.publish('amq.default', q, Buffer.from('via amq.default'));
  await ch.waitForConfirms().catch(() => {});
  t.log('close', await t.closeOf(ch, 200));
  const ch2 = await t.channel();
  t.log('got', t.bodies(await t.drainQueue(ch2, q)));
});

test('direct-exact-match', 'spec 3.1.3.3 direct exchange: routing key equals binding key', async (t) => {
  t.log('routed', await route(t, 'direct', [['q1', 'key'], ['q2', 'Key'], ['q3', '']], keys('key', 'Key', 'KEY', '', 'key.x')));
});

test('direct-several-queues-same-key', 'spec 3.1.3.3 direct exchange; each matching queue gets a copy', async (t) => {
  t.log('routed', await route(t, 'direct', [['q1', 'k'], ['q2', 'k'], ['q3', 'other']], keys('k', 'other')));
});

test('direct-one-queue-two-keys', 'spec 3.1.3.3; a queue bound with several keys', async (t) => {
  t.log('routed', await route(t, 'direct', [['q1', 'a'], ['q1', 'b']], keys('a', 'b', 'c')));
});

test('fanout-ignores-key', 'spec 3.1.3.2 fanout exchange: routes to all bound queues regardless of routing key', async (t) => {
  t.log('routed', await route(t, 'fanout', [['q1', 'x'], ['q2', ''], ['q2', 'y']], keys('anything', '')));
});

// --- topic ---------------------------------------------------------------------------------

test('topic-star', 'spec 3.1.3.4 topic exchange: "*" matches exactly one word', async (t) => {
  t.log('routed', await route(t, 'topic', [['star', '*'], ['a-star', 'a.*'], ['star-b', '*.b'], ['a-star-c', 'a.*.c']], keys('', 'a', 'b', 'a.b', 'x.b', 'a.b.c', 'a.b.b')));
});

test('topic-hash', 'spec 3.1.3.4 topic exchange: "#" matches zero or more words', async (t) => {
  t.log('routed', await route(t, 'topic', [['hash', '#'], ['a-hash', 'a.#'], ['hash-c', '#.c'], ['a-hash-c', 'a.#.c']], keys('', 'a', 'c', 'a.c', 'a.b.c', 'a.b.b.c', 'b.a')));
});

test('topic-empty-words', 'spec 3.1.3.4; RabbitMQ splits routing keys on every dot, so empty words exist', async (t) => {
  t.log('routed', await route(t, 'topic', [['a--b', 'a..b'], ['dot-a', '.a'], ['a-dot', 'a.'], ['star-star', '*.*'], ['hash-empty', '#.']], keys('a..b', 'a.b', '.a', 'a.', 'a', '.', '..')));
});

test('topic-hash-star-combinations', 'spec 3.1.3.4: "#" and "*" combined', async (t) => {
  t.log('routed', await route(t, 'topic', [['hash-star', '#.*'], ['star-hash', '*.#'], ['hash-star-hash', '#.*.#'], ['hash-hash', '#.#']], keys('', 'a', 'a.b', 'a.b.c')));
});

test('topic-literal-wildcards-in-key', 'spec 3.1.3.4: wildcards are special only in binding keys', async (t) => {
  t.log('routed', await route(t, 'topic', [['lit-star', 'a.*'], ['lit-hash', 'b.#'], ['exact', 'c.*']], keys('a.*', 'b.#', 'c.#', '*', '#')));
});

test('topic-case-and-partial-words', 'spec 3.1.3.4: words match whole and case-sensitively', async (t) => {
  t.log('routed', await route(t, 'topic', [['q', 'stock.usd.*'], ['p', 'stock*']], keys('stock.usd.nyse', 'Stock.usd.nyse', 'stock.usdx.nyse', 'stock', 'stocks', 'stock*')));
});

test('topic-overlapping-bindings-one-copy', 'spec 3.1.3.4; a queue matched by several bindings gets one copy', async (t) => {
  t.log('routed', await route(t, 'topic', [['q', 'a.*'], ['q', '#'], ['q', 'a.b'], ['q', '*.b']], keys('a.b', 'x.y')));
});

test('topic-unbind', 'spec 1.8.2.7 queue.unbind on a topic exchange', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'topic', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, 'a.#');
  await ch.bindQueue(q, x, '*.b');
  await ch.unbindQueue(q, x, 'a.#');
  for (const rk of ['a.b', 'a.c', 'x.b']) ch.publish(x, rk, Buffer.from(rk));
  await ch.waitForConfirms();
  t.log('got', t.bodies(await t.drainQueue(ch, q)));
});

test('topic-many-words', 'spec 3.1.3.4; long keys with many words', async (t) => {
  const long = Array.from({ length: 40 }, (_, i) => `w${i}`).join('.');
  t.log('routed', await route(t, 'topic', [['first-last', 'w0.#.w39'], ['hash-star-39', '#.*.w38.*'], ['wrong', 'w0.*.w39']], [{ rk: long, body: 'long' }]));
});

test('amq-topic-predeclared', 'spec 3.1.3.1 amq.topic', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, 'amq.topic', `${t.token}.#`);
  ch.publish('amq.topic', `${t.token}.a.b`, Buffer.from('via amq.topic'));
  await ch.waitForConfirms();
  t.log('got', t.bodies(await t.drainQueue(ch, q)));
});

// --- headers -------------------------------------------------------------------------------

const H = (headers: Record<string, unknown>, body: string): Pub => ({ rk: 'ignored', body, options: { headers } });

test('headers-all-and-any', 'spec 3.1.3.5 headers exchange: x-match all / any', async (t) => {
  t.log('routed', await route(t, 'headers', [['all', '', { 'x-match': 'all', a: '1', b: '2' }], ['any', '', { 'x-match': 'any', a: '1', b: '2' }]], [
    H({ a: '1', b: '2' }, 'a and b'),
    H({ a: '1' }, 'only a'),
    H({ b: '2', c: '3' }, 'b and c'),
    H({ a: '2', b: '1' }, 'swapped values'),
    H({}, 'none'),
  ]));
});

test('headers-default-x-match-is-all', 'spec 3.1.3.5: x-match defaults to all', async (t) => {
  t.log('routed', await route(t, 'headers', [['q', '', { a: '1', b: '2' }]], [H({ a: '1', b: '2' }, 'both'), H({ a: '1' }, 'one')]));
});

test('headers-empty-binding-matches-all', 'spec 3.1.3.5; a binding with no headers to match', async (t) => {
  t.log('routed', await route(t, 'headers', [['all', '', { 'x-match': 'all' }], ['any', '', { 'x-match': 'any' }], ['none', '', {}]], [H({ a: '1' }, 'with headers'), { rk: 'k', body: 'no headers' }]));
});

test('headers-value-presence-only-with-void', 'rabbitmq.com/tutorials/amqp-concepts.html#exchange-headers; a void binding value matches any value? (RabbitMQ: matches on key presence for void)', async (t) => {
  t.log('routed', await route(t, 'headers', [['void', '', { 'x-match': 'all', a: null }]], [H({ a: 'x' }, 'a=x'), H({ a: null }, 'a=void'), H({ b: 'x' }, 'no a')]));
});

test('headers-types-matter', 'rabbitmq.com/amqp-0-9-1-errata.html#section_3 field types; RabbitMQ compares header values with their types', async (t) => {
  t.log('routed', await route(t, 'headers', [['str', '', { 'x-match': 'all', a: '1' }], ['int', '', { 'x-match': 'all', a: 1 }], ['int32', '', { 'x-match': 'all', a: { '!': 'int', value: 1 } }], ['bool', '', { 'x-match': 'all', a: true }]], [
    H({ a: '1' }, 'string 1'),
    H({ a: 1 }, 'byte 1'),
    H({ a: { '!': 'int', value: 1 } }, 'int32 1'),
    H({ a: { '!': 'long', value: 1 } }, 'int64 1'),
    H({ a: true }, 'bool true'),
    H({ a: 1.0 }, 'one point zero'),
  ]));
});

test('headers-x-keys-ignored', 'rabbitmq.com/exchanges.html#headers: binding arguments starting with x- are not matched', async (t) => {
  t.log('routed', await route(t, 'headers', [['all', '', { 'x-match': 'all', 'x-tag': 'v', a: '1' }], ['any', '', { 'x-match': 'any', 'x-tag': 'v' }]], [H({ a: '1' }, 'a only'), H({ 'x-tag': 'v', a: '1' }, 'x-tag and a'), H({ 'x-tag': 'v' }, 'x-tag only')]));
});

test('headers-all-with-x-and-any-with-x', 'rabbitmq.com/exchanges.html#headers: x-match all-with-x / any-with-x (3.10+)', async (t) => {
  t.log('routed', await route(t, 'headers', [['all-x', '', { 'x-match': 'all-with-x', 'x-tag': 'v', a: '1' }], ['any-x', '', { 'x-match': 'any-with-x', 'x-tag': 'v', a: '9' }]], [H({ a: '1' }, 'a only'), H({ 'x-tag': 'v', a: '1' }, 'x-tag and a'), H({ 'x-tag': 'v' }, 'x-tag only')]));
});

test('headers-invalid-x-match', 'rabbitmq.com/exchanges.html#headers; an unknown x-match value is refused (406)', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'headers', X);
  await ch.assertQueue(q, { durable: false });
  await t.step('bind', ch.bindQueue(q, x, '', { 'x-match': 'some' }));
});

test('headers-x-match-wrong-type', 'rabbitmq.com/exchanges.html#headers; x-match must be a string', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'headers', X);
  await ch.assertQueue(q, { durable: false });
  await t.step('bind', ch.bindQueue(q, x, '', { 'x-match': 1 }));
});

test('headers-nested-and-array-values', 'spec 3.1.3.5; table and array header values compared whole', async (t) => {
  t.log('routed', await route(t, 'headers', [['arr', '', { 'x-match': 'all', a: ['x', 'y'] }], ['tbl', '', { 'x-match': 'all', t: { k: 'v' } }]], [H({ a: ['x', 'y'] }, 'same array'), H({ a: ['y', 'x'] }, 'reordered array'), H({ t: { k: 'v' } }, 'same table'), H({ t: { k: 'w' } }, 'other table')]));
});

test('headers-routing-key-ignored', 'spec 3.1.3.5: the headers exchange ignores the routing key', async (t) => {
  t.log('routed', await route(t, 'headers', [['q', 'some-key', { 'x-match': 'any', a: '1' }]], [{ rk: 'other', body: 'other key', options: { headers: { a: '1' } } }]));
});

test('headers-unbind-with-arguments', 'spec 1.8.2.7 queue.unbind: the binding is identified by its arguments too', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'headers', X);
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x, '', { 'x-match': 'any', a: '1' });
  await ch.bindQueue(q, x, '', { 'x-match': 'any', b: '1' });
  await ch.unbindQueue(q, x, '', { 'x-match': 'any', a: '1' });
  ch.publish(x, '', Buffer.from('a'), { headers: { a: '1' } });
  ch.publish(x, '', Buffer.from('b'), { headers: { b: '1' } });
  await ch.waitForConfirms();
  t.log('got', t.bodies(await t.drainQueue(ch, q)));
});

// --- mandatory -----------------------------------------------------------------------------

async function withReturns(_t: CaseContext, ch: ConfirmChannel): Promise<Message[]> {
  const returned: Message[] = [];
  ch.on('return', (m: Message) => returned.push(m));
  return returned;
}

test('mandatory-unroutable-returned', 'spec 1.8.2.5 basic.publish mandatory: unroutable messages are returned with 312 NO_ROUTE', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const x = t.x();
  await ch.assertExchange(x, 'direct', X);
  ch.publish(x, 'nowhere', Buffer.from('returned body'), { mandatory: true, contentType: 'text/plain', headers: { h: 'v' }, messageId: 'm1' });
  await ch.waitForConfirms();
  t.log('returns', returned.map((m) => t.msg(m, { props: true })));
});

test('mandatory-routable-not-returned', 'spec 1.8.2.5 mandatory', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.publish('', q, Buffer.from('routed'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returns', returned.length);
});

test('mandatory-default-exchange-missing-queue', 'spec 1.8.2.5 mandatory with the default exchange', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  ch.publish('', t.name('no-such-queue'), Buffer.from('nobody'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returns', returned.map((m) => t.msg(m)));
});

test('not-mandatory-unroutable-dropped', 'spec 1.8.2.5: without mandatory an unroutable message is dropped silently', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const x = t.x();
  await ch.assertExchange(x, 'fanout', X);
  ch.publish(x, '', Buffer.from('dropped'));
  await ch.waitForConfirms();
  t.log('returns', returned.length);
  t.log('channel-open', t.isOpen(ch));
});

test('mandatory-return-before-ack', 'rabbitmq.com/confirms.html#when-publishes-are-confirmed: basic.return is sent before basic.ack', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'confirm.select', { nowait: false });
  await c.expect('confirm.select-ok');
  c.publish(1, '', t.name('nowhere'), 'r', {}, { mandatory: true });
  await c.until(() => c.frames.some((f) => f.method?.name === 'basic.ack'));
  t.log('frames', c.drain().filter((f) => (f as { ch: number }).ch === 1));
});

// --- alternate exchanges -------------------------------------------------------------------

test('ae-unroutable-goes-to-ae', 'rabbitmq.com/ae.html', async (t) => {
  const ch = await t.confirmChannel();
  const ae = t.x('ae');
  const x = t.x('main');
  const q = t.q('main');
  const aq = t.q('ae');
  await ch.assertExchange(ae, 'fanout', X);
  await ch.assertExchange(x, 'direct', { ...X, alternateExchange: ae });
  await ch.assertQueue(q, { durable: false });
  await ch.assertQueue(aq, { durable: false });
  await ch.bindQueue(q, x, 'known');
  await ch.bindQueue(aq, ae, '');
  ch.publish(x, 'known', Buffer.from('routed normally'));
  ch.publish(x, 'unknown', Buffer.from('to the AE'));
  await ch.waitForConfirms();
  t.log('main', t.bodies(await t.drainQueue(ch, q)));
  const viaAe = await t.drainQueue(ch, aq);
  t.log('ae', viaAe.map((m) => t.msg(m, { tag: false })));
});

test('ae-chain', 'rabbitmq.com/ae.html: an alternate exchange may have its own alternate exchange', async (t) => {
  const ch = await t.confirmChannel();
  const x3 = t.x('x3');
  const x2 = t.x('x2');
  const x1 = t.x('x1');
  const q = t.q();
  await ch.assertExchange(x3, 'fanout', X);
  await ch.assertExchange(x2, 'direct', { ...X, alternateExchange: x3 });
  await ch.assertExchange(x1, 'direct', { ...X, alternateExchange: x2 });
  await ch.assertQueue(q, { durable: false });
  await ch.bindQueue(q, x3, '');
  ch.publish(x1, 'k', Buffer.from('through two AEs'));
  await ch.waitForConfirms();
  t.log('got', (await t.drainQueue(ch, q)).map((m) => t.msg(m, { tag: false })));
});

test('ae-cycle', 'rabbitmq.com/ae.html: alternate exchange cycles are detected', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const a = t.x('a');
  const b = t.x('b');
  await ch.assertExchange(a, 'direct', { ...X, alternateExchange: b });
  await ch.assertExchange(b, 'direct', { ...X, alternateExchange: a });
  ch.publish(a, 'k', Buffer.from('cycle'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returns', returned.map((m) => t.msg(m)));
});

test('ae-missing', 'rabbitmq.com/ae.html: an alternate exchange that does not exist', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const x = t.x();
  await ch.assertExchange(x, 'direct', { ...X, alternateExchange: t.name('missing-ae') });
  ch.publish(x, 'k', Buffer.from('nowhere'), { mandatory: true });
  ch.publish(x, 'k', Buffer.from('nowhere, not mandatory'));
  await ch.waitForConfirms();
  t.log('returns', returned.map((m) => t.msg(m)));
  t.log('channel-open', t.isOpen(ch));
});

test('ae-mandatory-routed-by-ae', 'rabbitmq.com/ae.html: a message routed by the AE counts as routed (no return)', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const ae = t.x('ae');
  const x = t.x('main');
  const aq = t.q('ae');
  await ch.assertExchange(ae, 'fanout', X);
  await ch.assertExchange(x, 'direct', { ...X, alternateExchange: ae });
  await ch.assertQueue(aq, { durable: false });
  await ch.bindQueue(aq, ae, '');
  ch.publish(x, 'k', Buffer.from('via ae'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returns', returned.length);
  t.log('ae', t.bodies(await t.drainQueue(ch, aq)));
});

test('ae-mandatory-ae-unroutable', 'rabbitmq.com/ae.html + spec 1.8.2.5 mandatory: unroutable in the AE too is returned', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const ae = t.x('ae');
  const x = t.x('main');
  await ch.assertExchange(ae, 'direct', X);
  await ch.assertExchange(x, 'direct', { ...X, alternateExchange: ae });
  ch.publish(x, 'k', Buffer.from('nowhere'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returns', returned.map((m) => t.msg(m)));
});

test('ae-internal', 'rabbitmq.com/ae.html; an internal exchange can serve as AE', async (t) => {
  const ch = await t.confirmChannel();
  const ae = t.x('ae');
  const x = t.x('main');
  const aq = t.q('ae');
  await ch.assertExchange(ae, 'fanout', { ...X, internal: true });
  await ch.assertExchange(x, 'direct', { ...X, alternateExchange: ae });
  await ch.assertQueue(aq, { durable: false });
  await ch.bindQueue(aq, ae, '');
  ch.publish(x, 'k', Buffer.from('internal ae'));
  await ch.waitForConfirms();
  t.log('ae', t.bodies(await t.drainQueue(ch, aq)));
});

test('ae-on-fanout-without-bindings', 'rabbitmq.com/ae.html', async (t) => {
  const ch = await t.confirmChannel();
  const ae = t.x('ae');
  const x = t.x('main');
  const aq = t.q('ae');
  await ch.assertExchange(ae, 'topic', X);
  await ch.assertExchange(x, 'fanout', { ...X, alternateExchange: ae });
  await ch.assertQueue(aq, { durable: false });
  await ch.bindQueue(aq, ae, 'a.*');
  ch.publish(x, 'a.b', Buffer.from('a.b'));
  ch.publish(x, 'c.d', Buffer.from('c.d'));
  await ch.waitForConfirms();
  t.log('ae', t.bodies(await t.drainQueue(ch, aq)));
});

// --- sender-selected distribution (CC / BCC) -----------------------------------------------

async function ccCase(t: CaseContext, headers: Record<string, unknown>): Promise<void> {
  const ch = await t.confirmChannel();
  const x = t.x();
  const qs: Array<[string, string]> = [];
  await ch.assertExchange(x, 'direct', X);
  for (const k of ['a', 'b', 'c']) {
    const q = t.q(k);
    qs.push([k, q]);
    await ch.assertQueue(q, { durable: false });
    await ch.bindQueue(q, x, k);
  }
  ch.publish(x, 'a', Buffer.from('cc'), { headers });
  await t.stepOk('confirmed', ch.waitForConfirms(), ch);
  const reader = t.isOpen(ch) ? ch : await t.channel();
  for (const [label, q] of qs) {
    const ms = await t.drainQueue(reader, q);
    t.log(label, ms.map((m) => ({ body: m.content.toString(), routingKey: m.fields.routingKey, headers: t.typedHeaders(reader, m) })));
  }
}

test('cc-array', 'rabbitmq.com/sender-selected.html: CC adds routing keys', async (t) => {
  await ccCase(t, { CC: ['b', 'c'] });
});

test('cc-string', 'rabbitmq.com/sender-selected.html: CC "must be an array of longstr"', async (t) => {
  await ccCase(t, { CC: 'b' });
});

test('cc-number', 'rabbitmq.com/sender-selected.html: CC of the wrong type', async (t) => {
  await ccCase(t, { CC: 7 });
});

test('cc-array-with-number', 'rabbitmq.com/sender-selected.html: CC array holding a non-string', async (t) => {
  await ccCase(t, { CC: [7, 'b'] });
});

test('cc-lowercase-not-special', 'rabbitmq.com/sender-selected.html: the header names are CC and BCC exactly', async (t) => {
  await ccCase(t, { cc: ['b'], bcc: ['c'] });
});

test('bcc-stripped', 'rabbitmq.com/sender-selected.html: "the BCC header is removed"', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  const qa = t.q('a');
  const qb = t.q('b');
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(qa, { durable: false });
  await ch.assertQueue(qb, { durable: false });
  await ch.bindQueue(qa, x, 'a');
  await ch.bindQueue(qb, x, 'b');
  ch.publish(x, 'a', Buffer.from('bcc'), { headers: { BCC: ['b'], other: 'kept' } });
  await ch.waitForConfirms();
  for (const [label, q] of [['a', qa], ['b', qb]] as const) {
    const ms = await t.drainQueue(ch, q);
    t.log(label, ms.map((m) => ({ body: m.content.toString(), routingKey: m.fields.routingKey, headers: t.typedHeaders(ch, m) })));
  }
});

test('cc-and-bcc-together', 'rabbitmq.com/sender-selected.html', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  const queues: Record<string, string> = {};
  await ch.assertExchange(x, 'topic', X);
  for (const k of ['a', 'b', 'c']) {
    queues[k] = t.q(k);
    await ch.assertQueue(queues[k] as string, { durable: false });
    await ch.bindQueue(queues[k] as string, x, `${k}.*`);
  }
  ch.publish(x, 'a.1', Buffer.from('m'), { headers: { CC: ['b.1'], BCC: ['c.1', 'b.2'] } });
  await ch.waitForConfirms();
  for (const [k, q] of Object.entries(queues)) {
    const ms = await t.drainQueue(ch, q);
    t.log(k, ms.map((m) => ({ body: m.content.toString(), routingKey: m.fields.routingKey, headers: t.typedHeaders(ch, m) })));
  }
});

test('cc-counts-for-mandatory', 'rabbitmq.com/sender-selected.html + spec 1.8.2.5: a message routed only through CC is not returned', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  ch.publish('', t.name('nowhere'), Buffer.from('cc to queue'), { mandatory: true, headers: { CC: [q] } });
  await ch.waitForConfirms();
  t.log('returns', returned.length);
  t.log('got', t.bodies(await t.drainQueue(ch, q)));
});

test('cc-on-fanout', 'rabbitmq.com/sender-selected.html: CC keys go through the same exchange', async (t) => {
  t.log('routed', await route(t, 'fanout', [['q1', ''], ['q2', '']], [{ rk: 'x', body: 'fanout with cc', options: { headers: { CC: ['y', 'z'] } } }]));
});

// --- x-consistent-hash ---------------------------------------------------------------------

test('consistent-hash-distribution', 'github.com/rabbitmq/rabbitmq-server/tree/v3.10.x/deps/rabbitmq_consistent_hash_exchange: routing key hashed onto weighted buckets', async (t) => {
  const pubs = Array.from({ length: 60 }, (_, i) => ({ rk: `key-${i}`, body: String(i) }));
  t.log('routed', await route(t, 'x-consistent-hash', [['w1', '1'], ['w2', '2'], ['w3', '3']], pubs));
});

test('consistent-hash-same-key-same-queue', 'rabbitmq_consistent_hash_exchange README: the same routing key always goes to the same queue', async (t) => {
  const pubs = Array.from({ length: 12 }, (_, i) => ({ rk: i % 2 ? 'odd-key' : 'even-key', body: String(i) }));
  t.log('routed', await route(t, 'x-consistent-hash', [['a', '5'], ['b', '5'], ['c', '5']], pubs));
});

test('consistent-hash-header', 'rabbitmq_consistent_hash_exchange README: hash-header argument', async (t) => {
  const pubs = Array.from({ length: 30 }, (_, i) => ({ rk: 'same', body: String(i), options: { headers: { h: `v${i}` } } }));
  t.log('routed', await route(t, 'x-consistent-hash', [['a', '1'], ['b', '1']], pubs, { ...X, arguments: { 'hash-header': 'h' } }));
});

test('consistent-hash-property', 'rabbitmq_consistent_hash_exchange README: hash-property argument (message_id)', async (t) => {
  const pubs = Array.from({ length: 30 }, (_, i) => ({ rk: 'same', body: String(i), options: { messageId: `id-${i}` } }));
  t.log('routed', await route(t, 'x-consistent-hash', [['a', '1'], ['b', '1']], pubs, { ...X, arguments: { 'hash-property': 'message_id' } }));
});

test('consistent-hash-unbind', 'rabbitmq_consistent_hash_exchange README: removing a binding remaps only its keys', async (t) => {
  const ch = await t.confirmChannel();
  const x = t.x();
  await ch.assertExchange(x, 'x-consistent-hash', X);
  const qs = ['a', 'b', 'c'].map((s) => t.q(s));
  for (const q of qs) {
    await ch.assertQueue(q, { durable: false });
    await ch.bindQueue(q, x, '1');
  }
  await ch.unbindQueue(qs[1] as string, x, '1');
  for (let i = 0; i < 30; i++) ch.publish(x, `k${i}`, Buffer.from(String(i)));
  await ch.waitForConfirms();
  const out: Record<string, string[]> = {};
  for (const [i, q] of qs.entries()) out[['a', 'b', 'c'][i] as string] = t.bodies(await t.drainQueue(ch, q));
  t.log('routed', out);
});

test('consistent-hash-invalid-weight', 'rabbitmq_consistent_hash_exchange README: the binding key is an integer weight', async (t) => {
  const ch = await t.channel();
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'x-consistent-hash', X);
  await ch.assertQueue(q, { durable: false });
  await t.step('bind', ch.bindQueue(q, x, 'heavy'));
});

// --- found by a differential probe against 3.10.8 ------------------------------------------

test('binding-arguments-in-any-order', 'rabbit_binding sorts a binding\'s arguments: the same arguments in another order are the same binding, to bind and to unbind', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const x = t.x();
  const q = t.q();
  await ch.assertExchange(x, 'direct', X);
  await ch.assertQueue(q, { durable: false });
  // Bound twice with the arguments in two orders: one binding, which one unbind removes.
  await ch.bindQueue(q, x, 'k', { a: '1', b: '2' });
  await ch.bindQueue(q, x, 'k', { b: '2', a: '1' });
  await ch.unbindQueue(q, x, 'k', { a: '1', b: '2' });
  ch.publish(x, 'k', Buffer.from('k'), { mandatory: true });
  // Bound in one order, unbound in the other.
  await ch.bindQueue(q, x, 'j', { a: '1', b: '2' });
  await ch.unbindQueue(q, x, 'j', { b: '2', a: '1' });
  ch.publish(x, 'j', Buffer.from('j'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returned', returned.map((m) => m.content.toString()));
  t.log('queued', (await ch.checkQueue(q)).messageCount);
});

test('alternate-exchange-default-is-no-route', 'rabbit_exchange:route: the default exchange routes by queue name only when published to; as an alternate exchange it routes nothing', async (t) => {
  const ch = await t.confirmChannel();
  const returned = await withReturns(t, ch);
  const x = t.x();
  const q = t.q();
  await ch.assertQueue(q, { durable: false });
  await ch.assertExchange(x, 'direct', { ...X, arguments: { 'alternate-exchange': '' } });
  ch.publish(x, q, Buffer.from('ae'), { mandatory: true });
  await ch.waitForConfirms();
  t.log('returned', returned.map((m) => ({ body: m.content.toString(), replyCode: (m.fields as unknown as { replyCode: number }).replyCode, exchange: m.fields.exchange === x })));
  t.log('queued', (await ch.checkQueue(q)).messageCount);
});

test('direct-reply-to-by-cc-and-bcc', 'rabbit_exchange:route of the default exchange delivers to every reply address among the routing key, CC and BCC keys; BCC is removed from what it delivers', async (t) => {
  const conn = await t.connect();
  const requester = await t.channel(conn);
  const got: Message[] = [];
  await requester.consume('amq.rabbitmq.reply-to', (m) => { if (m) got.push(m); }, { noAck: true });
  const replyTo = await new Promise<string>((resolve) => {
    void (async () => {
      const q = t.q('requests');
      const responder = await t.channel();
      await responder.assertQueue(q, { durable: false });
      requester.sendToQueue(q, Buffer.from('request'), { replyTo: 'amq.rabbitmq.reply-to' });
      const m = await t.waitFor(() => responder.get(q, { noAck: true }), 1000);
      resolve(m ? String(m.properties.replyTo) : 'none');
    })();
  });
  const responder = await t.channel();
  responder.publish('', 'nowhere', Buffer.from('via CC'), { headers: { CC: [replyTo], a: 1 } });
  responder.publish('', 'nowhere', Buffer.from('via BCC'), { headers: { BCC: [replyTo], a: 2 } });
  responder.publish('', replyTo, Buffer.from('direct, BCC stripped'), { headers: { BCC: ['zz'], a: 3 } });
  await t.waitFor(() => got.length >= 3, 1000);
  t.log('replies', got.map((m) => ({
    body: m.content.toString(), routingKey: m.fields.routingKey === replyTo ? '(the reply address)' : m.fields.routingKey,
    headerKeys: Object.keys(m.properties.headers ?? {}).sort(),
  })));
});

/** A field table of longstr values as its octets, keys given twice kept twice (amqplib cannot send one). */
function rawTable(entries: ReadonlyArray<readonly [string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of entries) {
    const key = Buffer.from(k);
    const value = Buffer.from(v);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(value.length);
    parts.push(Buffer.from([key.length]), key, Buffer.from('S'), len, value);
  }
  const body = Buffer.concat(parts);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length);
  return Buffer.concat([len, body]);
}

const shortstr = (s: string): Buffer => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)]);
const u16 = (n: number): Buffer => Buffer.from([n >> 8, n & 0xff]);

test('table-duplicate-keys-first-counts', 'rabbit_misc:table_lookup finds the first entry of a key given twice: in headers a message is routed by, and in binding arguments (x-match)', async (t) => {
  const x = t.x('h');
  const qs = { q1: t.q('a1'), q2: t.q('a2'), q5: t.q('any-then-all') };
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'exchange.declare', { exchange: x, type: 'headers', passive: false, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
  await c.expect('exchange.declare-ok');
  const bind = (queue: string, args: ReadonlyArray<readonly [string, string]>): void => {
    const payload = Buffer.concat([u16(50), u16(20), u16(0), shortstr(queue), shortstr(x), shortstr(''), Buffer.from([0]), rawTable(args)]);
    c.frame(1, 1, payload);
  };
  for (const q of Object.values(qs)) {
    c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    await c.expect('queue.declare-ok');
  }
  bind(qs.q1, [['x-match', 'all'], ['a', '1']]);
  bind(qs.q2, [['x-match', 'all'], ['a', '2']]);
  bind(qs.q5, [['x-match', 'any'], ['b', '1'], ['c', '9'], ['x-match', 'all']]);
  for (let i = 0; i < 3; i++) await c.expect('queue.bind-ok');
  const publish = (body: string, headers: ReadonlyArray<readonly [string, string]>): void => {
    c.method(1, 'basic.publish', { exchange: x, routingKey: '', mandatory: false, immediate: false });
    const size = Buffer.alloc(8);
    size.writeBigUInt64BE(BigInt(body.length));
    c.frame(2, 1, Buffer.concat([u16(60), u16(0), size, u16(0x2000), rawTable(headers)]));
    c.frame(3, 1, Buffer.from(body));
  };
  publish('a1-then-a2', [['a', '1'], ['a', '2']]);
  publish('a2-then-a1', [['a', '2'], ['a', '1']]);
  publish('b1', [['b', '1']]);
  publish('b1-c2', [['b', '1'], ['c', '2']]);
  c.method(1, 'queue.declare', { queue: qs.q5, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  await c.expect('queue.declare-ok');
  for (const [label, q] of Object.entries(qs)) {
    const bodies: string[] = [];
    for (let m = await c.get(1, q); m; m = await c.get(1, q)) bodies.push(m.body.toString());
    t.log(label, bodies);
  }
  for (const q of Object.values(qs)) {
    c.method(1, 'queue.delete', { queue: q, ifUnused: false, ifEmpty: false, noWait: false });
    await c.expect('queue.delete-ok');
  }
  c.method(1, 'exchange.delete', { exchange: x, ifUnused: false, noWait: false });
  await c.expect('exchange.delete-ok');
});
