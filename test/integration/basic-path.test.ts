import { expect } from 'chai';
import { channel, closedWith, confirmChannel, connect, type ChannelModel, type ConsumeMessage } from '../support/amqp.js';
import { collect, useBroker } from '../support/broker.js';

/**
 * The basic message path through amqplib's promise API: declare, publish, consume, get,
 * ack/nack/reject, qos, recover, confirms and returns, compared with RabbitMQ 3.10.
 */
describe('basic message path (amqplib)', () => {
  const broker = useBroker();
  let conn: ChannelModel;

  beforeEach(async () => {
    conn = await connect(broker.url);
  });
  afterEach(async () => {
    await conn.close().catch(() => {});
  });

  describe('queue.declare (spec 1.7.2.1; RabbitMQ queues guide)', () => {
    it('server-names a queue amq.gen-… when the name is empty', async () => {
      const ch = await channel(conn);
      const ok = await ch.assertQueue('', { exclusive: true });
      expect(ok.queue).to.match(/^amq\.gen-[A-Za-z0-9_-]{22}$/);
      expect(ok.messageCount).to.equal(0);
      expect(ok.consumerCount).to.equal(0);
    });

    it('reports message and consumer counts in declare-ok', async () => {
      const ch = await channel(conn);
      const q = 'counts-q';
      await ch.assertQueue(q, { autoDelete: false });
      ch.sendToQueue(q, Buffer.from('a'));
      ch.sendToQueue(q, Buffer.from('b'));
      const again = await ch.assertQueue(q);
      expect(again.messageCount).to.equal(2);
      await ch.consume(q, () => {}, { noAck: false });
      await ch.prefetch(0);
      const third = await ch.checkQueue(q);
      expect(third.consumerCount).to.equal(1);
      await ch.deleteQueue(q);
    });

    it('passive declare of a missing queue closes the channel with 404', async () => {
      const ch = await channel(conn);
      const err = await closedWith(ch.checkQueue('no-such-queue'));
      expect(err.code).to.equal(404);
      expect(err.text).to.equal("NOT_FOUND - no queue 'no-such-queue' in vhost '/'");
    });

    it('an exclusive queue is locked (405) to other connections', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('excl-q', { exclusive: true });
      const other = await connect(broker.url);
      try {
        const ch2 = await channel(other);
        const err = await closedWith(ch2.assertQueue('excl-q', { exclusive: true }));
        expect(err.code).to.equal(405);
        expect(err.text).to.match(/^RESOURCE_LOCKED - cannot obtain exclusive access to locked queue 'excl-q' in vhost '\/'/);
      } finally {
        await other.close();
      }
    });

    it('an exclusive queue is deleted with its connection', async () => {
      const other = await connect(broker.url);
      const ch2 = await channel(other);
      await ch2.assertQueue('excl-gone', { exclusive: true });
      await other.close();
      const ch = await channel(conn);
      const err = await closedWith(ch.checkQueue('excl-gone'));
      expect(err.code).to.equal(404);
    });

    it('redeclaring with another durable flag is 406 with RabbitMQ wording', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('dur-q', { durable: false });
      const err = await closedWith(ch.assertQueue('dur-q', { durable: true }));
      expect(err.code).to.equal(406);
      expect(err.text).to.equal("PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'dur-q' in vhost '/': received 'true' but current is 'false'");
      const ch2 = await channel(conn);
      await ch2.deleteQueue('dur-q');
    });

    it('queue names starting with amq. are reserved (403)', async () => {
      const ch = await channel(conn);
      const err = await closedWith(ch.assertQueue('amq.mine'));
      expect(err.code).to.equal(403);
      expect(err.text).to.equal("ACCESS_REFUSED - queue name 'amq.mine' contains reserved prefix 'amq.*'");
    });

    it('an auto-delete queue goes when its last consumer cancels', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('ad-q', { autoDelete: true });
      const { consumerTag } = await ch.consume('ad-q', () => {});
      await ch.cancel(consumerTag);
      const err = await closedWith(ch.checkQueue('ad-q'));
      expect(err.code).to.equal(404);
    });
  });

  describe('queue.purge / queue.delete', () => {
    it('purge returns the count and empties the queue', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('purge-q');
      for (let i = 0; i < 3; i++) ch.sendToQueue('purge-q', Buffer.from(String(i)));
      expect((await ch.purgeQueue('purge-q')).messageCount).to.equal(3);
      expect(await ch.get('purge-q')).to.equal(false);
      await ch.deleteQueue('purge-q');
    });

    it('delete if-empty on a non-empty queue is 406', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('ie-q');
      ch.sendToQueue('ie-q', Buffer.from('x'));
      await ch.checkQueue('ie-q');
      const err = await closedWith(ch.deleteQueue('ie-q', { ifEmpty: true }));
      expect(err.code).to.equal(406);
      expect(err.text).to.equal("PRECONDITION_FAILED - queue 'ie-q' in vhost '/' not empty");
      const ch2 = await channel(conn);
      expect((await ch2.deleteQueue('ie-q')).messageCount).to.equal(1);
    });

    it('delete if-unused on a queue with a consumer is 406', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('iu-q');
      await ch.consume('iu-q', () => {});
      const ch2 = await channel(conn);
      const err = await closedWith(ch2.deleteQueue('iu-q', { ifUnused: true }));
      expect(err.code).to.equal(406);
      expect(err.text).to.equal("PRECONDITION_FAILED - queue 'iu-q' in vhost '/' in use");
      await ch.deleteQueue('iu-q');
    });

    it('deleting a missing queue is fine (delete-ok, 0 messages)', async () => {
      const ch = await channel(conn);
      expect((await ch.deleteQueue('never-existed')).messageCount).to.equal(0);
    });
  });

  describe('basic.publish routing and mandatory returns', () => {
    it('routes through the default exchange and amq.direct', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      await ch.bindQueue(queue, 'amq.direct', 'rk');
      ch.sendToQueue(queue, Buffer.from('via default'));
      ch.publish('amq.direct', 'rk', Buffer.from('via amq.direct'));
      ch.publish('amq.direct', 'other', Buffer.from('dropped'));
      const a = await ch.get(queue, { noAck: true });
      const b = await ch.get(queue, { noAck: true });
      const c = await ch.get(queue, { noAck: true });
      expect(a && a.content.toString()).to.equal('via default');
      expect(b && b.content.toString()).to.equal('via amq.direct');
      expect(b && b.fields.exchange).to.equal('amq.direct');
      expect(c).to.equal(false);
    });

    it('publishing to a missing exchange closes the channel with 404', async () => {
      const ch = await channel(conn);
      const closed = new Promise<Error>((resolve) => ch.once('error', resolve));
      ch.publish('no-such-exchange', 'rk', Buffer.from('x'));
      const err = (await closed) as Error & { code: number; classId: number; methodId: number };
      expect(err.code).to.equal(404);
      expect(err.message).to.contain("NOT_FOUND - no exchange 'no-such-exchange' in vhost '/'");
      expect(err.classId).to.equal(60);
      expect(err.methodId).to.equal(40);
    });

    it('an unroutable mandatory message comes back as basic.return 312 NO_ROUTE before its confirm', async () => {
      const ch = await confirmChannel(conn);
      const events: string[] = [];
      const returned = new Promise<ConsumeMessage>((resolve) =>
        ch.on('return', (m) => {
          events.push('return');
          resolve(m as ConsumeMessage);
        }),
      );
      const confirmed = new Promise<void>((resolve, reject) =>
        ch.publish('amq.direct', 'nowhere', Buffer.from('lost?'), { mandatory: true, headers: { h: 'v' }, messageId: 'm1' }, (err) => {
          events.push('ack');
          if (err) reject(err);
          else resolve();
        }),
      );
      const m = await returned;
      await confirmed;
      expect(m.fields).to.include({ replyCode: 312, replyText: 'NO_ROUTE', exchange: 'amq.direct', routingKey: 'nowhere' });
      expect(m.content.toString()).to.equal('lost?');
      expect(m.properties.headers).to.deep.equal({ h: 'v' });
      expect(m.properties.messageId).to.equal('m1');
      expect(events).to.deep.equal(['return', 'ack']);
    });
  });

  describe('consumers (basic.consume, basic.qos; RabbitMQ consumers and consumer-prefetch guides)', () => {
    it('delivers in publish order and round-robins across consumers', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('rr-q');
      await ch.purgeQueue('rr-q');
      const got = collect<string>(6);
      const seen: Record<string, string[]> = { a: [], b: [] };
      // m is null when the server cancels the consumer (the queue is deleted at the end).
      await ch.consume('rr-q', (m) => { if (m) { seen.a!.push(m.content.toString()); got.push('a'); } }, { noAck: true, consumerTag: 'a' });
      await ch.consume('rr-q', (m) => { if (m) { seen.b!.push(m.content.toString()); got.push('b'); } }, { noAck: true, consumerTag: 'b' });
      for (let i = 0; i < 6; i++) ch.sendToQueue('rr-q', Buffer.from(String(i)));
      await got.done;
      expect(seen.a).to.deep.equal(['0', '2', '4']);
      expect(seen.b).to.deep.equal(['1', '3', '5']);
      await ch.deleteQueue('rr-q');
    });

    it('server-generates amq.ctag-… tags', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const { consumerTag } = await ch.consume(queue, () => {});
      expect(consumerTag).to.match(/^amq\.ctag-[A-Za-z0-9_-]{22}$/);
    });

    it('prefetch (per consumer) limits unacked deliveries; acks release more', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      for (let i = 0; i < 5; i++) ch.sendToQueue(queue, Buffer.from(String(i)));
      await ch.prefetch(2);
      const firstTwo = collect<ConsumeMessage>(2);
      const firstThree = collect<ConsumeMessage>(3);
      await ch.consume(queue, (m) => { firstTwo.push(m!); firstThree.push(m!); });
      const two = await firstTwo.done;
      // A synchronous round trip after the deliveries: the queue still holds the other three.
      expect((await ch.checkQueue(queue)).messageCount).to.equal(3);
      ch.ack(two[0]!);
      const three = await firstThree.done;
      expect(three.map((m) => m.content.toString())).to.deep.equal(['0', '1', '2']);
      expect((await ch.checkQueue(queue)).messageCount).to.equal(2);
    });

    it('global prefetch is shared by all consumers on the channel', async () => {
      const ch = await channel(conn);
      const { queue: q1 } = await ch.assertQueue('', { exclusive: true });
      const { queue: q2 } = await ch.assertQueue('', { exclusive: true });
      for (let i = 0; i < 3; i++) { ch.sendToQueue(q1, Buffer.from('1')); ch.sendToQueue(q2, Buffer.from('2')); }
      await ch.prefetch(3, true);
      const got = collect<ConsumeMessage>(3);
      await ch.consume(q1, (m) => got.push(m!));
      await ch.consume(q2, (m) => got.push(m!));
      await got.done;
      const vhost = broker.running.broker.vhosts.get('/')!;
      expect(vhost.queues.get(q1)!.messageCount + vhost.queues.get(q2)!.messageCount).to.equal(3);
    });

    it('an exclusive consumer refuses others (403)', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      await ch.consume(queue, () => {}, { exclusive: true });
      const ch2 = await channel(conn);
      const err = await closedWith(ch2.consume(queue, () => {}));
      expect(err.code).to.equal(403);
      expect(err.text).to.equal(`ACCESS_REFUSED - queue '${queue}' in vhost '/' in exclusive use`);
    });

    it('basic.cancel stops deliveries and answers cancel-ok', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const got: string[] = [];
      const { consumerTag } = await ch.consume(queue, (m) => got.push(m!.content.toString()), { noAck: true });
      await ch.cancel(consumerTag);
      ch.sendToQueue(queue, Buffer.from('after cancel'));
      const m = await ch.get(queue, { noAck: true });
      expect(m && m.content.toString()).to.equal('after cancel');
      expect(got).to.deep.equal([]);
    });

    it('a consumer is told with basic.cancel when its queue is deleted (consumer_cancel_notify)', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('doomed-q');
      const cancelled = new Promise<null>((resolve) => ch.consume('doomed-q', (m) => { if (m === null) resolve(null); }));
      const ch2 = await channel(conn);
      await ch2.deleteQueue('doomed-q');
      expect(await cancelled).to.equal(null);
    });
  });

  describe('acknowledgements (spec 1.8.3.13-16; RabbitMQ confirms guide)', () => {
    it('a requeued message keeps its place and comes back with redelivered=true', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      for (const b of ['a', 'b', 'c']) ch.sendToQueue(queue, Buffer.from(b));
      const a = await ch.get(queue);
      const b = await ch.get(queue);
      if (!a || !b) throw new Error('expected messages');
      ch.nack(b, false, true);
      ch.nack(a, false, true);
      const order: Array<[string, boolean]> = [];
      for (let i = 0; i < 3; i++) {
        const m = await ch.get(queue, { noAck: true });
        if (!m) throw new Error('missing');
        order.push([m.content.toString(), m.fields.redelivered]);
      }
      expect(order).to.deep.equal([['a', true], ['b', true], ['c', false]]);
    });

    it('a lost ack means redelivery with redelivered=true (channel closed with unacked messages)', async () => {
      const ch = await channel(conn);
      await ch.assertQueue('lost-ack-q');
      await ch.purgeQueue('lost-ack-q');
      ch.sendToQueue('lost-ack-q', Buffer.from('one'));
      ch.sendToQueue('lost-ack-q', Buffer.from('two'));
      const got = collect<ConsumeMessage>(2);
      await ch.consume('lost-ack-q', (m) => got.push(m!));
      await got.done;
      await ch.close();
      const ch2 = await channel(conn);
      const again = collect<ConsumeMessage>(2);
      await ch2.consume('lost-ack-q', (m) => again.push(m!), { noAck: true });
      const msgs = await again.done;
      expect(msgs.map((m) => [m.content.toString(), m.fields.redelivered])).to.deep.equal([['one', true], ['two', true]]);
      await ch2.deleteQueue('lost-ack-q');
    });

    it('ack with multiple=true acknowledges everything up to the tag', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      for (let i = 0; i < 4; i++) ch.sendToQueue(queue, Buffer.from(String(i)));
      const msgs = [];
      for (let i = 0; i < 4; i++) msgs.push(await ch.get(queue));
      ch.ack(msgs[2] as never, true);
      await ch.recover();
      const rest = await ch.get(queue, { noAck: true });
      expect(rest && rest.content.toString()).to.equal('3');
      expect(rest && rest.fields.redelivered).to.equal(true);
      expect(await ch.get(queue)).to.equal(false);
    });

    it('reject without requeue drops the message', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(queue, Buffer.from('bad'));
      const m = await ch.get(queue);
      ch.reject(m as never, false);
      await ch.recover();
      expect(await ch.get(queue)).to.equal(false);
    });

    it('an unknown delivery tag closes the channel with 406', async () => {
      const ch = await channel(conn);
      const closed = new Promise<Error & { code: number }>((resolve) => ch.once('error', resolve as never));
      ch.ack({ fields: { deliveryTag: 99 } } as never);
      const err = await closed;
      expect(err.code).to.equal(406);
      expect(err.message).to.contain('PRECONDITION_FAILED - unknown delivery tag 99');
    });

    it('ack with multiple=true spans queues and the tags no-ack deliveries took, and leaves later ones unacked', async () => {
      const ch = await channel(conn);
      const a = (await ch.assertQueue('', { exclusive: true })).queue;
      const b = (await ch.assertQueue('', { exclusive: true })).queue;
      for (const body of ['a1', 'a2', 'a3']) ch.sendToQueue(a, Buffer.from(body));
      for (const body of ['b1', 'b2']) ch.sendToQueue(b, Buffer.from(body));
      // Every delivery takes a tag (rabbit_channel's next_tag), a no-ack one too: tag 2 is never unacked.
      const got = [await ch.get(a), await ch.get(b, { noAck: true }), await ch.get(a), await ch.get(b), await ch.get(a)];
      expect(got.map((m) => m && [m.fields.deliveryTag, m.content.toString()])).to.deep.equal([[1, 'a1'], [2, 'b1'], [3, 'a2'], [4, 'b2'], [5, 'a3']]);
      ch.ack(got[3] as never, true);
      await ch.recover();
      const back = await ch.get(a, { noAck: true });
      expect(back && [back.content.toString(), back.fields.redelivered]).to.deep.equal(['a3', true]);
      expect(await ch.get(a)).to.equal(false);
      expect(await ch.get(b)).to.equal(false);
      // Tag 3 went with the multiple ack.
      const closed = new Promise<Error & { code: number }>((resolve) => ch.once('error', resolve as never));
      ch.ack(got[2] as never);
      expect((await closed).message).to.contain('unknown delivery tag 3');
    });

    it('acking the same tag twice closes the channel with 406', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(queue, Buffer.from('x'));
      const m = await ch.get(queue);
      const closed = new Promise<Error & { code: number }>((resolve) => ch.once('error', resolve as never));
      ch.ack(m as never);
      ch.ack(m as never);
      const err = await closed;
      expect(err.code).to.equal(406);
      expect(err.message).to.contain('unknown delivery tag 1');
    });

    it('basic.recover requeues unacked deliveries', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(queue, Buffer.from('r'));
      await ch.get(queue);
      await ch.recover();
      const again = await ch.get(queue, { noAck: true });
      expect(again && again.fields.redelivered).to.equal(true);
    });
  });

  describe('basic.get (spec 1.8.3.10)', () => {
    it('get-ok carries the remaining message count; get-empty when empty', async () => {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(queue, Buffer.from('1'), { contentType: 'text/plain', deliveryMode: 2, priority: 3, correlationId: 'c', replyTo: 'r', expiration: '60000', messageId: 'id', timestamp: 1700000000, type: 't', appId: 'app', headers: { n: 1, s: 'x', b: true } });
      ch.sendToQueue(queue, Buffer.from('2'));
      const m = await ch.get(queue, { noAck: true });
      if (!m) throw new Error('missing');
      expect(m.fields.messageCount).to.equal(1);
      expect(m.properties).to.include({ contentType: 'text/plain', deliveryMode: 2, priority: 3, correlationId: 'c', replyTo: 'r', expiration: '60000', messageId: 'id', timestamp: 1700000000, type: 't', appId: 'app' });
      expect(m.properties.headers).to.deep.equal({ n: 1, s: 'x', b: true });
      await ch.get(queue, { noAck: true });
      expect(await ch.get(queue)).to.equal(false);
    });
  });

  describe('publisher confirms (RabbitMQ confirms guide)', () => {
    it('acks every publish, in order', async () => {
      const ch = await confirmChannel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: true });
      const acks: number[] = [];
      ch.on('ack', (f: { deliveryTag: number }) => acks.push(f.deliveryTag));
      for (let i = 0; i < 100; i++) ch.sendToQueue(queue, Buffer.from(String(i)));
      await ch.waitForConfirms();
      expect(acks.length).to.be.greaterThan(0);
      expect(acks[acks.length - 1]).to.equal(100);
      expect((await ch.checkQueue(queue)).messageCount).to.equal(100);
    });

    it('confirms unroutable messages too', async () => {
      const ch = await confirmChannel(conn);
      await new Promise<void>((resolve, reject) => ch.publish('amq.fanout', '', Buffer.from('x'), {}, (err) => (err ? reject(err) : resolve())));
    });
  });

  describe('channels', () => {
    it('many channels on one connection work independently', async () => {
      const chans = await Promise.all(Array.from({ length: 20 }, () => channel(conn)));
      const { queue } = await chans[0]!.assertQueue('', { exclusive: false, autoDelete: false });
      chans.forEach((c, i) => c.sendToQueue(queue, Buffer.from(String(i))));
      await chans[0]!.checkQueue(queue);
      await Promise.all(chans.map((c) => c.checkQueue(queue)));
      expect((await chans[0]!.checkQueue(queue)).messageCount).to.equal(20);
      await chans[0]!.deleteQueue(queue);
    });

    it('a channel error leaves the other channels and the connection open', async () => {
      const ch1 = await channel(conn);
      const ch2 = await channel(conn);
      await closedWith(ch1.checkQueue('missing-for-ch1'));
      const { queue } = await ch2.assertQueue('', { exclusive: true });
      expect(queue).to.match(/^amq\.gen-/);
    });
  });
});
