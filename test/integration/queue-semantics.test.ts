import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { F } from '../../src/frame/field-table.js';
import type { Method } from '../../src/frame/generated/methods.js';
import { channel, closedWith, confirmChannel, type Channel, type ConfirmChannel } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { drainBodies as drain, useSession } from '../support/session.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/**
 * Queue semantics (issue 4): argument validation, message TTL and per-message expiration,
 * x-expires, length limits and overflow, priorities, quorum-queue declare rules and delivery
 * counts. Time moves only through the injected FakeClock. Every expectation was checked against
 * RabbitMQ 3.10.8.
 */
describe('queue semantics', () => {
  const clock = new FakeClock();
  // heartbeat 0: moving the fake clock must not time out idle test connections.
  const broker = useBroker({ clock, heartbeat: 0 });

  const session = useSession(broker);
  const { uniq, openRaw } = session;

  /** A fanout dead-letter exchange with one queue behind it; returns both names. */
  async function deadLetterSink(ch: Channel): Promise<{ dlx: string; dlq: string }> {
    const dlx = uniq('dlx');
    await ch.assertExchange(dlx, 'fanout', { durable: false, autoDelete: true });
    const dlq = (await ch.assertQueue('', { exclusive: true })).queue;
    await ch.bindQueue(dlq, dlx, '');
    return { dlx, dlq };
  }

  /** Resolves with the channel.close a publish provokes, or 'no close' if a round trip after it succeeds. */
  async function publishRefused(ch: Channel, queue: string, options: object) {
    const closed = new Promise<{ code: number; text: string; classId: number; methodId: number }>((resolve) =>
      ch.once('error', (e: Error & { code: number; classId: number; methodId: number }) => {
        const m = /with message "(.*)"$/.exec(e.message);
        resolve({ code: e.code, text: m ? (m[1] as string) : e.message, classId: e.classId, methodId: e.methodId });
      }),
    );
    ch.publish('', queue, Buffer.from('x'), options);
    return Promise.race([closed, ch.checkExchange('amq.direct').then(() => 'no close' as const, () => closed)]);
  }

  describe('queue.declare argument validation (RabbitMQ queues guide; rabbit_amqqueue:check_declare_arguments)', () => {
    const invalid: Array<[string, unknown, string]> = [
      ['x-message-ttl', -1, '{value_negative,-1}'],
      ['x-message-ttl', 'abc', '"expected integer, got longstr"'],
      ['x-message-ttl', 1.5, '"expected integer, got double"'],
      ['x-message-ttl', true, '"expected integer, got bool"'],
      ['x-message-ttl', null, '"expected integer, got void"'],
      ['x-expires', 0, '{value_zero,0}'],
      ['x-expires', -5, '{value_negative,-5}'],
      ['x-expires', 'x', '"expected integer, got longstr"'],
      ['x-max-length', -1, '{value_negative,-1}'],
      ['x-max-length', 'x', '"expected integer, got longstr"'],
      ['x-max-length', 1.5, '"expected integer, got double"'],
      ['x-max-length-bytes', -2, '{value_negative,-2}'],
      ['x-max-length-bytes', 'a', '"expected integer, got longstr"'],
      ['x-max-priority', 256, '{max_value_exceeded,256}'],
      ['x-max-priority', -1, '{value_negative,-1}'],
      ['x-max-priority', 'a', '"expected integer, got longstr"'],
      ['x-overflow', 'foo', 'invalid_overflow'],
      ['x-overflow', 1, '{unacceptable_type,byte}'],
      ['x-queue-mode', 'x', '"unsupported queue mode \'x\'"'],
      ['x-queue-mode', 5, '{unacceptable_type,byte}'],
      ['x-queue-type', 'foo', '"unsupported queue type \'foo\'"'],
      ['x-queue-type', 5, '{unacceptable_type,byte}'],
      ['x-single-active-consumer', 'yes', '{unacceptable_type,longstr}'],
      ['x-single-active-consumer', 1, '{unacceptable_type,byte}'],
    ];
    for (const [arg, value, term] of invalid) {
      it(`${arg} = ${JSON.stringify(value)} is 406 "invalid arg '${arg}' … ${term}"`, async () => {
        const ch = await channel(session.conn);
        const q = uniq('argq');
        const err = await closedWith(ch.assertQueue(q, { exclusive: true, arguments: { [arg]: value } }));
        expect(err).to.deep.equal({ code: 406, text: `PRECONDITION_FAILED - invalid arg '${arg}' for queue '${q}' in vhost '/': ${term}`, classId: 50, methodId: 10 });
      });
    }

    it('x-dead-letter-routing-key without x-dead-letter-exchange is 406 routing_key_but_no_dlx_defined', async () => {
      const ch = await channel(session.conn);
      const err = await closedWith(ch.assertQueue('dlrk-only', { exclusive: true, arguments: { 'x-dead-letter-routing-key': 'k' } }));
      expect(err.text).to.equal("PRECONDITION_FAILED - invalid arg 'x-dead-letter-routing-key' for queue 'dlrk-only' in vhost '/': routing_key_but_no_dlx_defined");
    });

    it('a non-string x-dead-letter-exchange is 406 with RabbitMQ\'s "invalid type" wording', async () => {
      const ch = await channel(session.conn);
      const err = await closedWith(ch.assertQueue('dlx-type', { exclusive: true, arguments: { 'x-dead-letter-exchange': 5 } }));
      expect(err.text).to.equal("PRECONDITION_FAILED - invalid type 'byte' for arg 'x-dead-letter-exchange' in queue 'dlx-type' in vhost '/'");
    });

    it('x-delivery-limit and x-max-in-memory-length are refused on a classic queue (406 "of queue type rabbit_classic_queue")', async () => {
      const got = [];
      const expected = [];
      for (const arg of ['x-delivery-limit', 'x-max-in-memory-length']) {
        const ch = await channel(session.conn);
        const q = uniq('classic-only');
        got.push(await closedWith(ch.assertQueue(q, { exclusive: true, arguments: { [arg]: 5 } })).then((e) => e.text, (e: Error) => e.message));
        expected.push(`PRECONDITION_FAILED - invalid arg '${arg}' for queue '${q}' in vhost '/' of queue type rabbit_classic_queue`);
      }
      expect(got).to.deep.equal(expected);
    });

    it('accepts boundary and unknown arguments: TTL/expires above 2^32-1, x-max-priority 0, x-unknown', async () => {
      const ch = await channel(session.conn);
      for (const args of [{ 'x-message-ttl': 4294967296 }, { 'x-expires': 4294967296 }, { 'x-expires': 4294967295 }, { 'x-max-priority': 0 }, { 'x-unknown': 1 }, { 'x-overflow': 'drop-head' }]) {
        const q = uniq('ok-args');
        await ch.assertQueue(q, { exclusive: true, arguments: args });
        await ch.deleteQueue(q);
      }
    });

    it('redeclaring with a changed, added or omitted x-argument is 406 inequivalent arg', async () => {
      const cases: Array<[object, object, (q: string) => string]> = [
        [{ 'x-message-ttl': 100 }, { 'x-message-ttl': 200 }, (q) => `inequivalent arg 'x-message-ttl' for queue '${q}' in vhost '/': received '200' but current is '100'`],
        [{}, { 'x-message-ttl': 200 }, (q) => `inequivalent arg 'x-message-ttl' for queue '${q}' in vhost '/': received the value '200' of type 'short' but current is none`],
        [{ 'x-max-length': 100 }, {}, (q) => `inequivalent arg 'x-max-length' for queue '${q}' in vhost '/': received none but current is the value '100' of type 'byte'`],
        [{ 'x-dead-letter-exchange': 'a' }, { 'x-dead-letter-exchange': 'b' }, (q) => `inequivalent arg 'x-dead-letter-exchange' for queue '${q}' in vhost '/': received 'b' but current is 'a'`],
        [{ 'x-max-length': 100 }, { 'x-max-length': '100' }, (q) => `inequivalent arg 'x-max-length' for queue '${q}' in vhost '/': received '100' but current is '100'`],
      ];
      for (const [first, second, text] of cases) {
        const ch = await channel(session.conn);
        const q = uniq('equiv');
        await ch.assertQueue(q, { exclusive: true, arguments: first });
        const err = await closedWith(ch.assertQueue(q, { exclusive: true, arguments: second }));
        expect(err.code).to.equal(406);
        expect(err.text).to.equal(`PRECONDITION_FAILED - ${text(q)}`);
      }
    });

    it("x-queue-type 'classic' matches a queue declared without x-queue-type; 'quorum' does not", async () => {
      let ch = await channel(session.conn);
      const q = uniq('qtype');
      await ch.assertQueue(q, { durable: true });
      await ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'classic' } });
      const err = await closedWith(ch.assertQueue(q, { durable: true, arguments: { 'x-queue-type': 'quorum' } }));
      expect(err.text).to.equal(`PRECONDITION_FAILED - inequivalent arg 'x-queue-type' for queue '${q}' in vhost '/': received the value 'quorum' of type 'longstr' but current is none`);
      ch = await channel(session.conn);
      await ch.deleteQueue(q);
    });
  });

  describe('message TTL (RabbitMQ ttl guide)', () => {
    it('x-message-ttl expires a message after exactly the TTL and dead-letters it (reason expired)', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('ttl');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-message-ttl': 1000, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('a'));
      await ch.checkQueue(q);
      clock.advance(999);
      expect((await ch.checkQueue(q)).messageCount).to.equal(1);
      clock.advance(1);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
      const dead = await ch.get(dlq, { noAck: true });
      expect(dead && dead.content.toString()).to.equal('a');
      expect(dead && (dead.properties.headers?.['x-death'] as unknown as Array<Record<string, unknown>>)[0]).to.include({ reason: 'expired', queue: q });
    });

    it('per-message expiration expires a message; the lower of message and queue TTL applies', async () => {
      const ch = await channel(session.conn);
      const q = uniq('ttl-min');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-message-ttl': 500 } });
      ch.sendToQueue(q, Buffer.from('short'), { expiration: '100' });
      ch.sendToQueue(q, Buffer.from('long'), { expiration: '5000' });
      ch.sendToQueue(q, Buffer.from('queue-ttl'));
      await ch.checkQueue(q);
      clock.advance(100);
      expect((await ch.checkQueue(q)).messageCount).to.equal(2);
      clock.advance(399);
      expect((await ch.checkQueue(q)).messageCount).to.equal(2);
      clock.advance(1);
      expect(await drain(ch, q)).to.deep.equal([]);
    });

    it('a delivered message keeps its expiration property', async () => {
      const ch = await channel(session.conn);
      const q = uniq('ttl-prop');
      await ch.assertQueue(q, { exclusive: true });
      ch.sendToQueue(q, Buffer.from('m'), { expiration: '60000' });
      const m = await ch.get(q, { noAck: true });
      expect(m && m.properties.expiration).to.equal('60000');
    });

    it('expiration "0" is delivered to a consumer that can take it at once, with the property kept', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('exp0-consumer');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      const got = new Promise<[string, string | undefined]>((resolve) =>
        ch.consume(q, (m) => { if (m) resolve([m.content.toString(), m.properties.expiration]); }, { noAck: true }),
      );
      await ch.checkQueue(q);
      ch.sendToQueue(q, Buffer.from('zero'), { expiration: '0' });
      const seen = await Promise.race([got, ch.checkQueue(q).then(() => ch.checkQueue(q)).then(() => 'not delivered' as const)]);
      expect(seen).to.deep.equal(['zero', '0']);
      expect(await drain(ch, dlq)).to.deep.equal([]);
    });

    it('expiration "0" with no consumer able to take it expires at once (dead-lettered), leaving later messages', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('exp0');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('zero'), { expiration: '0' });
      ch.sendToQueue(q, Buffer.from('keep'));
      expect(await drain(ch, q)).to.deep.equal(['keep']);
      expect(await drain(ch, dlq)).to.deep.equal(['zero']);
    });

    it('expiration "0" expires when the only consumer is at its prefetch limit', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('exp0-full');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      await ch.prefetch(1);
      const first = new Promise<string>((resolve) => ch.consume(q, (m) => { if (m) resolve(m.content.toString()); }));
      ch.sendToQueue(q, Buffer.from('first'));
      expect(await first).to.equal('first');
      ch.sendToQueue(q, Buffer.from('zero'), { expiration: '0' });
      await ch.checkQueue(q);
      expect(await drain(ch, dlq)).to.deep.equal(['zero']);
    });

    it('x-message-ttl 0 expires a message at once when nobody is consuming', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('qttl0');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-message-ttl': 0, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('gone'));
      expect(await drain(ch, q)).to.deep.equal([]);
      expect(await drain(ch, dlq)).to.deep.equal(['gone']);
    });

    const badExpirations: Array<[string, string]> = [
      ['abc', 'no_integer'],
      ['', 'no_integer'],
      [' 10', 'no_integer'],
      ['-1', '{value_negative,-1}'],
      ['1.5', '{leftover_string,".5"}'],
      ['10 ', '{leftover_string," "}'],
      ['1e3', '{leftover_string,"e3"}'],
      ['0x10', '{leftover_string,"x10"}'],
    ];
    for (const [expiration, term] of badExpirations) {
      it(`an invalid expiration ${JSON.stringify(expiration)} closes the channel with 406 "invalid expiration …: ${term}" (rabbit_basic:parse_expiration)`, async () => {
        const ch = await channel(session.conn);
        const q = (await ch.assertQueue('', { exclusive: true })).queue;
        expect(await publishRefused(ch, q, { expiration })).to.deep.equal({
          code: 406, text: `PRECONDITION_FAILED - invalid expiration '${expiration}': ${term}`, classId: 60, methodId: 40,
        });
      });
    }

    it('accepts expirations "+5", "00" and values above 2^32-1', async () => {
      const ch = await channel(session.conn);
      const q = (await ch.assertQueue('', { exclusive: true })).queue;
      ch.sendToQueue(q, Buffer.from('big'), { expiration: '4294967296' });
      ch.sendToQueue(q, Buffer.from('max'), { expiration: '4294967295' });
      ch.sendToQueue(q, Buffer.from('plus'), { expiration: '+5' });
      expect(await drain(ch, q)).to.deep.equal(['big', 'max', 'plus']);
      ch.sendToQueue(q, Buffer.from('zero-zero'), { expiration: '00' });
      expect(await drain(ch, q)).to.deep.equal([]);
    });

    it('expiry happens at the head only: a long-TTL head holds back later expired messages', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('head-only');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('long'), { expiration: '400' });
      ch.sendToQueue(q, Buffer.from('short'), { expiration: '20' });
      ch.sendToQueue(q, Buffer.from('none'));
      await ch.checkQueue(q);
      clock.advance(100);
      expect((await ch.checkQueue(q)).messageCount).to.equal(3);
      expect(await drain(ch, dlq)).to.deep.equal([]);
      clock.advance(300);
      expect((await ch.checkQueue(q)).messageCount).to.equal(1);
      expect(await drain(ch, dlq)).to.deep.equal(['long', 'short']);
      expect(await drain(ch, q)).to.deep.equal(['none']);
    });

    it('fetching the head drops expired messages behind it: get-ok message-count excludes them', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('head-get');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('long'), { expiration: '10000' });
      ch.sendToQueue(q, Buffer.from('short'), { expiration: '20' });
      ch.sendToQueue(q, Buffer.from('none'));
      await ch.checkQueue(q);
      clock.advance(100);
      const m = await ch.get(q, { noAck: true });
      expect(m && [m.content.toString(), m.fields.messageCount]).to.deep.equal(['long', 1]);
      const m2 = await ch.get(q, { noAck: true });
      expect(m2 && [m2.content.toString(), m2.fields.messageCount]).to.deep.equal(['none', 0]);
      expect(await drain(ch, dlq)).to.deep.equal(['short']);
    });

    it('a message whose TTL ran out while it was unacknowledged expires when it is requeued', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('requeue-expired');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-message-ttl': 80, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('m'));
      const m = await ch.get(q);
      if (!m) throw new Error('expected a message');
      clock.advance(150);
      ch.nack(m, false, true);
      expect(await drain(ch, q)).to.deep.equal([]);
      expect(await drain(ch, dlq)).to.deep.equal(['m']);
    });
  });

  describe('queue expiry x-expires (RabbitMQ ttl guide: queue TTL)', () => {
    /** Whether the default exchange still routes to queue: a mandatory publish comes back when it does not. */
    async function routes(ch: ConfirmChannel, queue: string): Promise<boolean> {
      let returned = false;
      const onReturn = () => { returned = true; };
      ch.on('return', onReturn);
      ch.publish('', queue, Buffer.from('probe'), { mandatory: true });
      await ch.waitForConfirms();
      ch.off('return', onReturn);
      return !returned;
    }

    it('deletes an unused queue after x-expires, not before', async () => {
      const ch = await confirmChannel(session.conn);
      const q = uniq('expires');
      await ch.assertQueue(q, { arguments: { 'x-expires': 1000 } });
      clock.advance(999);
      expect(await routes(ch, q)).to.equal(true);
      clock.advance(1);
      expect(await routes(ch, q)).to.equal(false);
      expect((await closedWith(ch.checkQueue(q))).text).to.equal(`NOT_FOUND - no queue '${q}' in vhost '/'`);
    });

    it('a consumer keeps the queue alive; the period restarts when the last consumer goes', async () => {
      const ch = await confirmChannel(session.conn);
      const q = uniq('expires-consumer');
      await ch.assertQueue(q, { arguments: { 'x-expires': 1000 } });
      const { consumerTag } = await ch.consume(q, () => {});
      clock.advance(5000);
      expect(await routes(ch, q)).to.equal(true);
      await ch.cancel(consumerTag);
      clock.advance(999);
      expect(await routes(ch, q)).to.equal(true);
      clock.advance(1);
      expect(await routes(ch, q)).to.equal(false);
    });

    it('a redeclare (even passive) or a basic.get restarts the period', async () => {
      const ch = await confirmChannel(session.conn);
      const q = uniq('expires-reset');
      await ch.assertQueue(q, { arguments: { 'x-expires': 1000 } });
      clock.advance(600);
      await ch.checkQueue(q);
      clock.advance(600);
      expect(await routes(ch, q)).to.equal(true);
      await ch.get(q, { noAck: true });
      clock.advance(999);
      expect(await routes(ch, q)).to.equal(true);
      clock.advance(1);
      expect(await routes(ch, q)).to.equal(false);
    });

    it('the messages of an expired queue are dropped, not dead-lettered', async () => {
      const ch = await channel(session.conn);
      const { dlx, dlq } = await deadLetterSink(ch);
      const q = uniq('expires-dl');
      await ch.assertQueue(q, { arguments: { 'x-expires': 100, 'x-dead-letter-exchange': dlx } });
      ch.sendToQueue(q, Buffer.from('m'));
      await ch.checkQueue(q);
      clock.advance(100);
      expect((await closedWith(ch.checkQueue(q))).code).to.equal(404);
      const ch2 = await channel(session.conn);
      expect(await drain(ch2, dlq)).to.deep.equal([]);
    });
  });

  describe('length limits and overflow (RabbitMQ maxlength guide)', () => {
    it('drop-head (default) drops the oldest ready messages beyond x-max-length', async () => {
      const ch = await channel(session.conn);
      const q = uniq('maxlen');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 2 } });
      for (const b of ['1', '2', '3', '4']) ch.sendToQueue(q, Buffer.from(b));
      expect(await drain(ch, q)).to.deep.equal(['3', '4']);
    });

    it('x-max-length 0 keeps nothing', async () => {
      const ch = await channel(session.conn);
      const q = uniq('maxlen0');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 0 } });
      ch.sendToQueue(q, Buffer.from('a'));
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
    });

    it('x-max-length-bytes counts body bytes; a message larger than the limit drops itself', async () => {
      const ch = await channel(session.conn);
      const q = uniq('maxbytes');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length-bytes': 10 } });
      for (const b of ['aaaa', 'bbbb', 'cccc']) ch.sendToQueue(q, Buffer.from(b));
      expect((await ch.checkQueue(q)).messageCount).to.equal(2);
      ch.sendToQueue(q, Buffer.from('dddddddddddd'));
      expect(await drain(ch, q)).to.deep.equal([]);
    });

    it('only ready messages count, and a requeue beyond the limit drops from the head', async () => {
      const ch = await channel(session.conn);
      const q = uniq('maxlen-unacked');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 1 } });
      ch.sendToQueue(q, Buffer.from('a'));
      const a = await ch.get(q);
      if (!a) throw new Error('expected a');
      ch.sendToQueue(q, Buffer.from('b'));
      ch.sendToQueue(q, Buffer.from('c'));
      await ch.checkQueue(q);
      ch.nack(a, false, true);
      expect(await drain(ch, q)).to.deep.equal(['c']);
    });

    it('reject-publish nacks the publishes that do not fit (confirm mode) and keeps the queue as it was', async () => {
      const ch = await confirmChannel(session.conn);
      const q = uniq('reject-publish');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 2, 'x-overflow': 'reject-publish' } });
      const outcome: Record<string, string> = {};
      const returned: string[] = [];
      ch.on('return', (m) => returned.push(m.content.toString()));
      await Promise.all(['a', 'b', 'c', 'd'].map((b) => new Promise<void>((resolve) =>
        ch.publish('', q, Buffer.from(b), { mandatory: true }, (err) => { outcome[b] = err ? 'nack' : 'ack'; resolve(); }))));
      expect(outcome).to.deep.equal({ a: 'ack', b: 'ack', c: 'nack', d: 'nack' });
      expect(returned).to.deep.equal([]);
      const m = await ch.get(q);
      if (!m) throw new Error('expected a');
      ch.ack(m);
      await new Promise<void>((resolve, reject) => ch.publish('', q, Buffer.from('e'), {}, (err) => (err ? reject(err) : resolve())));
      expect(await drain(ch, q)).to.deep.equal(['b', 'e']);
    });

    it('reject-publish nacks with one basic.nack per refused message (raw frames: non-multiple, requeue bit set as RabbitMQ sends it)', async () => {
      const c = await openRaw();
      await c.openChannel(1);
      const q = uniq('reject-raw');
      c.method(1, 'queue.declare', { reserved1: 0, queue: q, passive: false, durable: false, exclusive: true, autoDelete: false, noWait: false, arguments: { 'x-max-length': F.int64(2), 'x-overflow': F.str('reject-publish') } });
      await c.expect('queue.declare-ok');
      c.method(1, 'confirm.select', { nowait: false });
      await c.expect('confirm.select-ok');
      for (const b of ['a', 'b', 'c', 'd']) c.publish(1, '', q, Buffer.from(b));
      c.method(1, 'queue.declare', { reserved1: 0, queue: q, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
      await c.expect('queue.declare-ok');
      const confirms = () => c.frames.map((f) => f.method).filter((m): m is Method => m?.name === 'basic.ack' || m?.name === 'basic.nack');
      await c.waitFor(() => {
        const acked = confirms().filter((m) => m.name === 'basic.ack').reduce((max, m) => Math.max(max, Number((m.args as { deliveryTag: number }).deliveryTag)), 0);
        return acked >= 2 && confirms().filter((m) => m.name === 'basic.nack').length === 2;
      }, 'acks for 1-2 and nacks for 3-4');
      const nacks = confirms().filter((m) => m.name === 'basic.nack').map((m) => m.args);
      expect(nacks).to.deep.equal([{ deliveryTag: 3, multiple: false, requeue: true }, { deliveryTag: 4, multiple: false, requeue: true }]);
      c.destroy();
    });

    it('reject-publish without confirms drops the new message silently', async () => {
      const ch = await channel(session.conn);
      const q = uniq('reject-silent');
      await ch.assertQueue(q, { exclusive: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } });
      ch.sendToQueue(q, Buffer.from('a'));
      ch.sendToQueue(q, Buffer.from('b'));
      expect(await drain(ch, q)).to.deep.equal(['a']);
    });

    it('a message refused by one of several queues is nacked but still delivered to the others', async () => {
      const ch = await confirmChannel(session.conn);
      const x = uniq('fan-reject');
      await ch.assertExchange(x, 'fanout', { durable: false, autoDelete: true });
      const full = (await ch.assertQueue('', { exclusive: true, arguments: { 'x-max-length': 1, 'x-overflow': 'reject-publish' } })).queue;
      const open = (await ch.assertQueue('', { exclusive: true })).queue;
      await ch.bindQueue(full, x, '');
      await ch.bindQueue(open, x, '');
      const outcome: string[] = [];
      for (const b of ['a', 'b']) {
        await new Promise<void>((resolve) => ch.publish(x, '', Buffer.from(b), {}, (err) => { outcome.push(`${b} ${err ? 'nack' : 'ack'}`); resolve(); }));
      }
      expect(outcome).to.deep.equal(['a ack', 'b nack']);
      expect(await drain(ch, full)).to.deep.equal(['a']);
      expect(await drain(ch, open)).to.deep.equal(['a', 'b']);
    });
  });

  describe('priority queues (RabbitMQ priority guide)', () => {
    it('delivers higher priorities first, FIFO within a priority; above x-max-priority counts as the max, none as 0', async () => {
      const ch = await channel(session.conn);
      const q = (await ch.assertQueue('', { exclusive: true, arguments: { 'x-max-priority': 5 } })).queue;
      const sent: Array<[string, number | undefined]> = [['a', 1], ['b', 5], ['c', undefined], ['d', 9], ['e', 5], ['f', 0], ['g', 3], ['h', 1]];
      for (const [body, priority] of sent) ch.sendToQueue(q, Buffer.from(body), priority === undefined ? {} : { priority });
      const out: Array<[string, number | undefined]> = [];
      for (;;) {
        const m = await ch.get(q, { noAck: true });
        if (!m) break;
        out.push([m.content.toString(), m.properties.priority]);
      }
      expect(out).to.deep.equal([['b', 5], ['d', 9], ['e', 5], ['g', 3], ['a', 1], ['h', 1], ['c', undefined], ['f', 0]]);
    });

    it('a requeued message keeps its place within its priority', async () => {
      const ch = await channel(session.conn);
      const q = (await ch.assertQueue('', { exclusive: true, arguments: { 'x-max-priority': 5 } })).queue;
      ch.sendToQueue(q, Buffer.from('lo1'), { priority: 1 });
      ch.sendToQueue(q, Buffer.from('hi1'), { priority: 4 });
      ch.sendToQueue(q, Buffer.from('hi2'), { priority: 4 });
      const hi1 = await ch.get(q);
      if (!hi1) throw new Error('expected hi1');
      ch.sendToQueue(q, Buffer.from('hi3'), { priority: 4 });
      await ch.checkQueue(q);
      ch.nack(hi1, false, true);
      const out: Array<[string, boolean]> = [];
      for (;;) {
        const m = await ch.get(q, { noAck: true });
        if (!m) break;
        out.push([m.content.toString(), m.fields.redelivered]);
      }
      expect(out).to.deep.equal([['hi1', true], ['hi2', false], ['hi3', false], ['lo1', false]]);
    });
  });

  describe('quorum queues (RabbitMQ quorum-queues guide)', () => {
    const quorum = { 'x-queue-type': 'quorum' };

    it('must be durable, not exclusive, not auto-delete, and named by the client (406 with RabbitMQ wording)', async () => {
      const cases: Array<[string, object, (q: string) => string]> = [
        [uniq('qq-nondurable'), { durable: false }, (q) => `invalid property 'non-durable' for queue '${q}' in vhost '/'`],
        [uniq('qq-exclusive'), { durable: true, exclusive: true }, (q) => `invalid property 'exclusive-owner' for queue '${q}' in vhost '/'`],
        [uniq('qq-autodelete'), { durable: true, autoDelete: true }, (q) => `invalid property 'auto-delete' for queue '${q}' in vhost '/'`],
        ['', { durable: true }, () => 'Cannot declare a server-named queue for type rabbit_quorum_queue'],
      ];
      const got = [];
      const expected = [];
      for (const [q, opts, text] of cases) {
        const ch = await channel(session.conn);
        got.push(await closedWith(ch.assertQueue(q, { ...opts, arguments: quorum })).catch((e: Error) => e.message));
        expected.push({ code: 406, text: `PRECONDITION_FAILED - ${text(q)}`, classId: 50, methodId: 10 });
      }
      expect(got).to.deep.equal(expected);
    });

    it('refuses classic-only arguments x-max-priority and x-queue-mode (406 "of queue type rabbit_quorum_queue")', async () => {
      const got = [];
      const expected = [];
      for (const [arg, value] of [['x-max-priority', 5], ['x-queue-mode', 'lazy']] as const) {
        const ch = await channel(session.conn);
        const q = uniq('qq-classic-arg');
        got.push(await closedWith(ch.assertQueue(q, { durable: true, arguments: { ...quorum, [arg]: value } })).then((e) => e.text, (e: Error) => e.message));
        expected.push(`PRECONDITION_FAILED - invalid arg '${arg}' for queue '${q}' in vhost '/' of queue type rabbit_quorum_queue`);
        await (await channel(session.conn)).deleteQueue(q);
      }
      expect(got).to.deep.equal(expected);
    });

    it('declares with durable=true and reports counts; accepts x-message-ttl and reject-publish-dlx', async () => {
      const ch = await channel(session.conn);
      const q = uniq('qq-ok');
      expect(await ch.assertQueue(q, { durable: true, arguments: quorum })).to.deep.equal({ queue: q, messageCount: 0, consumerCount: 0 });
      const q2 = uniq('qq-ok-args');
      await ch.assertQueue(q2, { durable: true, arguments: { ...quorum, 'x-message-ttl': 1000, 'x-overflow': 'reject-publish-dlx' } });
      await ch.deleteQueue(q);
      await ch.deleteQueue(q2);
    });

    it('a consumer redelivery carries x-delivery-count (absent on the first delivery); messages past x-delivery-limit are dropped', async () => {
      const ch = await channel(session.conn);
      const q = uniq('qq-count');
      await ch.assertQueue(q, { durable: true, arguments: { ...quorum, 'x-delivery-limit': 1 } });
      ch.sendToQueue(q, Buffer.from('a'));
      ch.sendToQueue(q, Buffer.from('b'));
      await ch.prefetch(1);
      const seen: Array<[string, boolean, unknown]> = [];
      const done = new Promise<void>((resolve) =>
        ch.consume(q, (m) => {
          if (!m) return;
          seen.push([m.content.toString(), m.fields.redelivered, m.properties.headers]);
          if (seen.length <= 3) ch.nack(m, false, true);
          else { ch.ack(m); resolve(); }
        }),
      );
      await done;
      expect(seen).to.deep.equal([
        ['a', false, {}],
        ['a', true, { 'x-delivery-count': 1 }],
        ['b', false, {}],
        ['b', true, { 'x-delivery-count': 1 }],
      ]);
      expect((await ch.checkQueue(q)).messageCount).to.equal(0);
      await ch.deleteQueue(q);
    });

    it('without x-delivery-limit a requeued message goes to the back of a quorum queue (3.10)', async () => {
      const ch = await channel(session.conn);
      const q = uniq('qq-requeue-back');
      await ch.assertQueue(q, { durable: true, arguments: quorum });
      for (const b of ['a', 'b', 'c']) ch.sendToQueue(q, Buffer.from(b));
      const a = await ch.get(q);
      const b = await ch.get(q);
      if (!a || !b) throw new Error('expected messages');
      ch.nack(b, false, true);
      ch.nack(a, false, true);
      const out: Array<[string, boolean]> = [];
      for (;;) {
        const m = await ch.get(q, { noAck: true });
        if (!m) break;
        out.push([m.content.toString(), m.fields.redelivered]);
      }
      expect(out).to.deep.equal([['c', false], ['b', true], ['a', true]]);
      await ch.deleteQueue(q);
    });

    it('with x-delivery-limit requeued messages are redelivered first, in the order they were returned (3.10)', async () => {
      const ch = await channel(session.conn);
      const q = uniq('qq-requeue-front');
      await ch.assertQueue(q, { durable: true, arguments: { ...quorum, 'x-delivery-limit': 5 } });
      for (const b of ['a', 'b', 'c']) ch.sendToQueue(q, Buffer.from(b));
      const a = await ch.get(q);
      const b = await ch.get(q);
      if (!a || !b) throw new Error('expected messages');
      ch.nack(b, false, true);
      ch.nack(a, false, true);
      const out: Array<[string, boolean, unknown]> = [];
      for (;;) {
        const m = await ch.get(q, { noAck: true });
        if (!m) break;
        out.push([m.content.toString(), m.fields.redelivered, m.properties.headers]);
      }
      expect(out).to.deep.equal([['b', true, { 'x-delivery-count': 1 }], ['a', true, { 'x-delivery-count': 1 }], ['c', false, { 'x-delivery-count': 0 }]]);
      await ch.deleteQueue(q);
    });

    it('basic.get from a quorum queue carries x-delivery-count from the first delivery (0, 1, …)', async () => {
      const ch = await channel(session.conn);
      const q = uniq('qq-get-count');
      await ch.assertQueue(q, { durable: true, arguments: quorum });
      ch.sendToQueue(q, Buffer.from('p'), { headers: { a: 1 } });
      const counts: unknown[] = [];
      for (let i = 0; i < 3; i++) {
        const m = await ch.get(q);
        if (!m) throw new Error('expected the message');
        counts.push(m.properties.headers);
        ch.nack(m, false, true);
      }
      expect(counts).to.deep.equal([{ a: 1, 'x-delivery-count': 0 }, { a: 1, 'x-delivery-count': 1 }, { a: 1, 'x-delivery-count': 2 }]);
      await ch.deleteQueue(q);
    });
  });
});

describe('transactions tx.* (spec 1.9; RabbitMQ semantics guide)', () => {
  const broker = useBroker();

  /** Raw peers opened by a test; destroyed after it even when an assertion fails. */
  const raws: RawClient[] = [];
  async function openRaw(): Promise<RawClient> {
    const c = await RawClient.open(broker.url);
    raws.push(c);
    return c;
  }
  afterEach(() => {
    for (const c of raws.splice(0)) c.destroy();
  });

  function declare(c: RawClient, queue: string, passive = false): void {
    c.method(1, 'queue.declare', { reserved1: 0, queue, passive, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  }

  /** The methods received after index `from`, closes shown with their arguments. */
  function methodsSince(c: RawClient, from: number): unknown[] {
    return c.frames.slice(from).filter((f) => f.type === 1).map((f) => (f.method!.name.endsWith('.close') ? { [f.method!.name]: f.method!.args } : f.method!.name));
  }

  it('publishes become visible only at tx.commit; tx.rollback discards them', async () => {
    const c = await openRaw();
    await c.openChannel(1);
    await c.openChannel(2);
    const q = 'tx-publish-q';
    declare(c, q);
    await c.expect('queue.declare-ok');
    c.method(1, 'tx.select', {});
    await c.expect('tx.select-ok');
    c.publish(1, '', q, Buffer.from('a'));
    c.method(2, 'queue.declare', { reserved1: 0, queue: q, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    expect((await c.expect('queue.declare-ok')).messageCount).to.equal(0);
    c.method(1, 'tx.rollback', {});
    await c.expect('tx.rollback-ok');
    c.publish(1, '', q, Buffer.from('b'));
    c.method(1, 'tx.commit', {});
    await c.expect('tx.commit-ok');
    c.method(2, 'queue.declare', { reserved1: 0, queue: q, passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    expect((await c.expect('queue.declare-ok')).messageCount).to.equal(1);
    c.method(1, 'queue.delete', { reserved1: 0, queue: q, ifUnused: false, ifEmpty: false, noWait: false });
    await c.expect('queue.delete-ok');
    c.destroy();
  });

  it('an ack inside a transaction that is rolled back leaves the message unacknowledged', async () => {
    const c = await openRaw();
    await c.openChannel(1);
    const q = 'tx-ack-q';
    declare(c, q);
    await c.expect('queue.declare-ok');
    c.publish(1, '', q, Buffer.from('m'));
    c.method(1, 'tx.select', {});
    await c.expect('tx.select-ok');
    c.method(1, 'basic.get', { reserved1: 0, queue: q, noAck: false });
    const got = await c.expect('basic.get-ok');
    c.method(1, 'basic.ack', { deliveryTag: got.deliveryTag, multiple: false });
    c.method(1, 'tx.rollback', {});
    await c.expect('tx.rollback-ok');
    c.method(1, 'basic.recover', { requeue: true });
    await c.expect('basic.recover-ok');
    declare(c, q, true);
    expect((await c.expect('queue.declare-ok')).messageCount).to.equal(1);
    c.method(1, 'queue.delete', { reserved1: 0, queue: q, ifUnused: false, ifEmpty: false, noWait: false });
    await c.expect('queue.delete-ok');
    c.destroy();
  });

  it('tx.commit / tx.rollback on a non-transactional channel is 406 "channel is not transactional"', async () => {
    for (const [method, methodId] of [['tx.commit', 20], ['tx.rollback', 30]] as const) {
      const c = await openRaw();
      await c.openChannel(1);
      c.method(1, method, {});
      const close = await c.expect('channel.close');
      expect(close).to.deep.equal({ replyCode: 406, replyText: 'PRECONDITION_FAILED - channel is not transactional', classId: 90, methodId });
      c.destroy();
    }
  });

  it('a channel cannot switch between tx and confirm mode (406)', async () => {
    let c = await openRaw();
    await c.openChannel(1);
    let from = c.frames.length;
    c.method(1, 'tx.select', {});
    c.method(1, 'confirm.select', { nowait: false });
    await c.expect('channel.close');
    expect(methodsSince(c, from)).to.deep.equal([
      'tx.select-ok',
      { 'channel.close': { replyCode: 406, replyText: 'PRECONDITION_FAILED - cannot switch from tx to confirm mode', classId: 85, methodId: 10 } },
    ]);
    c.destroy();
    c = await openRaw();
    await c.openChannel(1);
    from = c.frames.length;
    c.method(1, 'confirm.select', { nowait: false });
    c.method(1, 'tx.select', {});
    await c.expect('channel.close');
    expect(methodsSince(c, from)).to.deep.equal([
      'confirm.select-ok',
      { 'channel.close': { replyCode: 406, replyText: 'PRECONDITION_FAILED - cannot switch from confirm to tx mode', classId: 90, methodId: 10 } },
    ]);
    c.destroy();
  });
});
