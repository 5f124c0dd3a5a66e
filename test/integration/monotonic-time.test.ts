import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { F } from '../../src/frame/field-table.js';
import { HEARTBEAT_FRAME } from '../../src/frame/frame-writer.js';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { DEFAULT_CAPABILITIES, RawClient } from '../../conformance/lib/raw-client.js';

/**
 * Heartbeats run on monotonic time (issue "Faults"): a wall-clock step of an hour either way
 * neither drops healthy peers nor keeps dead ones; and, as in RabbitMQ (rabbit_reader pauses
 * its heartbeat monitor while blocked), a publisher blocked by an alarm is not read, so it is
 * not dropped for the heartbeats it cannot be heard sending.
 */
describe('heartbeats on monotonic time', () => {
  const clock = new FakeClock();
  const dataDir = makeTmpDir('warren-heartbeats-');
  let free = 1e12;
  const broker = useBroker({ clock, heartbeat: 10, dataDir, freeDiskSpace: () => free });
  after(() => removeDir(dataDir));

  /** A peer that has opened channel 1; alive() proves the broker still reads it (qos → qos-ok). */
  async function peer(capabilities: string[] = []): Promise<RawClient> {
    const c = await RawClient.open(broker.url, {
      heartbeat: 10,
      capabilities: { ...DEFAULT_CAPABILITIES, ...Object.fromEntries(capabilities.map((k) => [k, F.bool(true)])) },
    });
    await c.openChannel(1);
    return c;
  }
  async function alive(c: RawClient): Promise<void> {
    c.write(HEARTBEAT_FRAME);
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
    await c.expect('basic.qos-ok');
  }

  for (const step of [3_600_000, -3_600_000]) {
    it(`a wall-clock step of ${step > 0 ? '+' : '−'}1 h neither drops 20 healthy peers nor keeps a dead one`, async () => {
      const healthy = await Promise.all(Array.from({ length: 20 }, () => peer()));
      const dead = await peer();
      // Healthy peers talk every 5 s; the dead one is silent and must go after 20 s (2 intervals).
      // The wall clock steps between what the broker last heard and its next check.
      for (let t = 0; t < 25_000; t += 5000) {
        await Promise.all(healthy.map(alive));
        if (t === 0) clock.stepWall(step);
        clock.advance(5000);
      }
      await dead.waitClosed();
      await Promise.all(healthy.map(alive));
      for (const c of healthy) c.close();
    });
  }

  it('does not drop a publisher blocked by an alarm for the heartbeats it cannot be heard sending; checks again once unblocked', async () => {
    const c = await peer(['connection.blocked']);
    c.publish(1, '', 'nowhere', Buffer.from('x'));
    await alive(c);
    free = 0;
    clock.advance(10_000); // the disk monitor's next check: below disk_free_limit
    c.publish(1, '', 'nowhere', Buffer.from('y')); // a publish during the alarm blocks it
    expect(await c.expect('connection.blocked')).to.deep.equal({ reason: 'low on disk' });
    // The client keeps sending heartbeats; the broker does not read them while blocked.
    for (let t = 0; t < 60_000; t += 5000) {
      c.write(HEARTBEAT_FRAME);
      clock.advance(5000);
    }
    free = 1e12;
    clock.advance(10_000);
    await c.expect('connection.unblocked');
    await alive(c);
    // The receive check runs again: silence for two intervals now drops the peer.
    for (let t = 0; t < 25_000; t += 5000) clock.advance(5000);
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
  });
});

describe('consumer acknowledgement timeout on monotonic time', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0, consumerTimeout: 10_000 });

  it('a +1 h wall-clock step does not time out a delivery that is 6 s old', async () => {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const q = (await ch.assertQueue('', { exclusive: true })).queue;
      ch.sendToQueue(q, Buffer.from('m1'));
      ch.sendToQueue(q, Buffer.from('m2'));
      const m1 = await ch.get(q);
      clock.advance(4000);
      const m2 = await ch.get(q);
      clock.advance(1000);
      ch.ack(m1 as never);
      await ch.checkQueue(q);
      clock.stepWall(3_600_000);
      clock.advance(5000); // the timer armed for m1 fires; m2 is 6 s old
      clock.advance(2000);
      ch.ack(m2 as never);
      await ch.checkQueue(q);
      clock.advance(60_000);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0); // the channel is still open
    } finally {
      await conn.close().catch(() => {});
    }
  });

  it('a −1 h wall-clock step does not keep a timed-out delivery for an hour', async () => {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const q = (await ch.assertQueue('', { exclusive: true })).queue;
      ch.sendToQueue(q, Buffer.from('m'));
      await ch.get(q);
      const closed = new Promise<Error>((resolve) => ch.once('error', resolve));
      clock.stepWall(-3_600_000);
      clock.advance(10_000);
      expect((await closed).message).to.contain('PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out');
    } finally {
      await conn.close().catch(() => {});
    }
  });
});
