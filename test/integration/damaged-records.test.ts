import { expect } from 'chai';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { createLogger } from '../../src/log.js';
import { channel, confirmChannel, connect } from '../support/amqp.js';
import { flipBitInEveryCopy, publishDurable } from '../support/data-files.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * Issue 10, "Damaged files": LMDB keeps no checksums, so a flipped bit in a stored message was
 * delivered to consumers as a valid message. Every record now carries a checksum: the damaged
 * message is quarantined and logged, never delivered, and the rest of the queue keeps working.
 */
describe('damaged records: a flipped bit in a stored message', function () {
  this.timeout(30000);
  let dataDir: string;
  let broker: RunningBroker | undefined;
  let logs: string[];

  /** A broker on dataDir whose log lines land in `logs`. */
  async function start(): Promise<RunningBroker> {
    logs = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    return startBroker({ port: 0, dataDir, logger: createLogger('info', sink) });
  }

  beforeEach(() => {
    dataDir = makeTmpDir('warren-damaged-records-');
  });
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
    removeDir(dataDir);
  });

  // A small message is stored inside its entry, a large one (over 4 KiB) in a record of its own.
  const cases = [
    { kind: 'a small message, inside its entry', repeat: 40, logged: /entry queue 'orders' in vhost '\/' seq \d+ is damaged \(checksum mismatch\); quarantined/ },
    { kind: 'a large message, in a record of its own', repeat: 600, logged: /message \d+ \(queue 'orders' in vhost '\/' seq \d+\) is damaged \(checksum mismatch\); quarantined/ },
  ];
  for (const { kind, repeat, logged } of cases)
  it(`${kind}: is quarantined and logged, never delivered; the consumer gets the next message`, async () => {
    const bodies = ['first message', `second message ${'DAMAGED-'.repeat(repeat)}`, 'third message'];
    broker = await start();
    await publishDurable(broker.url, 'orders', bodies.map((b) => Buffer.from(b)));
    await broker.close();
    expect(flipBitInEveryCopy(join(dataDir, 'store', 'data.mdb'), 'DAMAGED-DAMAGED-')).to.be.greaterThan(0);

    broker = await start();
    let conn = await connect(broker.url);
    const consumer = await channel(conn);
    expect((await consumer.checkQueue('orders')).messageCount).to.equal(2);
    const got: string[] = [];
    for (;;) {
      const m = await consumer.get('orders', { noAck: true });
      if (!m) break;
      got.push(m.content.toString());
    }
    expect(got).to.deep.equal([bodies[0], bodies[2]]);
    const quarantined = logs.find((l) => logged.test(l));
    expect(quarantined, logs.join('\n')).to.be.a('string');

    // The queue keeps working, and the next start settles the counters with a full check.
    const pub = await confirmChannel(conn);
    pub.sendToQueue('orders', Buffer.from('fourth message'), { persistent: true });
    await pub.waitForConfirms();
    await conn.close();
    await broker.close();
    broker = await start();
    expect(logs.join('\n')).to.match(/damaged records were quarantined in the last run; running a full check/);
    conn = await connect(broker.url);
    const ch3 = await channel(conn);
    expect((await ch3.checkQueue('orders')).messageCount).to.equal(1);
    const m = await ch3.get('orders', { noAck: true });
    expect(m && m.content.toString()).to.equal('fourth message');
    await conn.close();
  });
});
