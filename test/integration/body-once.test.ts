import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { confirmChannel, connect } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/** Issue: a message routed to several durable queues stores its body once; transient ones never touch disk. */
describe('what the LMDB store holds for published messages', () => {
  let dataDir: string;
  let broker: RunningBroker;

  beforeEach(async () => {
    dataDir = makeTmpDir('warren-bodyonce-');
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir });
  });
  afterEach(async () => {
    await broker.close();
    removeDir(dataDir);
  });

  it('one body for a persistent message fanned out to three durable queues; nothing for a transient one', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertExchange('fan', 'fanout', { durable: true });
    for (const q of ['fan-1', 'fan-2', 'fan-3']) {
      await ch.assertQueue(q, { durable: true });
      await ch.bindQueue(q, 'fan', '');
    }
    ch.publish('fan', '', Buffer.alloc(4096, 'b'), { persistent: true });
    ch.publish('fan', '', Buffer.from('transient'), { persistent: false });
    await ch.waitForConfirms();
    await broker.broker.store.messages.sync();
    expect(broker.broker.store.messages.stats()).to.deep.include({ messages: 1, entries: 3 });
    await conn.close();
  });
});
