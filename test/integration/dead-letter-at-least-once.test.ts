import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { DEAD_LETTER_RETRY_MS } from '../../src/queue/held-dead-letters.js';
import { confirmChannel, connect, type ChannelModel, type ConfirmChannel } from '../support/amqp.js';
import { BrokerProcess, type LogEntry } from '../support/broker-process.js';
import { call, useManagedBroker } from '../support/management.js';
import { drainBodies } from '../support/session.js';
import { useTmpDir } from '../support/tmp-dir.js';
import { samples } from '../metrics/prometheus-text.js';

/**
 * x-dead-letter-strategy at-least-once (RabbitMQ 3.10's quorum queues: rabbit_fifo_dlx and its
 * worker): a quorum queue with a dead-letter exchange and x-overflow reject-publish keeps what it
 * dead-letters until the queues its dead-letter exchange routes it to have taken it. The figures
 * asserted were recorded from RabbitMQ 3.10.8 with the same steps.
 */
describe('at-least-once dead-lettering (quorum queues)', function () {
  const clock = new FakeClock(Date.UTC(2026, 10, 30));
  const b = useManagedBroker({ clock, heartbeat: 0, prometheusPort: 0 });
  let conn: ChannelModel;
  let ch: ConfirmChannel;

  beforeEach(async () => {
    conn = await connect(b.url);
    ch = await confirmChannel(conn);
  });
  afterEach(async () => {
    await conn.close();
  });

  const queueInfo = async (name: string) => {
    const q = (await b.api('GET', `/api/queues/%2F/${encodeURIComponent(name)}`)).json;
    return {
      messages: q.messages, ready: q.messages_ready, unacked: q.messages_unacknowledged, dlx: q.messages_dlx, dlxBytes: q.message_bytes_dlx,
      bytes: q.message_bytes, persistent: q.messages_persistent,
    };
  };
  const atLeastOnce = (dlx: string, more: Record<string, unknown> = {}) => ({
    durable: true,
    arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': dlx, 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish', ...more },
  });
  /** basic.get then basic.nack without requeue, n times; resolves once the broker has the nacks. */
  const reject = async (queue: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const m = await ch.get(queue, { noAck: false });
      if (m === false) throw new Error(`${queue} is empty`);
      ch.nack(m, false, false);
    }
    await ch.checkQueue(queue);
  };
  /** Publishes body to queue and resolves with the confirm: 'ack' or 'nack'. */
  const publish = (queue: string, body: string) =>
    new Promise<string>((resolve) => ch.sendToQueue(queue, Buffer.from(body), {}, (err) => resolve(err ? 'nack' : 'ack')));
  const bodies = (queue: string) => drainBodies(ch, queue);

  it('holds what its dead-letter exchange routes nowhere, counts it in messages and length limits, and forwards it when a policy changes', async () => {
    await ch.assertExchange('alo.dlx', 'fanout', { durable: true });
    await ch.assertQueue('alo.src', atLeastOnce('alo.dlx', { 'x-max-length': 3 }));
    for (let i = 0; i < 3; i++) ch.sendToQueue('alo.src', Buffer.from(`hello${i}`));
    await ch.waitForConfirms();
    await reject('alo.src', 2);
    // As 3.10.8 reports it: the held ones are in messages, bytes and persistent counts.
    expect(await queueInfo('alo.src')).to.deep.equal({ messages: 3, ready: 1, unacked: 0, dlx: 2, dlxBytes: 12, bytes: 18, persistent: 3 });
    // One ready and two held: at the limit of 3, not over it, so one more is taken; then refused.
    expect([await publish('alo.src', 'x0'), await publish('alo.src', 'x1')]).to.deep.equal(['ack', 'nack']);
    expect(await queueInfo('alo.src')).to.deep.equal({ messages: 4, ready: 2, unacked: 0, dlx: 2, dlxBytes: 12, bytes: 20, persistent: 4 });
    const totals = (await b.api('GET', '/api/overview')).json.queue_totals;
    expect([totals.messages, totals.messages_ready]).to.deep.equal([4, 2]);

    // A queue bound now gets nothing until the worker looks again: a policy change of the source.
    await ch.assertQueue('alo.dst', { durable: true });
    await ch.bindQueue('alo.dst', 'alo.dlx', '');
    clock.advance(1000);
    expect((await queueInfo('alo.dst')).messages).to.equal(0);
    expect((await b.api('PUT', '/api/policies/%2F/alo.pol', { body: { pattern: '^alo\\.src$', definition: { 'delivery-limit': 100 }, 'apply-to': 'queues' } })).status).to.equal(201);
    expect(await queueInfo('alo.src')).to.deep.equal({ messages: 2, ready: 2, unacked: 0, dlx: 0, dlxBytes: 0, bytes: 8, persistent: 2 });
    const first = await ch.get('alo.dst', { noAck: true });
    expect(first && [first.content.toString(), first.fields.redelivered, first.fields.exchange, first.properties.headers?.['x-first-death-reason']])
      .to.deep.equal(['hello0', false, 'alo.dlx', 'rejected']);
    expect(await bodies('alo.dst')).to.deep.equal(['hello1']);

    const metrics = samples(await (await fetch(`${b.running.broker.prometheusUrl}/metrics`)).text());
    const labels = '{dead_letter_strategy="at_least_once",queue_type="rabbit_quorum_queue"}';
    expect([metrics.get(`rabbitmq_global_messages_dead_lettered_rejected_total${labels}`), metrics.get(`rabbitmq_global_messages_dead_lettered_confirmed_total${labels}`)])
      .to.deep.equal([2, 2]);
    await b.api('DELETE', '/api/policies/%2F/alo.pol');
  });

  it(`forwards again every ${DEAD_LETTER_RETRY_MS / 1000} s what a queue refused, to that queue only`, async () => {
    await ch.assertExchange('alo.dlx2', 'fanout', { durable: true });
    await ch.assertQueue('alo.taker', { durable: true });
    await ch.assertQueue('alo.full', { durable: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
    await ch.bindQueue('alo.taker', 'alo.dlx2', '');
    await ch.bindQueue('alo.full', 'alo.dlx2', '');
    ch.sendToQueue('alo.full', Buffer.from('filler'));
    await ch.assertQueue('alo.src2', atLeastOnce('alo.dlx2'));
    ch.sendToQueue('alo.src2', Buffer.from('abc'));
    await ch.waitForConfirms();
    await reject('alo.src2', 1);
    expect([(await queueInfo('alo.src2')).dlx, (await queueInfo('alo.taker')).messages, (await queueInfo('alo.full')).messages]).to.deep.equal([1, 1, 1]);
    expect(await bodies('alo.full')).to.deep.equal(['filler']);
    // Forwarded at the timer, not before.
    clock.advance(DEAD_LETTER_RETRY_MS - 1);
    expect((await queueInfo('alo.full')).messages).to.equal(0);
    clock.advance(1);
    expect(await queueInfo('alo.src2')).to.include({ messages: 0, dlx: 0 });
    expect([await bodies('alo.full'), await bodies('alo.taker')]).to.deep.equal([['abc'], ['abc']]);
  });

  it('forwards at once what a queue takes, and holds what expires into an exchange that does not exist yet', async () => {
    await ch.assertExchange('alo.dlx3', 'direct', { durable: true });
    await ch.assertQueue('alo.dst3', { durable: true });
    await ch.bindQueue('alo.dst3', 'alo.dlx3', 'to-dst');
    await ch.assertQueue('alo.src3', atLeastOnce('alo.dlx3', { 'x-dead-letter-routing-key': 'to-dst' }));
    ch.sendToQueue('alo.src3', Buffer.from('straight'));
    await ch.waitForConfirms();
    await reject('alo.src3', 1);
    expect(await queueInfo('alo.src3')).to.include({ messages: 0, dlx: 0 });
    expect(await bodies('alo.dst3')).to.deep.equal(['straight']);

    await ch.assertQueue('alo.ttl', atLeastOnce('alo.missing', { 'x-message-ttl': 100 }));
    ch.sendToQueue('alo.ttl', Buffer.from('ttl-me'), { persistent: false });
    await ch.waitForConfirms();
    clock.advance(100);
    expect(await queueInfo('alo.ttl')).to.deep.equal({ messages: 1, ready: 0, unacked: 0, dlx: 1, dlxBytes: 6, bytes: 6, persistent: 1 });
    await ch.assertExchange('alo.missing', 'fanout', { durable: true });
    await ch.assertQueue('alo.found', { durable: true });
    await ch.bindQueue('alo.found', 'alo.missing', '');
    // A message no queue took yet is forwarded again at the timer however recent it is.
    clock.advance(DEAD_LETTER_RETRY_MS);
    const m = await ch.get('alo.found', { noAck: true });
    if (m === false) throw new Error('alo.found is empty');
    const death = m.properties.headers?.['x-death']?.[0];
    expect([m.content.toString(), m.properties.deliveryMode, death?.reason, death?.queue]).to.deep.equal(['ttl-me', 1, 'expired', 'alo.ttl']);
    expect((await queueInfo('alo.ttl')).dlx).to.equal(0);
  });

  it('deletes what it holds when a policy makes it dead-letter at most once', async () => {
    await ch.assertExchange('alo.dlx4', 'fanout', { durable: true });
    const policy = (strategy: string) => b.api('PUT', '/api/policies/%2F/alo.pol4', {
      body: { pattern: '^alo\\.src4$', definition: { 'dead-letter-exchange': 'alo.dlx4', 'dead-letter-strategy': strategy, overflow: 'reject-publish' }, 'apply-to': 'queues' },
    });
    await policy('at-least-once');
    await ch.assertQueue('alo.src4', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    ch.sendToQueue('alo.src4', Buffer.from('p1'));
    await ch.waitForConfirms();
    await reject('alo.src4', 1);
    expect(await queueInfo('alo.src4')).to.include({ messages: 1, dlx: 1, dlxBytes: 2 });
    await ch.assertQueue('alo.dst4', { durable: true });
    await ch.bindQueue('alo.dst4', 'alo.dlx4', '');
    await policy('at-most-once');
    expect(await queueInfo('alo.src4')).to.include({ messages: 0, dlx: 0, dlxBytes: 0 });
    expect((await queueInfo('alo.dst4')).messages).to.equal(0);
    await b.api('DELETE', '/api/policies/%2F/alo.pol4');
  });

  it('dead-letters at most once without x-overflow reject-publish, as 3.10.8 falls back to', async () => {
    await ch.assertExchange('alo.dlx5', 'fanout', { durable: true });
    await ch.assertQueue('alo.dh', { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'alo.dlx5', 'x-dead-letter-strategy': 'at-least-once' } });
    ch.sendToQueue('alo.dh', Buffer.from('dropme'));
    await ch.waitForConfirms();
    await reject('alo.dh', 1);
    expect(await queueInfo('alo.dh')).to.include({ messages: 0, dlx: 0 });
  });
});

describe('at-least-once dead-lettering: the retry period is deadLetterRetryMs', function () {
  const clock = new FakeClock(Date.UTC(2026, 10, 30));
  const b = useManagedBroker({ clock, heartbeat: 0, deadLetterRetryMs: 1000 });

  it('forwards again after the configured period what no queue took', async () => {
    const conn = await connect(b.url);
    try {
      const ch = await confirmChannel(conn);
      await ch.assertExchange('retry.dlx', 'fanout', { durable: true });
      await ch.assertQueue('retry.src', {
        durable: true,
        arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'retry.dlx', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' },
      });
      ch.sendToQueue('retry.src', Buffer.from('again'));
      await ch.waitForConfirms();
      const m = await ch.get('retry.src', { noAck: false });
      if (m === false) throw new Error('retry.src is empty');
      ch.nack(m, false, false);
      await ch.assertQueue('retry.dst', { durable: true });
      await ch.bindQueue('retry.dst', 'retry.dlx', '');
      expect((await ch.checkQueue('retry.dst')).messageCount).to.equal(0);
      clock.advance(1000);
      expect((await ch.checkQueue('retry.dst')).messageCount).to.equal(1);
    } finally {
      await conn.close();
    }
  });
});

describe('at-least-once dead-lettering: a crash loses nothing held', function () {
  this.timeout(60000);
  const dataDir = useTmpDir('warren-alo-');

  /** Every line the brokers logged, from their start (recovery logs before "listening"). */
  const lines: string[] = [];
  /** The broker in a child process with the management API on a free port. */
  const start = async () => {
    const broker = await BrokerProcess.start(dataDir.path, { args: ['--management-port', '0'], onLine: (l) => lines.push(l) });
    const listening = await broker.waitForLog((e) => typeof e.msg === 'string' && e.msg.startsWith('management API listening'));
    return { broker, api: `http://127.0.0.1:${listening.port}` };
  };

  it('every held dead-letter survives SIGKILL, and is forwarded in order once a policy change finds a route', async () => {
    let { broker, api } = await start();
    const n = 50; // more than are out at once (DEAD_LETTER_PREFETCH)
    try {
      const conn = await connect(broker.url);
      conn.on('error', () => {});
      const ch = await confirmChannel(conn);
      await ch.assertExchange('crash.dlx', 'fanout', { durable: true });
      await ch.assertQueue('crash.src', {
        durable: true,
        arguments: { 'x-queue-type': 'quorum', 'x-dead-letter-exchange': 'crash.dlx', 'x-dead-letter-strategy': 'at-least-once', 'x-overflow': 'reject-publish' },
      });
      await ch.assertQueue('crash.barrier', { durable: true });
      for (let i = 0; i < n; i++) ch.sendToQueue('crash.src', Buffer.from(String(i)), { persistent: true });
      await ch.waitForConfirms();
      for (let i = 0; i < n; i++) {
        const m = await ch.get('crash.src', { noAck: false });
        if (m === false) throw new Error('crash.src is empty');
        ch.nack(m, false, false);
      }
      // A confirm after the nacks comes from a commit that has them (group commit keeps order).
      ch.sendToQueue('crash.barrier', Buffer.from('barrier'), { persistent: true });
      await ch.waitForConfirms();
      await broker.kill();

      ({ broker, api } = await start());
      const src = async () => (await call(api, 'GET', '/api/queues/%2F/crash.src')).json;
      expect(await src()).to.include({ messages: n, messages_ready: 0, messages_dlx: n });
      // No route, in RabbitMQ's words: once by the first broker for 50 messages, once after the restart.
      const noRoute = lines.filter((l) => (JSON.parse(l) as LogEntry).msg?.startsWith(
        "Cannot forward any dead-letter messages from source quorum queue 'crash.src' in vhost '/' with configured dead-letter-exchange " +
        "exchange 'crash.dlx' in vhost '/' and configured dead-letter-routing-key 'undefined'."));
      expect(noRoute).to.have.length(2);
      const conn2 = await connect(broker.url);
      const ch2 = await confirmChannel(conn2);
      await ch2.assertQueue('crash.dst', { durable: true });
      await ch2.bindQueue('crash.dst', 'crash.dlx', '');
      const put = await call(api, 'PUT', '/api/policies/%2F/crash.pol', { body: { pattern: '^crash\\.src$', definition: { 'delivery-limit': 100 }, 'apply-to': 'queues' } });
      expect(put.status).to.equal(201);
      expect(await src()).to.include({ messages: 0, messages_dlx: 0 });
      expect((await ch2.checkQueue('crash.dst')).messageCount).to.equal(n);
      await conn2.close();

      // What was forwarded is held no longer after a restart, and the copies stayed.
      await broker.stop();
      ({ broker, api } = await start());
      expect(await src()).to.include({ messages: 0, messages_dlx: 0 });
      const conn3 = await connect(broker.url);
      const ch3 = await confirmChannel(conn3);
      expect(await drainBodies(ch3, 'crash.dst')).to.deep.equal(Array.from({ length: n }, (_, i) => String(i)));
      await conn3.close();
    } finally {
      await broker.stop();
    }
  });
});
