import { expect } from 'chai';
import type { ConsumeMessage } from 'amqplib';
import { startBroker } from '../../src/broker.js';
import { channel, connect, connectNamed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';

/** Whether a promise has settled yet (after the microtasks already queued have run). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(() => (done = true), () => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

/**
 * broker.until (docs/testing.md): promises resolved by broker events — a queue's length, a
 * drained queue, a consumer count, a message routed to a queue, a named connection — each with
 * a timeout that says what was still awaited. Nothing polls: the broker's hooks are set only
 * while something waits.
 */
describe('test toolkit: until', () => {
  const b = useBroker();
  afterEach(() => b.running.reset());

  it('queueLength resolves once the queue holds n ready messages (at once if it does)', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('q');
    const three = b.running.until.queueLength('q', 3);
    expect(b.running.broker.hooks.queues, 'a waiter is registered').to.not.equal(undefined);
    for (const body of ['a', 'b', 'c']) ch.sendToQueue('q', Buffer.from(body));
    const info = await three;
    expect(info).to.include({ name: 'q', ready: 3, unacked: 0, messages: 3 });
    expect(b.running.broker.hooks.queues, 'no waiter: hooks unset').to.equal(undefined);
    expect((await b.running.until.queueLength('q', 2)).ready).to.equal(3);
    await conn.close();
  });

  it('queueDrained waits for the last acknowledgement, not just for the last delivery', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('q');
    for (const body of ['a', 'b']) ch.sendToQueue('q', Buffer.from(body));
    await b.running.until.queueLength('q', 2);
    const received: ConsumeMessage[] = [];
    await ch.consume('q', (m) => m && received.push(m));
    const drained = b.running.until.queueDrained('q');
    await b.running.until.queue('q', (q) => q.ready === 0 && q.unacked === 2, { description: 'have both delivered' });
    expect(await settled(drained)).to.equal(false);
    ch.ack(received[0]!);
    await b.running.until.queue('q', (q) => q.unacked === 1);
    expect(await settled(drained)).to.equal(false);
    ch.ack(received[1]!);
    expect(await drained).to.include({ ready: 0, unacked: 0, consumers: 1 });
    await conn.close();
  });

  it('consumerCount follows consumers coming and going', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('q');
    const one = b.running.until.consumerCount('q', 1);
    const { consumerTag } = await ch.consume('q', () => {});
    expect(await one).to.include({ consumers: 1 });
    const none = b.running.until.consumerCount('q', 0);
    await ch.cancel(consumerTag);
    expect(await none).to.include({ consumers: 0 });
    await conn.close();
  });

  it('routed resolves with the next message routed to a queue (one that match accepts)', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertExchange('events', 'fanout');
    await ch.assertQueue('audit');
    await ch.bindQueue('audit', 'events', '');
    ch.publish('events', '', Buffer.from('old'));
    await b.running.until.queueLength('audit', 1);
    // Only messages routed from now on count, even with a consumer taking them at once.
    await ch.consume('audit', () => {}, { noAck: true });
    const next = b.running.until.routed('audit');
    const large = b.running.until.routed('audit', { match: (m) => m.properties.headers?.['size'] === 'large' });
    ch.publish('events', 'k', Buffer.from('small one'), { headers: { size: 'small' } });
    ch.publish('events', 'k', Buffer.from('large one'), { headers: { size: 'large' }, persistent: true });
    const first = await next;
    expect(first).to.include({ exchange: 'events', routingKey: 'k', redelivered: false });
    expect(first.body.toString()).to.equal('small one');
    expect((await large).body.toString()).to.equal('large one');
    await conn.close();
  });

  it('connection resolves once a client with that connection_name is open', async () => {
    const waiting = b.running.until.connection('billing');
    const other = await connectNamed(b.url, 'shipping');
    expect(await settled(waiting)).to.equal(false);
    const conn = await connectNamed(b.url, 'billing');
    expect(await waiting).to.include({ connectionName: 'billing', state: 'open', user: 'guest', vhost: '/' });
    expect((await b.running.until.connection('billing')).connectionName).to.equal('billing');
    await conn.close();
    await other.close();
  });

  it('times out with what was still awaited and what the broker had instead', async () => {
    const conn = await connectNamed(b.url, 'present');
    const ch = await channel(conn);
    await ch.assertQueue('q');
    ch.sendToQueue('q', Buffer.from('x'));
    await b.running.until.queueLength('q', 1);
    const failures = await Promise.all([
      b.running.until.queueLength('q', 5, { timeout: 20 }).catch((e: Error) => e.message),
      b.running.until.queueDrained('absent', { timeout: 20 }).catch((e: Error) => e.message),
      b.running.until.consumerCount('q', 2, { timeout: 20 }).catch((e: Error) => e.message),
      b.running.until.routed('q', { timeout: 20 }).catch((e: Error) => e.message),
      b.running.until.connection('missing', { timeout: 20 }).catch((e: Error) => e.message),
    ]);
    expect(failures).to.deep.equal([
      "until.queueLength('q'): still waiting after 20 ms for queue 'q' in vhost '/' to hold at least 5 ready message(s); it has 1 ready and 0 unacknowledged message(s) and 0 consumer(s)",
      "until.queueDrained('absent'): still waiting after 20 ms for queue 'absent' in vhost '/' to be drained (no ready and no unacknowledged messages); the queue does not exist",
      "until.consumerCount('q'): still waiting after 20 ms for queue 'q' in vhost '/' to have 2 consumer(s); it has 1 ready and 0 unacknowledged message(s) and 0 consumer(s)",
      "until.routed('q'): still waiting after 20 ms for a message routed to queue 'q' in vhost '/' (none arrived)",
      "until.connection('missing'): still waiting after 20 ms for an open connection named 'missing' (open connections: 'present')",
    ]);
    expect(b.running.broker.hooks.queues).to.equal(undefined);
    expect(b.running.broker.hooks.connections).to.equal(undefined);
    await conn.close();
  });

  it('rejects what still waits when the broker closes', async () => {
    const own = await startBroker({ port: 0, logLevel: 'silent' });
    const waiting = own.until.queueLength('never', 1, { timeout: 60_000 }).catch((e: Error) => e.message);
    await own.close();
    expect(await waiting).to.equal('the broker was closed');
  });

  it('rejects when a predicate throws, and for a vhost that does not exist', async () => {
    const conn = await connect(b.url);
    const ch = await channel(conn);
    await ch.assertQueue('q');
    const failing = b.running.until.queue('q', () => {
      throw new Error('bad predicate');
    });
    expect(await failing.catch((e: Error) => e.message)).to.equal('bad predicate');
    expect(() => b.running.until.queueLength('q', 1, { vhost: 'nowhere' })).to.throw("no vhost 'nowhere'");
    await conn.close();
  });
});
