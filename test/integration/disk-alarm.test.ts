import { expect } from 'chai';
import { join } from 'node:path';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { DEFAULT_CAPABILITIES, RawClient } from '../../conformance/lib/raw-client.js';
import { FakeClock } from '../../src/clock.js';
import { F } from '../../src/frame/field-table.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { captureLog } from '../support/capture-log.js';
import { SmallDisk } from '../support/small-disk.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/** Resolves with whether the confirm for one persistent publish was an ack. */
function publishConfirmed(ch: Awaited<ReturnType<typeof confirmChannel>>, queue: string, body: Buffer): Promise<boolean> {
  return new Promise((resolve) => ch.sendToQueue(queue, body, { persistent: true }, (err) => resolve(!err)));
}

/**
 * RabbitMQ's free disk space alarm (disk_free_limit, "Disk alarms" guide): below the limit
 * publishers get connection.blocked "low on disk" and are no longer read; when space returns they
 * are unblocked by themselves. Free space is injected and time is a FakeClock.
 */
describe('disk alarm (disk_free_limit)', () => {
  const clock = new FakeClock();
  const dataDir = makeTmpDir('warren-disk-alarm-');
  let free = 10e9;
  const broker = useBroker({ clock, dataDir, heartbeat: 0, freeDiskSpace: () => free });
  after(() => removeDir(dataDir));

  it('blocks publishers below 50 MB free and unblocks them by itself when space returns; held-back publishes then go through', async () => {
    const publisher = await connect(broker.url);
    const consumer = await connect(broker.url);
    try {
      const pch = await confirmChannel(publisher);
      const cch = await channel(consumer);
      await cch.assertQueue('disk-alarm-q', { durable: true });
      expect(await publishConfirmed(pch, 'disk-alarm-q', Buffer.from('before'))).to.equal(true);
      const blocked = new Promise<string>((resolve) => publisher.on('blocked', resolve));
      free = 50_000_000 - 1;
      clock.advance(10_000);
      // Blocked once it publishes during the alarm (RabbitMQ's reader: after the content header).
      const held = publishConfirmed(pch, 'disk-alarm-q', Buffer.from('held back'));
      expect(await blocked).to.equal('low on disk');
      // Consumers are still served; the held-back publish has not reached the queue.
      const first = await cch.get('disk-alarm-q', { noAck: true });
      expect(first && first.content.toString()).to.equal('before');
      expect((await cch.checkQueue('disk-alarm-q')).messageCount).to.equal(0);
      const unblocked = new Promise<void>((resolve) => publisher.on('unblocked', resolve));
      free = 50_000_000;
      clock.advance(10_000);
      await unblocked;
      expect(await held).to.equal(true);
      const second = await cch.get('disk-alarm-q', { noAck: true });
      expect(second && second.content.toString()).to.equal('held back');
      await cch.deleteQueue('disk-alarm-q');
      await publisher.close();
    } finally {
      await consumer.close();
    }
  });
});

/**
 * A connection that opens while an alarm is on is under it from the open (RabbitMQ's reader
 * registers with rabbit_alarm on connection.open and gets the alarms in force), whenever the
 * alarm came up: its first publish blocks it. An alarm that cleared before the open leaves it alone.
 */
describe('disk alarm during a handshake', () => {
  const clock = new FakeClock();
  const dataDir = makeTmpDir('warren-disk-alarm-');
  let free = 50_000_000;
  // The alarm is checked again 10 s after it was raised: a longer handshake timeout than that.
  const broker = useBroker({ clock, dataDir, heartbeat: 0, handshakeTimeout: 60_000, freeDiskSpace: () => free });
  after(() => removeDir(dataDir));

  /** A connection that has sent its protocol header and got connection.start: in its handshake. */
  async function midHandshake(): Promise<RawClient> {
    const c = await RawClient.connect(broker.url);
    c.sendProtocolHeader();
    await c.expect('connection.start');
    return c;
  }

  /**
   * The rest of the handshake, then a channel round trip, so that every frame the open caused
   * has arrived; returns the methods the server sent on channel 0 after connection.tune.
   */
  async function finishHandshake(c: RawClient): Promise<string[]> {
    const clientProperties = { capabilities: F.table(DEFAULT_CAPABILITIES) };
    c.method(0, 'connection.start-ok', { clientProperties, mechanism: 'PLAIN', response: Buffer.from('\u0000guest\u0000guest'), locale: 'en_US' });
    const tune = await c.expect('connection.tune');
    const since = c.frames.length;
    c.method(0, 'connection.tune-ok', { channelMax: tune.channelMax, frameMax: tune.frameMax, heartbeat: 0 });
    c.method(0, 'connection.open', { virtualHost: '/', reserved1: '', reserved2: false });
    await c.openChannel(1);
    return c.frames.slice(since).filter((f) => f.channel === 0 && f.method).map((f) => f.method!.name);
  }

  it('blocks a connection that opens under the alarm (at its first publish) even when the alarm came up during its handshake', async () => {
    const c = await midHandshake();
    try {
      free = 50_000_000 - 1;
      clock.advance(10_000);
      expect(await finishHandshake(c)).to.deep.equal(['connection.open-ok']);
      c.publish(1, '', 'nowhere', 'held');
      expect(await c.expect('connection.blocked')).to.deep.equal({ reason: 'low on disk' });
    } finally {
      c.destroy();
      free = 50_000_000;
      clock.advance(10_000);
    }
  });

  it('does not block a connection whose handshake began under the alarm when the alarm cleared before it opened', async () => {
    free = 50_000_000 - 1;
    clock.advance(10_000);
    const c = await midHandshake();
    try {
      free = 50_000_000;
      clock.advance(10_000);
      expect(await finishHandshake(c)).to.deep.equal(['connection.open-ok']);
    } finally {
      c.destroy();
    }
  });
});

/**
 * A disk that really fills (a tmpfs of its own; needs root, skipped otherwise) with the limit at
 * zero, so a commit itself fails (once the space the store reserved past its data file is used,
 * refused before LMDB writes it): confirms are nacked and publishers blocked, and once space
 * returns the broker writes what it could not and unblocks them, without a restart.
 */
describe('full disk without a restart (the block after ENOSPC clears when a commit succeeds again)', function () {
  this.timeout(60_000);
  let disk: SmallDisk | undefined;
  let running: RunningBroker | undefined;

  before(function () {
    disk = SmallDisk.mount(24);
    if (!disk) this.skip();
  });
  after(async () => {
    await running?.close().catch(() => undefined);
    disk?.unmount();
  });

  it('nacks and blocks on ENOSPC, then unblocks and keeps everything once space returns', async () => {
    const clock = new FakeClock();
    const dataDir = join(disk!.dir, 'data');
    const { log, waitFor } = captureLog('info');
    running = await startBroker({ port: 0, logger: log, clock, dataDir, heartbeat: 0, diskFreeLimit: 0 });
    const conn = await connect(running.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('full-q', { durable: true });
    const blocked = new Promise<string>((resolve) => conn.on('blocked', resolve));
    // The store keeps space allocated past its data file's end (made shortly after it opens).
    await waitFor(/MiB reserved past its end/);
    disk!.fill(256 * 1024);
    const body = Buffer.alloc(32 * 1024, 'f');
    const acked: number[] = [];
    let nacked = 0;
    for (let i = 0; nacked === 0; i++) {
      if (await publishConfirmed(ch, 'full-q', Buffer.concat([Buffer.from(`${String(i).padStart(6, '0')}:`), body]))) acked.push(i);
      else nacked++;
      expect(i, 'a commit fails once the disk is full').to.be.below(1000);
    }
    // The reserve took commits after the disk was full, then a commit was refused before LMDB
    // wrote any of it (a write failing inside LMDB can abort the process).
    expect(acked.length).to.be.above(100);
    const failed = await waitFor('message store failed; blocking publishers');
    expect(failed.err).to.match(/ENOSPC: no space left on device \(the space reserved past the data file's end .*LMDB was not asked to write it/);
    // The next publish blocks the connection (it waits, unconfirmed, until the disk has room).
    const last = publishConfirmed(ch, 'full-q', Buffer.from('last'));
    expect(await blocked).to.equal('low on disk');
    // Still full to the last byte: the retry fails and publishers stay blocked.
    disk!.fill(0);
    clock.advance(1000);
    await waitFor('message store still cannot write');
    const unblocked = new Promise<void>((resolve) => conn.on('unblocked', resolve));
    disk!.free();
    clock.advance(1000);
    await unblocked;
    await waitFor('message store writes again; unblocking publishers');
    expect(await last).to.equal(true);
    expect(await publishConfirmed(ch, 'full-q', Buffer.from('after'))).to.equal(true);
    await conn.close();
    await running.close();

    running = await startBroker({ port: 0, logLevel: 'silent', clock: new FakeClock(), dataDir, diskFreeLimit: 0 });
    const conn2 = await connect(running.url);
    const ch2 = await channel(conn2);
    const got: string[] = [];
    for (;;) {
      const m = await ch2.get('full-q', { noAck: true });
      if (!m) break;
      got.push(m.content.toString('utf8', 0, 6));
    }
    for (const i of acked) expect(got).to.include(String(i).padStart(6, '0'));
    expect(got[got.length - 1]).to.equal('after');
    await conn2.close();
  });
});
