import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect, type ConsumeMessage } from '../support/amqp.js';
import { collect } from '../support/broker.js';
import { BrokerProcess } from '../support/broker-process.js';

describe('durability: SIGKILL crash recovery (LMDB store)', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-crash-');

  it('every confirmed persistent message survives SIGKILL mid-stream, in publish order', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertExchange('orders', 'direct', { durable: true });
    await ch.assertQueue('orders-q', { durable: true });
    await ch.bindQueue('orders-q', 'orders', 'new');
    const confirmed: number[] = [];
    let killed = false;
    const target = 300;
    await new Promise<void>((resolve) => {
      let i = 0;
      const publishSome = () => {
        for (let k = 0; k < 20 && !killed; k++, i++) {
          const n = i;
          ch.publish('orders', 'new', Buffer.from(String(n)), { persistent: true }, (err) => {
            if (!err && !killed) confirmed.push(n);
            if (confirmed.length >= target && !killed) {
              killed = true;
              void broker.kill().then(resolve);
            }
          });
        }
        if (!killed) setImmediate(publishSome);
      };
      publishSome();
    });
    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const { messageCount } = await ch2.checkQueue('orders-q');
      expect(messageCount).to.be.at.least(confirmed.length);
      const got = collect<ConsumeMessage>(messageCount);
      const { consumerTag } = await ch2.consume('orders-q', (m) => got.push(m!), { noAck: true });
      const bodies = (await got.done).map((m) => Number(m.content.toString()));
      await ch2.cancel(consumerTag);
      // Every confirmed message is there, and the queue is in publish order.
      for (const n of confirmed) expect(bodies).to.include(n);
      expect(bodies).to.deep.equal([...bodies].sort((a, b) => a - b));
      // The binding survived too: a new publish through the durable exchange is routed.
      const ch3 = await confirmChannel(conn2);
      ch3.publish('orders', 'new', Buffer.from('after'), { persistent: true });
      await ch3.waitForConfirms();
      expect((await ch2.checkQueue('orders-q')).messageCount).to.equal(1);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });

  it('acked messages stay gone and unacked ones come back redelivered after SIGKILL', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('work-q', { durable: true });
    for (let i = 0; i < 10; i++) ch.sendToQueue('work-q', Buffer.from(String(i)), { persistent: true });
    await ch.waitForConfirms();
    const consumer = await channel(conn);
    await consumer.prefetch(10);
    const got = collect<ConsumeMessage>(10);
    await consumer.consume('work-q', (m) => got.push(m!));
    const msgs = await got.done;
    // Ack the first five; a synchronous round trip on the same channel orders the acks before it.
    for (const m of msgs.slice(0, 5)) consumer.ack(m);
    await consumer.checkQueue('work-q');
    // Give the store one commit: a confirm on another publish is sent only after a later commit.
    await ch.assertQueue('sync-q', { durable: true });
    ch.sendToQueue('sync-q', Buffer.from('s'), { persistent: true });
    await ch.waitForConfirms();
    await broker.kill();

    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const { messageCount } = await ch2.checkQueue('work-q');
      expect(messageCount).to.equal(5);
      const back = collect<ConsumeMessage>(5);
      await ch2.consume('work-q', (m) => back.push(m!), { noAck: true });
      const rest = await back.done;
      expect(rest.map((m) => m.content.toString())).to.deep.equal(['5', '6', '7', '8', '9']);
      expect(rest.every((m) => m.fields.redelivered)).to.equal(true);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });

  it('SIGKILL in the middle of acknowledgements: acked messages are gone or redelivered, never lost', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('ack-q', { durable: true });
    const total = 200;
    for (let i = 0; i < total; i++) ch.sendToQueue('ack-q', Buffer.from(String(i)), { persistent: true });
    await ch.waitForConfirms();
    const consumer = await channel(conn);
    await consumer.prefetch(total);
    const got = collect<ConsumeMessage>(total);
    await consumer.consume('ack-q', (m) => got.push(m!));
    const msgs = await got.done;
    // Ack one by one and kill while acks are still arriving.
    msgs.forEach((m, i) => {
      consumer.ack(m);
      if (i === total / 2) void broker.kill();
    });
    await new Promise((r) => broker.child.exitCode !== null || broker.child.signalCode !== null ? r(null) : broker.child.once('exit', r));
    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const { messageCount } = await ch2.checkQueue('ack-q');
      const back = collect<ConsumeMessage>(messageCount);
      if (messageCount > 0) await ch2.consume('ack-q', (m) => back.push(m!), { noAck: true });
      const rest = messageCount > 0 ? await back.done : [];
      const bodies = rest.map((m) => Number(m.content.toString()));
      // Acks reach the disk in order: what is left is a suffix, in order, all marked redelivered.
      expect(bodies).to.deep.equal(Array.from({ length: messageCount }, (_, k) => total - messageCount + k));
      expect(rest.every((m) => m.fields.redelivered)).to.equal(true);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });

  it('transient queues and non-persistent messages do not survive a restart', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('transient-q', { durable: false });
    await ch.assertQueue('durable-q', { durable: true });
    ch.sendToQueue('durable-q', Buffer.from('transient message'), { persistent: false });
    ch.sendToQueue('durable-q', Buffer.from('persistent message'), { persistent: true });
    await ch.waitForConfirms();
    await broker.kill();
    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const m = await ch2.get('durable-q', { noAck: true });
      expect(m && m.content.toString()).to.equal('persistent message');
      expect(await ch2.get('durable-q')).to.equal(false);
      const ch3 = await channel(conn2);
      const err = await ch3.checkQueue('transient-q').then(() => null, (e: { code: number }) => e.code);
      expect(err).to.equal(404);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });

  /**
   * A quorum queue keeps every message, whatever its delivery mode (amqplib's default is
   * transient): RabbitMQ's Raft log holds them all, so a confirmed transient message is there
   * after a restart (checked against RabbitMQ 3.10.8 with stop_app/start_app). Warren lost it.
   */
  it('a quorum queue keeps its confirmed transient messages through SIGKILL, as RabbitMQ does', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('quorum-q', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    for (let i = 0; i < 50; i++) ch.sendToQueue('quorum-q', Buffer.from(`m${i}`), { persistent: i % 2 === 0 });
    await ch.waitForConfirms();
    await broker.kill();
    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const bodies: string[] = [];
      const modes = new Set<number | undefined>();
      for (let m = await ch2.get('quorum-q', { noAck: true }); m; m = await ch2.get('quorum-q', { noAck: true })) {
        bodies.push(m.content.toString());
        if (m.content.toString() === 'm1') modes.add(m.properties.deliveryMode);
      }
      expect(bodies).to.deep.equal(Array.from({ length: 50 }, (_, i) => `m${i}`));
      // Kept as published: still transient to its consumer.
      expect([...modes]).to.deep.equal([1]);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });
});
