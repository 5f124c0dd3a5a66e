import { expect } from 'chai';
import type { ConfirmChannel } from 'amqplib';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { channel, closedWith, confirmChannel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { call } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

/**
 * Versioned last-value queues (Warren's own; README, "Duplicates and ordering"):
 * x-last-value-key names the header a message is the last value of; a new message replaces the
 * ready, never-delivered message with the same key in its place; with x-last-value-version, a
 * message whose version is not greater than the newest accepted for its key is dropped
 * (confirmed, not enqueued).
 */

const T0 = Date.UTC(2026, 10, 1);

interface Update { key?: unknown; version?: unknown; headers?: Record<string, unknown>; persistent?: boolean; expiration?: string; mandatory?: boolean }

function send(ch: ConfirmChannel, queue: string, body: string, u: Update = {}): Promise<'ack' | 'nack'> {
  const headers: Record<string, unknown> = { ...u.headers };
  if (u.key !== undefined) headers['instrument'] = u.key;
  if (u.version !== undefined) headers['seq'] = u.version;
  const { persistent, expiration, mandatory } = u;
  return new Promise((resolve) => ch.publish('', queue, Buffer.from(body), { headers, persistent, expiration, mandatory }, (err) => resolve(err ? 'nack' : 'ack')));
}

const LV = { 'x-last-value-key': 'instrument' };
const LVV = { 'x-last-value-key': 'instrument', 'x-last-value-version': 'seq' };

describe('versioned last-value queues: x-last-value-key, x-last-value-version', () => {
  const clock = new FakeClock(T0);
  const b = useBroker({ clock, heartbeat: 0, managementPort: 0 });
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

  it('refuses a key or version that is not a non-empty longstr, and a version without a key (406)', async () => {
    const refusal = async (args: Record<string, unknown>) => {
      const c = await connect(b.url);
      try {
        return (await closedWith((await channel(c)).assertQueue('bad', { arguments: args }))).text;
      } finally {
        await c.close().catch(() => {});
      }
    };
    // amqplib sends a small integer as a byte (short-short-int).
    expect(await refusal({ 'x-last-value-key': 5 })).to.equal("PRECONDITION_FAILED - invalid arg 'x-last-value-key' for queue 'bad' in vhost '/': {unacceptable_type,byte}");
    expect(await refusal({ 'x-last-value-key': '' })).to.equal("PRECONDITION_FAILED - invalid arg 'x-last-value-key' for queue 'bad' in vhost '/': empty_header_name");
    expect(await refusal({ 'x-last-value-version': 'seq' })).to.equal("PRECONDITION_FAILED - invalid arg 'x-last-value-version' for queue 'bad' in vhost '/': version_but_no_key_defined");
  });

  it('a new message replaces the ready one with the same key, in its place; others queue as usual', async () => {
    await ch.assertQueue('prices', { arguments: LV });
    await send(ch, 'prices', 'EUR 1.08', { key: 'EUR' });
    await send(ch, 'prices', 'GBP 1.27', { key: 'GBP' });
    await send(ch, 'prices', 'no key');
    await send(ch, 'prices', 'EUR 1.09', { key: 'EUR' });
    await send(ch, 'prices', 'no key');
    expect(ready('prices')).to.deep.equal(['EUR 1.09', 'GBP 1.27', 'no key', 'no key']);
    expect((await ch.checkQueue('prices')).messageCount).to.equal(4);
    const got = await ch.get('prices', { noAck: true });
    expect(got && got.content.toString()).to.equal('EUR 1.09');
    // Gone from the queue: the next EUR queues at the tail.
    await send(ch, 'prices', 'EUR 1.10', { key: 'EUR' });
    expect(ready('prices')).to.deep.equal(['GBP 1.27', 'no key', 'no key', 'EUR 1.10']);
  });

  it('drops a version not greater than the newest accepted for its key (confirmed, not returned), even after delivery', async () => {
    await ch.assertQueue('orders', { arguments: LVV });
    const returned: string[] = [];
    ch.on('return', (m) => returned.push(m.content.toString()));
    expect(await send(ch, 'orders', 'o1 v2', { key: 'o1', version: 2, mandatory: true })).to.equal('ack');
    expect(await send(ch, 'orders', 'o1 v1 late', { key: 'o1', version: 1, mandatory: true })).to.equal('ack');
    expect(await send(ch, 'orders', 'o1 v2 again', { key: 'o1', version: 2, mandatory: true })).to.equal('ack');
    expect(ready('orders')).to.deep.equal(['o1 v2']);
    expect(returned).to.deep.equal([]);
    const got = await ch.get('orders');
    ch.ack(got as never);
    await send(ch, 'orders', 'o1 v2 once more', { key: 'o1', version: 2 });
    await send(ch, 'orders', 'o1 v1.5', { key: 'o1', version: 1.5 });
    await send(ch, 'orders', 'o1 v3', { key: 'o1', version: 3 });
    await send(ch, 'orders', 'o2 v1', { key: 'o2', version: 1 });
    await send(ch, 'orders', 'o1 v10', { key: 'o1', version: 10 });
    expect(ready('orders')).to.deep.equal(['o1 v10', 'o2 v1']);
  });

  it('a message without a numeric version is not version-checked: it replaces as an unversioned update', async () => {
    await ch.assertQueue('orders', { arguments: LVV });
    await send(ch, 'orders', 'v5', { key: 'o1', version: 5 });
    await send(ch, 'orders', 'no version', { key: 'o1' });
    await send(ch, 'orders', 'string version', { key: 'o1', version: '1' });
    expect(ready('orders')).to.deep.equal(['string version']);
    await send(ch, 'orders', 'v4', { key: 'o1', version: 4 });
    await send(ch, 'orders', 'v6', { key: 'o1', version: 6 });
    expect(ready('orders')).to.deep.equal(['v6']);
  });

  it('a delivered (unacknowledged) message is not replaced; the next ready one is, and a consumer gets the newest', async () => {
    await ch.assertQueue('status', { arguments: LV });
    const consumerCh = await channel(conn);
    await consumerCh.prefetch(1);
    const got: Array<{ body: string; ack: () => void }> = [];
    let wake: (() => void) | undefined;
    await consumerCh.consume('status', (m) => {
      got.push({ body: m!.content.toString(), ack: () => consumerCh.ack(m!) });
      wake?.();
    });
    const next = () => new Promise<void>((r) => (got.length > 0 ? r() : (wake = r)));
    await send(ch, 'status', 'order-1 placed', { key: 'order-1' });
    await next();
    const first = got.shift()!;
    expect(first.body).to.equal('order-1 placed');
    await b.running.until.queue('status', (q) => q.unacked === 1);
    // order-1 placed is unacked; these two queue behind it, the second replacing the first.
    await send(ch, 'status', 'order-1 paid', { key: 'order-1' });
    await send(ch, 'status', 'order-1 shipped', { key: 'order-1' });
    expect(ready('status')).to.deep.equal(['order-1 shipped']);
    expect(b.running.inspect.messages('status').unacked.map((m) => m.body.toString())).to.deep.equal(['order-1 placed']);
    // Acked, the consumer's credit frees and the newest status comes next.
    first.ack();
    await next();
    expect(got.map((g) => g.body)).to.deep.equal(['order-1 shipped']);
  });

  it('with TTL and a dead-letter exchange, a replaced message is not dead-lettered; its replacement expires in its place', async () => {
    await ch.assertExchange('dlx', 'fanout', { durable: false });
    await ch.assertQueue('dead');
    await ch.bindQueue('dead', 'dlx', '');
    await ch.assertQueue('quotes', { arguments: { ...LV, 'x-message-ttl': 1000, 'x-dead-letter-exchange': 'dlx' } });
    await send(ch, 'quotes', 'A 1', { key: 'A' });
    await clock.advance(500);
    await send(ch, 'quotes', 'B 1', { key: 'B' });
    await send(ch, 'quotes', 'A 2', { key: 'A' });
    expect(ready('quotes')).to.deep.equal(['A 2', 'B 1']);
    expect(ready('dead')).to.deep.equal([]);
    // A 2 got its own deadline (T0 + 1500), B 1 too: both go at 1500, A 2 first.
    await clock.advance(999);
    expect(ready('quotes')).to.deep.equal(['A 2', 'B 1']);
    await clock.advance(1);
    await b.running.until.queue('dead', (q) => q.ready === 2);
    const dead = b.running.inspect.messages('dead').ready;
    expect(dead.map((m) => m.body.toString())).to.deep.equal(['A 2', 'B 1']);
  });

  it('counts a replacement\'s bytes, not the replaced one\'s, and shows the arguments in the management API', async () => {
    await ch.assertQueue('sized', { arguments: LVV });
    await send(ch, 'sized', 'x'.repeat(100), { key: 'k', version: 1 });
    await send(ch, 'sized', 'y'.repeat(10), { key: 'k', version: 2 });
    const res = await call(b.running.managementUrl!, 'GET', '/api/queues/%2F/sized');
    expect(res.status).to.equal(200);
    expect(res.json.arguments).to.deep.equal({ 'x-last-value-key': 'instrument', 'x-last-value-version': 'seq' });
    expect(res.json.messages_ready).to.equal(1);
    expect(res.json.message_bytes_ready).to.equal(10);
  });
});

describe('versioned last-value queues across a restart', () => {
  let dataDir: string;
  let broker: RunningBroker | undefined;

  beforeEach(() => {
    dataDir = makeTmpDir('warren-lvq-');
  });
  afterEach(async () => {
    await broker?.close();
    removeDir(dataDir);
  });

  const start = async () => (broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, heartbeat: 0 }));

  it('a replaced persistent message is deleted from the store; the replacement and the newest versions survive a restart', async () => {
    let running = await start();
    let conn = await connect(running.url);
    let ch = await confirmChannel(conn);
    await ch.assertQueue('book', { durable: true, arguments: LVV });
    await send(ch, 'book', 'bid 1', { key: 'bid', version: 1, persistent: true });
    await send(ch, 'book', 'ask 1', { key: 'ask', version: 1, persistent: true });
    await send(ch, 'book', 'bid 2', { key: 'bid', version: 2, persistent: true });
    // Delivered and acknowledged: gone from the queue, its version still the newest.
    await send(ch, 'book', 'last 7', { key: 'last', version: 7, persistent: true });
    await running.broker.store.messages.sync();
    expect(running.broker.store.messages.stats()).to.deep.equal({ messages: 3, entries: 3 });
    // An integer key (its version kept as the integer it is) on a transient message: gone after the restart, its version not.
    await send(ch, 'book', 'instrument 7 v3', { key: 7, version: 3 });
    expect((await ch.get('book', { noAck: true }) as { content: Buffer }).content.toString()).to.equal('bid 2');
    await send(ch, 'book', 'bid 3', { key: 'bid', version: 3, persistent: true });
    const consumed = await ch.get('book');
    const consumed2 = await ch.get('book');
    const consumed3 = await ch.get('book');
    expect([consumed, consumed2, consumed3].map((m) => m && m.content.toString())).to.deep.equal(['ask 1', 'last 7', 'instrument 7 v3']);
    ch.nack(consumed as never, false, true);
    ch.ack(consumed2 as never);
    ch.ack(consumed3 as never);
    await ch.checkQueue('book');
    await conn.close();
    await running.close();

    running = await start();
    conn = await connect(running.url);
    ch = await confirmChannel(conn);
    expect(running.inspect.messages('book').ready.map((m) => m.body.toString())).to.deep.equal(['ask 1', 'bid 3']);
    await send(ch, 'book', 'last 6 (stale)', { key: 'last', version: 6, persistent: true });
    await send(ch, 'book', 'bid 3 (duplicate)', { key: 'bid', version: 3, persistent: true });
    await send(ch, 'book', 'instrument 7 v2 (stale)', { key: 7, version: 2, persistent: true });
    await send(ch, 'book', 'ask 3', { key: 'ask', version: 3, persistent: true });
    expect(running.inspect.messages('book').ready.map((m) => m.body.toString())).to.deep.equal(['ask 3', 'bid 3']);
    // Deleting the queue deletes its versions: declared again, version 1 is new.
    await ch.deleteQueue('book');
    await ch.assertQueue('book', { durable: true, arguments: LVV });
    await send(ch, 'book', 'last 1', { key: 'last', version: 1, persistent: true });
    expect(running.inspect.messages('book').ready.map((m) => m.body.toString())).to.deep.equal(['last 1']);
    await conn.close();
  });
});
