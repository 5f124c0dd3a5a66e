import { expect } from 'chai';
import { startBroker } from '../../src/broker.js';
import { PolicyValidationError } from '../../src/policy/validation.js';
import { channel, connect } from '../support/amqp.js';
import { drainBodies } from '../support/session.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * Policies are durable definitions (RabbitMQ keeps them in its metadata store): they survive a
 * restart and apply to recovered queues; policies in the config file are applied at each boot.
 */
describe('policies across restarts and from the config file', function () {
  this.timeout(30000);
  const dataDir = useTmpDir('warren-policy-');

  it('a policy and an operator policy set before a restart are listed and in force after it', async () => {
    const first = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    first.broker.policies.put('policy', '/', 'cap', { pattern: '^durable\\.', definition: { 'max-length': 2 }, priority: 3, applyTo: 'queues' });
    first.broker.policies.put('operator-policy', '/', 'op', { pattern: '.*', definition: { 'max-length': 100 } });
    first.broker.policies.put('policy', '/', 'gone', { pattern: 'x', definition: { 'max-length': 1 } });
    first.broker.policies.delete('policy', '/', 'gone');
    let conn = await connect(first.url);
    let ch = await channel(conn);
    await ch.assertQueue('durable.q', { durable: true });
    for (const b of ['1', '2', '3']) ch.sendToQueue('durable.q', Buffer.from(b), { persistent: true });
    await ch.checkQueue('durable.q');
    await conn.close();
    await first.close();

    const second = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      expect(second.broker.policies.list('policy')).to.deep.equal([
        { vhost: '/', name: 'cap', pattern: '^durable\\.', 'apply-to': 'queues', definition: { 'max-length': 2 }, priority: 3 },
      ]);
      expect(second.broker.policies.list('operator-policy').map((p) => p.name)).to.deep.equal(['op']);
      expect(second.broker.policies.queueInfo('/', 'durable.q')).to.deep.equal({
        policy: 'cap', operator_policy: 'op', effective_policy_definition: { 'max-length': 2 },
      });
      conn = await connect(second.url);
      ch = await channel(conn);
      ch.sendToQueue('durable.q', Buffer.from('4'), { persistent: true });
      expect(await drainBodies(ch, 'durable.q')).to.deep.equal(['3', '4']);
      await conn.close();
    } finally {
      await second.close();
    }
  });

  it('applies the config file\'s policies at boot (definitions shape) and refuses an invalid one with RabbitMQ\'s text', async () => {
    const policies = [{ vhost: '/', name: 'from-config', pattern: '^cfg$', 'apply-to': 'all' as const, definition: { 'max-length': 1 }, priority: 0 }];
    const b = await startBroker({ port: 0, logLevel: 'silent', policies });
    try {
      const conn = await connect(b.url);
      const ch = await channel(conn);
      await ch.assertQueue('cfg', { durable: false });
      for (const m of ['a', 'b']) ch.sendToQueue('cfg', Buffer.from(m));
      expect(await drainBodies(ch, 'cfg')).to.deep.equal(['b']);
      await conn.close();
    } finally {
      await b.close();
    }
    const bad = [{ ...policies[0]!, definition: { 'max-length': -1 } }];
    await startBroker({ port: 0, logLevel: 'silent', policies: bad }).then(
      () => expect.fail('expected the broker to refuse the config'),
      (e: Error) => {
        expect(e).to.be.instanceOf(PolicyValidationError);
        expect(e.message).to.equal('Validation failed\n\n-1 is not a valid maximum length\n');
      },
    );
  });
});
