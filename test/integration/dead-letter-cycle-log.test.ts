import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { confirmChannel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { captureLog } from '../support/capture-log.js';

/**
 * The warning a dead-letter cycle is logged with, once per source queue and cycle:
 * rabbit_dead_letter:log_cycle_once (at most once: the message is dropped) and
 * rabbit_fifo_dlx_worker:log_cycle_once (at least once: the cycling target is left out, so the
 * dead-letter is held). The texts, line breaks of ~p included, were recorded from RabbitMQ
 * 3.10.8's log with the same topology (each line without its timestamp, level and pid prefix).
 */
describe('dead-letter cycles are logged as RabbitMQ logs them', () => {
  const clock = new FakeClock();
  const capture = captureLog('warn');
  const broker = useBroker({ clock, heartbeat: 0, logger: capture.log });
  const cycleWarnings = () => capture.entries.map((e) => e.msg).filter((m) => m.includes('cycle detected'));

  it('logs each cycle once: a queue that dead-letters to itself, two queues through a fanout, a quorum queue at least once', async () => {
    const conn = await connect(broker.url);
    const ch = await confirmChannel(conn);
    await ch.assertQueue('cyc.self', { durable: false, arguments: { 'x-message-ttl': 50, 'x-dead-letter-exchange': '' } });
    ch.sendToQueue('cyc.self', Buffer.from('a'));
    ch.sendToQueue('cyc.self', Buffer.from('b'));
    await ch.assertExchange('cyc.fan', 'fanout', { durable: false });
    await ch.assertQueue('cyc.1', { durable: false, arguments: { 'x-message-ttl': 50, 'x-dead-letter-exchange': 'cyc.fan' } });
    await ch.assertQueue('cyc.2', { durable: false, arguments: { 'x-message-ttl': 50, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'cyc.1' } });
    await ch.bindQueue('cyc.2', 'cyc.fan', '');
    ch.sendToQueue('cyc.1', Buffer.from('loop'));
    await ch.assertQueue('cyc.alo', {
      durable: true,
      arguments: { 'x-queue-type': 'quorum', 'x-message-ttl': 50, 'x-dead-letter-exchange': '', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' },
    });
    ch.sendToQueue('cyc.alo', Buffer.from('q'));
    await ch.waitForConfirms();
    await clock.advance(50);
    await clock.advance(50);
    for (const q of ['cyc.self', 'cyc.1', 'cyc.2']) expect((await ch.checkQueue(q)).messageCount, q).to.equal(0);
    // The at-least-once dead-letter is held: its only target is the queue it cycles back to.
    expect(broker.running.broker.vhosts.get('/')!.queues.get('cyc.alo')!.heldDeadLetterCount).to.equal(1);
    expect(cycleWarnings().sort()).to.deep.equal([
      'Dead-letter queues cycle detected for source quorum queue \'cyc.alo\' in vhost \'/\' with dead-letter exchange exchange \'\' in vhost \'/\' ' +
        'and routing keys [<<"cyc.alo">>]: [<<"cyc.alo">>,\n' + ' '.repeat(167) + '<<"cyc.alo">>] This message will not be logged again.',
      `Message dropped. Dead-letter queues cycle detected: [<<"cyc.1">>,<<"cyc.2">>,\n${' '.repeat(53)}<<"cyc.1">>]\nThis cycle will NOT be reported again.`,
      `Message dropped. Dead-letter queues cycle detected: [<<"cyc.self">>,\n${' '.repeat(53)}<<"cyc.self">>]\nThis cycle will NOT be reported again.`,
    ]);
    // Once per cycle: the second message of cyc.self and the held one's retry log nothing more.
    await clock.advance(180_000);
    expect(cycleWarnings()).to.have.length(3);
    await ch.deleteQueue('cyc.alo');
    await conn.close();
  });
});
