import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { channel, connect, type Channel } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * x-consistent-hash after a restart: RabbitMQ re-adds durable bindings in (routing key,
 * destination) order, and the ring's buckets follow that order. Warren recovers the same way,
 * so a restarted broker maps keys exactly like a broker whose bindings were made in that order.
 */
describe('x-consistent-hash ring after a restart', () => {
  const dirs: string[] = [];
  const brokers: RunningBroker[] = [];
  afterEach(async () => {
    for (const b of brokers.splice(0)) await b.close();
    for (const d of dirs.splice(0)) removeDir(d);
  });

  async function broker(dataDir: string): Promise<RunningBroker> {
    const b = await startBroker({ port: 0, logLevel: 'silent', dataDir });
    brokers.push(b);
    return b;
  }

  async function setUp(ch: Channel, order: string[]): Promise<void> {
    await ch.assertExchange('hash', 'x-consistent-hash', { durable: true });
    for (const q of ['ch-a', 'ch-b', 'ch-c']) await ch.assertQueue(q, { durable: true });
    for (const q of order) await ch.bindQueue(q, 'hash', '2');
  }

  async function placement(url: string): Promise<string[]> {
    const conn = await connect(url);
    const ch = await channel(conn);
    for (let i = 0; i < 60; i++) ch.publish('hash', `order-${i}`, Buffer.from(String(i)));
    const where: string[] = Array(60).fill('');
    for (const q of ['ch-a', 'ch-b', 'ch-c']) {
      for (;;) {
        const m = await ch.get(q, { noAck: true });
        if (!m) break;
        where[Number(m.content.toString())] = q;
      }
    }
    await conn.close();
    return where;
  }

  it('maps every key as a broker whose bindings were made in sorted order', async () => {
    const d1 = makeTmpDir('warren-chash-');
    const d2 = makeTmpDir('warren-chash-');
    dirs.push(d1, d2);
    let b1 = await broker(d1);
    let conn = await connect(b1.url);
    await setUp(await channel(conn), ['ch-c', 'ch-a', 'ch-b']);
    await conn.close();
    await b1.close();
    b1 = await broker(d1);

    const b2 = await broker(d2);
    conn = await connect(b2.url);
    await setUp(await channel(conn), ['ch-a', 'ch-b', 'ch-c']);
    await conn.close();

    const restarted = await placement(b1.url);
    expect(new Set(restarted)).to.have.length(3);
    expect(restarted).to.deep.equal(await placement(b2.url));
  });
});
