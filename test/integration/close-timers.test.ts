import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * A closed broker leaves no timer behind (a test process starts and closes many): message TTL,
 * x-expires, a durable delayed message and an at-least-once dead-letter's retry each had one
 * that fired after close() on the closed store ("store … is closed", logged as an error in a
 * timer callback). What they were waiting for happens after the next start instead.
 */
describe('Broker.close stops the timers of queues and delayed messages', () => {
  let broker: RunningBroker | undefined;
  // Closed before the directory goes (hooks run in the order they are declared).
  afterEach(async () => {
    await broker?.close();
  });
  const dir = useTmpDir('warren-close-timers-');

  it('fires nothing after close, and the next start does what was due', async () => {
    const start = Date.UTC(2026, 10, 30);
    const clock = new FakeClock(start);
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir: dir.path, clock, heartbeat: 0, deadLetterRetryMs: 1000 });
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('ttl', { durable: true, arguments: { 'x-message-ttl': 1000 } });
    await ch.assertQueue('unused', { durable: true, arguments: { 'x-expires': 1000 } });
    await ch.assertExchange('later', 'x-delayed-message', { durable: true, arguments: { 'x-delayed-type': 'direct' } });
    await ch.assertQueue('later-q', { durable: true });
    await ch.bindQueue('later-q', 'later', 'k');
    // A quorum queue whose dead-letters find no queue: held, retried every second.
    await ch.assertQueue('alo', {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish', 'x-dead-letter-exchange': 'nowhere' },
    });
    ch.publish('', 'ttl', Buffer.from('expires'), { persistent: true });
    ch.publish('later', 'k', Buffer.from('delayed'), { persistent: true, headers: { 'x-delay': 1000 } });
    ch.publish('', 'alo', Buffer.from('held'), { persistent: true });
    await ch.waitForConfirms();
    const m = await ch.get('alo');
    expect(m && m.content.toString()).to.equal('held');
    ch.nack(m as never, false, false);
    await ch.checkQueue('alo');
    expect(broker.broker.vhosts.get('/')!.queues.get('alo')!.heldDeadLetterCount).to.equal(1);
    await conn.close();
    await broker.close();
    broker = undefined;

    // Every timer was due within a second: advancing past them fires nothing on the closed store.
    await clock.advance(5000);

    const clock2 = new FakeClock(start + 5000);
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir: dir.path, clock: clock2, heartbeat: 0, deadLetterRetryMs: 1000 });
    const conn2 = await connect(broker.url);
    const ch2 = await channel(conn2);
    await clock2.advance(1);
    expect((await ch2.checkQueue('ttl')).messageCount).to.equal(0);
    const delayed = await ch2.get('later-q', { noAck: true });
    expect(delayed && delayed.content.toString()).to.equal('delayed');
    expect(broker.broker.vhosts.get('/')!.queues.get('alo')!.heldDeadLetterCount).to.equal(1);
    await clock2.advance(1000);
    expect(broker.broker.vhosts.get('/')!.queues.has('unused')).to.equal(false);
    await conn2.close();
  });
});
