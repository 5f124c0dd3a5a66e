import { expect } from 'chai';
import amqp from 'amqplib';
import { spawn, type ChildProcess } from 'node:child_process';
import type { SinkToParent } from '../../bench/loadgen/sink.js';
import type { ConsumeMessage } from 'amqplib';
import { encodeBasicAck, encodeBasicDeliver } from '../../src/frame/fast.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { LoadClient } from '../../bench/loadgen/client.js';
import { benchBody, encodePublishRing, FrameScanner, type ScanHandler } from '../../bench/loadgen/wire.js';
import { useBroker } from '../support/broker.js';

/** Resolves when cond() holds, checked after each chunk the client reads. */
function whenRead(c: LoadClient, cond: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    if (cond()) {
      resolve();
      return;
    }
    c.onRead = () => {
      if (c.failure) reject(new Error(c.failure));
      else if (cond()) {
        c.onRead = undefined;
        resolve();
      }
    };
  });
}

describe('bench load generator (issue 19)', () => {
  describe('FrameScanner', () => {
    function recorder() {
      const seen: string[] = [];
      const h: ScanHandler = {
        onDeliver: (ch, tag) => seen.push(`deliver ${ch} ${tag}`),
        onAck: (ch, tag, multiple) => seen.push(`ack ${ch} ${tag} ${multiple}`),
        onNack: (ch, tag, multiple) => seen.push(`nack ${ch} ${tag} ${multiple}`),
        onPublish: (ch) => seen.push(`publish ${ch}`),
        onMethod: (ch, cm) => seen.push(`method ${ch} ${cm.toString(16)}`),
        onHeartbeat: () => seen.push('heartbeat'),
      };
      return { seen, h };
    }
    // deliveries with bodies of several sizes, an ack, a heartbeat and a publish
    const frames: Buffer[] = [];
    const expected: string[] = [];
    for (let i = 1; i <= 20; i++) {
      const body = benchBody(i * 37);
      frames.push(encodeBasicDeliver(3, `ctag-${i}`, 1000 + i, false, 'ex', `key.${i}`), encodeContentHeaderFrame(3, 60, body.length, { deliveryMode: 2 }), encodeFrame(3, 3, body));
      expected.push(`deliver 3 ${1000 + i}`);
    }
    frames.push(encodeBasicAck(5, 2 ** 40, true), Buffer.from([8, 0, 0, 0, 0, 0, 0, 0xce]));
    expected.push(`ack 5 ${2 ** 40} true`, 'heartbeat');
    frames.push(encodePublishRing(7, 'x', ['k'], benchBody(3), {}, 1).buf);
    expected.push('publish 7');
    const stream = Buffer.concat(frames);

    it('reports every frame whatever the chunking: whole, byte by byte, and in chunks of every size up to 97', () => {
      for (const size of [stream.length, 1, ...Array.from({ length: 96 }, (_, i) => i + 2)]) {
        const { seen, h } = recorder();
        const sc = new FrameScanner(h);
        for (let o = 0; o < stream.length; o += size) sc.feed(stream.subarray(o, o + size));
        expect(seen, `chunks of ${size}`).to.deep.equal(expected);
        expect(sc.bytes).to.equal(stream.length);
      }
    });

    it('throws on a bad frame-end octet and on an unknown frame type', () => {
      const bad = Buffer.from(encodeBasicAck(1, 1, false));
      bad[bad.length - 1] = 0;
      expect(() => new FrameScanner(recorder().h).feed(bad)).to.throw(/frame-end/);
      expect(() => new FrameScanner(recorder().h).feed(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0xce]))).to.throw(/frame type 9/);
    });
  });

  describe('against Warren', () => {
    const broker = useBroker();

    it('publishes 1,000 messages in batches that amqplib then consumes intact', async () => {
      const admin = await amqp.connect(broker.url);
      try {
        const ch = await admin.createChannel();
        await ch.assertQueue('lg-1', { durable: false });
        const c = await LoadClient.open({ url: broker.url });
        // a ring of 3 keys (one routes nowhere), batches of ~10 messages
        const ring = encodePublishRing(1, '', ['lg-1', 'nowhere', 'lg-1'], benchBody(16), { deliveryMode: 2 }, 30);
        c.setRing(ring, 10 * (ring.buf.length / ring.count));
        c.maxMessages = 1500;
        const limit = new Promise<void>((resolve) => (c.onLimit = resolve));
        c.startPublishing();
        await limit;
        await c.settleAll(10000);
        expect(c.published).to.equal(1500);
        await c.close();
        expect(c.failure).to.equal(undefined);
        expect((await ch.checkQueue('lg-1')).messageCount).to.equal(1000);
        const got: ConsumeMessage[] = [];
        await new Promise<void>((resolve) => {
          void ch.consume('lg-1', (m) => {
            if (m) got.push(m);
            if (got.length === 1000) resolve();
          }, { noAck: true });
        });
        expect(got.every((m) => m.content.equals(benchBody(16)) && m.properties.deliveryMode === 2 && m.fields.routingKey === 'lg-1')).to.equal(true);
      } finally {
        await admin.close();
      }
    });

    it('counts confirms in confirm mode with a window', async () => {
      const admin = await amqp.connect(broker.url);
      try {
        const ch = await admin.createChannel();
        await ch.assertQueue('lg-2', { durable: true });
        const c = await LoadClient.open({ url: broker.url });
        await c.confirmSelect(100);
        c.setRing(encodePublishRing(1, '', ['lg-2'], benchBody(16), { deliveryMode: 2 }, 64), 64 * 1024);
        c.maxMessages = 1000;
        c.startPublishing();
        await whenRead(c, () => c.confirmed + c.nacked === 1000);
        expect(c.published).to.equal(1000);
        expect(c.nacked).to.equal(0);
        await c.close();
        expect((await ch.checkQueue('lg-2')).messageCount).to.equal(1000);
        await ch.deleteQueue('lg-2');
      } finally {
        await admin.close();
      }
    });

    it('consumes with a prefetch and multiple acks: 1,000 deliveries through a prefetch of 50', async () => {
      const admin = await amqp.connect(broker.url);
      try {
        const ch = await admin.createChannel();
        await ch.assertQueue('lg-3', { durable: false });
        for (let i = 0; i < 1000; i++) ch.sendToQueue('lg-3', Buffer.from(String(i)));
        const c = await LoadClient.open({ url: broker.url });
        await c.qos(50);
        await c.consume('lg-3', 'lg-tag', false, 10);
        // without acks the broker would stop after 50 deliveries
        await whenRead(c, () => c.delivered === 1000);
        await c.close();
        expect(c.failure).to.equal(undefined);
        // what was not acknowledged yet (fewer than 10) went back to the queue at close
        const left = (await ch.checkQueue('lg-3')).messageCount;
        expect(left).to.be.below(10);
      } finally {
        await admin.close();
      }
    });

    it('reports a close from the broker as the failure', async () => {
      const c = await LoadClient.open({ url: broker.url });
      const err = await c.consume('no-such-queue', 't', true, 1).then(() => null, (e: Error) => e);
      expect(err?.message).to.match(/channel\.close 404 NOT_FOUND - no queue 'no-such-queue' in vhost '\/'/);
      expect(c.failure).to.match(/404/);
      c.destroy();
    });
  });

  describe('the fake broker sink of --loadgen-selfcheck', () => {
    let sink: ChildProcess;
    let url = '';
    const stats = () => new Promise<Extract<SinkToParent, { ev: 'stats' }>>((resolve) => {
      const on = (m: SinkToParent) => {
        if (m.ev !== 'stats') return;
        sink.off('message', on);
        resolve(m);
      };
      sink.on('message', on);
      sink.send({ cmd: 'stats' });
    });
    before(async () => {
      sink = spawn(process.execPath, ['--import', 'tsx', new URL('../../bench/loadgen/sink.ts', import.meta.url).pathname], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, BENCH_SINK: 'broker' },
      });
      const port = await new Promise<number>((resolve) => sink.on('message', (m: SinkToParent) => {
        if (m.ev === 'listening') resolve(m.port);
      }));
      url = `amqp://guest:guest@127.0.0.1:${port}`;
    });
    after(() => {
      sink.kill();
    });

    it('answers the handshake and confirms every publish it read', async () => {
      const c = await LoadClient.open({ url });
      await c.confirmSelect(100);
      c.setRing(encodePublishRing(1, '', ['q'], benchBody(16), {}, 64), 4096);
      c.maxMessages = 5000;
      c.startPublishing();
      await whenRead(c, () => c.confirmed === 5000);
      expect(c.nacked).to.equal(0);
      await c.close();
      expect((await stats()).publishes).to.equal(5000);
    });

    it('pushes deliveries to a consumer, which acknowledges them', async () => {
      const c = await LoadClient.open({ url });
      await c.qos(1000);
      await c.consume('q', 'tag', false, 100);
      await whenRead(c, () => c.delivered >= 20000);
      await c.close();
      const s = await stats();
      expect(s.deliveries).to.be.at.least(c.delivered);
      expect(s.acks).to.be.above(0);
    });
  });
});
