/**
 * Policies and operator policies, set over the management HTTP API (lib/management.ts) and
 * observed over AMQP: length limits, overflow, TTL, expiry, dead-lettering, alternate exchanges,
 * priority, operator policies, precedence against queue arguments, live changes on queues that
 * already hold messages, and the API's validation replies. Every pattern matches only this
 * case's own names, so cases running at once never see each other's policies.
 */
import type { Channel, GetMessage, Options } from 'amqplib';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('policies');

const Q: Options.AssertQueue = { durable: false };

/** A dead-lettered message: body, routing and headers with wire types. */
function dead(t: CaseContext, ch: Channel, m: GetMessage | false): unknown {
  if (!m) return null;
  return { body: m.content.toString(), exchange: m.fields.exchange, routingKey: m.fields.routingKey, headers: t.typedHeaders(ch, m) };
}

/** Publishes bodies to a queue through the default exchange and waits for a round trip. */
async function publish(ch: Channel, q: string, bodies: string[]): Promise<void> {
  for (const b of bodies) ch.sendToQueue(q, Buffer.from(b));
  await ch.checkQueue(q);
}

async function bodiesOf(ch: Channel, q: string): Promise<string[]> {
  const out: string[] = [];
  for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true })) out.push(m.content.toString());
  return out;
}

test('max-length-lowered-dead-letters-head', 'rabbitmq.com/maxlength.html (policy), rabbitmq.com/policies.html: a policy applies to existing queues', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  const dlq = t.q('dlq');
  await ch.assertQueue(dlq, Q);
  await ch.assertQueue(q, Q);
  await publish(ch, q, ['m1', 'm2', 'm3', 'm4', 'm5']);
  await t.step('put', t.setPolicy(t.name('ml'), { pattern: t.namePattern('q'), definition: { 'max-length': 2, 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq }, 'apply-to': 'queues' }));
  t.log('count', await t.waitForCount(q, (n) => n === 2));
  t.log('dead-count', await t.waitForCount(dlq, (n) => n === 3));
  for (let i = 0; i < 3; i++) t.log(`dead-${i}`, dead(t, ch, await ch.get(dlq, { noAck: true })));
  t.log('left', await bodiesOf(ch, q));
});

test('policy-removed-lifts-limit', 'rabbitmq.com/policies.html: removing a policy reverts its effect', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  const name = t.name('ml');
  await t.step('put', t.setPolicy(name, { pattern: t.namePattern('q'), definition: { 'max-length': 1 } }));
  await publish(ch, q, ['a', 'b', 'c']);
  t.log('count-limited', await t.waitForCount(q, (n) => n === 1));
  await t.step('delete', t.deletePolicy(name));
  await t.step('delete-again', t.deletePolicy(name));
  await publish(ch, q, ['d', 'e', 'f']);
  t.log('count-unlimited', await t.waitForCount(q, (n) => n === 4));
  t.log('bodies', await bodiesOf(ch, q));
});

test('message-ttl-policy-not-retroactive', 'rabbitmq.com/ttl.html#per-queue-message-ttl: a TTL set by policy applies to messages enqueued after it', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await publish(ch, q, ['old']);
  await t.step('put', t.setPolicy(t.name('ttl'), { pattern: t.namePattern('q'), definition: { 'message-ttl': 50 } }));
  await publish(ch, q, ['new']);
  await t.sleep(150);
  // 'new' expired behind 'old', which has no TTL: it goes only when it reaches the head.
  t.log('count', (await ch.checkQueue(q)).messageCount);
  t.log('bodies', await bodiesOf(ch, q));
});

test('overflow-reject-publish-policy', 'rabbitmq.com/maxlength.html#overflow-behaviour (policy overflow=reject-publish): confirms are nacks', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await t.step('put', t.setPolicy(t.name('rp'), { pattern: t.namePattern('q'), definition: { 'max-length': 1, overflow: 'reject-publish' } }));
  const outcome = (b: string) => new Promise<string>((resolve) => ch.sendToQueue(q, Buffer.from(b), {}, (err) => resolve(err ? 'nack' : 'ack')));
  t.log('confirms', [await outcome('a1'), await outcome('a2')]);
  t.log('bodies', await bodiesOf(ch, q));
});

test('overflow-reject-publish-dlx-policy', 'rabbitmq.com/maxlength.html#overflow-behaviour (policy overflow=reject-publish-dlx): nacked and dead-lettered', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q('q');
  const dlq = t.q('dlq');
  await ch.assertQueue(dlq, Q);
  await ch.assertQueue(q, Q);
  await t.step('put', t.setPolicy(t.name('rpd'), { pattern: t.namePattern('q'), definition: { 'max-length': 1, overflow: 'reject-publish-dlx', 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq } }));
  const outcome = (b: string) => new Promise<string>((resolve) => ch.sendToQueue(q, Buffer.from(b), {}, (err) => resolve(err ? 'nack' : 'ack')));
  t.log('confirms', [await outcome('b1'), await outcome('b2')]);
  await t.waitForCount(dlq, (n) => n === 1);
  t.log('dead', dead(t, ch, await ch.get(dlq, { noAck: true })));
  t.log('bodies', await bodiesOf(ch, q));
});

test('overflow-changed-with-max-length', 'rabbit_amqqueue_process:process_args_policy: max-length is applied under the old overflow before the new one', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await publish(ch, q, ['e1', 'e2', 'e3', 'e4', 'e5']);
  await t.step('put', t.setPolicy(t.name('edge'), { pattern: t.namePattern('q'), definition: { 'max-length': 2, overflow: 'reject-publish' } }));
  t.log('count', await t.waitForCount(q, (n) => n === 2));
  t.log('bodies', await bodiesOf(ch, q));
});

test('dead-letter-exchange-changed', 'rabbitmq.com/dlx.html#using-optional-queue-arguments: a new dead-letter exchange applies to the next rejection', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  const dlq1 = t.q('dlq1');
  const dlq2 = t.q('dlq2');
  for (const n of [dlq1, dlq2, q]) await ch.assertQueue(n, Q);
  await publish(ch, q, ['r1', 'r2']);
  const name = t.name('dlx');
  await t.step('put-1', t.setPolicy(name, { pattern: t.namePattern('q'), definition: { 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq1 } }));
  const m1 = await ch.get(q);
  if (m1) ch.reject(m1, false);
  await t.waitForCount(dlq1, (n) => n === 1);
  await t.step('put-2', t.setPolicy(name, { pattern: t.namePattern('q'), definition: { 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq2 } }));
  const m2 = await ch.get(q);
  if (m2) ch.reject(m2, false);
  await t.waitForCount(dlq2, (n) => n === 1);
  t.log('dlq1', dead(t, ch, await ch.get(dlq1, { noAck: true })));
  t.log('dlq2', dead(t, ch, await ch.get(dlq2, { noAck: true })));
});

test('queue-arguments-precedence', 'rabbitmq.com/parameters.html#combining-policy-definitions-and-queue-arguments (3.10: argument wins for DLX/overflow, lower value for limits)', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q('q');
  const argDlq = t.q('argdlq');
  const polDlq = t.q('poldlq');
  await ch.assertQueue(argDlq, Q);
  await ch.assertQueue(polDlq, Q);
  await ch.assertQueue(q, { ...Q, arguments: { 'x-max-length': 10, 'x-message-ttl': 60000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': argDlq, 'x-overflow': 'reject-publish' } });
  await t.step('put', t.setPolicy(t.name('args'), {
    pattern: t.namePattern('q'),
    definition: { 'max-length': 3, 'message-ttl': 100, 'dead-letter-exchange': 'nowhere', 'dead-letter-routing-key': polDlq, overflow: 'drop-head' },
  }));
  const outcome = (b: string) => new Promise<string>((resolve) => ch.sendToQueue(q, Buffer.from(b), {}, (err) => resolve(err ? 'nack' : 'ack')));
  const confirms: string[] = [];
  for (const b of ['a1', 'a2', 'a3', 'a4', 'a5']) confirms.push(await outcome(b));
  t.log('confirms', confirms);
  t.log('expired-to-arg-dlq', await t.waitForCount(argDlq, (n) => n === 3));
  t.log('count', await t.waitForCount(q, (n) => n === 0));
  t.log('arg-dlq', await bodiesOf(ch, argDlq));
  t.log('pol-dlq-count', (await ch.checkQueue(polDlq)).messageCount);
});

test('highest-priority-policy-applies', 'rabbitmq.com/parameters.html#policy-priorities: one policy applies, definitions are not merged', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await t.step('put-low', t.setPolicy(t.name('low'), { pattern: t.namePattern('q'), definition: { 'max-length': 1, 'message-ttl': 60000 }, priority: 1 }));
  await t.step('put-high', t.setPolicy(t.name('high'), { pattern: t.namePattern('q'), definition: { 'max-length': 3 }, priority: 10 }));
  await publish(ch, q, ['1', '2', '3', '4']);
  t.log('count', await t.waitForCount(q, (n) => n === 3));
  await t.step('delete-high', t.deletePolicy(t.name('high')));
  t.log('count-after', await t.waitForCount(q, (n) => n === 1));
  t.log('bodies', await bodiesOf(ch, q));
});

test('operator-policy-min-merge', 'rabbitmq.com/parameters.html#operator-policies: the lower of the two values applies', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  const q2 = t.q('q2');
  await ch.assertQueue(q, Q);
  await ch.assertQueue(q2, Q);
  await t.step('put', t.setPolicy(t.name('pol'), { pattern: t.namePattern('q'), definition: { 'max-length': 10 } }));
  await t.step('put-op', t.setPolicy(t.name('op'), { pattern: t.namePattern('q', 'q2'), definition: { 'max-length': 2 }, 'apply-to': 'queues' }, 'operator-policies'));
  await publish(ch, q, ['1', '2', '3', '4']);
  await publish(ch, q2, ['1', '2', '3', '4']);
  t.log('counts', [await t.waitForCount(q, (n) => n === 2), await t.waitForCount(q2, (n) => n === 2)]);
  await t.step('get-op', t.mgmt().request('GET', `/api/operator-policies/%2F/${t.name('op')}`));
  await t.step('put-op-bad', t.setPolicy(t.name('op2'), { pattern: 'x', definition: { 'dead-letter-exchange': 'd' } }, 'operator-policies'));
});

test('alternate-exchange-policy', 'rabbitmq.com/ae.html: alternate-exchange by policy; the exchange argument wins', async (t) => {
  const ch = await t.channel();
  const x = t.x('x');
  const xArg = t.x('xarg');
  const ae = t.x('ae');
  const ae2 = t.x('ae2');
  const aeq = t.q('aeq');
  const aeq2 = t.q('aeq2');
  await ch.assertExchange(x, 'direct', { durable: false });
  await ch.assertExchange(xArg, 'direct', { durable: false, arguments: { 'alternate-exchange': ae2 } });
  await ch.assertExchange(ae, 'fanout', { durable: false });
  await ch.assertExchange(ae2, 'fanout', { durable: false });
  await ch.assertQueue(aeq, Q);
  await ch.assertQueue(aeq2, Q);
  await ch.bindQueue(aeq, ae, '');
  await ch.bindQueue(aeq2, ae2, '');
  await t.step('put', t.setPolicy(t.name('ae'), { pattern: t.namePattern('x', 'xarg'), definition: { 'alternate-exchange': ae }, 'apply-to': 'exchanges' }));
  ch.publish(x, 'nowhere', Buffer.from('u1'));
  ch.publish(xArg, 'nowhere', Buffer.from('u2'));
  await t.waitForCount(aeq, (n) => n === 1);
  await t.waitForCount(aeq2, (n) => n === 1);
  t.log('aeq', await bodiesOf(ch, aeq));
  t.log('aeq2', await bodiesOf(ch, aeq2));
});

test('apply-to-exchanges-skips-queues', 'rabbitmq.com/parameters.html#policies: apply-to exchanges never applies to a queue', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await t.step('put', t.setPolicy(t.name('xonly'), { pattern: t.namePattern('q'), definition: { 'max-length': 1 }, 'apply-to': 'exchanges' }));
  await publish(ch, q, ['1', '2', '3']);
  t.log('count', await t.waitForCount(q, (n) => n === 3));
});

test('delivery-limit-policy-skips-classic-queues', 'rabbit_queue_type:is_policy_applicable: classic queues do not support delivery-limit, so the policy does not apply', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await t.step('put-high', t.setPolicy(t.name('dl'), { pattern: t.namePattern('q'), definition: { 'max-length': 1, 'delivery-limit': 3 }, priority: 5 }));
  await t.step('put-low', t.setPolicy(t.name('low'), { pattern: t.namePattern('q'), definition: { 'max-length': 3 }, priority: 1 }));
  await publish(ch, q, ['1', '2', '3', '4']);
  t.log('count', await t.waitForCount(q, (n) => n === 3));
});

test('expires-policy-deletes-unused-queue', 'rabbitmq.com/ttl.html#queue-ttl (policy expires)', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  await ch.assertQueue(q, Q);
  await t.step('put', t.setPolicy(t.name('exp'), { pattern: t.namePattern('q'), definition: { expires: 100 } }));
  // Any declare, even passive, renews the lease: look only once, after it has run out.
  await t.sleep(400);
  const c2 = await t.channel();
  await t.step('declare-passive', c2.checkQueue(q), (v) => v, c2);
});

test('policy-put-replies', 'rabbitmq.com/management.html (HTTP API): PUT /api/policies creates (201), updates (204), GET returns the policy', async (t) => {
  const name = t.name('p');
  const body = { pattern: t.namePattern('none'), definition: { 'max-length': 5, 'dead-letter-exchange': 'x' }, priority: 2, 'apply-to': 'queues' };
  await t.step('create', t.setPolicy(name, body));
  await t.step('update', t.setPolicy(name, { ...body, priority: 3 }));
  await t.step('get', t.mgmt().request('GET', `/api/policies/%2F/${name}`));
  await t.step('get-missing', t.mgmt().request('GET', `/api/policies/%2F/${t.name('missing')}`));
});

test('policy-validation-replies', 'rabbit_policies:validate_policy0 and rabbit_parameter_validation: 400 reasons for invalid policies', async (t) => {
  const name = t.name('bad');
  const pattern = t.namePattern('none');
  const bodies: Array<[string, unknown]> = [
    ['ttl-string', { pattern, definition: { 'message-ttl': 'abc' } }],
    ['expires-zero', { pattern, definition: { expires: 0 } }],
    ['overflow-bad', { pattern, definition: { overflow: 'drop-tail' } }],
    ['unknown-keys', { pattern, definition: { 'foo-bar': 1, zed: 'x' } }],
    ['empty-definition', { pattern, definition: {} }],
    ['bad-regex', { pattern: '(', definition: { 'max-length': 1 } }],
    ['bad-apply-to', { pattern, definition: { 'max-length': 1 }, 'apply-to': 'bogus' }],
    ['priority-string', { pattern, definition: { 'max-length': 1 }, priority: '5' }],
    ['missing-definition', { pattern }],
    ['ha-mode-bad', { pattern, definition: { 'ha-mode': 'bogus' } }],
    ['several', { pattern: '(', definition: { 'message-ttl': 'x' }, priority: 'a', 'apply-to': 'zz' }],
  ];
  for (const [label, body] of bodies) await t.step(label, t.setPolicy(name, body));
});

test('quorum-delivery-limit-policy', 'rabbitmq.com/quorum-queues.html#poison-message-handling (delivery-limit by policy)', async (t) => {
  const ch = await t.channel();
  const q = t.q('q');
  const dlq = t.q('dlq');
  await ch.assertQueue(dlq, Q);
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await t.step('put', t.setPolicy(t.name('dl'), { pattern: t.namePattern('q'), definition: { 'delivery-limit': 1, 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq } }));
  // The policy reaches a quorum queue through its Raft log: wait until it acts.
  await publish(ch, q, ['d']);
  for (let i = 0; i < 2; i++) {
    const m = await t.waitFor(() => ch.get(q), 2000, 10);
    if (m) ch.nack(m, false, true);
  }
  t.log('dead-count', await t.waitForCount(dlq, (n) => n === 1));
  const m = await ch.get(dlq, { noAck: true });
  const h = m ? (t.typedHeaders(ch, m) as Record<string, unknown>) : null;
  t.log('first-death-reason', h ? h['x-first-death-reason'] : null);
});

test('quorum-reject-publish-policy-over-limit-keeps-all', 'rabbit_fifo:update_config then evaluate_limit: a policy giving a quorum queue already over the limit overflow reject-publish drops nothing and refuses publishes', async (t) => {
  const ch = await t.confirmChannel();
  const q = t.q('q');
  await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  for (const b of ['m1', 'm2', 'm3', 'm4']) ch.sendToQueue(q, Buffer.from(b), { persistent: true });
  await ch.waitForConfirms();
  await t.step('put', t.setPolicy(t.name('rp'), { pattern: t.namePattern('q'), definition: { 'max-length': 2, overflow: 'reject-publish' }, 'apply-to': 'queues' }));
  await t.sleep(500);
  t.log('count', (await ch.checkQueue(q)).messageCount);
  const outcomes: string[] = [];
  for (const b of ['m5', 'm6']) {
    outcomes.push(await new Promise<string>((resolve) => ch.sendToQueue(q, Buffer.from(b), { persistent: true }, (err) => resolve(`${b}:${err ? 'nack' : 'ack'}`))));
  }
  t.log('publishes', outcomes);
  t.log('left', await bodiesOf(ch, q));
  await ch.deleteQueue(q);
});
