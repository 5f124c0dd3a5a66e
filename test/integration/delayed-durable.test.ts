import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * x-delayed-message on a durable exchange (rabbitmq-delayed-message-exchange README: delayed
 * messages "will survive a node restart"): a delayed message, persistent or not (the plugin
 * stores every one), is stored with its absolute due time, survives a restart, and is routed
 * when that time comes — on the injected clock — with its own delivery mode.
 */
describe('delayed messages of a durable x-delayed-message exchange survive a restart', () => {
  let dataDir: string;
  let broker: RunningBroker | undefined;
  const start = Date.UTC(2026, 5, 1);

  beforeEach(() => {
    dataDir = makeTmpDir('warren-delayed-');
  });
  afterEach(async () => {
    await broker?.close();
    removeDir(dataDir);
  });

  it('routes the stored message at its due time after the broker restarted', async () => {
    const clock1 = new FakeClock(start);
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, clock: clock1, heartbeat: 0 });
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertExchange('later', 'x-delayed-message', { durable: true, arguments: { 'x-delayed-type': 'direct' } });
    await ch.assertQueue('later-q', { durable: true });
    await ch.bindQueue('later-q', 'later', 'k');
    await ch.assertQueue('later-bcc', { durable: true });
    await ch.bindQueue('later-bcc', 'later', 'b');
    ch.publish('later', 'k', Buffer.from('in five seconds'), { persistent: true, headers: { 'x-delay': 5000, BCC: ['b'] } });
    ch.publish('later', 'k', Buffer.from('transient, kept all the same'), { persistent: false, headers: { 'x-delay': 5000 } });
    await ch.waitForConfirms();
    clock1.advance(2000);
    expect((await ch.checkQueue('later-q')).messageCount).to.equal(0);
    await conn.close();
    await broker.close();

    // Two seconds have passed; the restarted broker's clock goes on from there.
    const clock2 = new FakeClock(start + 2000);
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, clock: clock2, heartbeat: 0 });
    const conn2 = await connect(broker.url);
    const ch2 = await channel(conn2);
    clock2.advance(2999);
    expect((await ch2.checkQueue('later-q')).messageCount).to.equal(0);
    clock2.advance(1);
    const m = await ch2.get('later-q', { noAck: true });
    expect(m && m.content.toString()).to.equal('in five seconds');
    const transient = await ch2.get('later-q', { noAck: true });
    expect(transient && [transient.content.toString(), transient.properties.deliveryMode]).to.deep.equal(['transient, kept all the same', 1]);
    expect(await ch2.get('later-q')).to.equal(false);
    // The BCC key still routes after the restart, and the BCC header is not delivered.
    const bcc = await ch2.get('later-bcc', { noAck: true });
    expect(bcc && bcc.content.toString()).to.equal('in five seconds');
    expect(bcc && bcc.properties.headers).to.deep.equal({ 'x-delay': 5000 });
    await conn2.close();
  });
});
