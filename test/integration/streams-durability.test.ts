import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect, type ConsumeMessage } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';

/**
 * A stream's log and offsets survive SIGKILL: every confirmed message is there after the crash,
 * at the offset it was confirmed with, and offsets go on after it (confirms are sent only after
 * the commit that holds the message).
 */
describe('streams: SIGKILL crash recovery (LMDB store)', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-stream-crash-');

  it('every confirmed message survives SIGKILL mid-publish, and offsets continue after it', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('events', { durable: true, arguments: { 'x-queue-type': 'stream' } });
    const confirmed: number[] = [];
    let killed = false;
    const target = 300;
    await new Promise<void>((resolve) => {
      let i = 0;
      const publishSome = () => {
        for (let k = 0; k < 20 && !killed; k++, i++) {
          const n = i;
          // Transient messages too: a stream writes everything it takes.
          ch.sendToQueue('events', Buffer.from(String(n)), { persistent: n % 2 === 0 }, (err) => {
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
      await ch2.prefetch(1000);
      const { messageCount } = await ch2.checkQueue('events');
      expect(messageCount).to.be.at.least(confirmed.length);
      const got: ConsumeMessage[] = [];
      let wake!: () => void;
      const all = new Promise<void>((r) => (wake = r));
      await ch2.consume('events', (m) => {
        got.push(m!);
        ch2.ack(m!);
        if (got.length === messageCount) wake();
      }, { arguments: { 'x-stream-offset': 'first' } });
      await all;
      const bodies = got.map((m) => Number(m.content.toString()));
      const offsets = got.map((m) => Number(m.properties.headers!['x-stream-offset']));
      // Published in order, on one channel: offset n holds message n, and every confirmed one is there.
      expect(offsets).to.deep.equal(bodies);
      expect(offsets).to.deep.equal([...Array(messageCount).keys()]);
      for (const n of confirmed) expect(bodies).to.include(n);
      // The next message gets the next offset.
      const tail: ConsumeMessage[] = [];
      const ch3 = await confirmChannel(conn2);
      const reader = await channel(conn2);
      await reader.prefetch(10);
      let wakeTail!: () => void;
      const gotTail = new Promise<void>((r) => (wakeTail = r));
      await reader.consume('events', (m) => {
        tail.push(m!);
        wakeTail();
      }, { arguments: { 'x-stream-offset': 'next' } });
      ch3.sendToQueue('events', Buffer.from('after'));
      await ch3.waitForConfirms();
      await gotTail;
      expect(tail[0]!.content.toString()).to.equal('after');
      expect(Number(tail[0]!.properties.headers!['x-stream-offset'])).to.equal(messageCount);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });
});
