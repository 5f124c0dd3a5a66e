import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { F, type FieldTable, type FieldValue } from '../../src/frame/field-table.js';
import { decodeContentHeader } from '../../src/frame/generated/properties.js';
import { channel, confirmChannel, type Channel, type GetMessage } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { drainBodies as drain, useSession } from '../support/session.js';

/**
 * Dead-lettering (RabbitMQ dlx guide): reasons rejected, expired, maxlen and delivery_limit; the
 * x-death and x-first-death-* headers exactly as RabbitMQ 3.10 writes them (no x-last-death-*
 * in 3.10); count increments; cycle detection. Time moves only through the injected FakeClock,
 * so x-death "time" is predictable. Every expectation was checked against RabbitMQ 3.10.8.
 */
describe('dead-lettering (RabbitMQ dlx guide)', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 0 });

  const session = useSession(broker);
  const { uniq, openRaw } = session;
  /** x-death "time" as amqplib decodes an AMQP timestamp: whole seconds of the broker clock. */
  const nowStamp = () => ({ '!': 'timestamp', value: Math.floor(clock.now() / 1000) });

  type Death = Record<string, unknown>;
  const deaths = (m: GetMessage) => (m.properties.headers?.['x-death'] ?? []) as unknown as Death[];

  async function getOne(ch: Channel, queue: string): Promise<GetMessage> {
    const m = await ch.get(queue, { noAck: true });
    if (!m) throw new Error(`expected a message in ${queue}`);
    return m;
  }

  /** basic.get (no-ack) on a raw connection's channel 1: the headers exactly as sent on the wire. */
  async function rawGetHeaders(c: Awaited<ReturnType<typeof openRaw>>, queue: string): Promise<FieldTable> {
    const before = c.frames.length;
    c.method(1, 'basic.get', { reserved1: 0, queue, noAck: true });
    await c.expect('basic.get-ok');
    const header = await c.waitFor(() => c.frames.slice(before).find((f) => f.type === 2), 'content header');
    return decodeContentHeader(header.payload).properties.headers as FieldTable;
  }

  /** A topic dead-letter exchange with a catch-all queue behind it. */
  async function sink(ch: Channel): Promise<{ dlx: string; dlq: string }> {
    const dlx = uniq('dlx');
    await ch.assertExchange(dlx, 'topic', { durable: false, autoDelete: true });
    const dlq = (await ch.assertQueue('', { exclusive: true })).queue;
    await ch.bindQueue(dlq, dlx, '#');
    return { dlx, dlq };
  }

  describe('reason expired', () => {
    it('an expired order message reaches its dead-letter queue with a correct x-death', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const orders = uniq('orders');
      await ch.assertQueue(orders, { exclusive: true, arguments: { 'x-message-ttl': 30000, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(orders, Buffer.from('{"order":42}'), {
        headers: { keep: 'me' }, messageId: 'order-42', CC: ['audit'], expiration: '60000', contentType: 'application/json', deliveryMode: 2,
      });
      await ch.checkQueue(orders);
      clock.advance(30000);
      const m = await getOne(ch, dlq);
      expect(m.content.toString()).to.equal('{"order":42}');
      expect(m.fields).to.include({ exchange: dlx, routingKey: orders, redelivered: false });
      expect(m.properties.expiration).to.equal(undefined);
      expect(m.properties).to.include({ messageId: 'order-42', contentType: 'application/json', deliveryMode: 2 });
      expect(m.properties.headers).to.deep.equal({
        CC: ['audit'],
        keep: 'me',
        'x-death': [{
          count: 1, reason: 'expired', queue: orders, time: nowStamp(), exchange: '', 'routing-keys': [orders, 'audit'], 'original-expiration': '60000',
        }],
        'x-first-death-exchange': '',
        'x-first-death-queue': orders,
        'x-first-death-reason': 'expired',
      });
      expect(Object.keys(m.properties.headers ?? {})).to.not.include.members(['x-last-death-reason', 'x-last-death-queue', 'x-last-death-exchange']);
    });

    it('x-death is written with RabbitMQ\'s field types and key order (raw frames: count long, time timestamp)', async () => {
      const ch = await channel(session.conn);
      const src = uniq('typed');
      const dst = uniq('typed-dlq');
      await ch.assertQueue(dst, { exclusive: false });
      await ch.assertQueue(src, { exclusive: false, arguments: { 'x-message-ttl': 10, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dst } });
      const c = await openRaw();
      await c.openChannel(1);
      c.publish(1, '', src, Buffer.from('m'), { headers: { z: F.str('last'), a: F.str('first') } });
      c.method(1, 'queue.declare', { reserved1: 0, queue: src, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
      await c.expect('queue.declare-ok');
      clock.advance(10);
      const headers = await rawGetHeaders(c, dst);
      c.destroy();
      expect(Object.keys(headers)).to.deep.equal(['a', 'x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason', 'z']);
      const list = headers['x-death'] as Extract<FieldValue, { type: 'A' }>;
      expect(list.type).to.equal('A');
      const entry = (list.value[0] as Extract<FieldValue, { type: 'F' }>).value;
      expect(Object.keys(entry)).to.deep.equal(['count', 'reason', 'queue', 'time', 'exchange', 'routing-keys']);
      expect(entry['count']).to.deep.equal(F.int64(1));
      expect(entry['time']).to.deep.equal({ type: 'T', value: Math.floor(clock.now() / 1000) });
      expect(entry['reason']).to.deep.equal(F.str('expired'));
      expect(entry['routing-keys']).to.deep.equal(F.array([F.str(src)]));
      expect(headers['x-first-death-reason']).to.deep.equal(F.str('expired'));
      await ch.deleteQueue(src);
      await ch.deleteQueue(dst);
    });

    it('x-dead-letter-routing-key replaces the routing key and drops the CC header; routing-keys still lists the originals', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('dlrk');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx, 'x-dead-letter-routing-key': 'dl.key' } });
      ch.sendToQueue(q, Buffer.from('b'), { expiration: '30', CC: ['cc1'], headers: { BCC: ['elsewhere'] } });
      await ch.checkQueue(q);
      clock.advance(30);
      const m = await getOne(ch, dlq);
      expect(m.fields).to.include({ exchange: dlx, routingKey: 'dl.key' });
      expect(m.properties.headers).to.deep.equal({
        'x-death': [{ count: 1, reason: 'expired', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q, 'cc1'], 'original-expiration': '30' }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'expired',
      });
    });
  });

  describe('reason rejected', () => {
    it('keeps every header of a dead-lettered message, one named __proto__ included (was 541 INTERNAL_ERROR)', async () => {
      const ch = await channel(session.conn);
      const src = uniq('proto-header');
      const dst = uniq('proto-header-dlq');
      await ch.assertQueue(dst, { exclusive: false });
      await ch.assertQueue(src, { exclusive: false, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dst } });
      const c = await openRaw();
      await c.openChannel(1);
      // A table without a prototype, so that __proto__ is an ordinary own key.
      const sent = Object.create(null) as FieldTable;
      sent['__proto__'] = F.str('kept');
      sent['after'] = F.int32(1);
      c.publish(1, '', src, Buffer.from('m'), { headers: sent });
      c.method(1, 'basic.get', { reserved1: 0, queue: src, noAck: false });
      const got = await c.expect('basic.get-ok');
      c.method(1, 'basic.reject', { deliveryTag: got.deliveryTag, requeue: false });
      const headers = await rawGetHeaders(c, dst);
      c.destroy();
      expect(Object.keys(headers)).to.deep.equal(['__proto__', 'after', 'x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason']);
      expect(headers['__proto__']).to.deep.equal(F.str('kept'));
      await ch.deleteQueue(src);
      await ch.deleteQueue(dst);
    });

    it('basic.reject and basic.nack with requeue=false dead-letter (reason rejected); requeue=true does not', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('rej');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      for (const b of ['reject', 'nack', 'requeue', 'multi-1', 'multi-2']) ch.sendToQueue(q, Buffer.from(b), { headers: { h: 1 } });
      const fetched: GetMessage[] = [];
      for (;;) {
        const m = await ch.get(q);
        if (!m) break;
        fetched.push(m);
      }
      expect(fetched.map((m) => m.content.toString())).to.deep.equal(['reject', 'nack', 'requeue', 'multi-1', 'multi-2']);
      ch.reject(fetched[0]!, false);
      ch.nack(fetched[1]!, false, false);
      ch.nack(fetched[2]!, false, true);
      ch.nack(fetched[4]!, true, false);
      const m = await getOne(ch, dlq);
      expect(m.content.toString()).to.equal('reject');
      expect(m.fields).to.include({ exchange: dlx, routingKey: q, redelivered: false });
      expect(m.properties.headers).to.deep.equal({
        h: 1,
        'x-death': [{ count: 1, reason: 'rejected', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q] }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'rejected',
      });
      expect(await drain(ch, dlq)).to.deep.equal(['nack', 'multi-1', 'multi-2']);
      expect(await drain(ch, q)).to.deep.equal(['requeue']);
    });

    it('keeps the other properties and records original-expiration when a message with an expiration is rejected', async () => {
      const ch = await channel(session.conn);
      const q = uniq('props');
      const dst = uniq('props-dlq');
      await ch.assertQueue(dst, { exclusive: true });
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dst } });
      ch.sendToQueue(q, Buffer.from('m'), {
        priority: 3, deliveryMode: 2, contentType: 'text/plain', expiration: '60000', correlationId: 'c', replyTo: 'r', messageId: 'id', timestamp: 5, type: 'ty', appId: 'app', userId: 'guest',
      });
      const m = await ch.get(q);
      if (!m) throw new Error('expected the message');
      ch.reject(m, false);
      const d = await getOne(ch, dst);
      const { headers, ...rest } = d.properties;
      expect(rest).to.deep.include({ contentType: 'text/plain', deliveryMode: 2, priority: 3, correlationId: 'c', replyTo: 'r', messageId: 'id', timestamp: 5, type: 'ty', userId: 'guest', appId: 'app', expiration: undefined });
      expect(headers).to.deep.equal({
        'x-death': [{ count: 1, reason: 'rejected', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q], 'original-expiration': '60000' }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'rejected',
      });
      expect(d.fields).to.include({ exchange: '', routingKey: dst, redelivered: false });
    });

    it('the count increments when the same message dies again in the same queue for the same reason (entry rewritten with sorted keys)', async () => {
      const ch = await channel(session.conn);
      const q = uniq('self-reject');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': '' } });
      ch.sendToQueue(q, Buffer.from('loop'));
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const m = await ch.get(q);
        if (!m) throw new Error('the rejected message should come back');
        seen.push([m.fields.exchange, m.fields.routingKey, m.fields.redelivered, deaths(m).map((d) => [Object.keys(d), d['count']]), m.properties.headers?.['x-first-death-reason']]);
        ch.reject(m, false);
      }
      expect(seen).to.deep.equal([
        ['', q, false, [], undefined],
        ['', q, false, [[['count', 'reason', 'queue', 'time', 'exchange', 'routing-keys'], 1]], 'rejected'],
        ['', q, false, [[['count', 'exchange', 'queue', 'reason', 'routing-keys', 'time'], 2]], 'rejected'],
      ]);
    });
  });

  describe('reason maxlen (RabbitMQ maxlength guide)', () => {
    it('drop-head dead-letters the oldest messages with reason maxlen', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('maxlen');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 2, 'x-dead-letter-exchange': dlx } });
      for (const b of ['1', '2', '3', '4']) ch.sendToQueue(q, Buffer.from(b));
      const first = await getOne(ch, dlq);
      expect(first.content.toString()).to.equal('1');
      expect(first.properties.headers).to.deep.equal({
        'x-death': [{ count: 1, reason: 'maxlen', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q] }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'maxlen',
      });
      expect(await drain(ch, dlq)).to.deep.equal(['2']);
      expect(await drain(ch, q)).to.deep.equal(['3', '4']);
    });

    it('x-max-length-bytes drop-head dead-letters by bytes', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('maxbytes');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length-bytes': 10, 'x-dead-letter-exchange': dlx } });
      for (const b of ['aaaa', 'bbbb', 'cccc']) ch.sendToQueue(q, Buffer.from(b));
      expect(await drain(ch, dlq)).to.deep.equal(['aaaa']);
      expect(await drain(ch, q)).to.deep.equal(['bbbb', 'cccc']);
    });

    it('reject-publish-dlx nacks the new message and dead-letters it (reason maxlen); reject-publish does not dead-letter', async () => {
      const ch = await confirmChannel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('rp-dlx');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish-dlx', 'x-dead-letter-exchange': dlx } });
      const outcome: string[] = [];
      for (const b of ['a', 'b']) {
        await new Promise<void>((resolve) => ch.publish('', q, Buffer.from(b), {}, (err) => { outcome.push(`${b} ${err ? 'nack' : 'ack'}`); resolve(); }));
      }
      expect(outcome).to.deep.equal(['a ack', 'b nack']);
      expect(await drain(ch, q)).to.deep.equal(['a']);
      const d = await getOne(ch, dlq);
      expect([d.content.toString(), d.fields.routingKey]).to.deep.equal(['b', q]);
      expect(d.properties.headers).to.deep.equal({
        'x-death': [{ count: 1, reason: 'maxlen', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q] }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'maxlen',
      });

      const plain = uniq('rp-plain');
      await ch.assertQueue(plain, { exclusive: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish', 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(plain, Buffer.from('x'));
      ch.sendToQueue(plain, Buffer.from('y'));
      await ch.waitForConfirms().catch(() => {});
      expect(await drain(ch, dlq)).to.deep.equal([]);
    });

    // A queue that dead-letters into the fanout exchange that feeds it and two other queues:
    // RabbitMQ's channel hands a message to every queue before the first queue's dead-lettering
    // publishes, so in the other queues the dead-lettered copy comes after the message that
    // pushed it out (drop-head) or was refused (reject-publish-dlx). Recorded from RabbitMQ
    // 3.10.8, one publish confirmed at a time. Warren dead-lettered in the middle of the offer
    // and put the copy first.
    for (const [overflow, order] of [
      ['drop-head', ['1', '2', "1'", '3', "2'", '4', "3'"]],
      ['reject-publish-dlx', ['1', '2', "2'", '3', "3'", '4', "4'"]],
    ] as const) {
      it(`${overflow} into the same fanout: the dead-lettered copy comes after the message that caused it in the other queues`, async () => {
        const ch = await confirmChannel(session.conn);
        const fan = uniq('dl-fan');
        const [q1, q2, q3] = [uniq('dl-fan-1'), uniq('dl-fan-2'), uniq('dl-fan-3')];
        await ch.assertExchange(fan, 'fanout', { durable: false, autoDelete: true });
        await ch.assertQueue(q1, { exclusive: true, arguments: { 'x-max-length': 1, 'x-overflow': overflow, 'x-dead-letter-exchange': fan } });
        for (const q of [q2, q3]) await ch.assertQueue(q, { exclusive: true });
        for (const q of [q1, q2, q3]) await ch.bindQueue(q, fan, '');
        for (const b of ['1', '2', '3', '4']) {
          ch.publish(fan, '', Buffer.from(b), {}, () => {});
          await ch.waitForConfirms().catch(() => {});
        }
        const marked = async (q: string) => {
          const out: string[] = [];
          for (let m = await ch.get(q, { noAck: true }); m; m = await ch.get(q, { noAck: true })) {
            out.push(m.content.toString() + (m.properties.headers?.['x-death'] ? "'" : ''));
          }
          return out;
        };
        expect(await marked(q2)).to.deep.equal(order);
        expect(await marked(q3)).to.deep.equal(order);
        expect(await marked(q1)).to.deep.equal([overflow === 'drop-head' ? '4' : '1']);
      });
    }
  });

  describe('reason delivery_limit (RabbitMQ quorum-queues guide: poison message handling)', () => {
    it('a quorum queue dead-letters a message redelivered past x-delivery-limit; x-delivery-count is not carried over', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await sink(ch);
      const q = uniq('poison');
      await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum', 'x-delivery-limit': 2, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('p'), { headers: { a: 1 } });
      const seen: unknown[] = [];
      for (let i = 0; i < 4; i++) {
        const m = await ch.get(q);
        if (!m) { seen.push('empty'); break; }
        seen.push([m.fields.redelivered, m.properties.headers]);
        ch.nack(m, false, true);
      }
      expect(seen).to.deep.equal([
        [false, { a: 1, 'x-delivery-count': 0 }],
        [true, { a: 1, 'x-delivery-count': 1 }],
        [true, { a: 1, 'x-delivery-count': 2 }],
        'empty',
      ]);
      const d = await getOne(ch, dlq);
      expect(d.fields).to.include({ exchange: dlx, routingKey: q, redelivered: false });
      expect(d.properties.headers).to.deep.equal({
        a: 1,
        'x-death': [{ count: 1, reason: 'delivery_limit', queue: q, time: nowStamp(), exchange: '', 'routing-keys': [q] }],
        'x-first-death-exchange': '',
        'x-first-death-queue': q,
        'x-first-death-reason': 'delivery_limit',
      });
      await ch.deleteQueue(q);
    });
  });

  describe('several deaths and cycles (RabbitMQ dlx guide: routing dead-lettered messages)', () => {
    const summary = (m: GetMessage) => deaths(m).map((d) => `${d['queue']}:${d['reason']}:${d['count']}`);

    it('an expired message in a dead-letter cycle is dropped when it would reach a queue it already expired in', async () => {
      const ch = await channel(session.conn);
      const q1 = uniq('cycle-1');
      const q2 = uniq('cycle-2');
      const witness = uniq('cycle-w');
      const fan = uniq('cycle-fan');
      await ch.assertExchange(fan, 'fanout', { durable: false, autoDelete: true });
      await ch.assertQueue(q1, { exclusive: true, arguments: { 'x-message-ttl': 20, 'x-dead-letter-exchange': fan } });
      await ch.assertQueue(q2, { exclusive: true, arguments: { 'x-message-ttl': 20, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q1 } });
      await ch.assertQueue(witness, { exclusive: true });
      await ch.bindQueue(q2, fan, '');
      await ch.bindQueue(witness, fan, '');
      ch.sendToQueue(q1, Buffer.from('loop'));
      await ch.checkQueue(q1);
      for (let i = 0; i < 10; i++) clock.advance(20);
      const copies: string[][] = [];
      for (;;) {
        const m = await ch.get(witness, { noAck: true });
        if (!m) break;
        copies.push(summary(m));
      }
      expect(copies).to.deep.equal([[`${q1}:expired:1`]]);
      expect((await ch.checkQueue(q1)).messageCount).to.equal(0);
      expect((await ch.checkQueue(q2)).messageCount).to.equal(0);
    });

    it('a queue that dead-letters expired messages to itself drops them', async () => {
      const ch = await channel(session.conn);
      const q = uniq('self-expire');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-message-ttl': 20, 'x-dead-letter-exchange': '' } });
      ch.sendToQueue(q, Buffer.from('loop'));
      await ch.checkQueue(q);
      clock.advance(20);
      clock.advance(20);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
    });

    it('a cycle with a rejection in it continues, and each (queue, reason) keeps its own count, most recent first', async () => {
      const ch = await channel(session.conn);
      const q1 = uniq('rcycle-1');
      const q2 = uniq('rcycle-2');
      await ch.assertQueue(q1, { exclusive: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q2 } });
      await ch.assertQueue(q2, { exclusive: true, arguments: { 'x-message-ttl': 20, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q1 } });
      ch.sendToQueue(q1, Buffer.from('loop'));
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const m = await ch.get(q1);
        if (!m) throw new Error('the message should keep cycling');
        seen.push([m.fields.routingKey, summary(m), m.properties.headers?.['x-first-death-queue']]);
        ch.reject(m, false);
        await ch.checkQueue(q2);
        clock.advance(20);
      }
      expect(seen).to.deep.equal([
        [q1, [], undefined],
        [q1, [`${q2}:expired:1`, `${q1}:rejected:1`], q1],
        [q1, [`${q2}:expired:2`, `${q1}:rejected:2`], q1],
      ]);
    });

    it('expired in one queue, rejected in the next: the expired entry moves to the front with its count incremented', async () => {
      const ch = await channel(session.conn);
      const q1 = uniq('mcycle-1');
      const q2 = uniq('mcycle-2');
      await ch.assertQueue(q1, { exclusive: true, arguments: { 'x-message-ttl': 20, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q2 } });
      await ch.assertQueue(q2, { exclusive: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': q1 } });
      ch.sendToQueue(q1, Buffer.from('loop'));
      await ch.checkQueue(q1);
      const seen: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        clock.advance(20);
        const m = await ch.get(q2);
        if (!m) throw new Error('the message should keep cycling');
        seen.push(summary(m));
        ch.reject(m, false);
        await ch.checkQueue(q1);
      }
      expect(seen).to.deep.equal([
        [`${q1}:expired:1`],
        [`${q1}:expired:2`, `${q2}:rejected:1`],
        [`${q1}:expired:3`, `${q2}:rejected:2`],
      ]);
    });

    it('an x-death entry whose count is not a number (a client made it) starts again at 1; the channel stays open', async () => {
      // RabbitMQ 3.10's queue process crashes on it (and loses what the queue held); Warren's
      // channel used to be closed with 541 (a BigInt of NaN).
      const ch = await channel(session.conn);
      const q = uniq('bad-count');
      const dlq = uniq('bad-count-dlq');
      await ch.assertQueue(dlq, { exclusive: true });
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq } });
      ch.sendToQueue(q, Buffer.from('m'), { headers: { 'x-death': [{ queue: q, reason: 'rejected', count: 'str' }] } });
      ch.sendToQueue(q, Buffer.from('m2'));
      const m = await ch.get(q);
      if (!m) throw new Error('expected the message');
      ch.reject(m, false);
      const dead = await getOne(ch, dlq);
      expect(deaths(dead).map((d) => [d['queue'], d['reason'], d['count']])).to.deep.equal([[q, 'rejected', 1]]);
      expect((await ch.checkQueue(q)).messageCount).to.equal(1);
    });

    it('a missing dead-letter exchange drops the message quietly', async () => {
      const ch = await channel(session.conn);
      const q = uniq('missing-dlx');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': 'no-such-dlx' } });
      ch.sendToQueue(q, Buffer.from('m'));
      const m = await ch.get(q);
      if (!m) throw new Error('expected the message');
      ch.reject(m, false);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
    });
  });
});
