import { expect } from 'chai';
import { OUTPUT_HIGH_WATER, type Connection } from '../../src/connection/connection.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { decodeMethod, encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { channel, connect } from '../support/amqp.js';
import { serverSideOf, useBroker, waitUntil } from '../support/broker.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/**
 * Issue 10: output was one copy per tick and ignored backpressure. A peer that asks for output
 * and does not read it must not make the broker hold more than OUTPUT_HIGH_WATER plus one
 * message for it, nor crash it; the broker stops reading such a peer (as RabbitMQ's reader stops
 * when its writer is blocked) and keeps serving everyone else.
 */

describe('output backpressure (issue 10)', () => {
  const broker = useBroker();
  const serverSide = (client: RawClient): Connection => serverSideOf(broker.running, client);

  /**
   * Reads the peer's socket again, handing each frame to onFrame as it streams by (RawClient
   * keeps every byte, which for hundreds of MB is quadratic); resolves when onFrame returns true.
   */
  function readAgain(peer: RawClient, onFrame: (type: number, payload: Buffer) => boolean): Promise<void> {
    const reader = new FrameReader(0);
    return new Promise<void>((resolve) => {
      peer.socket.removeAllListeners('data');
      peer.socket.on('data', (chunk: Buffer) => reader.feed(chunk, (type, _ch, payload) => {
        if (onFrame(type, payload)) resolve();
      }));
      peer.socket.resume();
    });
  }

  /** Collects message bodies from body frames of `size`-octet messages. */
  function bodies(size: number): { add(payload: Buffer): Buffer | undefined } {
    let parts: Buffer[] = [];
    let octets = 0;
    return {
      add(payload) {
        parts.push(Buffer.from(payload));
        octets += payload.length;
        if (octets < size) return undefined;
        const whole = Buffer.concat(parts);
        parts = [];
        octets = 0;
        return whole;
      },
    };
  }

  async function queueWith(bodies: Buffer[]): Promise<string> {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const { queue } = await ch.assertQueue('', { exclusive: false, autoDelete: false });
      for (const b of bodies) ch.sendToQueue(queue, b);
      await ch.checkQueue(queue); // a round trip after the publishes: they are enqueued
      return queue;
    } finally {
      await conn.close();
    }
  }

  /** basic.get (noAck=false) and basic.reject(requeue) of the tag it will get, n times, as one write. */
  function getRejectPairs(queue: string, n: number): Buffer {
    const frames: Buffer[] = [];
    for (let tag = 1; tag <= n; tag++) {
      frames.push(encodeMethodFrame(1, 'basic.get', { reserved1: 0, queue, noAck: false }));
      frames.push(encodeMethodFrame(1, 'basic.reject', { deliveryTag: tag, requeue: true }));
    }
    return Buffer.concat(frames);
  }

  async function stillServes(queue?: string, expected?: number): Promise<void> {
    const other = await connect(broker.url);
    try {
      const ch = await channel(other);
      if (queue) expect((await ch.checkQueue(queue)).messageCount).to.equal(expected);
      const { queue: q2 } = await ch.assertQueue('', { exclusive: true });
      ch.sendToQueue(q2, Buffer.from('still served'));
      const m = await ch.get(q2, { noAck: true });
      expect(m && m.content.toString()).to.equal('still served');
    } finally {
      await other.close();
    }
  }

  it('pipelined basic.get + basic.reject(requeue) on a 32 MiB message, 140 times (4.4 GiB asked for), stops after one get; the broker survives', async () => {
    const size = 32 * 1024 * 1024;
    const queue = await queueWith([Buffer.alloc(size, 0x61)]);
    const attacker = await RawClient.open(broker.url);
    try {
      await attacker.openChannel(1);
      attacker.socket.pause(); // never reads again
      const conn = serverSide(attacker);
      // What the writer hands the socket: frames and views of the body, never one big copy.
      let largestWrite = 0;
      const write = conn.socket.write.bind(conn.socket);
      conn.socket.write = ((chunk: Buffer) => {
        largestWrite = Math.max(largestWrite, chunk.length);
        return write(chunk);
      }) as typeof conn.socket.write;
      const request = getRejectPairs(queue, 140);
      expect(request.length).to.be.below(10000);
      attacker.write(request);
      await waitUntil(() => conn.readingPaused, 'the broker to stop reading the attacker');
      // One get-ok went out (32 MiB, referenced, not copied); nothing after it was read.
      expect(conn.writer.bytesWritten).to.be.below(size + OUTPUT_HIGH_WATER);
      expect(conn.unsentBytes).to.be.below(size + OUTPUT_HIGH_WATER);
      expect(largestWrite).to.be.above(0).and.at.most(conn.frameMax);
      await stillServes(queue, 0);
    } finally {
      attacker.close();
    }
    // The attacker's unacked get goes back to the queue when it disconnects.
    await waitUntil(() => broker.running.broker.connections.size === 0, 'the attacker to be gone');
    await stillServes(queue, 1);
  });

  it('thousands of pipelined basic.get on a large message from a peer that does not read: bounded output, and everything arrives once it reads', async () => {
    const size = 64 * 1024;
    const body = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) body.writeUInt32BE(i, i);
    const queue = await queueWith([body]);
    const peer = await RawClient.open(broker.url);
    try {
      await peer.openChannel(1);
      peer.socket.pause();
      const pairs = 2000;
      peer.write(getRejectPairs(queue, pairs));
      const conn = serverSide(peer);
      await waitUntil(() => conn.readingPaused && conn.socket.writableLength > 0, 'the socket buffers to fill and the broker to stop reading');
      // What the kernel's socket buffers took is gone from the broker; what it holds is bounded.
      expect(conn.unsentBytes).to.be.below(OUTPUT_HIGH_WATER + size + 1024);
      expect(conn.writer.bytesWritten).to.be.below(pairs * size / 4);
      await stillServes();
      // Reading again, the peer gets every get-ok, each with the whole body.
      let getOks = 0;
      let seen = 0;
      let good = 0;
      const got = bodies(size);
      await readAgain(peer, (type, payload) => {
        if (type === 1 && decodeMethod(payload).name === 'basic.get-ok') getOks++;
        const whole = type === 3 ? got.add(payload) : undefined;
        if (!whole) return false;
        seen++;
        if (whole.equals(body)) good++;
        return seen === pairs;
      });
      expect({ getOks, good }).to.deep.equal({ getOks: pairs, good: pairs });
      await waitUntil(() => !conn.readingPaused, 'the broker to read the peer again');
    } finally {
      peer.close();
    }
  });

  it('an error thrown while writing a connection\'s output closes that connection only (issue 10: not the broker)', async () => {
    const victim = await RawClient.open(broker.url);
    try {
      await victim.openChannel(1);
      const conn = serverSide(victim);
      conn.socket.write = () => {
        throw new Error('write failed');
      };
      // The answer is written from the writer's setImmediate flush, outside any handler.
      victim.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
      await victim.waitClosed();
      expect(broker.running.broker.connections.has(conn)).to.equal(false);
      await stillServes();
    } finally {
      victim.close();
    }
  });

  it('an error thrown by the flush that a socket \'drain\' runs closes that connection only', async () => {
    const victim = await RawClient.open(broker.url);
    try {
      await victim.openChannel(1);
      const conn = serverSide(victim);
      conn.socket.write = () => {
        throw new Error('write failed');
      };
      conn.send(1, 'basic.qos-ok', {});
      // The socket calls its 'drain' listeners itself: whatever they throw reaches the event loop.
      expect(() => conn.socket.emit('drain')).not.to.throw();
      await victim.waitClosed();
      expect(broker.running.broker.connections.has(conn)).to.equal(false);
      await stillServes();
    } finally {
      victim.close();
    }
  });

  it('a consumer without prefetch that does not read gets at most OUTPUT_HIGH_WATER plus one message dispatched; the rest follows as it reads', async () => {
    const size = 1024 * 1024;
    const count = 64;
    const messages = Array.from({ length: count }, (_, i) => Buffer.alloc(size, i));
    const queue = await queueWith(messages);
    const consumer = await RawClient.open(broker.url);
    try {
      await consumer.openChannel(1);
      consumer.socket.pause();
      consumer.method(1, 'basic.consume', { reserved1: 0, queue, consumerTag: 'c', noLocal: false, noAck: true, exclusive: false, noWait: false, arguments: {} });
      const conn = serverSide(consumer);
      await waitUntil(() => conn.socket.writableLength > 0, 'the socket buffers to fill');
      expect(conn.unsentBytes).to.be.below(OUTPUT_HIGH_WATER + size + 1024);
      // Not the whole backlog: what is not in the socket buffers is still in the queue.
      const q = broker.running.broker.vhosts.get('/')!.queues.get(queue)!;
      expect(q.messageCount).to.be.above(0);
      // Reading again, the consumer gets the whole backlog, in order.
      const got = bodies(size);
      const received: number[] = [];
      await readAgain(consumer, (type, payload) => {
        const whole = type === 3 ? got.add(payload) : undefined;
        if (whole) received.push(whole.equals(messages[received.length]!) ? received.length : -1);
        return received.length === count;
      });
      expect(received).to.deep.equal(messages.map((_, i) => i));
    } finally {
      consumer.close();
    }
  });
});

/** The alarm and the output both pause reading; one owner keeps the socket paused while either holds. */
describe('output backpressure and resource alarms share the read pause', () => {
  const broker = useBroker();
  const serverSide = (client: RawClient): Connection => serverSideOf(broker.running, client);

  /** basic.qos and its -ok: everything the client sent before has been handled. */
  async function roundTrip(client: RawClient): Promise<void> {
    client.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 0, global: false });
    await client.expect('basic.qos-ok');
  }

  async function count(queue: string): Promise<number> {
    const conn = await connect(broker.url);
    try {
      return (await (await channel(conn)).checkQueue(queue)).messageCount;
    } finally {
      await conn.close();
    }
  }

  /**
   * A publisher whose output is full: it asks for more than it reads (a basic.get of an 8 MiB
   * message, without reading), and a publish to `target` follows in the same write.
   */
  async function stalledPublisher(big: string, target: string): Promise<{ client: RawClient; conn: Connection }> {
    const client = await RawClient.open(broker.url);
    await client.openChannel(1);
    client.publish(1, '', target, Buffer.from('first')); // a publisher: an alarm stops reading it
    await roundTrip(client);
    client.socket.pause();
    // One write: the publish is read with the get, and kept unhandled when the get fills the output.
    client.write(Buffer.concat([
      encodeMethodFrame(1, 'basic.get', { reserved1: 0, queue: big, noAck: true }),
      encodeMethodFrame(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: target, mandatory: false, immediate: false }),
      encodeContentHeaderFrame(1, 60, 6, {}),
      encodeFrame(3, 1, Buffer.from('second')),
    ]));
    const conn = serverSide(client);
    await waitUntil(() => conn.readPausedBy.includes('output') && conn.socket.writableLength > 0, 'the output to fill');
    return { client, conn };
  }

  async function queues(): Promise<{ big: string; target: string }> {
    const conn = await connect(broker.url);
    try {
      const ch = await channel(conn);
      const big = (await ch.assertQueue('', { exclusive: false, autoDelete: false })).queue;
      const target = (await ch.assertQueue('', { exclusive: false, autoDelete: false })).queue;
      ch.sendToQueue(big, Buffer.alloc(8 * 1024 * 1024, 0x62));
      await ch.checkQueue(big);
      return { big, target };
    } finally {
      await conn.close();
    }
  }

  it('an alarm that clears while the output is full leaves the socket paused until the output drains', async () => {
    const { big, target } = await queues();
    const { client, conn } = await stalledPublisher(big, target);
    try {
      conn.block('low on memory');
      // Under the alarm but not blocked yet: it has sent no content frame since (RabbitMQ's 'blocking').
      expect([conn.blockState, conn.readPausedBy]).to.deep.equal(['blocking', ['output']]);
      conn.unblock();
      expect([conn.blockState, conn.readPausedBy]).to.deep.equal([undefined, ['output']]);
      expect(conn.socket.isPaused()).to.equal(true);
      expect(await count(target)).to.equal(1); // 'second' is still unread
      client.socket.resume();
      await roundTrip(client);
      expect(conn.readingPaused).to.equal(false);
      expect(await count(target)).to.equal(2);
    } finally {
      client.close();
    }
  });

  it('output that drains during an alarm leaves the socket paused until the alarm clears', async () => {
    const { big, target } = await queues();
    const { client, conn } = await stalledPublisher(big, target);
    try {
      conn.block('low on memory');
      client.socket.resume();
      await waitUntil(() => !conn.readPausedBy.includes('output'), 'the output to drain');
      expect(conn.readPausedBy).to.deep.equal(['alarm']);
      expect(conn.socket.isPaused()).to.equal(true);
      // 'second' had been read before the alarm (kept unhandled while the output was full); its
      // content header, handled under the alarm, blocks the connection and its body waits, as
      // RabbitMQ's blocked reader leaves what it has buffered. Nothing sent after it is read.
      expect(conn.blockState).to.equal('blocked');
      expect(await count(target)).to.equal(1);
      client.publish(1, '', target, Buffer.from('third'));
      expect(await count(target)).to.equal(1);
      conn.unblock();
      expect(conn.readingPaused).to.equal(false);
      await roundTrip(client);
      expect(await count(target)).to.equal(3);
    } finally {
      client.close();
    }
  });
});
