import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { F } from '../../src/frame/field-table.js';
import { channel, connect, type Channel, type ChannelModel } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/**
 * Transactions as RabbitMQ 3.10 runs them (rabbit_channel, checked against a live 3.10.8): a
 * basic.publish is checked and routed at once and only enqueued at tx.commit, in the queues it
 * was routed to that exist then; returns go out at commit; acks wait for commit.
 */
describe('transactions', () => {
  const broker = useBroker();
  let conn: ChannelModel;
  let admin: Channel;
  let c: RawClient;

  beforeEach(async () => {
    conn = await connect(broker.url);
    admin = await channel(conn);
    c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'tx.select', {});
    await c.expect('tx.select-ok');
    seen = c.frames.length;
  });
  afterEach(async () => {
    c.destroy();
    await conn.close();
  });

  /** A round trip on the transactional channel: everything sent before it has been handled. */
  async function roundTrip(): Promise<string | undefined> {
    c.method(1, 'exchange.declare', { exchange: 'amq.direct', type: 'direct', passive: true, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
    return (await c.nextMethod(['exchange.declare-ok', 'channel.close']))?.name;
  }
  let seen = 0;
  /** The names of the methods received on the transactional channel since the last call. */
  function methods(): string[] {
    const frames = c.frames.slice(seen);
    seen = c.frames.length;
    return frames.flatMap((f) => (f.channel === 1 && f.method ? [f.method.name] : []));
  }

  it('routes a publish at basic.publish: an exchange deleted before tx.commit does not fail it, and the acks commit', async () => {
    // Before, held publishes were routed at commit: the deleted exchange closed the channel
    // with 404 and the transaction's acks were never applied.
    await admin.assertQueue('tx-acked', { durable: false });
    await admin.assertQueue('tx-target', { durable: false });
    await admin.assertExchange('tx-gone', 'fanout', { durable: false });
    await admin.bindQueue('tx-target', 'tx-gone', '');
    admin.sendToQueue('tx-acked', Buffer.from('m'));
    await admin.checkQueue('tx-acked');

    c.method(1, 'basic.get', { queue: 'tx-acked', noAck: false });
    const got = await c.expect('basic.get-ok');
    c.method(1, 'basic.ack', { deliveryTag: got.deliveryTag, multiple: false });
    c.publish(1, 'tx-gone', '', 'held', {}, { mandatory: true });
    expect(await roundTrip()).to.equal('exchange.declare-ok');
    methods();
    await admin.deleteExchange('tx-gone');

    c.method(1, 'tx.commit', {});
    await c.expect('tx.commit-ok');
    expect(methods()).to.deep.equal(['tx.commit-ok']);
    expect((await admin.checkQueue('tx-target')).messageCount).to.equal(1);
    // The ack was committed: closing the channel requeues nothing.
    c.method(1, 'channel.close', { replyCode: 200, replyText: '', classId: 0, methodId: 0 });
    await c.expect('channel.close-ok');
    expect((await admin.checkQueue('tx-acked')).messageCount).to.equal(0);
  });

  it('enqueues at commit into the routed queues that exist then, by name; returns go out at commit', async () => {
    await admin.assertExchange('tx-fan', 'fanout', { durable: false });
    await admin.assertQueue('tx-renewed', { durable: false });
    await admin.bindQueue('tx-renewed', 'tx-fan', '');
    await admin.assertQueue('tx-dropped', { durable: false });
    await admin.assertExchange('tx-unbound', 'fanout', { durable: false });

    c.publish(1, 'tx-fan', '', 'to-renewed', {}, { mandatory: true });
    c.publish(1, '', 'tx-dropped', 'returned', {}, { mandatory: true });
    c.publish(1, '', 'tx-dropped', 'dropped');
    c.publish(1, '', 'tx-later', 'to-later', {}, { mandatory: true });
    c.publish(1, 'tx-unbound', '', 'unroutable', {}, { mandatory: true });
    expect(await roundTrip()).to.equal('exchange.declare-ok');
    expect(methods()).to.deep.equal(['exchange.declare-ok']); // no return before commit

    await admin.deleteQueue('tx-renewed');
    await admin.assertQueue('tx-renewed', { durable: false }); // same name, not bound
    await admin.deleteQueue('tx-dropped');
    await admin.assertQueue('tx-later', { durable: false }); // the default exchange routes by name
    await admin.bindQueue('tx-later', 'tx-unbound', ''); // too late: routing was at publish

    c.method(1, 'tx.commit', {});
    await c.expect('tx.commit-ok');
    expect(c.messages.map((m) => [m.method.name, m.body.toString()])).to.deep.equal([
      ['basic.return', 'returned'],
      ['basic.return', 'unroutable'],
    ]);
    expect(methods()).to.deep.equal(['basic.return', 'basic.return', 'tx.commit-ok']);
    expect((await admin.get('tx-renewed', { noAck: true }) || undefined)?.content.toString()).to.equal('to-renewed');
    expect((await admin.get('tx-later', { noAck: true }) || undefined)?.content.toString()).to.equal('to-later');
  });

  for (const [what, props, text] of [
    ['an unknown delivery-mode', { deliveryMode: 3 }, 'PRECONDITION_FAILED - invalid message: {delivery_mode_unknown,3}'],
    ['a CC header that is not an array', { headers: { CC: F.str('a') } }, 'PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,"CC",longstr}'],
    ['a user_id that is not the user', { userId: 'someone' }, "PRECONDITION_FAILED - user_id property set to 'someone' but authenticated user was 'guest'"],
    ['an invalid expiration', { expiration: 'abc' }, "PRECONDITION_FAILED - invalid expiration 'abc': no_integer"],
  ] as const) {
    it(`closes the channel at basic.publish, not at commit, for ${what}`, async () => {
      c.publish(1, 'amq.direct', 'k', 'x', props);
      const close = await c.expect('channel.close');
      expect(close).to.include({ replyCode: 406, replyText: text, classId: 60, methodId: 40 });
    });
  }

  it('fails tx.commit with 406 partial tx completion when a queue refuses a publish; the rest is committed, acks included', async () => {
    await admin.assertQueue('tx-full', { durable: false, maxLength: 0, overflow: 'reject-publish' });
    await admin.assertQueue('tx-open', { durable: false });
    await admin.assertQueue('tx-src', { durable: false });
    admin.sendToQueue('tx-src', Buffer.from('m0'));
    admin.sendToQueue('tx-src', Buffer.from('m1'));
    await admin.checkQueue('tx-src');

    const g0 = await c.get(1, 'tx-src', false);
    await c.get(1, 'tx-src', false);
    c.method(1, 'basic.ack', { deliveryTag: (g0?.method.args as { deliveryTag: number }).deliveryTag, multiple: false });
    c.publish(1, '', 'tx-full', 'refused');
    c.publish(1, '', 'tx-open', 'kept');
    c.publish(1, 'amq.direct', 'nowhere', 'unroutable', {}, { mandatory: true });
    c.method(1, 'tx.commit', {});
    const close = await c.expect('channel.close');
    expect(close).to.include({ replyCode: 406, replyText: 'PRECONDITION_FAILED - partial tx completion', classId: 90, methodId: 20 });
    expect(methods()).to.not.include('tx.commit-ok');
    expect(c.messages.filter((m) => m.method.name === 'basic.return').map((m) => m.body.toString())).to.deep.equal(['unroutable']);
    expect((await admin.checkQueue('tx-open')).messageCount).to.equal(1);
    // m0's ack was committed; m1, unacked, came back when the channel closed.
    expect((await admin.checkQueue('tx-src')).messageCount).to.equal(1);
  });

  it('releases prefetch credit at commit, and answers commit-ok before the delivery it makes room for', async () => {
    await admin.assertQueue('tx-credit', { durable: false });
    for (const b of ['m0', 'm1']) admin.sendToQueue('tx-credit', Buffer.from(b));
    await admin.checkQueue('tx-credit');
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false });
    await c.expect('basic.qos-ok');
    c.method(1, 'basic.consume', { queue: 'tx-credit', consumerTag: 'ct', noLocal: false, noAck: false, exclusive: false, noWait: false, arguments: {} });
    const d0 = await c.expect('basic.deliver');

    c.method(1, 'basic.ack', { deliveryTag: d0.deliveryTag, multiple: false });
    expect(await roundTrip()).to.equal('exchange.declare-ok');
    methods();
    c.method(1, 'tx.commit', {});
    await c.expect('basic.deliver');
    expect(methods()).to.deep.equal(['tx.commit-ok', 'basic.deliver']);
  });

  it('delivers a direct reply at basic.publish, even when rolled back; a mandatory reply is returned at commit', async () => {
    const requester = await RawClient.open(broker.url);
    await requester.openChannel(1);
    requester.method(1, 'basic.consume', { queue: 'amq.rabbitmq.reply-to', consumerTag: '', noLocal: false, noAck: true, exclusive: false, noWait: false, arguments: {} });
    await requester.expect('basic.consume-ok');
    await admin.assertQueue('tx-requests', { durable: false });
    const request = new Promise<string>((resolve) => {
      void admin.consume('tx-requests', (m) => m && resolve(m.properties.replyTo as string), { noAck: true });
    });
    requester.publish(1, '', 'tx-requests', 'request', { replyTo: 'amq.rabbitmq.reply-to' });
    const address = await request;

    c.publish(1, '', address, 'first', {}, { mandatory: true });
    c.publish(1, '', address, 'second');
    expect(await roundTrip()).to.equal('exchange.declare-ok');
    await requester.waitFor(() => requester.messages.length === 2, 'both replies');
    expect(methods()).to.deep.equal(['exchange.declare-ok']);

    c.method(1, 'tx.rollback', {});
    await c.expect('tx.rollback-ok');
    c.publish(1, '', address, 'third', {}, { mandatory: true });
    c.method(1, 'tx.commit', {});
    await c.expect('tx.commit-ok');
    expect(methods()).to.deep.equal(['tx.rollback-ok', 'basic.return', 'tx.commit-ok']);
    expect(c.messages.map((m) => m.body.toString())).to.deep.equal(['third']);
    await requester.waitFor(() => requester.messages.length === 3, 'the third reply');
    expect(requester.messages.map((m) => m.body.toString())).to.deep.equal(['first', 'second', 'third']);
    requester.destroy();
  });
});

/**
 * The delayed-message plugin's exchange type stores a delayed message in its route callback
 * (rabbit_exchange_type_delayed_message:route/2 returns no queue), which a transaction runs at
 * basic.publish. The reference RabbitMQ has no plugin, so this follows the plugin's source.
 */
describe('transactions and the x-delayed-message exchange', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0 });

  it('holds a delayed message from basic.publish on, even when rolled back; a mandatory one is returned at commit', async () => {
    const conn = await connect(broker.url);
    const admin = await channel(conn);
    await admin.assertExchange('tx-delayed', 'x-delayed-message', { durable: false, arguments: { 'x-delayed-type': 'fanout' } });
    await admin.assertQueue('tx-delayed-q', { durable: false });
    await admin.bindQueue('tx-delayed-q', 'tx-delayed', '');
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'tx.select', {});
    await c.expect('tx.select-ok');

    const delay = { headers: { 'x-delay': F.int32(1000) } };
    c.publish(1, 'tx-delayed', '', 'rolled-back', delay, { mandatory: true });
    c.method(1, 'tx.rollback', {});
    await c.expect('tx.rollback-ok');
    c.publish(1, 'tx-delayed', '', 'committed', delay, { mandatory: true });
    c.method(1, 'tx.commit', {});
    await c.expect('tx.commit-ok');
    expect(c.messages.map((m) => [m.method.name, m.body.toString()])).to.deep.equal([['basic.return', 'committed']]);

    expect((await admin.checkQueue('tx-delayed-q')).messageCount).to.equal(0);
    clock.advance(1000);
    expect((await admin.checkQueue('tx-delayed-q')).messageCount).to.equal(2);
    c.destroy();
    await conn.close();
  });
});
