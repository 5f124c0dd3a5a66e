import amqp from 'amqplib';
import { expect } from 'chai';
import { startBroker } from '../../src/broker.js';

/**
 * broker.metrics totals never go down: deleted queues and vhosts keep their counts in them. The
 * management overview is the sum of the vhosts' stats: a deleted queue's stay in it, a deleted
 * vhost's leave it (RabbitMQ 3.10.8: GET /api/overview after DELETE /api/vhosts/v has no
 * publish count from v any more).
 */
describe('BrokerMetrics totals (src/metrics/broker-metrics.ts)', () => {
  it('counts of a deleted queue stay in the overview; those of a deleted vhost stay in rabbitmq_global_* only', async () => {
    const b = await startBroker({ port: 0, logLevel: 'silent', vhosts: ['/', 'v2'] });
    try {
      const conn = await amqp.connect(`${b.url}/v2`);
      const ch = await conn.createChannel();
      await ch.assertQueue('gone');
      ch.publish('', 'gone', Buffer.from('x'));
      const m = await ch.get('gone');
      if (m) ch.ack(m);
      await ch.deleteQueue('gone');
      await conn.close();
      const metrics = b.broker.metrics;
      const v2 = b.broker.vhosts.get('v2')!;
      const expected = { publish: 1, get: 1, ack: 1, deliver_get: 1 };
      expect(metrics.vhost(v2)).to.include(expected);
      expect(metrics.overview()).to.include(expected);
      expect(b.broker.deleteVhost('v2')).to.equal(true);
      expect(metrics.overview()).to.include({ publish: 0, get: 0, ack: 0, deliver_get: 0 });
      const g = metrics.global();
      expect([g.received, g.routed, g.classic.get, g.classic.ack]).to.deep.equal([1, 1, 1, 1]);
      expect(metrics.churnStats()).to.include({ queue_created: 1, queue_deleted: 1, connection_created: 1 });
    } finally {
      await b.close();
    }
  });

  it('connection.start names the cluster as broker.identity does', async () => {
    const b = await startBroker({ port: 0, logLevel: 'silent' });
    try {
      const conn = await amqp.connect(b.url);
      const props = (conn.connection as unknown as { serverProperties: Record<string, unknown> }).serverProperties;
      expect(props['cluster_name']).to.equal(b.broker.identity.cluster);
      await conn.close();
    } finally {
      await b.close();
    }
  });
});
