import { expect } from 'chai';
import type { Channel, ConsumeMessage } from '../support/amqp.js';
import { channel, connect } from '../support/amqp.js';
import { collect, useBroker } from '../support/broker.js';

/**
 * A message fanned out to several queues is one Message, and from its second delivery on the
 * frame writer copies the frames it kept (exchange and routing key, content header, body) instead
 * of encoding them again (FrameWriter's WireCache). Every consumer must still get its own
 * consumer tag, delivery tags, channel and redelivered flag with the message's own content:
 * consumers on two channels of one connection and on another connection with a larger frame_max,
 * a quorum queue (whose redeliveries carry x-delivery-count, so another header), bodies from
 * empty to larger than a frame, and the same messages requeued and delivered again.
 */
describe('fanout deliveries of one message to several consumers', () => {
  const broker = useBroker();

  interface Sent {
    key: string;
    body: Buffer;
    headers: Record<string, unknown>;
  }

  function messages(): Sent[] {
    const sizes = [0, 1, 16, 100, 4088, 4089, 10_000, 16_384, 16_385, 70_000, 3];
    return sizes.map((n, i) => ({
      key: i % 3 === 0 ? '' : `key.${i}.ü`,
      body: Buffer.from(Array.from({ length: n }, (_, k) => (k * 13 + i) & 0xff)),
      headers: { i, label: 'x'.repeat(i * 7) },
    }));
  }

  function expectSame(got: ConsumeMessage[], sent: Sent[], tag: string, redelivered: boolean, what: string): void {
    expect(got.length, what).to.equal(sent.length);
    got.forEach((m, i) => {
      const s = sent[i]!;
      expect(m.fields.exchange, `${what} #${i}`).to.equal('fan-ü');
      expect(m.fields.routingKey, `${what} #${i}`).to.equal(s.key);
      expect(m.fields.consumerTag, `${what} #${i}`).to.equal(tag);
      expect(m.fields.redelivered, `${what} #${i}`).to.equal(redelivered);
      expect(m.content.equals(s.body), `${what} #${i} body`).to.equal(true);
      expect(m.properties.headers?.['i'], `${what} #${i}`).to.equal(s.headers['i']);
      expect(m.properties.headers?.['label'], `${what} #${i}`).to.equal(s.headers['label']);
      expect(m.properties.messageId, `${what} #${i}`).to.equal(`m${i}`);
    });
  }

  async function consume(ch: Channel, queue: string, tag: string, n: number, ack: (m: ConsumeMessage) => void): Promise<ConsumeMessage[]> {
    const got = collect<ConsumeMessage>(n);
    await ch.consume(queue, (m) => {
      if (!m) return;
      got.push(m);
      ack(m);
    }, { consumerTag: tag });
    return got.done;
  }

  it('each consumer gets its own tags and channel with the content as published, requeued ones marked redelivered', async () => {
    const sent = messages();
    const admin = await connect(broker.url);
    const one = await connect(broker.url);
    const big = await connect(`${broker.url}?frameMax=131072`);
    try {
      const ach = await channel(admin);
      await ach.assertExchange('fan-ü', 'fanout', { durable: true });
      for (const q of ['fan-a', 'fan-b', 'fan-c']) {
        await ach.assertQueue(q, { durable: false });
        await ach.bindQueue(q, 'fan-ü', '');
      }
      await ach.assertQueue('fan-quorum', { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      await ach.bindQueue('fan-quorum', 'fan-ü', '');
      sent.forEach((s, i) => ach.publish('fan-ü', s.key, s.body, { headers: s.headers, messageId: `m${i}` }));
      await ach.checkQueue('fan-quorum');

      // Channel 1 of one connection; channel 2 of it takes queue b twice: nacked, then again.
      const ch1 = await channel(one);
      const ch2 = await channel(one);
      const ch3 = await channel(big);
      const ch4 = await channel(big);
      const a = consume(ch1, 'fan-a', 'tag-a', sent.length, (m) => ch1.ack(m));
      const c = consume(ch3, 'fan-c', 'tag-c', sent.length, (m) => ch3.ack(m));
      const bAll = consume(ch2, 'fan-b', 'tag-b', 2 * sent.length, (m) => {
        // The first round back to the queue (all of it, once every one is here), the second acked.
        if (m.fields.redelivered) ch2.ack(m);
        else if (m.fields.deliveryTag === sent.length) ch2.nackAll(true);
      });
      const qAll = consume(ch4, 'fan-quorum', 'tag-q', 2 * sent.length, (m) => {
        if (m.fields.redelivered) ch4.ack(m);
        else if (m.fields.deliveryTag === sent.length) ch4.nackAll(true);
      });
      const [ga, gc, gb, gq] = await Promise.all([a, c, bAll, qAll]);
      expectSame(ga, sent, 'tag-a', false, 'channel 1');
      expectSame(gc, sent, 'tag-c', false, 'other connection, frame_max 128 KiB');
      expectSame(gb.slice(0, sent.length), sent, 'tag-b', false, 'channel 2');
      expectSame(gb.slice(sent.length), sent, 'tag-b', true, 'channel 2, requeued');
      expectSame(gq.slice(0, sent.length), sent, 'tag-q', false, 'quorum queue');
      expectSame(gq.slice(sent.length), sent, 'tag-q', true, 'quorum queue, requeued');
      expect(gq.slice(sent.length).map((m) => m.properties.headers?.['x-delivery-count'])).to.deep.equal(sent.map(() => 1));
      expect(gq.slice(0, sent.length).map((m) => m.properties.headers?.['x-delivery-count'])).to.deep.equal(sent.map(() => undefined));
      // Delivery tags count per channel, whichever message they carry.
      expect(ga.map((m) => m.fields.deliveryTag)).to.deep.equal(sent.map((_, i) => i + 1));
      expect(gb.map((m) => m.fields.deliveryTag)).to.deep.equal([...sent, ...sent].map((_, i) => i + 1));
    } finally {
      await Promise.all([admin.close(), one.close(), big.close()]);
    }
  });
});
