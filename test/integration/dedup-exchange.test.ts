import { expect } from 'chai';
import type { ConfirmChannel, Message } from 'amqplib';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { channel, closedWith, confirmChannel, connect, connectionClosed, connectNamed } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { integersInOneV8Bucket } from '../support/colliding-keys.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { F } from '../../src/frame/field-table.js';

/**
 * The x-message-deduplication exchange type, as the rabbitmq-message-deduplication plugin
 * defines it (README "Exchange level deduplication"; rabbit_message_deduplication_exchange.ex
 * of 0.6.2, the release for RabbitMQ 3.10, and its test/exchange_SUITE.erl), and Warren's
 * documented choices where the plugin is silent (README, "Duplicates and ordering").
 */

const T0 = Date.UTC(2026, 10, 1);

/** Publishes in confirm mode; resolves 'ack' or 'nack'. */
function publish(ch: ConfirmChannel, exchange: string, body: string, headers: Record<string, unknown> = {}, options: { mandatory?: boolean; persistent?: boolean } = {}): Promise<'ack' | 'nack'> {
  return new Promise((resolve) => {
    ch.publish(exchange, '', Buffer.from(body), { headers, ...options }, (err) => resolve(err ? 'nack' : 'ack'));
  });
}

/** Takes every ready message of queue with basic.get (no-ack), bodies in order. */
async function drain(ch: { get: ConfirmChannel['get'] }, queue: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const m = await ch.get(queue, { noAck: true });
    if (m === false) return out;
    out.push(m.content.toString());
  }
}

const dedupArgs = (args: Record<string, unknown>) => ({ durable: false, arguments: args });

describe('x-message-deduplication exchange (rabbitmq-message-deduplication plugin)', () => {
  const clock = new FakeClock(T0);
  const b = useBroker({ clock, heartbeat: 0 });

  beforeEach(() => b.running.reset());

  describe('declare arguments (the plugin\'s validate/1 and its texts)', () => {
    const refusal = async (args: Record<string, unknown>) => {
      const conn = await connect(b.url);
      try {
        const ch = await channel(conn);
        return await closedWith(ch.assertExchange('dx', 'x-message-deduplication', dedupArgs(args)));
      } finally {
        await conn.close().catch(() => {});
      }
    };

    it('x-cache-size is required: 406 with the plugin\'s text (its indentation included)', async () => {
      expect(await refusal({})).to.deep.equal({
        code: 406, classId: 40, methodId: 10,
        text: "PRECONDITION_FAILED - Missing or invalid argument,           'x-cache-size' must be an integer greater than 0",
      });
      expect((await refusal({ 'x-cache-size': 0 })).text).to.equal("PRECONDITION_FAILED - Missing or invalid argument,           'x-cache-size' must be an integer greater than 0");
      expect((await refusal({ 'x-cache-size': 1.5 })).text).to.equal("PRECONDITION_FAILED - Missing or invalid argument,           'x-cache-size' must be an integer greater than 0");
      expect((await refusal({ 'x-cache-size': 'foo' })).text).to.equal("PRECONDITION_FAILED - Missing or invalid argument,                       'x-cache-size' must be an integer greater than 0");
    });

    it('x-cache-ttl, when given, must be an integer > 0 (or a string of one); x-cache-persistence disk or memory', async () => {
      expect((await refusal({ 'x-cache-size': 10, 'x-cache-ttl': 'bar' })).text).to.equal("PRECONDITION_FAILED - Invalid argument,                       'x-cache-ttl' must be an integer greater than 0");
      expect((await refusal({ 'x-cache-size': 10, 'x-cache-ttl': -1 })).text).to.equal("PRECONDITION_FAILED - Invalid argument,              'x-cache-ttl' must be an integer greater than 0");
      expect((await refusal({ 'x-cache-size': 10, 'x-cache-persistence': 'tape' })).text).to.equal("PRECONDITION_FAILED - Invalid argument,              'x-cache-persistence' must be either 'disk' or 'memory'");
    });

    it('accepts sizes and TTLs as numbers or decimal strings (exchange_SUITE declare_exchanges)', async () => {
      const conn = await connect(b.url);
      const ch = await channel(conn);
      await ch.assertExchange('d1', 'x-message-deduplication', dedupArgs({ 'x-cache-size': 10, 'x-cache-ttl': 1000, 'x-cache-persistence': 'memory' }));
      await ch.assertExchange('d2', 'x-message-deduplication', dedupArgs({ 'x-cache-size': '10', 'x-cache-ttl': '1000', 'x-cache-persistence': 'disk' }));
      expect(b.running.inspect.exchanges().map((x) => x.name)).to.include.members(['d1', 'd2']);
      await conn.close();
    });
  });

  describe('routing', () => {
    let conn: Awaited<ReturnType<typeof connect>>;
    let ch: ConfirmChannel;

    beforeEach(async () => {
      conn = await connect(b.url);
      ch = await confirmChannel(conn);
    });
    afterEach(async () => {
      await conn.close().catch(() => {});
    });

    const setup = async (args: Record<string, unknown>, queues = ['q']) => {
      await ch.assertExchange('dx', 'x-message-deduplication', dedupArgs(args));
      for (const q of queues) {
        await ch.assertQueue(q);
        // Routes like fanout: the binding key does not matter.
        await ch.bindQueue(q, 'dx', `key-of-${q}`);
      }
    };

    it('routes a value once within the cache; messages without the header pass untouched (deduplicate_message)', async () => {
      await setup({ 'x-cache-size': 10, 'x-cache-ttl': 10000 }, ['q', 'q2']);
      await publish(ch, 'dx', 'first', { 'x-deduplication-header': 'deduplicate-this' });
      await publish(ch, 'dx', 'second', { 'x-deduplication-header': 'deduplicate-this' });
      await publish(ch, 'dx', 'plain-1');
      await publish(ch, 'dx', 'plain-2');
      await publish(ch, 'dx', 'other', { 'x-deduplication-header': 'deduplicate-that' });
      expect(await drain(ch, 'q')).to.deep.equal(['first', 'plain-1', 'plain-2', 'other']);
      expect(await drain(ch, 'q2')).to.deep.equal(['first', 'plain-1', 'plain-2', 'other']);
    });

    it('keeps integer values chosen to share one bucket of a V8 Map apart (each routed once, each repeat dropped)', async () => {
      // A hash flood's keys (support/colliding-keys.ts): the cache keys them in a seeded table.
      await setup({ 'x-cache-size': 1000 });
      const keys = integersInOneV8Bucket(300);
      for (const round of [1, 2]) for (const k of keys) void publish(ch, 'dx', `${k}/${round}`, { 'x-deduplication-header': k });
      await ch.waitForConfirms();
      expect(await drain(ch, 'q')).to.deep.equal(keys.map((k) => `${k}/1`));
    });

    it('keys on the value as the plugin does: 1 and "1" are different values, so are 1 and 1.5', async () => {
      await setup({ 'x-cache-size': 10 });
      await publish(ch, 'dx', 'int', { 'x-deduplication-header': 1 });
      await publish(ch, 'dx', 'str', { 'x-deduplication-header': '1' });
      await publish(ch, 'dx', 'float', { 'x-deduplication-header': 1.5 });
      await publish(ch, 'dx', 'int again', { 'x-deduplication-header': 1 });
      expect(await drain(ch, 'q')).to.deep.equal(['int', 'str', 'float']);
    });

    it('routes a value again once its entry expired: the exchange TTL, or the message\'s own x-cache-ttl (deduplicate_message_ttl)', async () => {
      await setup({ 'x-cache-size': 10, 'x-cache-ttl': 1000 });
      await publish(ch, 'dx', 'a1', { 'x-deduplication-header': 'a' });
      await clock.advance(999);
      await publish(ch, 'dx', 'a2', { 'x-deduplication-header': 'a' });
      await clock.advance(1);
      await publish(ch, 'dx', 'a3', { 'x-deduplication-header': 'a' });
      // The message's x-cache-ttl overrides the exchange's for its own entry.
      await publish(ch, 'dx', 'b1', { 'x-deduplication-header': 'b', 'x-cache-ttl': 5000 });
      await clock.advance(1000);
      await publish(ch, 'dx', 'b2', { 'x-deduplication-header': 'b' });
      await clock.advance(4000);
      await publish(ch, 'dx', 'b3', { 'x-deduplication-header': 'b' });
      expect(await drain(ch, 'q')).to.deep.equal(['a1', 'a3', 'b1', 'b3']);
    });

    it('without x-cache-ttl an entry lasts until the cache is full; then the oldest entry goes (deduplicate_message_cache_overflow)', async () => {
      await setup({ 'x-cache-size': 2 });
      await publish(ch, 'dx', 'a1', { 'x-deduplication-header': 'a' });
      await publish(ch, 'dx', 'b1', { 'x-deduplication-header': 'b' });
      await clock.advance(60_000);
      await publish(ch, 'dx', 'a2', { 'x-deduplication-header': 'a' });
      await publish(ch, 'dx', 'c1', { 'x-deduplication-header': 'c' }); // evicts a, the oldest
      await publish(ch, 'dx', 'b2', { 'x-deduplication-header': 'b' });
      await publish(ch, 'dx', 'a3', { 'x-deduplication-header': 'a' }); // evicts b
      await publish(ch, 'dx', 'b3', { 'x-deduplication-header': 'b' });
      expect(await drain(ch, 'q')).to.deep.equal(['a1', 'b1', 'c1', 'a3', 'b3']);
    });

    it('confirms a dropped duplicate with basic.ack and does not return it to a mandatory publisher; an unroutable message is still returned', async () => {
      await setup({ 'x-cache-size': 10 });
      const returned: string[] = [];
      ch.on('return', (m: Message) => returned.push(m.content.toString()));
      expect(await publish(ch, 'dx', 'first', { 'x-deduplication-header': 'v' }, { mandatory: true })).to.equal('ack');
      expect(await publish(ch, 'dx', 'duplicate', { 'x-deduplication-header': 'v' }, { mandatory: true })).to.equal('ack');
      await ch.unbindQueue('q', 'dx', 'key-of-q');
      expect(await publish(ch, 'dx', 'nowhere', { 'x-deduplication-header': 'w' }, { mandatory: true })).to.equal('ack');
      expect(returned).to.deep.equal(['nowhere']);
      expect(await drain(ch, 'q')).to.deep.equal(['first']);
      // With no binding nothing was cached: once bound again, w is routed.
      await ch.bindQueue('q', 'dx', '');
      await publish(ch, 'dx', 'w again', { 'x-deduplication-header': 'w' });
      expect(await drain(ch, 'q')).to.deep.equal(['w again']);
    });

    it('a duplicate does not go to the alternate exchange', async () => {
      await ch.assertExchange('ae', 'fanout', { durable: false });
      await ch.assertQueue('ae-q');
      await ch.bindQueue('ae-q', 'ae', '');
      await setup({ 'x-cache-size': 10, 'alternate-exchange': 'ae' });
      await publish(ch, 'dx', 'first', { 'x-deduplication-header': 'v' });
      await publish(ch, 'dx', 'duplicate', { 'x-deduplication-header': 'v' });
      expect(await drain(ch, 'q')).to.deep.equal(['first']);
      expect(await drain(ch, 'ae-q')).to.deep.equal([]);
    });

    it('inside a transaction a duplicate is held back at basic.publish and not returned at tx.commit', async () => {
      await setup({ 'x-cache-size': 10 });
      const counters = b.running.broker.vhosts.get('/')!.counters;
      const before = { returned: counters.unroutableReturned, dropped: counters.unroutableDropped };
      const c = await RawClient.open(b.url);
      try {
        await c.openChannel(1);
        c.method(1, 'tx.select', {});
        await c.expect('tx.select-ok');
        const headers = { 'x-deduplication-header': F.str('tx') };
        c.publish(1, 'dx', '', 't1', { headers }, { mandatory: true });
        c.publish(1, 'dx', '', 't2', { headers }, { mandatory: true });
        c.method(1, 'tx.commit', {});
        await c.expect('tx.commit-ok');
        expect(c.frames.filter((f) => f.type === 1).map((f) => f.method!.name)).to.not.include('basic.return');
        // Counted as outside a transaction: a held-back duplicate is dropped, not returned.
        expect({ returned: counters.unroutableReturned - before.returned, dropped: counters.unroutableDropped - before.dropped })
          .to.deep.equal({ returned: 0, dropped: 1 });
      } finally {
        c.destroy();
      }
      expect(await drain(ch, 'q')).to.deep.equal(['t1']);
    });

    it('works through an exchange-to-exchange binding: the duplicate stops at the deduplication exchange', async () => {
      await setup({ 'x-cache-size': 10 });
      await ch.assertExchange('front', 'direct', { durable: false });
      await ch.bindExchange('dx', 'front', 'k');
      const returned: string[] = [];
      ch.on('return', (m: Message) => returned.push(m.content.toString()));
      for (const body of ['one', 'two']) {
        await new Promise<void>((resolve) => ch.publish('front', 'k', Buffer.from(body), { headers: { 'x-deduplication-header': 'e2e' }, mandatory: true }, () => resolve()));
      }
      expect(await drain(ch, 'q')).to.deep.equal(['one']);
      expect(returned).to.deep.equal([]);
    });
  });

  describe('a publisher retrying after a lost confirm', () => {
    it('its retry is confirmed and not routed again: the queue holds one copy (dropped connection)', async () => {
      const setupConn = await connect(b.url);
      const setupCh = await confirmChannel(setupConn);
      await setupCh.assertExchange('orders', 'x-message-deduplication', dedupArgs({ 'x-cache-size': 1000, 'x-cache-ttl': 60000 }));
      await setupCh.assertQueue('orders-q');
      await setupCh.bindQueue('orders-q', 'orders', '');

      const publisher = await connectNamed(b.url, 'publisher');
      const ch = await confirmChannel(publisher);
      const closed = connectionClosed(publisher);
      // basic.publish is three frames: the broker takes them, then the socket is reset before
      // the confirm goes out.
      b.running.faults.dropConnection('publisher', { afterFrames: 3 });
      const first = await new Promise<string>((resolve) => {
        ch.publish('orders', '', Buffer.from('order 42'), { headers: { 'x-deduplication-header': 'order-42' } }, (err) => resolve(err ? 'lost' : 'ack'));
        ch.on('close', () => resolve('lost'));
      });
      expect(first).to.equal('lost');
      expect((await closed).code).to.equal('ECONNRESET');

      // The publisher does not know whether it arrived: it connects again and retries.
      const again = await connectNamed(b.url, 'publisher');
      const retry = await confirmChannel(again);
      expect(await publish(retry, 'orders', 'order 42', { 'x-deduplication-header': 'order-42' })).to.equal('ack');
      expect(b.running.inspect.messages('orders-q').ready.map((m) => m.body.toString())).to.deep.equal(['order 42']);
      await again.close();
      await setupConn.close();
    });

    it('its retry is dropped when the first confirm was held and the connection closed before it came', async () => {
      const conn = await connect(b.url);
      const setupCh = await confirmChannel(conn);
      await setupCh.assertExchange('orders', 'x-message-deduplication', dedupArgs({ 'x-cache-size': 1000 }));
      await setupCh.assertQueue('orders-q');
      await setupCh.bindQueue('orders-q', 'orders', '');
      const publisher = await connectNamed(b.url, 'slow-disk');
      const ch = await confirmChannel(publisher);
      b.running.faults.holdConfirms({ connection: 'slow-disk' });
      let confirmed = false;
      ch.publish('orders', '', Buffer.from('order 7'), { headers: { 'x-deduplication-header': 'order-7' } }, (err) => (confirmed = !err));
      // Routed: the message is in the queue, its confirm held.
      await b.running.until.queue('orders-q', (q) => q.messages === 1);
      await b.running.faults.closeConnection('slow-disk', { reason: 'failover' });
      b.running.faults.releaseConfirms();
      expect(confirmed).to.equal(false);
      const again = await connectNamed(b.url, 'slow-disk');
      const retry = await confirmChannel(again);
      expect(await publish(retry, 'orders', 'order 7', { 'x-deduplication-header': 'order-7' })).to.equal('ack');
      expect(b.running.inspect.messages('orders-q').ready.map((m) => m.body.toString())).to.deep.equal(['order 7']);
      await again.close();
      await conn.close();
    });
  });
});

describe('x-message-deduplication exchange: x-cache-persistence across a restart', () => {
  let dataDir: string;
  let broker: RunningBroker<FakeClock> | undefined;

  beforeEach(() => {
    dataDir = makeTmpDir('warren-dedup-');
  });
  afterEach(async () => {
    await broker?.close();
    broker = undefined;
    removeDir(dataDir);
  });

  const start = async (at: number) => {
    broker = await startBroker({ port: 0, logLevel: 'silent', dataDir, clock: new FakeClock(at), heartbeat: 0 });
    return broker;
  };

  it('a disk cache survives a restart, with its TTLs on the wall clock and its eviction order; a memory cache does not', async () => {
    let running = await start(T0);
    let conn = await connect(running.url);
    let ch = await confirmChannel(conn);
    await ch.assertExchange('disk-x', 'x-message-deduplication', { durable: true, arguments: { 'x-cache-size': 3, 'x-cache-ttl': 10000, 'x-cache-persistence': 'disk' } });
    await ch.assertExchange('mem-x', 'x-message-deduplication', { durable: true, arguments: { 'x-cache-size': 3 } });
    await ch.assertQueue('disk-q', { durable: true });
    await ch.assertQueue('mem-q', { durable: true });
    await ch.bindQueue('disk-q', 'disk-x', '');
    await ch.bindQueue('mem-q', 'mem-x', '');
    await publish(ch, 'disk-x', 'a', { 'x-deduplication-header': 'a' });
    await publish(ch, 'disk-x', 'b', { 'x-deduplication-header': 'b', 'x-cache-ttl': 1000 });
    await publish(ch, 'disk-x', 'c', { 'x-deduplication-header': 'c', 'x-cache-ttl': 60000 });
    await publish(ch, 'mem-x', 'm', { 'x-deduplication-header': 'm' });
    expect(await drain(ch, 'disk-q')).to.deep.equal(['a', 'b', 'c']);
    const intX = { durable: true, arguments: { 'x-cache-size': 10, 'x-cache-persistence': 'disk' } };
    await ch.assertExchange('int-x', 'x-message-deduplication', intX);
    await ch.assertQueue('int-q', { durable: true });
    await ch.bindQueue('int-q', 'int-x', '');
    await publish(ch, 'int-x', 'int 42', { 'x-deduplication-header': 42 });
    await publish(ch, 'int-x', 'int 2^40', { 'x-deduplication-header': 2 ** 40 });
    expect(await drain(ch, 'int-q')).to.deep.equal(['int 42', 'int 2^40']);
    expect(await drain(ch, 'mem-q')).to.deep.equal(['m']);
    await conn.close();
    await running.close();

    // Two seconds later: b's entry has expired, a's and c's have not.
    running = await start(T0 + 2000);
    conn = await connect(running.url);
    ch = await confirmChannel(conn);
    await publish(ch, 'disk-x', 'a again', { 'x-deduplication-header': 'a' });
    await publish(ch, 'disk-x', 'b again', { 'x-deduplication-header': 'b' });
    await publish(ch, 'mem-x', 'm again', { 'x-deduplication-header': 'm' });
    expect(await drain(ch, 'disk-q')).to.deep.equal(['b again']);
    // Integer values come back as integers: 42 and 2^40 are still known, '42' is another value.
    await publish(ch, 'int-x', 'int 42 again', { 'x-deduplication-header': 42 });
    await publish(ch, 'int-x', 'int 2^40 again', { 'x-deduplication-header': 2 ** 40 });
    await publish(ch, 'int-x', 'string 42', { 'x-deduplication-header': '42' });
    expect(await drain(ch, 'int-q')).to.deep.equal(['string 42']);
    expect(await drain(ch, 'mem-q')).to.deep.equal(['m again']);
    // The cache holds a, c, b (b inserted last): d evicts a, the oldest.
    await publish(ch, 'disk-x', 'd', { 'x-deduplication-header': 'd' });
    await publish(ch, 'disk-x', 'c again', { 'x-deduplication-header': 'c' });
    await publish(ch, 'disk-x', 'a third time', { 'x-deduplication-header': 'a' });
    expect(await drain(ch, 'disk-q')).to.deep.equal(['d', 'a third time']);
    // b went in again at T0 + 2 s with the exchange's 10 s.
    await clock(running).advance(9999);
    await publish(ch, 'disk-x', 'not yet', { 'x-deduplication-header': 'b' });
    await clock(running).advance(1);
    await publish(ch, 'disk-x', 'expired on the restarted clock', { 'x-deduplication-header': 'b' });
    expect(await drain(ch, 'disk-q')).to.deep.equal(['expired on the restarted clock']);

    // Deleting the exchange deletes its stored cache: declared again, it starts empty, across a restart too.
    await ch.deleteExchange('disk-x');
    await ch.assertExchange('disk-x', 'x-message-deduplication', { durable: true, arguments: { 'x-cache-size': 3, 'x-cache-persistence': 'disk' } });
    await ch.bindQueue('disk-q', 'disk-x', '');
    await conn.close();
    await running.close();
    running = await start(T0 + 3000);
    conn = await connect(running.url);
    ch = await confirmChannel(conn);
    await publish(ch, 'disk-x', 'c fresh', { 'x-deduplication-header': 'c' });
    expect(await drain(ch, 'disk-q')).to.deep.equal(['c fresh']);
    await conn.close();
  });

  it('a publisher retrying across a broker restart (persistent message, disk cache) leaves one copy', async () => {
    let running = await start(T0);
    let conn = await connect(running.url);
    let ch = await confirmChannel(conn);
    await ch.assertExchange('pay', 'x-message-deduplication', { durable: true, arguments: { 'x-cache-size': 100000, 'x-cache-persistence': 'disk' } });
    await ch.assertQueue('pay-q', { durable: true });
    await ch.bindQueue('pay-q', 'pay', '');
    expect(await publish(ch, 'pay', 'payment 9', { 'x-deduplication-header': 'payment-9' }, { persistent: true })).to.equal('ack');
    await conn.close();
    await running.close();
    running = await start(T0 + 1000);
    conn = await connect(running.url);
    ch = await confirmChannel(conn);
    expect(await publish(ch, 'pay', 'payment 9', { 'x-deduplication-header': 'payment-9' }, { persistent: true })).to.equal('ack');
    expect(await drain(ch, 'pay-q')).to.deep.equal(['payment 9']);
    await conn.close();
  });
});

function clock(running: RunningBroker<FakeClock>): FakeClock {
  return running.clock;
}
