import { expect } from 'chai';
import type { ConsumeMessage } from 'amqplib';
import { FakeClock } from '../../src/clock.js';
import { channel, closedWith, connect, connectionClosed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * Time in tests (docs/testing.md): with `clock: new FakeClock()`, `await clock.advance(ms)`
 * fires what falls due — message TTL, x-expires, delayed messages, consumer timeouts,
 * heartbeats — and resolves once the broker has settled it (Broker.settle), so the next line
 * sees the result. RabbitMQ's TTL, delayed-message and consumer-timeout rules are the core's
 * (test/integration); these tests check that the fake clock drives them with no sleeping.
 */
describe('test toolkit: time', () => {
  const clock = new FakeClock();
  const b = useBroker({ clock, consumerTimeout: 15_000 });
  afterEach(() => b.running.reset());

  it('is the broker\'s clock: running.clock is the FakeClock given', () => {
    expect(b.running.clock).to.equal(clock);
  });

  it('expires a message at its TTL and dead-letters it, settled when advance resolves', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('expired', { durable: true });
    await ch.assertQueue('orders', { durable: true, arguments: { 'x-message-ttl': 30_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'expired' } });
    ch.sendToQueue('orders', Buffer.from('stale'), { persistent: true });
    await b.running.until.queueLength('orders', 1);
    await clock.advance(29_999);
    expect(b.running.inspect.queue('orders')).to.include({ ready: 1 });
    await clock.advance(1);
    expect(b.running.inspect.queue('orders')).to.include({ ready: 0 });
    const [dead] = b.running.inspect.messages('expired').ready;
    expect(dead!.xDeath![0]).to.include({ reason: 'expired', queue: 'orders' });
    await conn.close();
  });

  it('deletes an unused queue at its x-expires', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('temp', { arguments: { 'x-expires': 60_000 } });
    await clock.advance(59_000);
    expect(b.running.inspect.queue('temp')).to.not.equal(undefined);
    await clock.advance(1_000);
    expect(b.running.inspect.queue('temp')).to.equal(undefined);
    await conn.close();
  });

  it('releases a delayed message when it falls due', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertExchange('later', 'x-delayed-message', { arguments: { 'x-delayed-type': 'direct' } });
    await ch.assertQueue('reminders');
    await ch.bindQueue('reminders', 'later', 'r');
    const received: ConsumeMessage[] = [];
    const delivered = new Promise<void>((resolve) => void ch.consume('reminders', (m) => {
      if (m) received.push(m);
      resolve();
    }, { noAck: true }));
    ch.publish('later', 'r', Buffer.from('ping'), { headers: { 'x-delay': 10_000 } });
    await ch.checkQueue('reminders');
    const routed = b.running.until.routed('reminders');
    await clock.advance(9_999);
    expect(received).to.deep.equal([]);
    await clock.advance(1);
    expect((await routed).body.toString()).to.equal('ping');
    await delivered;
    expect(received.map((m) => m.content.toString())).to.deep.equal(['ping']);
    await conn.close();
  });

  it('closes a channel whose delivery stays unacknowledged past the consumer timeout', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('slow');
    ch.sendToQueue('slow', Buffer.from('work'));
    const closed = new Promise<void>((resolve) => ch.once('close', resolve));
    const error = new Promise<Error>((resolve) => ch.once('error', resolve));
    await ch.consume('slow', () => {});
    await b.running.until.queue('slow', (q) => q.unacked === 1);
    await clock.advance(15_000);
    const err = await closedWith(error.then((e) => Promise.reject(e)));
    expect(err).to.include({ code: 406 });
    expect(err.text).to.equal('PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout value used: 15000 ms. This timeout value can be configured, see consumers doc guide to learn more');
    await closed;
    // The message went back to the queue.
    expect(b.running.inspect.messages('slow').ready[0]).to.include({ redelivered: true });
    await conn.close();
  });

  it('drops a client that misses its heartbeats (two intervals of silence)', async () => {
    const conn = await connect(b.url); // amqplib takes the broker's 60 s heartbeat
    const closed = connectionClosed(conn);
    await clock.advance(60_000);
    expect(b.running.inspect.connections()).to.have.length(1);
    await clock.advance(60_000);
    await closed;
    expect(b.running.inspect.connections()).to.deep.equal([]);
  });
});

describe('test toolkit: time, with a data dir', () => {
  const dir = makeTmpDir('warren-time-');
  const clock = new FakeClock();
  const b = useBroker({ clock, dataDir: dir, freeDiskSpace: () => 10e9 });
  after(() => removeDir(dir));

  it('advance resolves once what fell due is committed to the store', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertExchange('later', 'x-delayed-message', { durable: true, arguments: { 'x-delayed-type': 'fanout' } });
    await ch.assertQueue('due', { durable: true });
    await ch.bindQueue('due', 'later', '');
    ch.publish('later', '', Buffer.from('persisted'), { persistent: true, headers: { 'x-delay': 5_000 } });
    await ch.checkQueue('due');
    await b.running.broker.settle();
    const store = b.running.broker.store.messages;
    expect(store.stats().entries, 'LMDB stats count committed entries only').to.equal(0);
    await clock.advance(5_000);
    // Released, routed to the durable queue and written in the commit advance waited for.
    expect(store.stats().entries).to.equal(1);
    await conn.close();
  });
});
