import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { TRANSIENT_PREFIX } from '../../src/queue/paged-ready-list.js';
import { confirmChannel, connect, consumeAll } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * With a data dir, transient messages beyond a queue's window are paged out to the store under
 * memory pressure, read back in order, and never survive a restart (issue 10; RabbitMQ pages
 * transient messages to disk too). The pressure here is a watermark of one byte: the first
 * memory check, on the fake clock, raises the alarm.
 */
describe('paging transient messages out under memory pressure', () => {
  const window = 8;
  let dataDir: string;
  let clock: FakeClock;
  let running: RunningBroker;

  const start = (options: { pressure: boolean }) =>
    startBroker({ port: 0, logLevel: 'silent', dataDir, queueMemoryWindow: window, clock, ...(options.pressure ? { memoryHighWatermarkAbsolute: 1 } : {}) });
  const transientKeys = () => running.broker.store.messages.queues().filter((k) => k.startsWith(TRANSIENT_PREFIX));
  const queue = (name: string) => running.broker.vhosts.get('/')!.queues.get(name)!;

  beforeEach(async () => {
    dataDir = makeTmpDir('warren-mem-paging-');
    clock = new FakeClock();
    running = await start({ pressure: true });
  });
  afterEach(async () => {
    await running.close();
    removeDir(dataDir);
  });

  /** Publishes bodies 0..n-1 (persistent when persistent(i)), waits for the confirms, and closes the connection. */
  async function publish(q: string, n: number, persistent: (i: number) => boolean, options: { durable: boolean }): Promise<void> {
    const conn = await connect(running.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue(q, { durable: options.durable });
    for (let i = 0; i < n; i++) ch.sendToQueue(q, Buffer.from(String(i)), { persistent: persistent(i), headers: { i } });
    await ch.waitForConfirms();
    await conn.close();
  }

  it('pages out what is beyond the window of every queue and delivers all of it in order', async () => {
    await publish('plain', 50, () => false, { durable: false });
    await publish('mixed', 50, (i) => i % 4 === 0, { durable: true });
    // mixed: the window (0-7), then the persistent ones only in the store, the 31 transient ones held.
    expect([queue('plain').readyInMemory, queue('mixed').readyInMemory]).to.deep.equal([50, window + 31]);
    clock.advance(1000);
    expect(running.broker.memory.isPaging).to.equal(true);
    // The first batch (all of it here) is written at once; the store commit follows.
    expect([queue('plain').readyInMemory, queue('mixed').readyInMemory]).to.deep.equal([window, window]);
    expect([queue('plain').messageCount, queue('mixed').messageCount]).to.deep.equal([50, 50]);
    expect(transientKeys()).to.have.length(2);
    for (const q of ['plain', 'mixed']) {
      const msgs = await consumeAll(running.url, q, 50, 5);
      expect(msgs.map((m) => Number(m.content.toString()))).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
      expect(msgs.map((m) => m.properties.headers?.['i'])).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
    }
    expect(transientKeys()).to.deep.equal([]);
  });

  it('a restart keeps the persistent messages of a durable queue and none of its paged-out transient ones', async () => {
    await publish('kept', 40, (i) => i % 5 === 0, { durable: true });
    clock.advance(1000);
    await running.broker.store.messages.sync();
    expect(transientKeys()).to.have.length(1);
    await running.close();
    running = await start({ pressure: false });
    expect(transientKeys()).to.deep.equal([]);
    expect(queue('kept').messageCount).to.equal(8);
    const msgs = await consumeAll(running.url, 'kept', 8);
    expect(msgs.map((m) => Number(m.content.toString()))).to.deep.equal([0, 5, 10, 15, 20, 25, 30, 35]);
  });
});
