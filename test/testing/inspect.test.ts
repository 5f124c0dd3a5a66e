import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { channel, confirmChannel, connect, connectNamed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';

/**
 * broker.inspect (docs/testing.md): the broker's objects as plain values, and a queue's
 * messages without consuming, reordering or expiring them. Everything is set up by a client
 * over AMQP (amqplib) and read back the way a test would assert on it.
 */
describe('test toolkit: inspect', () => {
  const clock = new FakeClock();
  // A small memory window, so a durable queue pages persistent messages out early.
  const b = useBroker({ clock, queueMemoryWindow: 4 });
  afterEach(() => b.running.reset());

  it('lists queues, exchanges and bindings as plain objects', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertExchange('orders', 'topic', { durable: true, arguments: { 'alternate-exchange': 'unrouted' } });
    await ch.assertExchange('audit', 'fanout', { durable: false });
    await ch.assertQueue('orders.eu', { durable: true, arguments: { 'x-max-length': 10 } });
    const { queue: mine } = await ch.assertQueue('', { exclusive: true });
    await ch.bindQueue('orders.eu', 'orders', 'eu.#', { note: 'x' });
    await ch.bindExchange('audit', 'orders', '#');
    ch.publish('orders', 'eu.de', Buffer.from('a'));
    await ch.checkQueue('orders.eu'); // a round trip: the publish is routed by now

    const { inspect } = b.running;
    expect(inspect.queue('orders.eu')).to.deep.equal({
      vhost: '/', name: 'orders.eu', type: 'classic', durable: true, autoDelete: false, exclusive: false,
      arguments: { 'x-max-length': 10 }, messages: 1, ready: 1, unacked: 0, consumers: 0, policy: undefined,
    });
    expect(inspect.queue(mine)).to.include({ exclusive: true, durable: false });
    expect(inspect.queue('nope')).to.equal(undefined);
    expect(inspect.queues().map((q) => q.name).sort()).to.deep.equal([mine, 'orders.eu'].sort());

    const exchanges = inspect.exchanges();
    expect(exchanges.find((x) => x.name === 'orders')).to.deep.equal({
      vhost: '/', name: 'orders', type: 'topic', durable: true, autoDelete: false, internal: false, arguments: { 'alternate-exchange': 'unrouted' },
    });
    // The standard exchanges of every vhost are there too.
    expect(exchanges.map((x) => x.name)).to.include.members(['', 'amq.direct', 'amq.fanout', 'amq.topic', 'amq.headers', 'amq.match', 'amq.rabbitmq.trace']);

    const bindings = inspect.bindings();
    expect(bindings).to.deep.include({ vhost: '/', source: 'orders', destination: 'orders.eu', destinationType: 'queue', routingKey: 'eu.#', arguments: { note: 'x' } });
    expect(bindings).to.deep.include({ vhost: '/', source: 'orders', destination: 'audit', destinationType: 'exchange', routingKey: '#', arguments: {} });
    // The default exchange binds every queue by its name, as rabbitmqctl list_bindings shows.
    expect(bindings).to.deep.include({ vhost: '/', source: '', destination: 'orders.eu', destinationType: 'queue', routingKey: 'orders.eu', arguments: {} });
    await conn.close();
  });

  it('lists consumers and connections, with the client-given connection_name', async () => {
    const conn = await connectNamed(b.url, 'worker-1');
    const ch = await channel(conn);
    await ch.assertQueue('jobs', { arguments: { 'x-single-active-consumer': true } });
    await ch.prefetch(5);
    await ch.consume('jobs', () => {}, { consumerTag: 'first', priority: 3 });
    await ch.consume('jobs', () => {}, { consumerTag: 'second', noAck: true });

    const { inspect } = b.running;
    const [connInfo] = inspect.connections();
    expect(connInfo).to.include({ connectionName: 'worker-1', user: 'guest', vhost: '/', state: 'open', channels: 1, blocked: false, peerHost: '127.0.0.1' });
    expect(connInfo!.name).to.match(/^127\.0\.0\.1:\d+ -> 127\.0\.0\.1:\d+$/);
    expect(connInfo!.clientProperties).to.include({ connection_name: 'worker-1', product: 'amqplib' });

    const consumers = inspect.consumers();
    expect(consumers).to.have.length(2);
    expect(consumers[0]).to.deep.equal({
      vhost: '/', queue: 'jobs', consumerTag: 'first', connection: connInfo!.name, connectionName: 'worker-1', channel: 1, ack: true,
      exclusive: false, prefetch: 5, priority: 3, active: true, unacked: 0,
    });
    // Single active consumer: the second one waits.
    expect(consumers[1]).to.include({ consumerTag: 'second', ack: false, active: false });
    await conn.close();
  });

  it('shows ready and unacknowledged messages with their properties, without consuming or reordering them', async () => {
    const conn = await connectNamed(b.url, 'app');
    const ch = await channel(conn);
    await ch.assertQueue('work');
    for (const [i, body] of ['one', 'two', 'three'].entries()) {
      ch.sendToQueue('work', Buffer.from(body), { messageId: `m${i}`, contentType: 'text/plain', headers: { attempt: i, tags: ['a', 'b'], nested: { ok: true } } });
    }
    const got = await ch.get('work');
    if (!got) throw new Error('no message');
    const first = got;
    expect(first.content.toString()).to.equal('one');

    const { ready, unacked } = b.running.inspect.messages('work');
    expect(ready.map((m) => m.body.toString())).to.deep.equal(['two', 'three']);
    expect(ready[0]).to.deep.include({
      exchange: '', routingKey: 'work', redelivered: false, deliveryCount: 0, expiresAt: undefined, xDeath: undefined, persistent: false,
      properties: { contentType: 'text/plain', messageId: 'm1', headers: { attempt: 1, tags: ['a', 'b'], nested: { ok: true } } },
    });
    expect(unacked).to.have.length(1);
    expect(unacked[0]!.body.toString()).to.equal('one');
    expect(unacked[0]!.delivery).to.include({ connectionName: 'app', channel: 1, deliveryTag: first.fields.deliveryTag, consumerTag: undefined });

    // Looking took nothing: the queue still hands out two, then three, and the returned one
    // comes back first, marked redelivered.
    ch.nack(first, false, true);
    await ch.checkQueue('work'); // a round trip: the nack is handled by now
    const again = b.running.inspect.messages('work');
    expect(again.ready.map((m) => [m.body.toString(), m.redelivered])).to.deep.equal([['one', true], ['two', false], ['three', false]]);
    expect(again.unacked).to.deep.equal([]);
    const order: string[] = [];
    for (let m = await ch.get('work', { noAck: true }); m; m = await ch.get('work', { noAck: true })) order.push(m.content.toString());
    expect(order).to.deep.equal(['one', 'two', 'three']);
    expect(() => b.running.inspect.messages('missing')).to.throw("no queue 'missing' in vhost '/'");
    await conn.close();
  });

  it('reads paged-out messages back from the store, in order, and leaves them there', async () => {
    const conn = await connect(b.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('big', { durable: true });
    for (let i = 0; i < 20; i++) ch.sendToQueue('big', Buffer.from(`m${i}`), { persistent: true, priority: i });
    // Transient ones arriving behind the paged-out ones stay in memory, after them.
    for (let i = 20; i < 23; i++) ch.sendToQueue('big', Buffer.from(`m${i}`));
    await ch.waitForConfirms();
    const q = b.running.broker.vhosts.get('/')!.queues.get('big')!;
    const inMemory = q.readyInMemory;
    expect(inMemory).to.be.at.most(7); // a window of 4 and the 3 transient ones: the rest is only in the store

    const { ready } = b.running.inspect.messages('big');
    expect(ready.map((m) => m.body.toString())).to.deep.equal(Array.from({ length: 23 }, (_, i) => `m${i}`));
    expect(ready.slice(0, 20).every((m) => m.persistent)).to.equal(true);
    expect(ready[19]!.properties).to.include({ deliveryMode: 2, priority: 19 });
    expect(q.readyInMemory).to.equal(inMemory);

    const got: string[] = [];
    for (let m = await ch.get('big', { noAck: true }); m; m = await ch.get('big', { noAck: true })) got.push(m.content.toString());
    expect(got).to.deep.equal(ready.map((m) => m.body.toString()));
    await conn.close();
  });

  it('shows the expiry, the x-death history and a quorum queue\'s delivery count', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('dead', { durable: true });
    await ch.assertQueue('short', { durable: true, arguments: { 'x-message-ttl': 60_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'dead' } });
    ch.sendToQueue('short', Buffer.from('soon'), { expiration: '5000' });
    ch.sendToQueue('short', Buffer.from('later'));
    await ch.checkQueue('short');
    const published = clock.now();
    const [soon, later] = b.running.inspect.messages('short').ready;
    expect(soon!.expiresAt).to.equal(published + 5000);
    expect(later!.expiresAt).to.equal(published + 60_000);

    await clock.advance(5000);
    const [dead] = b.running.inspect.messages('dead').ready;
    expect(dead!.body.toString()).to.equal('soon');
    expect(dead!.xDeath).to.deep.equal([{
      count: 1, reason: 'expired', queue: 'short', time: Math.floor(published / 1000) + 5, exchange: '', 'routing-keys': ['short'], 'original-expiration': '5000',
    }]);

    await ch.assertQueue('qq', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    ch.sendToQueue('qq', Buffer.from('retry me'));
    const m = await ch.get('qq');
    ch.nack(m as Exclude<typeof m, false>, false, true);
    await ch.checkQueue('qq');
    expect(b.running.inspect.messages('qq').ready[0]).to.include({ deliveryCount: 1, redelivered: true });
    await conn.close();
  });
});
