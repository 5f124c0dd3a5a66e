import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';

/** RabbitMQ's memory alarm and blocked-connection notifications (RabbitMQ "alarms" and "connection-blocked" guides). */
describe('resource alarms', () => {
  const clock = new FakeClock();
  // A watermark so low that the first memory check raises the alarm.
  const broker = useBroker({ clock, memoryHighWatermark: 1e-9 });

  it('blocks publishing connections with connection.blocked and stops reading them; consumers go on', async () => {
    const publisher = await connect(broker.url);
    const consumer = await connect(broker.url);
    try {
      const pch = await channel(publisher);
      const cch = await channel(consumer);
      const { queue } = await cch.assertQueue('', { exclusive: false, autoDelete: false });
      pch.sendToQueue(queue, Buffer.from('before'));
      expect((await pch.checkQueue(queue)).messageCount).to.equal(1);
      const blocked = new Promise<string>((resolve) => publisher.on('blocked', resolve));
      clock.advance(1000);
      expect(await blocked).to.equal('low on memory');
      pch.sendToQueue(queue, Buffer.from('held back'));
      // The consumer's connection is still served; the held-back publish never reached the queue.
      const m = await cch.get(queue, { noAck: true });
      expect(m && m.content.toString()).to.equal('before');
      expect((await cch.checkQueue(queue)).messageCount).to.equal(0);
      await cch.deleteQueue(queue);
    } finally {
      // A blocked publisher cannot complete a close handshake; drop its socket.
      (publisher as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      await consumer.close();
    }
  });
});
