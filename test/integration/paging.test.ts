import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import type { ConfirmChannel, GetMessage } from 'amqplib';
import { channel, confirmChannel, connect, consumeAll } from '../support/amqp.js';
import { countingReads } from '../support/store-reads.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * Durable queues keep a bounded window of ready messages in memory; persistent messages beyond
 * it stay in the store and are read back in order as consumers drain the queue (issue: queue
 * contents are not all held in memory).
 */
describe('queue paging (durable queues beyond the memory window)', () => {
  let dataDir: string;
  let broker: RunningBroker;
  const window = 8;
  const start = (): Promise<RunningBroker> => startBroker({ port: 0, logLevel: 'silent', dataDir, queueMemoryWindow: window });
  /** Publishes persistent messages whose bodies are from ... to - 1, and waits for their confirms. */
  async function persist(ch: ConfirmChannel, queue: string, from: number, to: number): Promise<void> {
    for (let i = from; i < to; i++) ch.sendToQueue(queue, Buffer.from(String(i)), { persistent: true });
    await ch.waitForConfirms();
  }

  beforeEach(async () => {
    dataDir = makeTmpDir('warren-paging-');
    broker = await start();
  });
  afterEach(async () => {
    await broker.close();
    removeDir(dataDir);
  });

  it('keeps publish order across the window, with transient messages interleaved', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('paged-q', { durable: true });
    for (let i = 0; i < 60; i++) ch.sendToQueue('paged-q', Buffer.from(String(i)), { persistent: i % 5 !== 0 });
    await ch.waitForConfirms();
    expect((await ch.checkQueue('paged-q')).messageCount).to.equal(60);
    const q = broker.broker.vhosts.get('/')!.queues.get('paged-q')!;
    // In memory: the window (0-7) and the transient messages behind it (10, 15, ... 55); the
    // persistent ones beyond the window are only in the store.
    expect(q.readyInMemory).to.equal(window + 10);
    await conn.close();
    const msgs = await consumeAll(broker.url, 'paged-q', 60);
    expect(msgs.map((m) => Number(m.content.toString()))).to.deep.equal(Array.from({ length: 60 }, (_, i) => i));
  });

  it('recovers a paged queue after a restart without reading it all, in order', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('paged-r', { durable: true });
    await persist(ch, 'paged-r', 0, 50);
    await conn.close();
    await broker.close();
    broker = await start();
    const conn2 = await connect(broker.url);
    const ch2 = await channel(conn2);
    expect((await ch2.checkQueue('paged-r')).messageCount).to.equal(50);
    await conn2.close();
    const msgs = await consumeAll(broker.url, 'paged-r', 50);
    expect(msgs.map((m) => Number(m.content.toString()))).to.deep.equal(Array.from({ length: 50 }, (_, i) => i));
    expect(msgs.every((m) => !m.fields.redelivered)).to.equal(true);
  });

  it('purge and basic.get see the paged-out messages', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('paged-p', { durable: true });
    await persist(ch, 'paged-p', 0, 30);
    const gets: number[] = [];
    for (let i = 0; i < 12; i++) {
      const m = await ch.get('paged-p', { noAck: true });
      if (m) gets.push(Number(m.content.toString()));
    }
    expect(gets).to.deep.equal(Array.from({ length: 12 }, (_, i) => i));
    expect((await ch.purgeQueue('paged-p')).messageCount).to.equal(18);
    expect(await ch.get('paged-p')).to.equal(false);
    await conn.close();
  });

  it('purge keeps what is unacknowledged, and what it removed stays gone after a restart', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('paged-u', { durable: true });
    await persist(ch, 'paged-u', 0, 30);
    const held = await ch.get('paged-u');
    expect(held && held.content.toString()).to.equal('0');
    // One unacknowledged: the messages are taken one by one.
    expect((await ch.purgeQueue('paged-u')).messageCount).to.equal(29);
    ch.nack(held as never, false, true);
    // Nothing unacknowledged: the store drops the queue's entries at once.
    await persist(ch, 'paged-u', 30, 60);
    expect((await ch.purgeQueue('paged-u')).messageCount).to.equal(31);
    await persist(ch, 'paged-u', 60, 63);
    await conn.close();
    await broker.close();
    broker = await start();
    const conn2 = await connect(broker.url);
    const ch2 = await conn2.createChannel();
    expect((await ch2.checkQueue('paged-u')).messageCount).to.equal(3);
    const after: string[] = [];
    for (let m = await ch2.get('paged-u', { noAck: true }); m; m = await ch2.get('paged-u', { noAck: true })) after.push(m.content.toString());
    expect(after).to.deep.equal(['60', '61', '62']);
    await conn2.close();
  });

  it('purges and deletes a queue deeper than a store sweep chunk at once; the store sweeps it in the background, across a restart', async function () {
    this.timeout(30_000);
    const deep = 10_000; // the LMDB store sweeps 4096 entries per commit
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('deep-p', { durable: true });
    await ch.assertQueue('deep-d', { durable: true });
    await persist(ch, 'deep-p', 0, deep);
    await persist(ch, 'deep-d', 0, deep);
    expect((await ch.purgeQueue('deep-p')).messageCount).to.equal(deep);
    await persist(ch, 'deep-p', deep, deep + 2);
    expect((await ch.deleteQueue('deep-d')).messageCount).to.equal(deep);
    // The name is free at once; nothing of the deleted queue shows in the new one.
    await ch.assertQueue('deep-d', { durable: true });
    await persist(ch, 'deep-d', 0, 1);
    expect([(await ch.checkQueue('deep-p')).messageCount, (await ch.checkQueue('deep-d')).messageCount]).to.deep.equal([2, 1]);
    await conn.close();
    // Stopped (most likely mid-sweep) and started again: the sweep goes on from the store's index.
    await broker.close();
    broker = await start();
    const conn2 = await connect(broker.url);
    const ch2 = await conn2.createChannel();
    expect([(await ch2.checkQueue('deep-p')).messageCount, (await ch2.checkQueue('deep-d')).messageCount]).to.deep.equal([2, 1]);
    await broker.broker.store.messages.swept();
    expect(broker.broker.store.messages.stats()).to.deep.equal({ messages: 3, entries: 3 });
    const got: string[] = [];
    for (const q of ['deep-p', 'deep-d']) for (let m = await ch2.get(q, { noAck: true }); m; m = await ch2.get(q, { noAck: true })) got.push(m.content.toString());
    expect(got).to.deep.equal([String(deep), String(deep + 1), '0']);
    await conn2.close();
  });

  it('purges a deep queue while messages are unacknowledged: they stay stored, and come back redelivered after a restart', async function () {
    this.timeout(30_000);
    const deep = 10_000;
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('deep-u', { durable: true });
    await persist(ch, 'deep-u', 0, deep);
    const held = [];
    for (let i = 0; i < 3; i++) held.push((await ch.get('deep-u')) as GetMessage);
    expect(held.map((m) => m.content.toString())).to.deep.equal(['0', '1', '2']);
    expect((await ch.purgeQueue('deep-u')).messageCount).to.equal(deep - 3);
    await persist(ch, 'deep-u', deep, deep + 2);
    ch.ack(held[0]!);
    ch.nack(held[1]!, false, true);
    expect((await ch.checkQueue('deep-u')).messageCount).to.equal(3);
    await conn.close(); // '2' was still unacknowledged: requeued
    await broker.close();
    broker = await start();
    await broker.broker.store.messages.swept();
    expect(broker.broker.store.messages.stats()).to.deep.equal({ messages: 4, entries: 4 });
    const conn2 = await connect(broker.url);
    const ch2 = await conn2.createChannel();
    const after: Array<[string, boolean]> = [];
    for (let m = await ch2.get('deep-u', { noAck: true }); m; m = await ch2.get('deep-u', { noAck: true })) after.push([m.content.toString(), m.fields.redelivered]);
    expect(after).to.deep.equal([['1', true], ['2', true], [String(deep), false], [String(deep + 1), false]]);
    await conn2.close();
  });

  it('purges a deduplication queue without reading its paged-out messages back: purged values are free again, unacknowledged ones stay held until acked, across a restart', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('dedup-p', { durable: true, arguments: { 'x-message-deduplication': true } });
    const publish = async (value: number): Promise<void> => {
      ch.sendToQueue('dedup-p', Buffer.from(String(value)), { persistent: true, headers: { 'x-deduplication-header': value } });
      await ch.waitForConfirms();
    };
    for (let i = 0; i < 60; i++) ch.sendToQueue('dedup-p', Buffer.from(String(i)), { persistent: true, headers: { 'x-deduplication-header': i } });
    await ch.waitForConfirms();
    const ch2 = await channel(conn);
    const unacked = [(await ch2.get('dedup-p')) as GetMessage, (await ch2.get('dedup-p')) as GetMessage];
    expect(unacked.map((m) => m.content.toString())).to.deep.equal(['0', '1']);
    // Before, releasing each ready message's value read every paged-out one back (5.8 s of a
    // held event loop for 300,000): now only the two delivered ones are read, to be kept.
    const reads = await countingReads(broker.broker.store.messages, async () => {
      expect((await ch.purgeQueue('dedup-p')).messageCount).to.equal(58);
    });
    expect(reads).to.be.at.most(2);
    await publish(5); // purged: free again
    await publish(0); // delivered, not acknowledged: still held
    expect((await ch.checkQueue('dedup-p')).messageCount).to.equal(1);
    for (const m of unacked) ch2.ack(m);
    await publish(0);
    expect((await ch.checkQueue('dedup-p')).messageCount).to.equal(2);
    await conn.close();
    await broker.close();
    broker = await start();
    const msgs = await consumeAll(broker.url, 'dedup-p', 2);
    expect(msgs.map((m) => m.content.toString())).to.deep.equal(['5', '0']);
  });

  it('a max-length policy caps a deep durable queue reading back only what it keeps and what is delivered, and a restart recovers that', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('cap-q', { durable: true });
    await persist(ch, 'cap-q', 0, 100);
    const ch2 = await channel(conn);
    const unacked = [(await ch2.get('cap-q')) as GetMessage, (await ch2.get('cap-q')) as GetMessage];
    // Before, each dropped message was read back from the store (3.7 s of a held event loop
    // for 300,000): now the 3 kept and the 2 delivered are, to be written again.
    const reads = await countingReads(broker.broker.store.messages, () => {
      broker.broker.policies.put('policy', '/', 'cap', { pattern: '^cap-q$', definition: { 'max-length': 3 }, applyTo: 'queues' });
    });
    expect(reads).to.be.at.most(5);
    expect((await ch.checkQueue('cap-q')).messageCount).to.equal(3);
    const q = broker.broker.vhosts.get('/')!.queues.get('cap-q')!;
    expect([q.persistentCount, q.persistentBytes]).to.deep.equal([5, 1 + 1 + 2 * 3]);
    for (const m of unacked) ch2.ack(m);
    expect((await ch.checkQueue('cap-q')).messageCount).to.equal(3);
    expect([q.persistentCount, q.persistentBytes]).to.deep.equal([3, 2 * 3]);
    await conn.close();
    await broker.close();
    broker = await start();
    const msgs = await consumeAll(broker.url, 'cap-q', 3);
    expect(msgs.map((m) => m.content.toString())).to.deep.equal(['97', '98', '99']);
  });

  it('a max-length-bytes policy that keeps more than the window drops the head one by one without reading it back', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('cap-b', { durable: true });
    const body = (i: number): string => String(i).padStart(10, '0');
    for (let i = 0; i < 40; i++) ch.sendToQueue('cap-b', Buffer.from(body(i)), { persistent: true });
    await ch.waitForConfirms();
    // 15 go: the 8 of the window, then 7 only in the store; the window is then read again.
    const reads = await countingReads(broker.broker.store.messages, () => {
      broker.broker.policies.put('policy', '/', 'cap', { pattern: '^cap-b$', definition: { 'max-length-bytes': 250 }, applyTo: 'queues' });
    });
    expect(reads).to.be.at.most(window);
    expect((await ch.checkQueue('cap-b')).messageCount).to.equal(25);
    await conn.close();
    const msgs = await consumeAll(broker.url, 'cap-b', 25);
    expect(msgs.map((m) => m.content.toString())).to.deep.equal(Array.from({ length: 25 }, (_, i) => body(i + 15)));
  });

  it('x-message-ttl without a dead-letter exchange expires a deep queue without reading the expired messages back', async () => {
    const clock = new FakeClock(1_700_000_000_000);
    const ttlDir = makeTmpDir('warren-paging-ttl-');
    const timed = await startBroker({ port: 0, logLevel: 'silent', dataDir: ttlDir, queueMemoryWindow: window, clock });
    try {
      const conn = await connect(timed.url);
      const ch = await confirmChannel(conn);
      await ch.assertQueue('ttl-q', { durable: true, arguments: { 'x-message-ttl': 1000 } });
      await persist(ch, 'ttl-q', 0, 50);
      await clock.advance(500);
      await persist(ch, 'ttl-q', 50, 53);
      // 0-49 expire (8 in the window, 42 only in the store); only the new window is read (50-52).
      const reads = await countingReads(timed.broker.store.messages, () => clock.advance(500));
      expect(reads).to.equal(3);
      expect((await ch.checkQueue('ttl-q')).messageCount).to.equal(3);
      const got = await ch.get('ttl-q', { noAck: true });
      expect(got && got.content.toString()).to.equal('50');
      await conn.close();
    } finally {
      await timed.close();
      removeDir(ttlDir);
    }
  });
});
