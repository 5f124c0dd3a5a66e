import { expect } from 'chai';
import { AMQPClient } from '@cloudamqp/amqp-client';
import { useBroker } from '../support/broker.js';

/** A second client library, written independently of amqplib, works against Warren too. */
describe('@cloudamqp/amqp-client', () => {
  const broker = useBroker();

  it('declares, publishes with confirms, consumes with prefetch and acks, and closes cleanly', async () => {
    const client = new AMQPClient(broker.url);
    const conn = await client.connect();
    const ch = await conn.channel();
    await ch.confirmSelect();
    await ch.prefetch(2);
    const q = await ch.queueDeclare('', { exclusive: true });
    for (const body of ['one', 'two', 'three']) {
      await ch.basicPublish('', q.name, body, { deliveryMode: 2, headers: { n: body.length } });
    }
    const got: Array<[string, unknown]> = [];
    const consumer = await ch.basicConsume(q.name, { noAck: false }, async (msg) => {
      got.push([msg.bodyToString() ?? '', msg.properties.headers]);
      await msg.ack();
      if (got.length === 3) await consumer.cancel();
    });
    await consumer.wait();
    expect(got).to.deep.equal([['one', { n: 3 }], ['two', { n: 3 }], ['three', { n: 5 }]]);
    const missing = await conn.channel();
    const err = await missing.queueDeclare('no-such-queue', { passive: true }).then(() => null, (e: Error) => e);
    expect(err?.message).to.contain("NOT_FOUND - no queue 'no-such-queue' in vhost '/'");
    await conn.close();
  });
});
