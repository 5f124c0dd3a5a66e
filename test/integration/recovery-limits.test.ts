import { join } from 'node:path';
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { openLmdbStore } from '../../src/store/lmdb/index.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { drainBodies } from '../support/session.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * What a queue's limits and TTLs drop once it is recovered after a restart, as RabbitMQ does: its
 * queue process applies its arguments and policy (maybe_drop_head) and drops expired messages
 * once started, which rabbit_vhost:recover does after the bindings are back, so messages
 * dead-lettered then reach the queues bound to the dead-letter exchange.
 */
describe('limits and TTLs applied to recovered queues', function () {
  this.timeout(30000);
  const dataDir = useTmpDir('warren-recovery-limits-');
  const T0 = 1_700_000_000_000;
  const start = (clock: FakeClock): Promise<RunningBroker> => startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path, clock });

  /** A durable direct exchange dlx with a durable queue bound to it by key. */
  async function deadLetterTarget(ch: Awaited<ReturnType<typeof channel>>, key: string): Promise<void> {
    await ch.assertExchange('dlx', 'direct', { durable: true });
    await ch.assertQueue('dead', { durable: true });
    await ch.bindQueue('dead', 'dlx', key);
  }

  it('dead-letters the messages that expired while the broker was down through the bindings of the dead-letter exchange', async () => {
    const first = await start(new FakeClock(T0));
    let conn = await connect(first.url);
    const ch = await confirmChannel(conn);
    await deadLetterTarget(ch, 'src');
    await ch.assertQueue('src', { durable: true, arguments: { 'x-message-ttl': 60_000, 'x-dead-letter-exchange': 'dlx' } });
    for (const b of ['1', '2', '3']) ch.sendToQueue('src', Buffer.from(b), { persistent: true });
    await ch.waitForConfirms();
    await conn.close();
    await first.close();

    const second = await start(new FakeClock(T0 + 120_000));
    try {
      conn = await connect(second.url);
      const ch2 = await channel(conn);
      expect((await ch2.checkQueue('src')).messageCount).to.equal(0);
      expect(await drainBodies(ch2, 'dead')).to.deep.equal(['1', '2', '3']);
      await conn.close();
    } finally {
      await second.close();
    }
  });

  it('drops, or dead-letters, the head of a drop-head queue over its limit once recovered (a crash after a lowered limit was stored, before its drops were)', async () => {
    const first = await start(new FakeClock(T0));
    let conn = await connect(first.url);
    const ch = await confirmChannel(conn);
    await deadLetterTarget(ch, 'capped');
    await ch.assertQueue('capped', { durable: true });
    await ch.assertQueue('plain', { durable: true });
    for (let i = 1; i <= 10; i++) {
      ch.sendToQueue('capped', Buffer.from(String(i)), { persistent: true });
      ch.sendToQueue('plain', Buffer.from(String(i)), { persistent: true });
    }
    await ch.waitForConfirms();
    await conn.close();
    await first.close();
    // The state a crash leaves when a policy's commit reached the disk and its drops did not:
    // the policies as RabbitMQ's definitions hold them, written while the broker is down.
    const store = openLmdbStore(join(dataDir.path, 'store'));
    const policy = (name: string, pattern: string, definition: Record<string, unknown>) => ({
      kind: 'policy' as const, key: `/\u0000${name}`, value: { vhost: '/', name, pattern, 'apply-to': 'queues', definition, priority: 0 },
    });
    store.metadata.putDefinition(policy('cap', '^capped$', { 'max-length': 3, 'dead-letter-exchange': 'dlx' }));
    store.metadata.putDefinition(policy('cap-plain', '^plain$', { 'max-length-bytes': 4 }));
    await store.close();

    const second = await start(new FakeClock(T0));
    try {
      conn = await connect(second.url);
      const ch2 = await channel(conn);
      expect(await drainBodies(ch2, 'capped')).to.deep.equal(['8', '9', '10']);
      expect(await drainBodies(ch2, 'dead')).to.deep.equal(['1', '2', '3', '4', '5', '6', '7']);
      // Bodies of 1 and 2 bytes: 8, 9 and 10 are 4 bytes.
      expect(await drainBodies(ch2, 'plain')).to.deep.equal(['8', '9', '10']);
      await conn.close();
    } finally {
      await second.close();
    }
  });
});
