import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';

/** RabbitMQ's memory alarm and blocked-connection notifications (RabbitMQ "alarms" and "connection-blocked" guides). */
describe('resource alarms', () => {
  const clock = new FakeClock();
  // A watermark so low that the first memory check raises the alarm.
  const broker = useBroker({ clock, memoryHighWatermark: 1e-9 });

  it('blocks a connection that publishes during the alarm with connection.blocked, holding that publish back; idle ones and consumers are not blocked', async () => {
    const publisher = await connect(broker.url);
    const consumer = await connect(broker.url);
    const idle = await connect(broker.url);
    let idleBlocked = false;
    idle.on('blocked', () => (idleBlocked = true));
    try {
      const pch = await channel(publisher);
      const cch = await channel(consumer);
      const ich = await channel(idle);
      const { queue } = await cch.assertQueue('', { exclusive: false, autoDelete: false });
      pch.sendToQueue(queue, Buffer.from('before'));
      await pch.checkQueue(queue);
      ich.sendToQueue(queue, Buffer.from('idle publisher, before the alarm'));
      expect((await ich.checkQueue(queue)).messageCount).to.equal(2);
      const blocked = new Promise<string>((resolve) => publisher.on('blocked', resolve));
      clock.advance(1000);
      // As rabbit_reader: 'blocking' until the connection sends a publish's content header; then
      // 'blocked' (not read: the body waits in the socket), and connection.blocked.
      pch.sendToQueue(queue, Buffer.from('held back'));
      expect(await blocked).to.equal('low on memory');
      // The consumer's connection is still served; the held-back publish never reached the queue.
      const got: string[] = [];
      for (let m = await cch.get(queue, { noAck: true }); m; m = await cch.get(queue, { noAck: true })) got.push(m.content.toString());
      expect(got).to.deep.equal(['before', 'idle publisher, before the alarm']);
      // The idle connection (it published before the alarm, not during it) was never blocked.
      await ich.checkQueue(queue);
      expect(idleBlocked).to.equal(false);
      await cch.deleteQueue(queue);
    } finally {
      // A blocked publisher cannot complete a close handshake; drop its socket.
      (publisher as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      await consumer.close();
      await idle.close();
    }
  });
});
