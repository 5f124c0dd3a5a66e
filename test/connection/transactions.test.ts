import { expect } from 'chai';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/** Before the split of Publisher from Channel, a failed commit dropped its held acks: the message stayed unacked forever. */
describe('tx.commit that fails while publishing', () => {
  const broker = useBroker();

  it('leaves the acknowledgements of the transaction uncommitted: the message is requeued when the channel closes', async () => {
    const conn = await connect(broker.url);
    const ch = await channel(conn);
    await ch.assertQueue('tx-acked');
    await ch.assertExchange('tx-gone', 'fanout');
    ch.sendToQueue('tx-acked', Buffer.from('m'));

    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'tx.select', {});
    await c.expect('tx.select-ok');
    c.method(1, 'basic.get', { reserved1: 0, queue: 'tx-acked', noAck: false });
    const got = await c.expect('basic.get-ok');
    c.method(1, 'basic.ack', { deliveryTag: got.deliveryTag, multiple: false });
    c.publish(1, 'tx-gone', '', Buffer.from('held'));
    // A round trip: the publish has been held before the exchange goes.
    c.method(1, 'exchange.declare', { reserved1: 0, exchange: 'tx-gone', type: 'fanout', passive: true, durable: false, autoDelete: false, internal: false, noWait: false, arguments: {} });
    await c.expect('exchange.declare-ok');
    // The held publish cannot be routed at commit: its exchange is gone. (Warren routes held
    // publishes at commit; RabbitMQ routes them at publish time and would commit here.)
    await ch.deleteExchange('tx-gone');
    c.method(1, 'tx.commit', {});
    const close = await c.expect('channel.close');
    expect(close).to.include({ replyCode: 404, replyText: "NOT_FOUND - no exchange 'tx-gone' in vhost '/'", classId: 90, methodId: 20 });
    c.method(1, 'channel.close-ok', {});

    // The ack was never committed, so closing the channel put the message back.
    expect((await ch.checkQueue('tx-acked')).messageCount).to.equal(1);
    c.close();
    await conn.close();
  });
});
