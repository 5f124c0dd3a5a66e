import { expect } from 'chai';
import type { ConfirmChannel } from 'amqplib';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { channel, confirmChannel, connect, connectNamed, connectionClosed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { integersInOneV8Bucket } from '../support/colliding-keys.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * Queue-level deduplication (the plugin's `x-message-deduplication: true` queue argument,
 * rabbit_message_deduplication_queue.ex): a message is not enqueued while a message with the
 * same x-deduplication-header value is in the queue, ready or unacknowledged; the value is free
 * again once that message is acknowledged or otherwise removed (README, "Duplicates and ordering").
 */

const T0 = Date.UTC(2026, 10, 1);

function send(ch: ConfirmChannel, queue: string, body: string, dedup?: unknown, options: { persistent?: boolean; expiration?: string; mandatory?: boolean } = {}): Promise<'ack' | 'nack'> {
  const headers = dedup === undefined ? {} : { 'x-deduplication-header': dedup };
  return new Promise((resolve) => ch.publish('', queue, Buffer.from(body), { headers, ...options }, (err) => resolve(err ? 'nack' : 'ack')));
}

describe('queue-level deduplication: x-message-deduplication', () => {
  const clock = new FakeClock(T0);
  const b = useBroker({ clock, heartbeat: 0 });
  let conn: Awaited<ReturnType<typeof connect>>;
  let ch: ConfirmChannel;

  beforeEach(async () => {
    await b.running.reset();
    conn = await connect(b.url);
    ch = await confirmChannel(conn);
  });
  afterEach(async () => {
    await conn.close().catch(() => {});
  });

  const ready = (q: string) => b.running.inspect.messages(q).ready.map((m) => m.body.toString());

  it('refuses a value while a message holding it is ready; confirms the duplicate (basic.ack) and does not return it', async () => {
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true } });
    const returned: string[] = [];
    ch.on('return', (m) => returned.push(m.content.toString()));
    expect(await send(ch, 'q', 'a1', 'a', { mandatory: true })).to.equal('ack');
    expect(await send(ch, 'q', 'a2', 'a', { mandatory: true })).to.equal('ack');
    expect(await send(ch, 'q', 'plain')).to.equal('ack');
    expect(await send(ch, 'q', 'plain')).to.equal('ack');
    expect(await send(ch, 'q', 'b1', 'b')).to.equal('ack');
    expect(ready('q')).to.deep.equal(['a1', 'plain', 'plain', 'b1']);
    expect(returned).to.deep.equal([]);
  });

  it('keys on strings, integers, floats and void alike, each acked value free again (queue_SUITE deduplicate_message)', async () => {
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true } });
    for (const value of ['deduplicate-this', 42, 4.2, null]) {
      await send(ch, 'q', `${value} 1`, value);
      await send(ch, 'q', `${value} 2`, value);
      expect(ready('q')).to.deep.equal([`${value} 1`]);
      const m = await ch.get('q');
      ch.ack(m as never);
      await ch.checkQueue('q');
    }
  });

  it('a message dropped from the head by x-max-length frees its value (queue_SUITE queue_overflow)', async () => {
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true, 'x-max-length': 1 } });
    await send(ch, 'q', 'this 1', 'deduplicate-this');
    await send(ch, 'q', 'that', 'deduplicate-that');
    await send(ch, 'q', 'this 2', 'deduplicate-this');
    expect(ready('q')).to.deep.equal(['this 2']);
  });

  it('holds the value while the message is unacknowledged (and requeued); releases it on ack', async () => {
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true } });
    await send(ch, 'q', 'a1', 'a');
    const got = await ch.get('q');
    expect(got && got.content.toString()).to.equal('a1');
    await send(ch, 'q', 'a2 while unacked', 'a');
    expect(ready('q')).to.deep.equal([]);
    ch.nack(got as never, false, true);
    await send(ch, 'q', 'a3 after requeue', 'a');
    expect(ready('q')).to.deep.equal(['a1']);
    const again = await ch.get('q');
    ch.ack(again as never);
    await send(ch, 'q', 'a4 after ack', 'a');
    expect(ready('q')).to.deep.equal(['a4 after ack']);
  });

  it('releases the value on a no-ack get, a consumer\'s ack, a reject without requeue, expiry and purge', async () => {
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true } });
    await send(ch, 'q', 'v1', 'v');
    await ch.get('q', { noAck: true });
    await send(ch, 'q', 'v2', 'v');
    expect(ready('q')).to.deep.equal(['v2']);

    const seen: string[] = [];
    const consumerCh = await channel(conn);
    await consumerCh.prefetch(1);
    const consumed = new Promise<void>((resolve) => {
      void consumerCh.consume('q', (m) => {
        seen.push(m!.content.toString());
        consumerCh.ack(m!);
        resolve();
      });
    });
    await consumed;
    await consumerCh.close();
    await send(ch, 'q', 'v3', 'v');
    expect(ready('q')).to.deep.equal(['v3']);

    const rejected = await ch.get('q');
    ch.reject(rejected as never, false);
    await send(ch, 'q', 'v4', 'v', { expiration: '1000' });
    expect(ready('q')).to.deep.equal(['v4']);
    await clock.advance(1000);
    await send(ch, 'q', 'v5', 'v');
    expect(ready('q')).to.deep.equal(['v5']);
    await ch.purgeQueue('q');
    await send(ch, 'q', 'v6', 'v');
    expect(ready('q')).to.deep.equal(['v6']);
    expect(seen).to.deep.equal(['v2']);
  });

  it('a value dead-lettered back into the same queue finds it free (released before dead-lettering)', async () => {
    await ch.assertExchange('back', 'fanout', { durable: false });
    await ch.assertQueue('q', { arguments: { 'x-message-deduplication': true, 'x-dead-letter-exchange': 'back' } });
    await ch.bindQueue('q', 'back', '');
    await send(ch, 'q', 'v1', 'v');
    const m = await ch.get('q');
    ch.reject(m as never, false);
    await b.running.until.queue('q', (q) => q.ready === 1);
    expect(ready('q')).to.deep.equal(['v1']);
  });

  it('only x-message-deduplication=false leaves it off; quorum queues ignore it, as the plugin (a backing-queue hook) does', async () => {
    await ch.assertQueue('off', { arguments: { 'x-message-deduplication': false } });
    await ch.assertQueue('quorum', { durable: true, arguments: { 'x-message-deduplication': true, 'x-queue-type': 'quorum' } });
    await ch.assertQueue('string-on', { arguments: { 'x-message-deduplication': 'yes' } });
    for (const q of ['off', 'quorum', 'string-on']) {
      await send(ch, q, '1', 'same');
      await send(ch, q, '2', 'same');
    }
    expect(ready('off')).to.deep.equal(['1', '2']);
    expect(ready('quorum')).to.deep.equal(['1', '2']);
    expect(ready('string-on')).to.deep.equal(['1']);
    await ch.deleteQueue('quorum');
  });

  it('keeps integer values chosen to share one bucket of a V8 Map apart (each accepted once, each repeat dropped)', async () => {
    // A hash flood's keys (support/colliding-keys.ts): the queue keys them in a seeded table.
    await ch.assertQueue('flood', { arguments: { 'x-message-deduplication': true } });
    const keys = integersInOneV8Bucket(300);
    for (const round of [1, 2]) for (const k of keys) void send(ch, 'flood', `${k}/${round}`, k);
    await ch.waitForConfirms();
    expect(ready('flood')).to.deep.equal(keys.map((k) => `${k}/1`));
  });

  it('a publisher that retries after its connection dropped before the confirm leaves one copy', async () => {
    await ch.assertQueue('jobs', { arguments: { 'x-message-deduplication': true } });
    const publisher = await connectNamed(b.url, 'retrying');
    const pch = await confirmChannel(publisher);
    const closed = connectionClosed(publisher);
    b.running.faults.dropConnection('retrying', { afterFrames: 3 });
    const first = await new Promise<string>((resolve) => {
      pch.publish('', 'jobs', Buffer.from('job 1'), { headers: { 'x-deduplication-header': 'job-1' } }, (err) => resolve(err ? 'lost' : 'ack'));
      pch.on('close', () => resolve('lost'));
    });
    expect(first).to.equal('lost');
    await closed;
    const again = await connect(b.url);
    const retry = await confirmChannel(again);
    expect(await send(retry, 'jobs', 'job 1', 'job-1')).to.equal('ack');
    expect(ready('jobs')).to.deep.equal(['job 1']);
    await again.close();
  });
});

describe('queue-level deduplication across a restart', () => {
  let dataDir: string;
  let broker: RunningBroker | undefined;

  beforeEach(() => {
    dataDir = makeTmpDir('warren-dedup-q-');
  });
  afterEach(async () => {
    await broker?.close();
    removeDir(dataDir);
  });

  it('recovered messages hold their values again', async () => {
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, heartbeat: 0 });
    let conn = await connect(broker.url);
    let ch = await confirmChannel(conn);
    await ch.assertQueue('dq', { durable: true, arguments: { 'x-message-deduplication': true } });
    await send(ch, 'dq', 'kept', 'k', { persistent: true });
    await send(ch, 'dq', 'transient', 't');
    await conn.close();
    await broker.close();
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, heartbeat: 0 });
    conn = await connect(broker.url);
    ch = await confirmChannel(conn);
    await send(ch, 'dq', 'kept again', 'k', { persistent: true });
    await send(ch, 'dq', 'transient again', 't');
    expect(broker.inspect.messages('dq').ready.map((m) => m.body.toString())).to.deep.equal(['kept', 'transient again']);
    await conn.close();
  });
});
