import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';

/**
 * A durable x-message-deduplication exchange with x-cache-persistence=disk after SIGKILL: every
 * confirmed message's cache entry was committed with it (DESIGN.md, convention 8), so a
 * publisher that republishes everything after the crash adds nothing.
 */
describe('deduplication exchange with a disk cache: SIGKILL', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-dedup-crash-');

  it('a publisher republishing every message after the crash leaves one copy of each', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertExchange('events', 'x-message-deduplication', { durable: true, arguments: { 'x-cache-size': 10000, 'x-cache-persistence': 'disk' } });
    await ch.assertQueue('events-q', { durable: true });
    await ch.bindQueue('events-q', 'events', '');
    const ids = Array.from({ length: 200 }, (_, i) => `event-${i}`);
    for (const id of ids) ch.publish('events', '', Buffer.from(id), { persistent: true, headers: { 'x-deduplication-header': id } });
    await ch.waitForConfirms();
    await broker.kill();

    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await confirmChannel(conn2);
      for (const id of ids) ch2.publish('events', '', Buffer.from(`${id} again`), { persistent: true, headers: { 'x-deduplication-header': id } });
      ch2.publish('events', '', Buffer.from('new'), { persistent: true, headers: { 'x-deduplication-header': 'event-200' } });
      await ch2.waitForConfirms();
      const reader = await channel(conn2);
      const bodies: string[] = [];
      for (let m = await reader.get('events-q', { noAck: true }); m !== false; m = await reader.get('events-q', { noAck: true })) bodies.push(m.content.toString());
      expect(bodies).to.deep.equal([...ids, 'new']);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });
});
