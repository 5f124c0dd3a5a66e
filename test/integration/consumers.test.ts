import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { channel, closedWith, confirmChannel, connect, type Channel, type ConsumeMessage } from '../support/amqp.js';
import { collect, useBroker } from '../support/broker.js';
import { useSession } from '../support/session.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/**
 * Consumers (issue 4): consume/cancel rules, server-initiated cancel, redelivery order and the
 * redelivered flag, single active consumer, consumer priorities; then consumer_timeout and
 * direct reply-to. Every expectation was checked against RabbitMQ 3.10.8.
 */
describe('consumers (RabbitMQ consumers guide)', () => {
  const broker = useBroker();

  const session = useSession(broker);
  const { uniq, openRaw } = session;

  async function tempQueue(ch: Channel, args: Record<string, unknown> = {}): Promise<string> {
    return (await ch.assertQueue('', { exclusive: true, arguments: args })).queue;
  }

  function declareRaw(c: RawClient, queue: string): void {
    c.method(1, 'queue.declare', { reserved1: 0, queue, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  }

  function consumeRaw(c: RawClient, queue: string, consumerTag: string, noAck = true): void {
    c.method(1, 'basic.consume', { reserved1: 0, queue, consumerTag, noLocal: false, noAck, exclusive: false, noWait: false, arguments: {} });
  }

  describe('basic.consume / basic.cancel (spec 1.8.3.3-5)', () => {
    it('consuming from a missing queue is 404', async () => {
      const ch = await channel(session.conn);
      expect(await closedWith(ch.consume('no-such-queue', () => {}))).to.deep.equal({
        code: 404, text: "NOT_FOUND - no queue 'no-such-queue' in vhost '/'", classId: 60, methodId: 20,
      });
    });

    it("reusing a consumer tag on the channel closes the connection with 530 NOT_ALLOWED \"attempt to reuse consumer tag 'x'\"", async () => {
      for (const sameQueue of [true, false]) {
        const c = await openRaw();
        await c.openChannel(1);
        const q1 = uniq('dup-tag');
        const q2 = sameQueue ? q1 : uniq('dup-tag-other');
        declareRaw(c, q1);
        await c.expect('queue.declare-ok');
        if (!sameQueue) {
          declareRaw(c, q2);
          await c.expect('queue.declare-ok');
        }
        consumeRaw(c, q1, 'dup');
        await c.expect('basic.consume-ok');
        consumeRaw(c, q2, 'dup');
        const close = await c.expect('connection.close');
        expect(close).to.deep.equal({ replyCode: 530, replyText: "NOT_ALLOWED - attempt to reuse consumer tag 'dup'", classId: 60, methodId: 20 });
        expect(await c.waitClosed(), 'socket closed').to.equal(true);
      }
    });

    it('the same consumer tag on another channel is fine', async () => {
      const ch1 = await channel(session.conn);
      const ch2 = await channel(session.conn);
      const q = await tempQueue(ch1);
      await ch1.consume(q, () => {}, { consumerTag: 'shared' });
      await ch2.consume(q, () => {}, { consumerTag: 'shared' });
      expect((await ch1.checkQueue(q)).consumerCount).to.equal(2);
    });

    it('basic.qos with prefetch-size ≠ 0 closes the connection with 540 "NOT_IMPLEMENTED - prefetch_size!=0 (1)"', async () => {
      const c = await openRaw();
      await c.openChannel(1);
      c.method(1, 'basic.qos', { prefetchSize: 1, prefetchCount: 0, global: false });
      const close = await c.expect('connection.close');
      expect(close).to.deep.equal({ replyCode: 540, replyText: 'NOT_IMPLEMENTED - prefetch_size!=0 (1)', classId: 60, methodId: 10 });
      expect(await c.waitClosed(), 'socket closed').to.equal(true);
    });

    it('cancelling an unknown consumer tag answers cancel-ok', async () => {
      const ch = await channel(session.conn);
      await ch.cancel('never-consumed');
      await ch.checkExchange('amq.direct');
    });

    it('deleting the queue sends the consumer a server-initiated basic.cancel (no-wait) and its channel stays open (consumer_cancel_notify)', async () => {
      const c = await openRaw();
      await c.openChannel(1);
      await c.openChannel(2);
      const q = uniq('cancel-notify');
      declareRaw(c, q);
      await c.expect('queue.declare-ok');
      consumeRaw(c, q, 'ctag1');
      await c.expect('basic.consume-ok');
      c.method(2, 'queue.delete', { reserved1: 0, queue: q, ifUnused: false, ifEmpty: false, noWait: false });
      await c.waitFor(() => c.frames.some((f) => f.method?.name === 'queue.delete-ok') && c.frames.some((f) => f.method?.name === 'basic.cancel'), 'delete-ok and basic.cancel');
      const cancel = c.frames.find((f) => f.method?.name === 'basic.cancel')!;
      expect(cancel.channel).to.equal(1);
      expect(cancel.method!.args).to.deep.equal({ consumerTag: 'ctag1', noWait: true });
      declareRaw(c, q);
      await c.expect('queue.declare-ok');
      c.destroy();
    });

    it('amqplib sees the server cancel as a null message', async () => {
      const ch = await channel(session.conn);
      const q = uniq('cancel-null');
      await ch.assertQueue(q);
      const cancelled = new Promise<null>((resolve) => ch.consume(q, (m) => { if (m === null) resolve(null); }));
      const ch2 = await channel(session.conn);
      await ch2.deleteQueue(q);
      expect(await cancelled).to.equal(null);
    });
  });

  describe('redelivery (RabbitMQ confirms guide: consumer acknowledgements)', () => {
    it('a requeued message keeps its place: nacked deliveries come back first, in queue order, with redelivered=true', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      for (const b of ['a', 'b', 'c', 'd']) ch.sendToQueue(q, Buffer.from(b));
      await ch.prefetch(2);
      const got = collect<[string, boolean]>(6);
      let n = 0;
      await ch.consume(q, (m) => {
        if (!m) return;
        got.push([m.content.toString(), m.fields.redelivered]);
        if (++n === 2) ch.nack(m, true, true);
        else if (n > 2) ch.ack(m);
      });
      expect(await got.done).to.deep.equal([['a', false], ['b', false], ['a', true], ['b', true], ['c', false], ['d', false]]);
    });

    it('a lost ack means redelivery with redelivered=true: a consumer whose connection drops loses its unacked messages to the next consumer, in order', async () => {
      const ch = await channel(session.conn);
      const q = uniq('lost-ack');
      await ch.assertQueue(q);
      for (const b of ['one', 'two', 'three']) ch.sendToQueue(q, Buffer.from(b));
      await ch.checkQueue(q);
      const c = await openRaw();
      await c.openChannel(1);
      c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 2, global: false });
      await c.expect('basic.qos-ok');
      consumeRaw(c, q, 'doomed', false);
      await c.waitFor(() => c.frames.filter((f) => f.method?.name === 'basic.deliver').length === 2, 'two deliveries');
      c.socket.destroy();
      const again = collect<[string, boolean]>(3);
      // Wait for the broker to notice the dropped socket: the queue loses its consumer.
      for (let i = 0; i < 100 && (await ch.checkQueue(q)).consumerCount > 0; i++) await new Promise((r) => setTimeout(r, 5));
      await ch.consume(q, (m) => { if (m) again.push([m.content.toString(), m.fields.redelivered]); }, { noAck: true });
      expect(await again.done).to.deep.equal([['one', true], ['two', true], ['three', false]]);
      await ch.deleteQueue(q);
    });

    it('a connection lost with thousands unacknowledged, every third acked: the rest come back in queue order, redelivered, before what was never delivered', async () => {
      // Requeued in one merge (Queue.requeue): one insert per message, each moving the list,
      // held the event loop for 24 s with 60,000 of 300,000 (test/queue/queue.test.ts counts it).
      const [total, prefetch] = [9000, 6000];
      const ch = await confirmChannel(session.conn);
      const q = uniq('bulk-requeue');
      await ch.assertQueue(q);
      for (let i = 0; i < total; i++) ch.sendToQueue(q, Buffer.from(String(i)));
      await ch.waitForConfirms();
      const doomed = await connect(broker.url);
      doomed.on('error', () => {});
      const dch = await channel(doomed);
      await dch.prefetch(prefetch);
      let n = 0;
      await new Promise<void>((resolve) => {
        void dch.consume(q, (m) => {
          if (!m) return;
          // Every third of the first 6,000 acknowledged; nothing after.
          if (n < prefetch && n % 3 === 0) dch.ack(m);
          if (++n === prefetch) resolve();
        });
      });
      // The acks are handled before this answer, and the credit they free filled at once: the
      // consumer then holds 6,000 + 2,000 deliveries, 2,000 of them acknowledged.
      await dch.checkQueue(q);
      const delivered = prefetch + prefetch / 3;
      (doomed as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
      for (let i = 0; i < 200 && (await ch.checkQueue(q)).consumerCount > 0; i++) await new Promise((r) => setTimeout(r, 5));
      const left = total - prefetch / 3;
      const again = collect<[number, boolean]>(left);
      await ch.consume(q, (m) => { if (m) again.push([Number(m.content.toString()), m.fields.redelivered]); }, { noAck: true });
      const want: Array<[number, boolean]> = [];
      for (let i = 0; i < total; i++) if (i >= prefetch || i % 3 !== 0) want.push([i, i < delivered]);
      expect(await again.done).to.deep.equal(want);
      await ch.deleteQueue(q);
    });
  });

  describe('single active consumer (RabbitMQ consumers guide: single active consumer)', () => {
    const sac = { 'x-single-active-consumer': true };

    it('a second consumer under single-active-consumer receives nothing until the first goes; then it takes over in order', async () => {
      const chA = await channel(session.conn);
      const chB = await channel(session.conn);
      const q = await tempQueue(chB, sac);
      await chA.prefetch(1);
      const a: string[] = [];
      const b: Array<[string, boolean]> = [];
      const firstToA = new Promise<void>((resolve) => chA.consume(q, (m) => { if (m) { a.push(m.content.toString()); resolve(); } }, { consumerTag: 'A' }));
      const all = collect<[string, boolean]>(4);
      await chB.consume(q, (m) => { if (m) { b.push([m.content.toString(), m.fields.redelivered]); all.push([m.content.toString(), m.fields.redelivered]); } }, { noAck: true, consumerTag: 'B' });
      for (let i = 0; i < 4; i++) chB.sendToQueue(q, Buffer.from(`m${i}`));
      await firstToA;
      const stat = await chB.checkQueue(q);
      expect(stat).to.deep.equal({ queue: q, messageCount: 3, consumerCount: 2 });
      expect(a).to.deep.equal(['m0']);
      expect(b).to.deep.equal([]);
      await chA.close();
      expect(await all.done).to.deep.equal([['m0', true], ['m1', false], ['m2', false], ['m3', false]]);
      expect(a).to.deep.equal(['m0']);
    });

    it('the next consumer takes over when the active consumer\'s connection drops', async () => {
      const ch = await channel(session.conn);
      const q = uniq('sac-drop');
      await ch.assertQueue(q, { arguments: sac });
      const c = await openRaw();
      await c.openChannel(1);
      consumeRaw(c, q, 'first', false);
      await c.expect('basic.consume-ok');
      const got = collect<[string, boolean]>(2);
      await ch.consume(q, (m) => { if (m) got.push([m.content.toString(), m.fields.redelivered]); }, { noAck: true });
      ch.sendToQueue(q, Buffer.from('x'));
      ch.sendToQueue(q, Buffer.from('y'));
      await c.waitFor(() => c.frames.filter((f) => f.method?.name === 'basic.deliver').length === 2, 'both to the active consumer');
      c.socket.destroy();
      expect(await got.done).to.deep.equal([['x', true], ['y', true]]);
      await ch.deleteQueue(q);
    });

    it('an exclusive consumer on a single-active-consumer queue is 403 "in exclusive use"', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch, sac);
      expect(await closedWith(ch.consume(q, () => {}, { exclusive: true }))).to.deep.equal({
        code: 403, text: `ACCESS_REFUSED - queue '${q}' in vhost '/' in exclusive use`, classId: 60, methodId: 20,
      });
    });
  });

  describe('consumer priorities (RabbitMQ consumer-priority guide)', () => {
    it('higher x-priority consumers get messages first (round-robin among equals) until their prefetch is full', async () => {
      const hi1 = await channel(session.conn);
      const hi2 = await channel(session.conn);
      const lo = await channel(session.conn);
      const q = await tempQueue(hi1);
      await hi1.prefetch(2);
      await hi2.prefetch(2);
      await lo.prefetch(100);
      const got = collect<string>(8);
      await hi1.consume(q, (m) => { if (m) got.push(`hi1:${m.content.toString()}`); }, { priority: 10 });
      await hi2.consume(q, (m) => { if (m) got.push(`hi2:${m.content.toString()}`); }, { priority: 10 });
      await lo.consume(q, (m) => { if (m) got.push(`lo:${m.content.toString()}`); }, { priority: 1 });
      for (let i = 0; i < 8; i++) hi1.sendToQueue(q, Buffer.from(String(i)));
      expect(await got.done).to.deep.equal(['hi1:0', 'hi2:1', 'hi1:2', 'hi2:3', 'lo:4', 'lo:5', 'lo:6', 'lo:7']);
    });

    it('a non-integer x-priority is 406 with RabbitMQ wording', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      expect(await closedWith(ch.consume(q, () => {}, { arguments: { 'x-priority': 'high' } }))).to.deep.equal({
        code: 406, text: `PRECONDITION_FAILED - invalid arg 'x-priority' for queue '${q}' in vhost '/': "expected integer, got longstr"`, classId: 60, methodId: 20,
      });
    });
  });

  describe('direct reply-to (RabbitMQ direct-reply-to guide)', () => {
    it('a request published with reply-to amq.rabbitmq.reply-to gets a unique reply address; a reply to it reaches the requester', async () => {
      const requester = await channel(session.conn);
      const responder = await channel(session.conn);
      const q = await tempQueue(responder);
      const reply = new Promise<ConsumeMessage>((resolve) => requester.consume('amq.rabbitmq.reply-to', (m) => { if (m) resolve(m); }, { noAck: true }));
      await requester.checkQueue('amq.rabbitmq.reply-to');
      requester.sendToQueue(q, Buffer.from('request'), { replyTo: 'amq.rabbitmq.reply-to', correlationId: 'c1' });
      const req = await new Promise<ConsumeMessage>((resolve) => responder.consume(q, (m) => { if (m) resolve(m); }, { noAck: true }));
      const replyTo = req.properties.replyTo as string;
      expect(replyTo).to.match(/^amq\.rabbitmq\.reply-to\.[A-Za-z0-9+/=._-]+$/);
      responder.sendToQueue(replyTo, Buffer.from('response'), { correlationId: 'c1' });
      const m = await reply;
      expect(m.content.toString()).to.equal('response');
      expect(m.fields).to.include({ exchange: '', routingKey: replyTo, redelivered: false });
      expect(m.properties.correlationId).to.equal('c1');
    });

    it('publishing with reply-to amq.rabbitmq.reply-to without consuming from it is 406 "fast reply consumer does not exist"', async () => {
      const ch = await channel(session.conn);
      const q = await tempQueue(ch);
      const closed = new Promise<{ code: number; message: string; classId: number; methodId: number }>((resolve) => ch.once('error', resolve as never));
      ch.sendToQueue(q, Buffer.from('req'), { replyTo: 'amq.rabbitmq.reply-to' });
      const outcome = await Promise.race([closed, ch.checkQueue(q).then(() => ch.checkQueue(q)).then(() => null, () => closed)]);
      expect(outcome && { code: outcome.code, classId: outcome.classId, methodId: outcome.methodId }).to.deep.equal({ code: 406, classId: 60, methodId: 40 });
      expect(outcome!.message).to.contain('PRECONDITION_FAILED - fast reply consumer does not exist');
    });

    it('consuming amq.rabbitmq.reply-to in acknowledgement mode is 406 "reply consumer cannot acknowledge"', async () => {
      const ch = await channel(session.conn);
      expect(await closedWith(ch.consume('amq.rabbitmq.reply-to', () => {}, { noAck: false }))).to.deep.equal({
        code: 406, text: 'PRECONDITION_FAILED - reply consumer cannot acknowledge', classId: 60, methodId: 20,
      });
    });

    it('a mandatory publish to an unknown reply address is returned 312 NO_ROUTE', async () => {
      const ch = await confirmChannel(session.conn);
      const returned: number[] = [];
      ch.on('return', (m: ConsumeMessage) => returned.push((m.fields as unknown as { replyCode: number }).replyCode));
      ch.publish('', 'amq.rabbitmq.reply-to.bogus', Buffer.from('r'), { mandatory: true });
      await ch.waitForConfirms();
      expect(returned).to.deep.equal([312]);
    });
  });
});

describe('consumer acknowledgement timeout (RabbitMQ consumers guide: delivery acknowledgement timeout)', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0, consumerTimeout: 1000 });

  it('closes the channel with 406 once a delivery stays unacknowledged past consumer_timeout; the message is requeued as redelivered', async () => {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const q = (await ch.assertQueue('', { exclusive: true })).queue;
      ch.sendToQueue(q, Buffer.from('slow'));
      const closed = new Promise<Error & { code: number; classId: number; methodId: number }>((resolve) => ch.once('error', resolve as never));
      const delivered = new Promise<void>((resolve) => ch.consume(q, (m) => { if (m) resolve(); }));
      await delivered;
      clock.advance(999);
      await ch.checkQueue(q);
      // RabbitMQ 3.10 checks on its channel tick, so the close comes at some point after the timeout.
      clock.advance(60000);
      const err = await closed;
      expect({ code: err.code, classId: err.classId, methodId: err.methodId }).to.deep.equal({ code: 406, classId: 0, methodId: 0 });
      expect(err.message).to.contain(
        'PRECONDITION_FAILED - delivery acknowledgement on channel 1 timed out. Timeout value used: 1000 ms. This timeout value can be configured, see consumers doc guide to learn more',
      );
      const ch2 = await channel(conn);
      const m = await ch2.get(q, { noAck: true });
      expect(m && [m.content.toString(), m.fields.redelivered]).to.deep.equal(['slow', true]);
    } finally {
      await conn.close().catch(() => {});
    }
  });

  it('does not close a channel whose deliveries are acknowledged in time', async () => {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const q = (await ch.assertQueue('', { exclusive: true })).queue;
      ch.sendToQueue(q, Buffer.from('fast'));
      const m = await ch.get(q);
      clock.advance(900);
      ch.ack(m as never);
      await ch.checkQueue(q); // the ack has reached the broker before time moves on
      clock.advance(60000);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
    } finally {
      await conn.close().catch(() => {});
    }
  });
});
