/**
 * Stream queues over AMQP 0-9-1 (rabbitmq.com/streams.html), driven through amqplib against a
 * broker on the LMDB store. Every expectation was first observed on RabbitMQ 3.10.8 with the
 * same steps (conformance/cases/streams.ts records the same rules against it).
 */
import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { StreamQueue } from '../../src/stream/stream-queue.js';
import { channel, closedWith, confirmChannel, connect, connectionClosed, type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from '../support/amqp.js';
import { useBroker, waitUntil } from '../support/broker.js';
import { call } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const STREAM = { 'x-queue-type': 'stream' };

describe('stream queues (rabbitmq.com/streams.html)', function () {
  const dataDir = makeTmpDir('warren-streams-');
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0, managementPort: 0, prometheusPort: 0, dataDir });
  after(() => removeDir(dataDir));

  let n = 0;
  const uniq = (prefix: string) => `${prefix}-${++n}`;
  const conns: ChannelModel[] = [];
  afterEach(async () => {
    for (const c of conns.splice(0)) await c.close().catch(() => {});
  });
  const open = async (): Promise<ChannelModel> => {
    const c = await connect(broker.url);
    conns.push(c);
    return c;
  };
  const publisher = async (q: string, args: Record<string, unknown> = {}): Promise<ConfirmChannel> => {
    const ch = await confirmChannel(await open());
    await ch.assertQueue(q, { durable: true, arguments: { ...STREAM, ...args } });
    return ch;
  };
  /** Each body is its own confirmed publish: one chunk each, as in RabbitMQ's log. */
  const publishEach = async (ch: ConfirmChannel, q: string, bodies: string[]) => {
    for (const b of bodies) {
      ch.sendToQueue(q, Buffer.from(b));
      await ch.waitForConfirms();
    }
  };
  const stream = (q: string) => broker.running.broker.vhosts.get('/')!.queues.get(q) as StreamQueue;
  /** A consumer with a prefetch and an offset; got fills as deliveries arrive. */
  const reader = async (q: string, prefetch: number, offset?: unknown): Promise<{ ch: Channel; got: ConsumeMessage[]; tag: string }> => {
    const ch = await channel(await open());
    await ch.prefetch(prefetch);
    const got: ConsumeMessage[] = [];
    const { consumerTag } = await ch.consume(q, (m) => m && got.push(m), { arguments: offset === undefined ? {} : { 'x-stream-offset': offset } });
    return { ch, got, tag: consumerTag };
  };
  /** Runs op on a channel of a new connection and returns the connection.close it caused. */
  const connectionError = async (op: (ch: Channel) => Promise<unknown>): Promise<{ code: number | string | undefined; text: string }> => {
    const conn = await open();
    const closed = connectionClosed(conn);
    await op(await channel(conn)).catch(() => {});
    return closed;
  };
  const until = (pred: () => boolean, what: string) => waitUntil(pred, what);
  const bodies = (ms: ConsumeMessage[]) => ms.map((m) => m.content.toString());
  const offsets = (ms: ConsumeMessage[]) => ms.map((m) => Number(m.properties.headers!['x-stream-offset']));
  /** A round trip on ch: what the broker was going to send on it before has been sent. */
  const settle = async (ch: Channel, q: string) => void (await ch.checkQueue(q));

  it('is declared durable only, with RabbitMQ texts for exclusive, auto-delete, non-durable and server-named', async () => {
    const q = uniq('s-declare');
    const ok = await (await channel(await open())).assertQueue(q, { durable: true, arguments: STREAM });
    expect(ok).to.deep.include({ queue: q, messageCount: 0, consumerCount: 0 });
    const refusals: Array<[Record<string, unknown>, string, string]> = [
      [{ durable: false }, uniq('s-nd'), "PRECONDITION_FAILED - invalid property 'non-durable' for queue '%' in vhost '/'"],
      [{ durable: true, exclusive: true }, uniq('s-ex'), "PRECONDITION_FAILED - invalid property 'exclusive-owner' for queue '%' in vhost '/'"],
      [{ durable: true, autoDelete: true }, uniq('s-ad'), "PRECONDITION_FAILED - invalid property 'auto-delete' for queue '%' in vhost '/'"],
      [{ durable: true }, '', 'PRECONDITION_FAILED - Cannot declare a server-named queue for type rabbit_stream_queue'],
    ];
    for (const [opts, name, text] of refusals) {
      const ch = await channel(await open());
      const err = await closedWith(ch.assertQueue(name, { ...opts, arguments: STREAM }));
      expect(err).to.deep.include({ code: 406, text: text.replace('%', name) });
    }
  });

  it('refuses the arguments streams do not support and invalid retention values, and checks redeclares', async () => {
    const refused = async (args: Record<string, unknown>) => {
      const q = uniq('s-arg');
      const err = await closedWith((await channel(await open())).assertQueue(q, { durable: true, arguments: { ...STREAM, ...args } }));
      return err.text.replace(q, 'Q');
    };
    expect(await refused({ 'x-message-ttl': 1000 })).to.equal("PRECONDITION_FAILED - invalid arg 'x-message-ttl' for queue 'Q' in vhost '/' of queue type rabbit_stream_queue");
    expect(await refused({ 'x-max-length': 'x' })).to.equal("PRECONDITION_FAILED - invalid arg 'x-max-length' for queue 'Q' in vhost '/' of queue type rabbit_stream_queue");
    expect(await refused({ 'x-max-age': '10ms' })).to.equal("PRECONDITION_FAILED - invalid arg 'x-max-age' for queue 'Q' in vhost '/': invalid_max_age");
    expect(await refused({ 'x-max-age': '0s' })).to.equal("PRECONDITION_FAILED - invalid arg 'x-max-age' for queue 'Q' in vhost '/': invalid_max_age");
    expect(await refused({ 'x-max-length-bytes': -1 })).to.equal("PRECONDITION_FAILED - invalid arg 'x-max-length-bytes' for queue 'Q' in vhost '/': {value_negative,-1}");
    expect(await refused({ 'x-stream-max-segment-size-bytes': 3_000_000_001 })).to.equal('PRECONDITION_FAILED - Exceeded max value for x-stream-max-segment-size-bytes');
    // A value without leading digits crashes RabbitMQ 3.10's parser: 541 on the connection.
    const err = await connectionError((ch) => ch.assertQueue(uniq('s-crash'), { durable: true, arguments: { ...STREAM, 'x-max-age': 'abc' } }));
    expect(err).to.deep.equal({ code: 541, text: 'INTERNAL_ERROR' });
    for (const age of ['7D', '12h', '30m', '10s', '1Y', '2M']) {
      await (await channel(await open())).assertQueue(uniq('s-age'), { durable: true, arguments: { ...STREAM, 'x-max-age': age } });
    }
    const q = uniq('s-redeclare');
    const ch = await channel(await open());
    await ch.assertQueue(q, { durable: true, arguments: { ...STREAM, 'x-max-age': '1h' } });
    expect((await ch.assertQueue(q, { durable: true, arguments: { ...STREAM, 'x-max-age': '1h' } })).queue).to.equal(q);
    const inequivalent = await closedWith(ch.assertQueue(q, { durable: true, arguments: { ...STREAM, 'x-max-age': '2h' } }));
    expect(inequivalent.text).to.equal(`PRECONDITION_FAILED - inequivalent arg 'x-max-age' for queue '${q}' in vhost '/': received '2h' but current is '1h'`);
  });

  it('replays the whole log to each consumer from first, with the x-stream-offset header; acks only give credit back', async () => {
    const q = uniq('s-replay');
    const pub = await publisher(q);
    await publishEach(pub, q, ['m0', 'm1', 'm2', 'm3', 'm4']);
    const a = await reader(q, 2, 'first');
    const b = await reader(q, 10, 'first');
    await until(() => a.got.length === 2 && b.got.length === 5, 'first deliveries');
    await settle(a.ch, q);
    expect(bodies(a.got)).to.deep.equal(['m0', 'm1']); // prefetch 2: no more without an ack
    expect(offsets(b.got)).to.deep.equal([0, 1, 2, 3, 4]);
    expect(b.got.every((m) => m.fields.redelivered === false)).to.equal(true);
    a.ch.ack(a.got[0]!);
    await until(() => a.got.length === 3, 'one more after one ack');
    a.ch.ack(a.got[2]!, true);
    await until(() => a.got.length === 5, 'the rest after ack multiple');
    expect(offsets(a.got)).to.deep.equal([0, 1, 2, 3, 4]);
    // Nothing was removed: a third consumer still reads everything.
    const c = await reader(q, 10, 'first');
    await until(() => c.got.length === 5, 'third consumer');
    expect((await a.ch.checkQueue(q)).messageCount).to.equal(5);
    // New messages reach every consumer, with the next offsets.
    await publishEach(pub, q, ['m5']);
    await until(() => b.got.length === 6 && c.got.length === 6, 'the new message');
    expect(offsets(c.got).at(-1)).to.equal(5);
  });

  it('takes a whole chunk at a time while the consumer has credit, past its prefetch, as RabbitMQ does', async () => {
    // rabbit_stream_queue:stream_entries reads a chunk while the consumer's credit is above 0
    // and delivers all of it. Against RabbitMQ 3.10.8 the same steps (6 messages in one
    // transaction, then a reader with prefetch 1 from first) delivered all 6 before any ack in
    // 23 of 32 runs (the others 1, 2 or 5: its writer had taken the first messages in a chunk
    // of their own). Warren makes one chunk of what one commit appends.
    const q = uniq('s-chunk');
    const pub = await publisher(q);
    const tx = await channel(await open());
    const rpc = (id: number) => (tx as unknown as { rpc(m: number, f: unknown, e: number): Promise<unknown> }).rpc(id, {}, id + 1);
    await rpc((90 << 16) | 10); // tx.select
    for (let i = 0; i < 6; i++) tx.sendToQueue(q, Buffer.from(`c${i}`));
    await rpc((90 << 16) | 20); // tx.commit
    await publishEach(pub, q, ['d6']);
    const r = await reader(q, 1, 'first');
    await until(() => r.got.length === 6, 'the whole first chunk');
    await settle(r.ch, q);
    expect(bodies(r.got)).to.deep.equal(['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    // Five still unacked: no credit, so the next chunk waits.
    r.ch.ack(r.got[0]!);
    await settle(r.ch, q);
    expect(r.got.length).to.equal(6);
    r.ch.ack(r.got[5]!, true);
    await until(() => r.got.length === 7, 'the next chunk');
    expect(offsets(r.got)).to.deep.equal([0, 1, 2, 3, 4, 5, 6]);
  });

  it('serves messages larger than what it keeps of recent reads (9 MiB bodies)', async () => {
    const q = uniq('s-large');
    const pub = await publisher(q);
    const big = (fill: number) => Buffer.alloc(9 * 1024 * 1024, fill);
    pub.sendToQueue(q, big(1));
    pub.sendToQueue(q, big(2));
    await pub.waitForConfirms();
    const a = await reader(q, 1, 'first');
    const b = await reader(q, 5, 'first');
    await until(() => a.got.length === 1 && b.got.length === 2, 'the large messages');
    a.ch.ack(a.got[0]!);
    await until(() => a.got.length === 2, 'the second one after an ack');
    expect([...a.got, ...b.got].map((m) => [m.content.length, m.content[0]])).to.deep.equal([[9437184, 1], [9437184, 2], [9437184, 1], [9437184, 2]]);
  });

  it('starts at next by default; last, numeric, beyond-the-end, interval and timestamp offsets', async () => {
    const q = uniq('s-offsets');
    const pub = await publisher(q);
    await publishEach(pub, q, ['m0', 'm1', 'm2', 'm3']);
    const first = await reader(q, 10, 'first');
    const last = await reader(q, 10, 'last');
    const two = await reader(q, 10, 2);
    const negative = await reader(q, 10, -3);
    const interval = await reader(q, 10, '10m');
    const epoch = await reader(q, 10, { '!': 'timestamp', value: 0 });
    const absent = await reader(q, 10);
    const next = await reader(q, 10, 'next');
    const beyond = await reader(q, 10, 6);
    const future = await reader(q, 10, { '!': 'timestamp', value: Math.floor(clock.now() / 1000) + 3600 });
    await until(() => first.got.length === 4 && last.got.length === 1 && two.got.length === 2 && negative.got.length === 4 &&
      interval.got.length === 4 && epoch.got.length === 4, 'replays');
    for (const r of [absent, next, beyond, future]) await settle(r.ch, q);
    expect(offsets(last.got)).to.deep.equal([3]);
    expect(offsets(two.got)).to.deep.equal([2, 3]);
    expect(offsets(negative.got)).to.deep.equal([0, 1, 2, 3]);
    expect([absent, next, beyond, future].map((r) => r.got.length)).to.deep.equal([0, 0, 0, 0]);
    await publishEach(pub, q, ['m4', 'm5', 'm6']);
    await until(() => absent.got.length === 3 && next.got.length === 3 && beyond.got.length === 1 && future.got.length === 3, 'new messages');
    expect(offsets(absent.got)).to.deep.equal([4, 5, 6]);
    // A numeric offset past the end skips what comes before it (RabbitMQ filters by offset).
    expect(offsets(beyond.got)).to.deep.equal([6]);
  });

  it('finds a timestamp offset by the time chunks were written', async () => {
    const q = uniq('s-time');
    const pub = await publisher(q);
    await publishEach(pub, q, ['old']);
    clock.stepWall(60_000);
    const cut = Math.floor(clock.now() / 1000);
    await publishEach(pub, q, ['new']);
    const r = await reader(q, 10, { '!': 'timestamp', value: cut });
    await until(() => r.got.length === 1, 'the new message');
    await settle(r.ch, q);
    expect(bodies(r.got)).to.deep.equal(['new']);
    const interval = await reader(q, 10, '30s');
    await until(() => interval.got.length === 1, 'interval');
    expect(bodies(interval.got)).to.deep.equal(['new']);
  });

  it('refuses basic.get, purge, nack, reject, no-ack, consumers without prefetch and x-priority as RabbitMQ does', async () => {
    const q = uniq('s-refuse');
    const pub = await publisher(q);
    await publishEach(pub, q, ['m0']);
    const rs = `queue '${q}' in vhost '/'`;
    expect(await connectionError((ch) => ch.get(q))).to.deep.equal({ code: 540, text: `NOT_IMPLEMENTED - basic.get not supported by stream queues ${rs}` });
    expect(await connectionError((ch) => ch.purgeQueue(q))).to.deep.equal({ code: 540, text: `NOT_IMPLEMENTED - queue.purge not supported by stream queues ${rs}` });
    expect(await closedWith((await channel(await open())).consume(q, () => {}))).to.deep.include({ code: 406, text: `PRECONDITION_FAILED - consumer prefetch count is not set for '${rs}'` });
    const noAck = await connectionError(async (ch) => {
      await ch.prefetch(1);
      await ch.consume(q, () => {}, { noAck: true });
    });
    expect(noAck).to.deep.equal({ code: 540, text: `NOT_IMPLEMENTED - automatic acknowledgement not supported by stream queues ${rs}` });
    const prio = await channel(await open());
    await prio.prefetch(1);
    expect(await closedWith(prio.consume(q, () => {}, { arguments: { 'x-priority': 1 } }))).to.deep.include({ code: 406, text: `PRECONDITION_FAILED - invalid arg 'x-priority' for ${rs} of queue type rabbit_stream_queue` });
    const haf = await channel(await open());
    await haf.prefetch(1);
    expect(await closedWith(haf.consume(q, () => {}, { arguments: { 'x-cancel-on-ha-failover': true } }))).to.deep.include({ code: 406, text: `PRECONDITION_FAILED - invalid arg 'x-cancel-on-ha-failover' for ${rs} of queue type rabbit_stream_queue` });
    // An offset osiris cannot read from crashes RabbitMQ's channel, after the prefetch check.
    expect(await closedWith((await channel(await open())).consume(q, () => {}, { arguments: { 'x-stream-offset': 1.5 } }))).to.deep.include({ code: 406 });
    const unreadable = await connectionError(async (ch) => {
      await ch.prefetch(1);
      await ch.consume(q, () => {}, { arguments: { 'x-stream-offset': 1.5 } });
    });
    expect(unreadable).to.deep.equal({ code: 541, text: 'INTERNAL_ERROR' });
    for (const settleWith of [(c: Channel, m: ConsumeMessage) => c.nack(m, false, true), (c: Channel, m: ConsumeMessage) => c.reject(m, false)]) {
      const r = await reader(q, 1, 'first');
      const readerConn = conns.at(-1)!; // reader() opened it last
      const why = new Promise<string>((resolve) => readerConn.once('close', (e: Error) => resolve(e.message)));
      await until(() => r.got.length === 1, 'a delivery');
      settleWith(r.ch, r.got[0]!);
      expect(await why).to.contain(`540 (NOT-IMPLEMENTED) with message "NOT_IMPLEMENTED - basic.nack and basic.reject not supported by stream queues ${rs}"`);
    }
    // The log is untouched by all of this.
    expect((await (await channel(await open())).checkQueue(q)).messageCount).to.equal(1);
  });

  it('a nack (multiple) naming a classic queue\'s delivery and a stream\'s settles the classic one as asked, then closes the connection with 540, as RabbitMQ 3.10 does', async () => {
    for (const requeue of [true, false]) {
      const s = uniq('s-mixed');
      const c = uniq('c-mixed');
      await publishEach(await publisher(s), s, ['s0']);
      const conn = await open();
      const ch = await channel(conn);
      await ch.assertQueue(c, { durable: true });
      ch.sendToQueue(c, Buffer.from('c0'), { persistent: true });
      await ch.checkQueue(c);
      await ch.prefetch(10);
      const got: ConsumeMessage[] = [];
      await ch.consume(c, (m) => m && got.push(m));
      await until(() => got.length === 1, 'the classic delivery');
      await ch.consume(s, (m) => m && got.push(m), { arguments: { 'x-stream-offset': 'first' } });
      await until(() => got.length === 2, 'the stream delivery');
      const why = new Promise<string>((resolve) => conn.once('close', (e: Error) => resolve(e.message)));
      ch.nack(got[1]!, true, requeue);
      expect(await why).to.contain(`540 (NOT-IMPLEMENTED) with message "NOT_IMPLEMENTED - basic.nack and basic.reject not supported by stream queues queue '${s}' in vhost '/'"`);
      // Requeued, the classic message is back (redelivered); dropped, it is gone, not held by a closed channel.
      const other = await channel(await open());
      const back = await other.get(c, { noAck: true });
      if (requeue) expect(back && [back.content.toString(), back.fields.redelivered]).to.deep.equal(['c0', true]);
      else expect(back).to.equal(false);
      expect(broker.running.inspect.queue(c), `requeue=${String(requeue)}`).to.deep.include({ messages: 0, unacked: 0 });
    }
  });

  it('takes nothing a queue dead-letters into it, as RabbitMQ 3.10 (whose stream client drops it)', async () => {
    const q = uniq('s-dlx');
    const pub = await publisher(q);
    const src = uniq('s-dlx-src');
    await pub.assertQueue(src, { durable: false, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q } });
    pub.sendToQueue(src, Buffer.from('dl'));
    await pub.waitForConfirms();
    const m = await pub.get(src, { noAck: false });
    pub.reject(m as never, false);
    await publishEach(pub, q, ['direct']);
    const r = await reader(q, 10, 'first');
    await until(() => r.got.length === 1, 'the direct message');
    await settle(r.ch, q);
    expect(bodies(r.got)).to.deep.equal(['direct']);
    expect((await pub.checkQueue(src)).messageCount).to.equal(0);
  });

  it('basic.cancel ends a stream consumer; delete ignores if-empty and cancels the consumers', async () => {
    const q = uniq('s-cancel');
    const pub = await publisher(q);
    await publishEach(pub, q, ['m0', 'm1']);
    const r = await reader(q, 1, 'first');
    await until(() => r.got.length === 1, 'a delivery');
    await r.ch.cancel(r.tag);
    r.ch.ack(r.got[0]!);
    await settle(r.ch, q);
    expect(r.got.length).to.equal(1);
    const other = await reader(q, 5, 'first');
    await until(() => other.got.length === 2, 'deliveries');
    const cancelled = new Promise<void>((resolve) => other.ch.on('cancel', () => resolve()));
    expect((await pub.deleteQueue(q, { ifEmpty: true, ifUnused: true })).messageCount).to.equal(0);
    await cancelled;
  });

  it('deletes old segments by x-max-length-bytes as new ones start, and never holds messages in memory', async () => {
    const q = uniq('s-retention');
    const pub = await publisher(q, { 'x-stream-max-segment-size-bytes': 100, 'x-max-length-bytes': 300 });
    for (let i = 0; i < 10; i++) {
      pub.sendToQueue(q, Buffer.from(`${i}`.padEnd(100, '.')));
      await pub.waitForConfirms();
    }
    const s = stream(q);
    // Each 100-byte message fills a segment; at each roll-over the closed ones are cut to 300 bytes.
    expect(s.log.firstOffset).to.equal(6);
    expect(s.messageCount).to.equal(4);
    expect(s.readyInMemory).to.equal(0);
    const r = await reader(q, 10, 'first');
    await until(() => r.got.length === 4, 'what is left');
    expect(offsets(r.got)).to.deep.equal([6, 7, 8, 9]);
  });

  it('deletes segments older than x-max-age at roll-over (injected clock)', async () => {
    const q = uniq('s-age');
    const pub = await publisher(q, { 'x-stream-max-segment-size-bytes': 10, 'x-max-age': '1m' });
    await publishEach(pub, q, ['0123456789a', '0123456789b']);
    clock.stepWall(90_000);
    await publishEach(pub, q, ['0123456789c']);
    // The two old segments were older than a minute when the third started.
    const r = await reader(q, 10, 'first');
    await until(() => r.got.length === 1, 'the young message');
    await settle(r.ch, q);
    expect(offsets(r.got)).to.deep.equal([2]);
  });

  it('applies a max-age policy to a stream over its x-max-age (the policy wins)', async () => {
    const q = uniq('s-policy-age');
    const pub = await publisher(q, { 'x-stream-max-segment-size-bytes': 10, 'x-max-age': '1D' });
    const res = await call(broker.running.managementUrl!, 'PUT', `/api/policies/%2F/${q}`, { body: { pattern: `^${q}$`, definition: { 'max-age': '1m' }, 'apply-to': 'queues' } });
    expect(res.status).to.equal(201);
    await publishEach(pub, q, ['0123456789a']);
    clock.stepWall(90_000);
    await publishEach(pub, q, ['0123456789b']);
    expect(stream(q).log.firstOffset).to.equal(1);
    await call(broker.running.managementUrl!, 'DELETE', `/api/policies/%2F/${q}`);
  });

  it('applies a max-length-bytes policy to a stream (the policy wins, rabbit_stream_queue:policy_precedence)', async () => {
    const q = uniq('s-policy');
    const pub = await publisher(q, { 'x-stream-max-segment-size-bytes': 10, 'x-max-length-bytes': 1000 });
    const res = await call(broker.running.managementUrl!, 'PUT', `/api/policies/%2F/${q}`, { body: { pattern: `^${q}$`, definition: { 'max-length-bytes': 20 }, 'apply-to': 'queues' } });
    expect(res.status).to.equal(201);
    await publishEach(pub, q, ['0123456789a', '0123456789b', '0123456789c', '0123456789d']);
    expect(stream(q).log.firstOffset).to.equal(2);
    await call(broker.running.managementUrl!, 'DELETE', `/api/policies/%2F/${q}`);
  });

  it('shows streams in the management API with RabbitMQ fields (type stream, members, readers)', async () => {
    const q = uniq('s-mgmt');
    const pub = await publisher(q, { 'x-max-age': '1h' });
    await publishEach(pub, q, ['a', 'b', 'c']);
    const r = await reader(q, 1, 'first');
    await until(() => r.got.length === 1, 'a delivery');
    const res = await call(broker.running.managementUrl!, 'GET', `/api/queues/%2F/${q}`);
    expect(res.status).to.equal(200);
    const j = res.json;
    expect(j).to.deep.include({ type: 'stream', durable: true, auto_delete: false, exclusive: false, messages: 3, messages_ready: 3, messages_unacknowledged: 0, consumers: 1, state: 'running' });
    expect(j.arguments).to.deep.equal({ 'x-max-age': '1h', 'x-queue-type': 'stream' });
    expect(Object.keys(j.readers)).to.have.length(1);
    expect(j.members).to.deep.equal(j.online);
    expect(j).to.not.have.property('backing_queue_status');
    expect(j.consumer_details[0]).to.deep.include({ active: false, activity_status: 'up', prefetch_count: 1, ack_required: true });
    expect(j.message_stats).to.deep.include({ publish: 3, deliver: 1, deliver_get: 1 });
    const list = await call(broker.running.managementUrl!, 'GET', '/api/queues/%2F');
    expect(list.json.find((x: { name: string }) => x.name === q).type).to.equal('stream');
    // Getting and purging through the API are refused as RabbitMQ's management plugin refuses them.
    const get = await call(broker.running.managementUrl!, 'POST', `/api/queues/%2F/${q}/get`, { body: { count: 1, ackmode: 'ack_requeue_true', encoding: 'auto' } });
    expect([get.status, get.json]).to.deep.equal([400, { error: 'bad_request', reason: `540 basic.get not supported by stream queues queue '${q}' in vhost '/'` }]);
    const purge = await call(broker.running.managementUrl!, 'DELETE', `/api/queues/%2F/${q}/contents`);
    expect([purge.status, purge.json]).to.deep.equal([400, { error: 'bad_request', reason: `queue.purge not supported by stream queues queue '${q}' in vhost '/'` }]);
    const put = await call(broker.running.managementUrl!, 'PUT', `/api/queues/%2F/${q}x`, { body: { durable: false, arguments: STREAM } });
    expect([put.status, put.json]).to.deep.equal([400, { error: 'bad_request', reason: `invalid property 'non-durable' for queue '${q}x' in vhost '/'` }]);
    // Prometheus counts stream deliveries under RabbitMQ's stream queue type.
    const text = await (await fetch(`${broker.running.broker.prometheusUrl}/metrics`)).text();
    const delivered = /^rabbitmq_global_messages_delivered_consume_manual_ack_total\{protocol="amqp091",queue_type="rabbit_stream_queue"\} (\d+)/m.exec(text);
    expect(Number(delivered?.[1])).to.be.greaterThan(0);
  });
});
