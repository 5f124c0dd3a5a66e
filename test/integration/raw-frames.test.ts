import { expect } from 'chai';
import { connect as netConnect } from 'node:net';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { FakeClock } from '../../src/clock.js';
import { channel, connect } from '../support/amqp.js';
import { useBroker } from '../support/broker.js';
import { RawClient } from '../../conformance/lib/raw-client.js';

/** Bad input on raw frames gets RabbitMQ's answer and never harms other clients. */
describe('malformed input (raw frames)', () => {
  // After a fatal frame error RabbitMQ stops reading and drops the socket closeTimeout later
  // (3 s); a short one keeps these tests quick.
  const broker = useBroker({ closeTimeout: 200 });

  async function expectConnectionClose(c: RawClient, code: number, text?: string | RegExp): Promise<void> {
    const close = await c.expect('connection.close');
    expect(close.replyCode, close.replyText).to.equal(code);
    if (typeof text === 'string') expect(close.replyText).to.equal(text);
    else if (text) expect(close.replyText).to.match(text);
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
  }

  it('answers a wrong protocol header with AMQP 0-9-1 and closes (spec 4.2.2)', async () => {
    const c = await RawClient.connect(broker.url);
    c.write(Buffer.from('AMQP\x00\x00\x08\x00', 'latin1'));
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
    expect(c.raw.toString('latin1')).to.equal('AMQP\x00\x00\x09\x01');
  });

  it('answers HTTP garbage with the protocol header and closes', async () => {
    const c = await RawClient.connect(broker.url);
    c.write(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
    expect(c.raw.toString('latin1')).to.equal('AMQP\x00\x00\x09\x01');
  });

  it('closes with 501 FRAME_ERROR on a bad frame-end octet', async () => {
    const c = await RawClient.open(broker.url);
    const frame = encodeMethodFrame(1, 'channel.open', { reserved1: '' });
    frame[frame.length - 1] = 0x00;
    c.write(frame);
    await expectConnectionClose(c, 501);
  });

  it('closes with 501 FRAME_ERROR on a frame larger than frame_max', async () => {
    const c = await RawClient.open(broker.url, { frameMax: 4096 });
    await c.openChannel(1);
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: false });
    c.write(encodeContentHeaderFrame(1, 60, 10000, {}));
    c.write(encodeFrame(3, 1, Buffer.alloc(10000)));
    await expectConnectionClose(c, 501);
  });

  it("closes with 504 CHANNEL_ERROR for a method on a channel that was never opened", async () => {
    const c = await RawClient.open(broker.url);
    c.method(5, 'queue.declare', { reserved1: 0, queue: 'x', passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    await expectConnectionClose(c, 504, "CHANNEL_ERROR - expected 'channel.open'");
  });

  it('closes with 504 on a second channel.open', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'channel.open', { reserved1: '' });
    await expectConnectionClose(c, 504, "CHANNEL_ERROR - second 'channel.open' seen");
  });

  it('closes with 530 once the negotiated channel_max (2047) channels are open (issue 10: 65,535 were accepted)', async () => {
    const c = await RawClient.open(broker.url);
    const opens: Buffer[] = [];
    for (let n = 1; n <= 2048; n++) opens.push(encodeMethodFrame(n, 'channel.open', { reserved1: '' }));
    c.write(Buffer.concat(opens));
    // Text recorded from RabbitMQ 3.10.8 (conformance: connection/channel-count-above-negotiated-max).
    await expectConnectionClose(c, 530, 'NOT_ALLOWED - number of channels opened (2047) has reached the negotiated channel_max (2047)');
    expect(c.frames.filter((f) => f.method?.name === 'channel.open-ok')).to.have.length(2047);
  });

  it('closes with 505 UNEXPECTED_FRAME for a content header without a publish', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.write(encodeContentHeaderFrame(1, 60, 3, {}));
    await expectConnectionClose(c, 505, 'UNEXPECTED_FRAME - expected method frame, got non method frame instead');
  });

  it('closes with 505 for a body frame without a publish', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.write(encodeFrame(3, 1, Buffer.from('abc')));
    await expectConnectionClose(c, 505);
  });

  it('closes with 505 when a method arrives where a content header was due', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: false });
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false });
    await expectConnectionClose(c, 505, 'UNEXPECTED_FRAME - expected content header for class 60, got non content header frame instead');
  });

  it('closes with 505 when basic.ack arrives where a content header was due (the ack fast path leaves it)', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: false });
    c.method(1, 'basic.ack', { deliveryTag: 1, multiple: false });
    await expectConnectionClose(c, 505, 'UNEXPECTED_FRAME - expected content header for class 60, got non content header frame instead');
  });

  it('closes the channel with 406 naming basic.ack for an unknown delivery tag; a closing channel ignores acks', async () => {
    const c = await RawClient.open(broker.url);
    c.autoChannelCloseOk = false;
    await c.openChannel(1);
    c.method(1, 'basic.ack', { deliveryTag: 5, multiple: false });
    const close = await c.expect('channel.close');
    expect(close).to.include({ replyCode: 406, replyText: 'PRECONDITION_FAILED - unknown delivery tag 5', classId: 60, methodId: 80 });
    // Until close-ok, an ack (known or not) is dropped: no second close, no connection error.
    c.method(1, 'basic.ack', { deliveryTag: 6, multiple: true });
    c.method(1, 'channel.close-ok', {});
    await c.openChannel(1);
    c.method(1, 'basic.ack', { deliveryTag: 0, multiple: true });
    c.method(1, 'basic.ack', { deliveryTag: 7, multiple: true });
    const again = await c.expect('channel.close');
    expect(again).to.include({ replyCode: 406, replyText: 'PRECONDITION_FAILED - unknown delivery tag 7', classId: 60, methodId: 80 });
    c.destroy();
  });

  it('closes with 540 NOT_IMPLEMENTED for immediate=true, as RabbitMQ does', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: true });
    await expectConnectionClose(c, 540, 'NOT_IMPLEMENTED - immediate=true');
  });

  it('closes with a connection error on a truncated method frame', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    // queue.declare whose arguments stop after the class and method ids.
    const payload = Buffer.from([0, 50, 0, 10, 0]);
    c.write(encodeFrame(1, 1, payload));
    const close = await c.expect('connection.close');
    expect([501, 502]).to.include(close.replyCode);
  });

  it('survives random garbage after the handshake and keeps serving other clients', async () => {
    const c = await RawClient.open(broker.url);
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 256);
    c.write(Buffer.from(Array.from({ length: 4096 }, rnd)));
    await c.waitFor(() => c.closed || c.frames.some((f) => f.method?.name === 'connection.close'), 'close');
    c.destroy();
    const conn = await connect(broker.url);
    const ch = await channel(conn);
    const { queue } = await ch.assertQueue('', { exclusive: true });
    ch.sendToQueue(queue, Buffer.from('still fine'));
    const m = await ch.get(queue, { noAck: true });
    expect(m && m.content.toString()).to.equal('still fine');
    await conn.close();
  });

  it('a client that closes mid-frame does not disturb the broker', async () => {
    const socket = netConnect(broker.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.resume();
    socket.end(Buffer.concat([Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'), Buffer.from([1, 0, 0, 0])]));
    await new Promise((r) => socket.once('close', r));
    const conn = await connect(broker.url);
    await conn.close();
  });

  it('the channel stays usable after a soft error is closed and reopened', async () => {
    const c = await RawClient.open(broker.url);
    c.autoChannelCloseOk = false;
    await c.openChannel(1);
    c.method(1, 'queue.declare', { reserved1: 0, queue: 'missing', passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    const close = await c.expect('channel.close');
    expect(close).to.include({ replyCode: 404, classId: 50, methodId: 10 });
    // Anything but close-ok is ignored until the client acknowledges the close.
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false });
    c.method(1, 'channel.close-ok', {});
    await c.openChannel(1);
    c.destroy();
  });
});

describe('connection negotiation and heartbeats', () => {
  const clock = new FakeClock();
  const broker = useBroker({ clock, heartbeat: 10 });

  it('advertises RabbitMQ-style server properties and capabilities', async () => {
    const conn = await connect(broker.url);
    const props = conn.connection.serverProperties as unknown as Record<string, unknown>;
    expect(props['product']).to.equal('RabbitMQ');
    expect(props['capabilities']).to.include({ publisher_confirms: true, 'basic.nack': true, consumer_cancel_notify: true, exchange_exchange_bindings: true });
    await conn.close();
  });

  it('refuses bad credentials with 403 ACCESS_REFUSED', async () => {
    const url = broker.url.replace('guest:guest', 'guest:wrong');
    const err = await connect(url).then(() => null, (e: Error) => e);
    expect(err?.message).to.contain('ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN');
  });

  it('refuses an unknown vhost with 530 NOT_ALLOWED', async () => {
    const c = await RawClient.connect(broker.url);
    const { opened, close } = await c.handshake({ vhost: 'nope' });
    expect(opened).to.equal(false);
    expect(close).to.deep.equal({ code: 530, text: 'NOT_ALLOWED - vhost nope not found', classId: 10, methodId: 40 });
    c.destroy();
  });

  it('drops a client that tunes frame_max below the minimum without a close, as rabbit_reader does during the handshake', async () => {
    const c = await RawClient.connect(broker.url);
    c.write(Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
    c.startFrames();
    await c.expect('connection.start');
    c.method(0, 'connection.start-ok', { clientProperties: {}, mechanism: 'PLAIN', response: Buffer.from('\u0000guest\u0000guest'), locale: 'en_US' });
    await c.expect('connection.tune');
    c.method(0, 'connection.tune-ok', { channelMax: 0, frameMax: 1024, heartbeat: 0 });
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
    expect(c.frames.map((f) => f.method?.name)).to.deep.equal(['connection.start', 'connection.tune']);
  });

  it('drops a peer that stays silent for two heartbeat intervals (injected clock)', async () => {
    const c = await RawClient.open(broker.url, { heartbeat: 10 });
    clock.advance(5000);
    expect(c.closed).to.equal(false);
    clock.advance(16000);
    expect(await c.waitClosed(), 'socket closed').to.equal(true);
  });

  it('sends heartbeats to a peer when there is nothing else to send', async () => {
    const c = await RawClient.open(broker.url, { heartbeat: 10 });
    clock.advance(5000);
    clock.advance(5000);
    await c.waitFor(() => c.frames.some((f) => f.type === 8), 'heartbeat frame');
    c.destroy();
  });
});

describe('message size limit (RabbitMQ max_message_size)', () => {
  const broker = useBroker({ maxMessageSize: 1000 });

  it('closes the channel with 406 once a body over the limit has arrived (kept nowhere), as RabbitMQ checks the whole content', async () => {
    const c = await RawClient.open(broker.url);
    await c.openChannel(1);
    c.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: false });
    c.write(encodeContentHeaderFrame(1, 60, 2000, {}));
    c.write(encodeFrame(3, 1, Buffer.alloc(1000)));
    c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false }); // meanwhile: 505, as RabbitMQ answers it
    const unexpected = await c.expect('connection.close');
    expect(unexpected).to.include({ replyCode: 505, replyText: 'UNEXPECTED_FRAME - expected content body, got non content body frame instead' });
    c.destroy();
    const d = await RawClient.open(broker.url);
    await d.openChannel(1);
    d.method(1, 'basic.publish', { reserved1: 0, exchange: '', routingKey: 'q', mandatory: false, immediate: false });
    d.write(encodeContentHeaderFrame(1, 60, 2000, {}));
    d.write(encodeFrame(3, 1, Buffer.alloc(1000)));
    d.write(encodeFrame(3, 1, Buffer.alloc(1000)));
    const close = await d.expect('channel.close');
    expect(close).to.include({ replyCode: 406, replyText: 'PRECONDITION_FAILED - message size 2000 is larger than configured max size 1000', classId: 60, methodId: 40 });
    await d.openChannel(1);
    d.destroy();
  });
});
