import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import type { PolicyKind } from '../../src/policy/policy.js';
import { PolicyValidationError } from '../../src/policy/validation.js';
import { VHostNotFoundError } from '../../src/policy/policy-operations.js';
import { channel, confirmChannel, type Channel, type GetMessage } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { call } from '../support/management.js';
import { drainBodies as drain, useSession } from '../support/session.js';

/**
 * Policies and operator policies (rabbitmq.com "Policies", "Dead Letter Exchanges", "Queue
 * Length Limit", "TTL", "Alternate Exchanges"), set through the broker's public operations and
 * observed over amqplib. Every expectation here was first observed on RabbitMQ 3.10.8 with the
 * same steps (policies set over its management API).
 */
describe('policies (rabbitmq.com policies guide)', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0, managementPort: 0 });
  const session = useSession(broker);
  const { uniq } = session;
  const ops = () => broker.running.broker.policies;

  // The embedded operations (the validation and listing tests at the end use them directly)…
  const setPolicy = (name: string, pattern: string, definition: Record<string, unknown>, extra: { priority?: number; applyTo?: string; kind?: PolicyKind } = {}) =>
    ops().put(extra.kind ?? 'policy', '/', name, { pattern, definition, priority: extra.priority, applyTo: extra.applyTo });
  // …and the management API, through which the behaviour tests set and clear policies.
  const policyPath = (kind: PolicyKind, name: string) => `/api/${kind === 'policy' ? 'policies' : 'operator-policies'}/%2F/${encodeURIComponent(name)}`;
  const clearPolicy = async (name: string, kind: PolicyKind = 'policy') => (await call(broker.running.managementUrl!, 'DELETE', policyPath(kind, name))).status === 204;
  const anchored = (name: string) => `^${name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}$`;
  const count = async (ch: Channel, q: string) => (await ch.checkQueue(q)).messageCount;
  const publish = async (ch: Channel, q: string, bodies: string[], options: Record<string, unknown> = {}) => {
    for (const b of bodies) ch.sendToQueue(q, Buffer.from(b), options);
    await ch.checkQueue(q); // a round trip on the same channel: the publishes are in
  };
  const policiesToClear: Array<[string, PolicyKind]> = [];
  const set = async (name: string, pattern: string, definition: Record<string, unknown>, extra: { priority?: number; applyTo?: string; kind?: PolicyKind } = {}) => {
    policiesToClear.push([name, extra.kind ?? 'policy']);
    const body = { pattern, definition, ...(extra.priority !== undefined ? { priority: extra.priority } : {}), ...(extra.applyTo ? { 'apply-to': extra.applyTo } : {}) };
    const res = await call(broker.running.managementUrl!, 'PUT', policyPath(extra.kind ?? 'policy', name), { body });
    expect(res.status, res.text).to.be.oneOf([201, 204]);
    return res.status === 201 ? 'created' : 'updated';
  };
  afterEach(async () => {
    for (const [n, k] of policiesToClear.splice(0)) await clearPolicy(n, k);
  });

  it('a lowered max-length dead-letters the head of a queue that holds messages at once (x-death reason maxlen)', async () => {
    const ch = await channel(session.conn);
    const q = uniq('ml');
    const dlq = uniq('ml-dlq');
    await ch.assertQueue(q, { durable: false });
    await ch.assertQueue(dlq, { durable: false });
    await publish(ch, q, ['m1', 'm2', 'm3', 'm4', 'm5']);
    expect(await set('ml', anchored(q), { 'max-length': 2, 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq })).to.equal('created');
    expect(await count(ch, q)).to.equal(2);
    const dead: GetMessage[] = [];
    for (let m = await ch.get(dlq, { noAck: true }); m; m = await ch.get(dlq, { noAck: true })) dead.push(m);
    expect(dead.map((m) => m.content.toString())).to.deep.equal(['m1', 'm2', 'm3']);
    expect(dead[0]!.properties.headers).to.deep.equal({
      'x-death': [{ count: 1, reason: 'maxlen', queue: q, time: { '!': 'timestamp', value: Math.floor(clock.now() / 1000) }, exchange: '', 'routing-keys': [q] }],
      'x-first-death-exchange': '',
      'x-first-death-queue': q,
      'x-first-death-reason': 'maxlen',
    });
    // Removing the policy lifts the limit.
    expect(await clearPolicy('ml')).to.equal(true);
    await publish(ch, q, ['m6', 'm7', 'm8', 'm9']);
    expect(await count(ch, q)).to.equal(6);
  });

  it('a message-ttl set by policy does not expire messages already queued; messages queued under it still expire after it is removed', async () => {
    const ch = await channel(session.conn);
    const q = uniq('ttl');
    await ch.assertQueue(q, { durable: false });
    await publish(ch, q, ['old']);
    await set('ttl', anchored(q), { 'message-ttl': 100 });
    await publish(ch, q, ['new']);
    clock.advance(150);
    expect(await drain(ch, q)).to.deep.equal(['old']);
    await publish(ch, q, ['under-ttl']);
    await clearPolicy('ttl');
    await publish(ch, q, ['after']);
    clock.advance(150);
    expect(await drain(ch, q)).to.deep.equal(['after']);
  });

  it('expires by policy deletes an unused queue; the lower of x-expires and the policy wins', async () => {
    const ch = await channel(session.conn);
    const q = uniq('exp');
    await ch.assertQueue(q, { durable: false, arguments: { 'x-expires': 100000 } });
    ch.sendToQueue(q, Buffer.from('x'));
    await set('exp', anchored(q), { expires: 400 });
    clock.advance(150);
    expect(await count(ch, q)).to.equal(1); // a passive declare renews the lease (now 150 + 400)
    clock.advance(450);
    const ch2 = await channel(session.conn);
    await ch2.checkQueue(q).then(
      () => expect.fail('the queue should have expired'),
      (e: Error) => expect(e.message).to.include(`404 (NOT-FOUND) with message "NOT_FOUND - no queue '${q}' in vhost '/'"`),
    );
  });

  it('overflow reject-publish by policy nacks publishes beyond max-length; reject-publish-dlx also dead-letters them', async () => {
    const ch = await channel(session.conn);
    const cc = await confirmChannel(session.conn);
    const q = uniq('rp');
    const q2 = uniq('rpdlx');
    const dlq = uniq('rp-dlq');
    for (const n of [q, q2, dlq]) await ch.assertQueue(n, { durable: false });
    await set('rp', anchored(q), { 'max-length': 1, overflow: 'reject-publish' });
    await set('rpdlx', anchored(q2), { 'max-length': 1, overflow: 'reject-publish-dlx', 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq });
    const outcome = (queue: string, body: string) =>
      new Promise<string>((resolve) => cc.sendToQueue(queue, Buffer.from(body), {}, (err) => resolve(err ? 'nack' : 'ack')));
    expect([await outcome(q, 'a1'), await outcome(q, 'a2')]).to.deep.equal(['ack', 'nack']);
    expect([await outcome(q2, 'b1'), await outcome(q2, 'b2')]).to.deep.equal(['ack', 'nack']);
    expect(await drain(ch, q)).to.deep.equal(['a1']);
    const dead = await ch.get(dlq, { noAck: true });
    expect(dead && dead.content.toString()).to.equal('b2');
    expect((dead as GetMessage).properties.headers?.['x-first-death-reason']).to.equal('maxlen');
  });

  it('a policy that sets max-length and reject-publish at once on a drop-head queue still drops the head first (RabbitMQ applies max-length before overflow)', async () => {
    const ch = await channel(session.conn);
    const q = uniq('edge');
    await ch.assertQueue(q, { durable: false });
    await publish(ch, q, ['e1', 'e2', 'e3', 'e4', 'e5']);
    await set('edge', anchored(q), { 'max-length': 2, overflow: 'reject-publish' });
    expect(await drain(ch, q)).to.deep.equal(['e4', 'e5']);
    // And a reject-publish queue whose new policy has no overflow drops under drop-head.
    const q2 = uniq('edge2');
    await ch.assertQueue(q2, { durable: false });
    await set('edge2', anchored(q2), { 'max-length': 10, overflow: 'reject-publish' });
    await publish(ch, q2, ['f1', 'f2', 'f3', 'f4', 'f5']);
    await set('edge2', anchored(q2), { 'max-length': 2 });
    expect(await drain(ch, q2)).to.deep.equal(['f4', 'f5']);
  });

  it('a new dead-letter exchange applies to the next rejection', async () => {
    const ch = await channel(session.conn);
    const q = uniq('dlx');
    const dlq1 = uniq('dlx-a');
    const dlq2 = uniq('dlx-b');
    for (const n of [q, dlq1, dlq2]) await ch.assertQueue(n, { durable: false });
    await publish(ch, q, ['r1', 'r2']);
    await set('dlx', anchored(q), { 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq1 });
    const m1 = await ch.get(q);
    ch.reject(m1 as GetMessage, false);
    await ch.checkQueue(q); // the rejection is in before the policy changes
    await set('dlx', anchored(q), { 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq2 });
    const m2 = await ch.get(q);
    ch.reject(m2 as GetMessage, false);
    await ch.checkQueue(q);
    expect(await drain(ch, dlq1)).to.deep.equal(['r1']);
    const dead = await ch.get(dlq2, { noAck: true });
    expect(dead && dead.content.toString()).to.equal('r2');
    expect((dead as GetMessage).properties.headers?.['x-death']?.[0]?.reason).to.equal('rejected');
  });

  it('the queue\'s own x-arguments win for dead-letter-exchange and overflow; the lower value wins for max-length and message-ttl', async () => {
    const ch = await channel(session.conn);
    const q = uniq('args');
    const argDlq = uniq('args-dlq');
    const polDlq = uniq('pol-dlq');
    for (const n of [argDlq, polDlq]) await ch.assertQueue(n, { durable: false });
    await ch.assertQueue(q, { durable: false, arguments: { 'x-max-length': 10, 'x-message-ttl': 60000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': argDlq, 'x-overflow': 'reject-publish' } });
    await set('args', anchored(q), { 'max-length': 3, 'message-ttl': 100, 'dead-letter-exchange': 'nowhere', 'dead-letter-routing-key': polDlq, overflow: 'drop-head' });
    await publish(ch, q, ['a1', 'a2', 'a3', 'a4', 'a5']);
    // max-length 3 (the lower), overflow reject-publish (the argument): the first three stay.
    expect(await count(ch, q)).to.equal(3);
    // message-ttl 100 (the lower): they expire to the argument's dead-letter target.
    clock.advance(150);
    expect(await count(ch, q)).to.equal(0);
    expect(await drain(ch, argDlq)).to.deep.equal(['a1', 'a2', 'a3']);
    expect(await count(ch, polDlq)).to.equal(0);
    // A policy limit above the argument's leaves the argument's in force.
    await set('args', anchored(q), { 'max-length': 50 });
    await publish(ch, q, Array.from({ length: 12 }, (_, i) => `b${i}`));
    expect(await count(ch, q)).to.equal(10);
  });

  it('only the highest-priority matching policy applies; definitions are not merged', async () => {
    const ch = await channel(session.conn);
    const q = uniq('prio');
    await ch.assertQueue(q, { durable: false });
    await set('p-low', anchored(q), { 'max-length': 1, 'message-ttl': 100 }, { priority: 1 });
    await set('p-high', anchored(q), { 'max-length': 3 }, { priority: 10 });
    await publish(ch, q, ['1', '2', '3', '4']);
    clock.advance(200);
    expect(await drain(ch, q)).to.deep.equal(['2', '3', '4']);
    expect(ops().queueInfo('/', q)).to.deep.equal({ policy: 'p-high', operator_policy: null, effective_policy_definition: { 'max-length': 3 } });
    // Deleting the winner: the other one applies at once.
    await clearPolicy('p-high');
    await publish(ch, q, ['5', '6']);
    expect(await count(ch, q)).to.equal(1);
  });

  it('an operator policy merges with the policy by the lower value; reported as effective_policy_definition', async () => {
    const ch = await channel(session.conn);
    const q = uniq('op');
    const q2 = uniq('op-only');
    await ch.assertQueue(q, { durable: false });
    await ch.assertQueue(q2, { durable: false });
    await set('op-pol', anchored(q), { 'max-length': 10, 'message-ttl': 100, 'dead-letter-exchange': 'dlx' });
    await set('op-cap', `^${q.split('-')[0]}`, { 'max-length': 2, 'message-ttl': 50000, expires: 5000000 }, { kind: 'operator-policy' });
    expect(ops().queueInfo('/', q)).to.deep.equal({
      policy: 'op-pol', operator_policy: 'op-cap',
      effective_policy_definition: { 'dead-letter-exchange': 'dlx', expires: 5000000, 'max-length': 2, 'message-ttl': 100 },
    });
    expect(ops().queueInfo('/', q2)).to.deep.equal({
      policy: null, operator_policy: 'op-cap', effective_policy_definition: { expires: 5000000, 'max-length': 2, 'message-ttl': 50000 },
    });
    await publish(ch, q, ['1', '2', '3']);
    await publish(ch, q2, ['1', '2', '3']);
    expect([await count(ch, q), await count(ch, q2)]).to.deep.equal([2, 2]);
    await clearPolicy('op-cap', 'operator-policy');
    expect(ops().queueInfo('/', q2)).to.deep.equal({ policy: null, operator_policy: null, effective_policy_definition: {} });
  });

  it('alternate-exchange by policy on exchanges; the exchange\'s own argument wins; apply-to exchanges leaves queues alone', async () => {
    const ch = await channel(session.conn);
    const x = uniq('ae-x');
    const xArg = uniq('ae-xarg');
    const ae = uniq('ae-fan');
    const ae2 = uniq('ae-fan2');
    await ch.assertExchange(x, 'direct', { durable: false });
    await ch.assertExchange(xArg, 'direct', { durable: false, arguments: { 'alternate-exchange': ae2 } });
    await ch.assertExchange(ae, 'fanout', { durable: false });
    await ch.assertExchange(ae2, 'fanout', { durable: false });
    const aeq = uniq('aeq');
    const aeq2 = uniq('aeq2');
    await ch.assertQueue(aeq, { durable: false });
    await ch.assertQueue(aeq2, { durable: false });
    await ch.bindQueue(aeq, ae, '');
    await ch.bindQueue(aeq2, ae2, '');
    const sameName = uniq('ae-x-queue');
    await ch.assertQueue(sameName, { durable: false });
    await set('ae', `^${x.split('-')[0]}-x`, { 'alternate-exchange': ae }, { applyTo: 'exchanges' });
    ch.publish(x, 'nowhere', Buffer.from('u1'));
    ch.publish(xArg, 'nowhere', Buffer.from('u2'));
    await ch.checkQueue(aeq);
    expect(await drain(ch, aeq)).to.deep.equal(['u1']);
    expect(await drain(ch, aeq2)).to.deep.equal(['u2']);
    expect(ops().exchangeInfo('/', x)?.policy).to.equal('ae');
    expect(ops().queueInfo('/', sameName)?.policy).to.equal(null);
    await clearPolicy('ae');
    ch.publish(x, 'nowhere', Buffer.from('u3'));
    await ch.checkQueue(aeq);
    expect(await drain(ch, aeq)).to.deep.equal([]);
  });

  it('a policy with apply-to queues does not apply to exchanges', async () => {
    const ch = await channel(session.conn);
    const x = uniq('onlyq-x');
    const ae = uniq('onlyq-ae');
    await ch.assertExchange(x, 'direct', { durable: false });
    await ch.assertExchange(ae, 'fanout', { durable: false });
    await set('onlyq', `^${x.split('-')[0]}-`, { 'alternate-exchange': ae }, { applyTo: 'queues' });
    expect(ops().exchangeInfo('/', x)?.policy).to.equal(null);
  });

  it('a policy with delivery-limit does not apply to classic queues (a lower one does); on a quorum queue it dead-letters', async () => {
    const ch = await channel(session.conn);
    const q = uniq('dlim');
    await ch.assertQueue(q, { durable: false });
    await set('dlim', anchored(q), { 'max-length': 1, 'delivery-limit': 3 }, { priority: 5 });
    await set('dlim-low', anchored(q), { 'max-length': 7 }, { priority: 1 });
    expect(ops().queueInfo('/', q)?.policy).to.equal('dlim-low');
    const qq = uniq('dlim-qq');
    const dlq = uniq('dlim-dlq');
    await ch.assertQueue(dlq, { durable: false });
    await ch.assertQueue(qq, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await set('dlim-q', anchored(qq), { 'delivery-limit': 1, 'dead-letter-exchange': '', 'dead-letter-routing-key': dlq });
    expect(ops().queueInfo('/', qq)?.policy).to.equal('dlim-q');
    await publish(ch, qq, ['d']);
    for (let i = 0; i < 2; i++) {
      const m = await ch.get(qq);
      ch.nack(m as GetMessage, false, true);
    }
    await ch.checkQueue(qq);
    const dead = await ch.get(dlq, { noAck: true });
    expect(dead && dead.content.toString()).to.equal('d');
    expect((dead as GetMessage).properties.headers?.['x-first-death-reason']).to.equal('delivery_limit');
    await ch.deleteQueue(qq);
  });

  it('a quorum queue has no reject-publish-dlx: by argument or by policy it drops the head instead', async () => {
    const ch = await channel(session.conn);
    const cc = await confirmChannel(session.conn);
    const byArg = uniq('qq-rpdlx-arg');
    const byPolicy = uniq('qq-rpdlx-pol');
    await ch.assertQueue(byArg, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-max-length': 1, 'x-overflow': 'reject-publish-dlx' } });
    await ch.assertQueue(byPolicy, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await set('qq-rpdlx', anchored(byPolicy), { 'max-length': 1, overflow: 'reject-publish-dlx' });
    const outcome = (queue: string, body: string) =>
      new Promise<string>((resolve) => cc.sendToQueue(queue, Buffer.from(body), {}, (err) => resolve(err ? 'nack' : 'ack')));
    for (const q of [byArg, byPolicy]) {
      expect([await outcome(q, 'a'), await outcome(q, 'b')]).to.deep.equal(['ack', 'ack']);
      expect(await drain(ch, q)).to.deep.equal(['b']);
      await ch.deleteQueue(q);
    }
  });

  it('refuses invalid policies with RabbitMQ\'s texts, and unknown vhosts', () => {
    expect(() => setPolicy('bad', 'x', { 'message-ttl': 'abc' })).to.throw(PolicyValidationError, 'Validation failed\n\n<<"abc">> is not a valid message TTL\n');
    expect(() => setPolicy('bad', 'x', { 'max-length': 5 }, { kind: 'operator-policy' })).to.not.throw();
    ops().delete('operator-policy', '/', 'bad');
    expect(() => setPolicy('bad', 'x', { 'dead-letter-exchange': 'd' }, { kind: 'operator-policy' }))
      .to.throw(PolicyValidationError, 'Validation failed\n\n[{<<"dead-letter-exchange">>,<<"d">>}] are not recognised policy settings\n');
    expect(() => ops().put('policy', 'nope', 'p', { pattern: '.*', definition: { 'max-length': 1 } })).to.throw(VHostNotFoundError);
    expect(ops().get('policy', '/', 'bad')).to.equal(undefined);
  });

  it('lists and returns policies in RabbitMQ\'s shape; a second put of the same name updates', async () => {
    expect(await set('list-b', '^b', { 'max-length': 1 }, { priority: 2 })).to.equal('created');
    expect(await set('list-a', '^a', { 'message-ttl': 5, 'dead-letter-exchange': 'x' })).to.equal('created');
    expect(await set('list-b', '^b', { 'max-length': 2 }, { priority: 2, applyTo: 'queues' })).to.equal('updated');
    expect(ops().list('policy', '/').filter((p) => p.name.startsWith('list-'))).to.deep.equal([
      { vhost: '/', name: 'list-a', pattern: '^a', 'apply-to': 'all', definition: { 'dead-letter-exchange': 'x', 'message-ttl': 5 }, priority: 0 },
      { vhost: '/', name: 'list-b', pattern: '^b', 'apply-to': 'queues', definition: { 'max-length': 2 }, priority: 2 },
    ]);
  });
});
