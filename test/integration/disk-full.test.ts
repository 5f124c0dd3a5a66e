import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';

/**
 * A full disk (the broker runs under `ulimit -f`): confirms turn into basic.nack, publishers get
 * connection.blocked "low on disk" (RabbitMQ's disk alarm), the store is not corrupted, and every
 * message that was acked is there after a restart with room to write.
 */
describe('disk full (issue: clear errors and connection.blocked, never corruption)', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-diskfull-');

  it('nacks what cannot be written, blocks publishers, and keeps every acked message', async () => {
    let broker = await BrokerProcess.start(dataDir.path, { fileSizeLimitKiB: 4096 });
    const conn = await connect(broker.url);
    const blocked = new Promise<string>((resolve) => conn.on('blocked', resolve));
    const ch = await confirmChannel(conn);
    await ch.assertQueue('full-q', { durable: true });
    const body = Buffer.alloc(64 * 1024, 'd');
    const acked: number[] = [];
    let nacked = 0;
    for (let i = 0; i < 200 && nacked === 0; i++) {
      await new Promise<void>((resolve) =>
        ch.sendToQueue('full-q', Buffer.concat([Buffer.from(`${i}:`), body]), { persistent: true }, (err) => {
          if (err) nacked++;
          else acked.push(i);
          resolve();
        }),
      );
    }
    expect(nacked, 'a publish past the file size limit is nacked').to.be.greaterThan(0);
    expect(acked.length).to.be.greaterThan(0);
    // The next publish finds the alarm on: the connection is blocked, that publish held back.
    ch.sendToQueue('full-q', Buffer.from('held'), { persistent: true });
    expect(await blocked).to.equal('low on disk');
    await broker.stop();

    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await channel(conn2);
      const got: number[] = [];
      for (;;) {
        const m = await ch2.get('full-q', { noAck: true });
        if (!m) break;
        got.push(Number(m.content.toString('utf8', 0, 8).split(':')[0]));
      }
      for (const n of acked) expect(got).to.include(n);
      expect(got).to.deep.equal([...got].sort((a, b) => a - b));
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });
});
