import { expect } from 'chai';
import amqp from 'amqplib';
import { POLICY_CHUNK } from '../../src/vhost/vhost.js';
import { useBroker } from '../support/broker.js';

/**
 * A policy change over thousands of queues matches POLICY_CHUNK of them in its own turn and the
 * rest in later turns (before, 100,000 queues held the event loop for 0.4 s); once the broker
 * settled, every queue has the policies in force, whatever changed meanwhile.
 */
describe('policies over thousands of queues', function () {
  this.timeout(60000);
  const b = useBroker({ heartbeat: 0 });
  const N = 2 * POLICY_CHUNK + 100;
  const policyOf = (q: string): string | undefined => b.running.inspect.queue(q)!.policy;

  before(async () => {
    const conn = await amqp.connect(b.url);
    const ch = await conn.createChannel();
    for (let i = 0; i < N; i++) void ch.assertQueue(`many-${i}`, { durable: false });
    await ch.checkQueue(`many-${N - 1}`);
    await conn.close();
  });

  it('matches a chunk in the turn of the change and the rest in later turns; a change meanwhile wins', async () => {
    const policies = b.running.broker.policies;
    policies.put('policy', '/', 'cap', { pattern: '^many-', definition: { 'max-length': 1 } });
    const matched = (name: string): number => Array.from({ length: N }, (_, i) => policyOf(`many-${i}`)).filter((p) => p === name).length;
    expect(matched('cap'), 'in the turn of the change').to.equal(POLICY_CHUNK);
    // A second, higher-priority policy before the first is applied everywhere.
    policies.put('policy', '/', 'cap2', { pattern: '^many-', definition: { 'max-length': 2 }, priority: 1 });
    expect(matched('cap2')).to.equal(POLICY_CHUNK);
    await b.running.broker.settle();
    expect(matched('cap2')).to.equal(N);

    // What a client sees: the last queue holds at most 2 (drop-head).
    const conn = await amqp.connect(b.url);
    try {
      const ch = await conn.createConfirmChannel();
      for (const body of ['a', 'b', 'c']) ch.sendToQueue(`many-${N - 1}`, Buffer.from(body));
      await ch.waitForConfirms();
      expect((await ch.checkQueue(`many-${N - 1}`)).messageCount).to.equal(2);
      policies.delete('policy', '/', 'cap2');
      policies.delete('policy', '/', 'cap');
      await b.running.broker.settle();
      expect(matched('cap') + matched('cap2')).to.equal(0);
      for (const body of ['d', 'e', 'f']) ch.sendToQueue(`many-${N - 1}`, Buffer.from(body));
      await ch.waitForConfirms();
      expect((await ch.checkQueue(`many-${N - 1}`)).messageCount).to.equal(5);
    } finally {
      await conn.close();
    }
  });
});
