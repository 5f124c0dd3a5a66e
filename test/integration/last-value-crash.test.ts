import { expect } from 'chai';
import { useTmpDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { BrokerProcess } from '../support/broker-process.js';

/**
 * A durable versioned last-value queue after SIGKILL: each replaced message left the store in
 * the commit that wrote its replacement, and the newest version per key was committed with the
 * message that set it.
 */
describe('versioned last-value queue: SIGKILL', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-lvq-crash-');

  it('holds exactly the newest confirmed update per key, and refuses older versions after the crash', async () => {
    let broker = await BrokerProcess.start(dataDir.path);
    const conn = await connect(broker.url);
    conn.on('close', () => {});
    const ch = await confirmChannel(conn);
    await ch.assertQueue('prices', { durable: true, arguments: { 'x-last-value-key': 'sym', 'x-last-value-version': 'v' } });
    for (let v = 1; v <= 100; v++) {
      for (const sym of ['A', 'B', 'C']) ch.publish('', 'prices', Buffer.from(`${sym} ${v}`), { persistent: true, headers: { sym, v } });
    }
    await ch.waitForConfirms();
    await broker.kill();

    broker = await BrokerProcess.start(dataDir.path);
    try {
      const conn2 = await connect(broker.url);
      const ch2 = await confirmChannel(conn2);
      // Three messages, not three hundred: no replaced message came back.
      expect((await ch2.checkQueue('prices')).messageCount).to.equal(3);
      for (const sym of ['A', 'B', 'C']) ch2.publish('', 'prices', Buffer.from(`${sym} 99 late`), { persistent: true, headers: { sym, v: 99 } });
      ch2.publish('', 'prices', Buffer.from('C 101'), { persistent: true, headers: { sym: 'C', v: 101 } });
      await ch2.waitForConfirms();
      const r2 = await channel(conn2);
      const bodies: string[] = [];
      for (let m = await r2.get('prices', { noAck: true }); m !== false; m = await r2.get('prices', { noAck: true })) bodies.push(m.content.toString());
      expect(bodies).to.deep.equal(['A 100', 'B 100', 'C 101']);
      await conn2.close();
    } finally {
      await broker.stop();
    }
  });
});
