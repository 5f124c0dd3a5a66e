import { expect } from 'chai';
import { EnqueueResult } from '../../src/queue/queue.js';
import { F, FakeChannel, get, makeQueue, message, publish, range, takeAll } from './harness.js';

/**
 * Queue on its own (FakeClock, memory store, a fake channel): the rules that were reachable
 * only through amqplib before — TTL at the head, requeue positions, overflow modes, single
 * active consumer and consumer priorities (RabbitMQ 3.10 guides: ttl, maxlength, consumers,
 * consumer-priority).
 */
describe('Queue', () => {
  const DLX = { 'x-dead-letter-exchange': F.str('dlx') };

  describe('TTL at the head (ttl guide)', () => {
    it('expires the head when its x-message-ttl is up, arming one timer for the next head', () => {
      const h = makeQueue({ args: { 'x-message-ttl': F.int32(1000), ...DLX } });
      publish(h, ['a']);
      h.clock.advance(400);
      publish(h, ['b']);
      h.clock.advance(599);
      expect([h.queue.messageCount, h.deadLettered]).to.deep.equal([2, []]);
      h.clock.advance(1);
      expect([h.queue.messageCount, h.deadLettered]).to.deep.equal([1, [['expired', 'a']]]);
      h.clock.advance(399);
      expect(h.queue.messageCount).to.equal(1);
      h.clock.advance(1);
      expect([h.queue.messageCount, h.deadLettered]).to.deep.equal([0, [['expired', 'a'], ['expired', 'b']]]);
      expect(h.clock.pending).to.equal(0);
    });

    it('a head with a longer per-message TTL holds back expired messages behind it until it leaves', () => {
      const h = makeQueue({ args: DLX });
      h.queue.enqueue(message(h.store, 'long', { expiration: '10000' }, 10_000));
      h.queue.enqueue(message(h.store, 'short', { expiration: '100' }, 100));
      h.clock.advance(200);
      expect([h.queue.messageCount, h.deadLettered]).to.deep.equal([2, []]);
      const e = h.queue.take();
      expect(e?.msg.body.toString()).to.equal('long');
      // basic.get-ok's message-count must be exact: what expired behind the head goes now.
      expect([h.queue.messageCount, h.deadLettered]).to.deep.equal([0, [['expired', 'short']]]);
    });

    it('the smaller of x-message-ttl and the expiration property applies', () => {
      const h = makeQueue({ args: { 'x-message-ttl': F.int32(500), ...DLX } });
      h.queue.enqueue(message(h.store, 'per-message 200', { expiration: '200' }, 200));
      h.queue.enqueue(message(h.store, 'per-message 9000', { expiration: '9000' }, 9000));
      h.clock.advance(200);
      expect(h.deadLettered).to.deep.equal([['expired', 'per-message 200']]);
      h.clock.advance(300);
      expect(h.deadLettered).to.deep.equal([['expired', 'per-message 200'], ['expired', 'per-message 9000']]);
    });

    it('a TTL of 0 reaches a consumer that can take it now, and expires at once otherwise', () => {
      const h = makeQueue({ args: { 'x-message-ttl': F.int32(0), ...DLX } });
      publish(h, ['nobody']);
      const ch = new FakeChannel();
      ch.consume(h.queue, { prefetch: 1, tag: 'c' });
      publish(h, ['taken', 'no credit']);
      expect(ch.log).to.deep.equal(['c:taken']);
      expect(h.deadLettered).to.deep.equal([['expired', 'nobody'], ['expired', 'no credit']]);
    });
  });

  describe('requeue', () => {
    it('puts messages back at their original positions, marked redelivered', () => {
      const h = makeQueue();
      publish(h, range(5));
      const [e0, e1, e2] = [get(h.queue), get(h.queue), get(h.queue)];
      h.queue.requeue([e2, e0]);
      expect([h.queue.messageCount, h.queue.unackedCount]).to.deep.equal([4, 1]);
      const order: string[] = [];
      for (let e = h.queue.take(); e; e = h.queue.take()) order.push(`${e.msg.body.toString()}${e.redelivered ? '*' : ''}`);
      expect(order).to.deep.equal(['0*', '2*', '3', '4']);
      expect(e1.redelivered).to.equal(false);
    });

    it('puts back tens of thousands at once in one merge, not an insert (moving the whole list) per message', () => {
      // A consumer that closed with 60,000 unacknowledged messages of a queue of 300,000 held the
      // broker's event loop for 24 s (heartbeats of other connections timed out): each requeued
      // message was spliced into the ready list on its own. Counted here, not timed: the number
      // of splices a requeue makes.
      const h = makeQueue();
      publish(h, range(50_000));
      const delivered = Array.from({ length: 20_000 }, () => get(h.queue));
      const splice = Array.prototype.splice;
      let splices = 0;
      Array.prototype.splice = function (this: unknown[], ...args: Parameters<typeof splice>) {
        splices++;
        return splice.apply(this, args);
      } as typeof splice;
      try {
        h.queue.requeue(delivered.filter((_, i) => i % 2 === 0).reverse());
        h.queue.requeue(delivered.filter((_, i) => i % 2 === 1));
      } finally {
        Array.prototype.splice = splice;
      }
      expect(splices).to.equal(0);
      const all = takeAll(h.queue);
      expect(all.length).to.equal(50_000);
      expect(all.every((b, i) => b === String(i))).to.equal(true);
      expect(delivered.every((e) => e.redelivered)).to.equal(true);
    });

    it('a requeue beyond x-max-length drops from the head, the requeued message first', () => {
      const h = makeQueue({ args: { 'x-max-length': F.int32(2), ...DLX } });
      publish(h, ['0', '1']);
      const e0 = get(h.queue);
      publish(h, ['2']);
      h.queue.requeue([e0]);
      expect(h.deadLettered).to.deep.equal([['maxlen', '0']]);
      expect(takeAll(h.queue)).to.deep.equal(['1', '2']);
    });

    it('a quorum queue with x-delivery-limit serves returns first and dead-letters past the limit', () => {
      const h = makeQueue({ durable: true, args: { 'x-queue-type': F.str('quorum'), 'x-delivery-limit': F.int32(1), ...DLX } });
      publish(h, range(3));
      const [e0, e1] = [get(h.queue), get(h.queue)];
      h.queue.requeue([e1]);
      h.queue.requeue([e0]);
      const again = [get(h.queue), get(h.queue)];
      expect(again.map((e) => `${e.msg.body.toString()}:${e.deliveryCount}`)).to.deep.equal(['1:1', '0:1']);
      h.queue.requeue(again);
      expect(h.deadLettered).to.deep.equal([['delivery_limit', '1'], ['delivery_limit', '0']]);
      expect(takeAll(h.queue)).to.deep.equal(['2']);
    });
  });

  describe('x-overflow (maxlength guide)', () => {
    it('drop-head (default) drops the oldest messages beyond x-max-length, dead-lettered as maxlen', () => {
      const h = makeQueue({ args: { 'x-max-length': F.int32(2), ...DLX } });
      expect(publish(h, range(4))).to.deep.equal(Array(4).fill(EnqueueResult.Transient));
      expect(h.deadLettered).to.deep.equal([['maxlen', '0'], ['maxlen', '1']]);
      expect(takeAll(h.queue)).to.deep.equal(['2', '3']);
    });

    it('drop-head keeps x-max-length-bytes by body size', () => {
      const h = makeQueue({ args: { 'x-max-length-bytes': F.int32(5), ...DLX } });
      publish(h, ['aa', 'bb', 'cc']);
      expect(h.deadLettered).to.deep.equal([['maxlen', 'aa']]);
      expect(takeAll(h.queue)).to.deep.equal(['bb', 'cc']);
    });

    it('reject-publish refuses messages beyond the limit and dead-letters nothing', () => {
      const h = makeQueue({ durable: true, args: { 'x-max-length': F.int32(2), 'x-overflow': F.str('reject-publish'), ...DLX } });
      expect(publish(h, range(3), () => true)).to.deep.equal([EnqueueResult.Durable, EnqueueResult.Durable, EnqueueResult.Rejected]);
      expect(h.deadLettered).to.deep.equal([]);
      expect(h.store.countEntries(h.queue.storeKey).messages).to.equal(2);
      expect(takeAll(h.queue)).to.deep.equal(['0', '1']);
    });

    it('reject-publish-dlx refuses messages beyond the limit and dead-letters them as maxlen', () => {
      const h = makeQueue({ args: { 'x-max-length': F.int32(2), 'x-overflow': F.str('reject-publish-dlx'), ...DLX } });
      expect(publish(h, range(3))).to.deep.equal([EnqueueResult.Transient, EnqueueResult.Transient, EnqueueResult.Rejected]);
      expect(h.deadLettered).to.deep.equal([['maxlen', '2']]);
      expect(takeAll(h.queue)).to.deep.equal(['0', '1']);
    });

    it('only ready messages count: an unacknowledged one leaves room', () => {
      const h = makeQueue({ args: { 'x-max-length': F.int32(1), 'x-overflow': F.str('reject-publish') } });
      publish(h, ['0']);
      get(h.queue);
      expect(publish(h, ['1', '2'])).to.deep.equal([EnqueueResult.Transient, EnqueueResult.Rejected]);
    });
  });

  describe('single active consumer (consumers guide)', () => {
    it('only the first consumer receives; when it goes, the next takes over where it left', () => {
      const h = makeQueue({ args: { 'x-single-active-consumer': F.bool(true) } });
      const ch = new FakeChannel();
      const a = ch.consume(h.queue, { prefetch: 1, tag: 'a' });
      const b = ch.consume(h.queue, { prefetch: 1, tag: 'b' });
      publish(h, range(4));
      expect(ch.log).to.deep.equal(['a:0']);
      expect(h.queue.activeConsumer).to.equal(a);
      ch.ack('0');
      expect(ch.log).to.deep.equal(['a:0', 'a:1']);
      // basic.cancel: "1" stays with a's channel, unacknowledged.
      h.queue.removeConsumer(a);
      expect(h.queue.activeConsumer).to.equal(b);
      expect(ch.log).to.deep.equal(['a:0', 'a:1', 'b:2']);
      ch.ack('2');
      expect(ch.log).to.deep.equal(['a:0', 'a:1', 'b:2', 'b:3']);
    });

    it('an active consumer without credit holds everyone back (no fallback to the next)', () => {
      const h = makeQueue({ args: { 'x-single-active-consumer': F.bool(true) } });
      const ch = new FakeChannel();
      ch.consume(h.queue, { prefetch: 1, tag: 'a' });
      ch.consume(h.queue, { prefetch: 5, tag: 'b', priority: 10 });
      publish(h, range(3));
      expect(ch.log).to.deep.equal(['a:0']);
      expect(h.queue.messageCount).to.equal(2);
    });
  });

  describe('consumer priorities (consumer-priority guide)', () => {
    it('higher x-priority first, round-robin among equals, lower ones once the higher are full', () => {
      const h = makeQueue();
      const ch = new FakeChannel();
      ch.consume(h.queue, { prefetch: 10, tag: 'low', priority: 0 });
      ch.consume(h.queue, { prefetch: 2, tag: 'hi1', priority: 10 });
      ch.consume(h.queue, { prefetch: 2, tag: 'hi2', priority: 10 });
      publish(h, range(6));
      expect(ch.log).to.deep.equal(['hi1:0', 'hi2:1', 'hi1:2', 'hi2:3', 'low:4', 'low:5']);
      // Credit back on a high-priority consumer: the next message is its, though low has room.
      ch.ack('1');
      publish(h, ['6', '7']);
      expect(ch.log.slice(6)).to.deep.equal(['hi2:6', 'low:7']);
    });
  });

  describe('deletion and expiry of the queue', () => {
    it('destroy cancels consumers, drops messages (store included) and reports the count', () => {
      const h = makeQueue({ durable: true, window: 2 });
      publish(h, range(5), () => true);
      const ch = new FakeChannel();
      ch.consume(h.queue, { prefetch: 1, tag: 'c' });
      expect(h.queue.destroy()).to.equal(4);
      expect(ch.cancelled).to.deep.equal(['c']);
      expect(h.store.countEntries(h.queue.storeKey).messages).to.equal(0);
    });

    it('x-expires deletes an unused queue in time; a consumer or a declare renews the lease', () => {
      const h = makeQueue({ args: { 'x-expires': F.int32(1000) } });
      h.clock.advance(900);
      h.queue.touch();
      h.clock.advance(900);
      expect(h.autoDeleted).to.equal(false);
      const c = new FakeChannel().consume(h.queue);
      h.clock.advance(5000);
      expect(h.autoDeleted).to.equal(false);
      h.queue.removeConsumer(c);
      h.clock.advance(999);
      expect(h.autoDeleted).to.equal(false);
      h.clock.advance(1);
      expect(h.autoDeleted).to.equal(true);
    });
  });
});
