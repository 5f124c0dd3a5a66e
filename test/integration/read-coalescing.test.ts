import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, connectNamed } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';
import { call } from '../support/management.js';

/**
 * Read coalescing through amqplib, against a broker process of its own (a nap stops the whole
 * event loop, so the client must not share it). Naps of 20 ms make the effect plain: what a
 * user sees is recv_cnt, the reads a connection took (GET /api/connections).
 */
describe('read coalescing: a client streaming small writes is read in fewer reads', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-read-coalescing-');

  async function start(micros: number): Promise<{ broker: BrokerProcess; management: string }> {
    const broker = await BrokerProcess.start(dataDir.path, { args: ['--read-coalescing', String(micros), '--management-port', '0'] });
    const entry = await broker.waitForLog((e) => e.msg?.startsWith('management API listening') === true);
    return { broker, management: `http://127.0.0.1:${entry.port}` };
  }

  /** recv_cnt of the connection named `name`. */
  async function reads(management: string, name: string): Promise<number> {
    const conns = (await call(management, 'GET', '/api/connections')).json as Array<{ client_properties: { connection_name?: string }; recv_cnt: number }>;
    const conn = conns.find((c) => c.client_properties.connection_name === name);
    if (conn === undefined) throw new Error(`no connection ${name}`);
    return conn.recv_cnt;
  }

  /**
   * Publishes n 16-octet messages, one per millisecond (each its own TCP segment: amqplib with
   * noDelay writes each publish at once), then waits until the queue holds them all.
   */
  async function publishTrickle(url: string, name: string, n: number): Promise<void> {
    const conn = await connectNamed(url, name);
    const ch = await channel(conn);
    await ch.assertQueue('trickle');
    for (let i = 0; i < n; i++) {
      ch.publish('', 'trickle', Buffer.alloc(16));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const check = await channel(conn);
    while ((await check.checkQueue('trickle')).messageCount < n) await new Promise((resolve) => setTimeout(resolve, 10));
  }

  it('with 20 ms naps, 200 publishes a millisecond apart take a few dozen reads; with coalescing off, about one read each', async () => {
    const on = await start(20_000);
    try {
      await publishTrickle(on.broker.url, 'trickle-on', 200);
      const n = await reads(on.management, 'trickle-on');
      // The handshake and the checkQueue calls are a dozen reads; the publishes, one per nap (~15).
      expect(n).to.be.below(70);
    } finally {
      await on.broker.stop();
    }
    const off = await start(0);
    try {
      await publishTrickle(off.broker.url, 'trickle-off', 200);
      expect(await reads(off.management, 'trickle-off')).to.be.above(150);
    } finally {
      await off.broker.stop();
    }
  });

  it('does not nap for a client waiting for replies: 100 queue.declare round trips take nowhere near 100 naps', async () => {
    const { broker } = await start(20_000);
    try {
      const conn = await connectNamed(broker.url, 'rpc');
      const ch = await channel(conn);
      const t0 = performance.now();
      for (let i = 0; i < 100; i++) await ch.assertQueue(`rpc-${i % 5}`);
      // A nap per round trip would be 2 s at least; a reply goes out before any nap and this
      // client's reads are never napped after.
      expect(performance.now() - t0).to.be.below(1000);
      await conn.close();
    } finally {
      await broker.stop();
    }
  });
});
