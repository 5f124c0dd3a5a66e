import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { confirmChannel, connect, type ConsumeMessage } from '../support/amqp.js';
import { useBroker, waitUntil } from '../support/broker.js';
import { call } from '../support/management.js';
import { samples } from '../metrics/prometheus-text.js';

/**
 * Consumer capacity, as RabbitMQ 3.10 measures it (rabbit_queue_consumers:capacity/1): the
 * moving average (half-life one second) of the share of time a classic queue could deliver at
 * once; inactive from a delivery attempt that found its consumers at their prefetch, active
 * from the next delivery. On the injected clock, so each figure is exact: after t ms inactive
 * from 1.0 it is 0.5^(t/1000).
 */
describe('consumer capacity (management API and Prometheus)', function () {
  const clock = new FakeClock(Date.UTC(2026, 10, 30));
  const b = useBroker({ clock, heartbeat: 0, managementPort: 0, prometheusPort: 0 });

  const capacity = async (queue: string) => {
    const q = (await call(b.running.managementUrl!, 'GET', `/api/queues/%2F/${queue}`)).json;
    const metrics = samples(await (await fetch(`${b.running.broker.prometheusUrl}/metrics/per-object`)).text());
    const key = `{queue="${queue}",vhost="/"}`;
    return {
      api: [q.consumer_capacity, q.consumer_utilisation] as number[],
      prometheus: [metrics.get(`rabbitmq_queue_consumer_capacity${key}`), metrics.get(`rabbitmq_queue_consumer_utilisation${key}`)],
    };
  };
  const expectCapacity = async (queue: string, want: number) => {
    const got = await capacity(queue);
    for (const v of [...got.api, ...got.prometheus]) expect(v).to.be.closeTo(want, 1e-9);
  };

  it('falls while the consumers are at their prefetch with messages ready, and climbs back once they take them', async () => {
    const conn = await connect(b.url);
    try {
      const ch = await confirmChannel(conn);
      await ch.assertQueue('cap.q', { durable: false });
      expect((await capacity('cap.q')).api).to.deep.equal([0, 0]);
      await ch.prefetch(1);
      const got: ConsumeMessage[] = [];
      await ch.consume('cap.q', (m) => got.push(m!), { noAck: false });
      await expectCapacity('cap.q', 1);
      ch.sendToQueue('cap.q', Buffer.from('1'));
      ch.sendToQueue('cap.q', Buffer.from('2'));
      await ch.waitForConfirms();
      await waitUntil(() => got.length === 1, 'the first delivery');
      // The second message found the consumer at its prefetch: inactive from now.
      clock.advance(1000);
      await expectCapacity('cap.q', 0.5);
      clock.advance(1000);
      await expectCapacity('cap.q', 0.25);
      ch.ack(got[0]!);
      await waitUntil(() => got.length === 2, 'the second delivery');
      // Active again (nothing ready now, so no attempt finds the consumer full).
      clock.advance(1000);
      await expectCapacity('cap.q', 0.5 * 1 + 0.5 * 0.25);
    } finally {
      await conn.close();
    }
  });

  it('is 1 for a quorum queue with consumers, as 3.10.8 reports it, and 0 without', async () => {
    const conn = await connect(b.url);
    try {
      const ch = await confirmChannel(conn);
      await ch.assertQueue('cap.qq', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      expect((await capacity('cap.qq')).api).to.deep.equal([0, 0]);
      await ch.prefetch(1);
      await ch.consume('cap.qq', () => {}, { noAck: false });
      for (let i = 0; i < 3; i++) ch.sendToQueue('cap.qq', Buffer.from(String(i)));
      await ch.waitForConfirms();
      clock.advance(5000);
      await expectCapacity('cap.qq', 1);
    } finally {
      await conn.close();
    }
  });
});
