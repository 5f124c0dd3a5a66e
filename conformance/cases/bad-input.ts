/** Bad input on raw frames: protocol headers, framing errors, unexpected frames, undecodable methods. */
import { encodeTable, F } from '../../src/frame/field-table.js';
import { encodeFrame } from '../../src/frame/frame-writer.js';
import { encodeMethodFrame, type MethodArgsInput, type MethodName } from '../../src/frame/generated/methods.js';
import { encodeContentHeaderFrame, encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';
import type { RawClient } from '../lib/raw-client.js';

const test = area('bad-input');

function payloadOf<N extends MethodName>(name: N, args: MethodArgsInput<N>): Buffer {
  const f = encodeMethodFrame(0, name, args);
  return f.subarray(7, f.length - 1);
}

/** A frame with an arbitrary payload and frame-end octet. */
function frameBytes(type: number, channel: number, payload: Buffer, end = 0xce): Buffer {
  const f = encodeFrame(type, channel, payload);
  f[f.length - 1] = end;
  return f;
}

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

/** Sends a protocol header and reports what came back before the socket closed. */
async function headerReply(t: CaseContext, header: Buffer, waitMs = 1000): Promise<void> {
  const c = await t.rawSocket();
  c.write(header);
  await c.waitClosed(waitMs);
  const raw = c.raw;
  const reply: Record<string, unknown> = { socketClosed: c.closed };
  if (raw.length > 0 && raw.length <= 16) reply['text'] = raw.toString('latin1');
  // A connection.start's size depends on the server properties, so only its identity counts.
  if (!(raw.length >= 12 && raw[0] === 1)) reply['bytes'] = raw.length;
  if (raw.length >= 12 && raw[0] === 1) {
    // A method frame (connection.start): its class, method and version octets.
    reply['firstFrame'] = { type: raw[0], channel: raw.readUInt16BE(1), classId: raw.readUInt16BE(7), methodId: raw.readUInt16BE(9), versionMajor: raw[11], versionMinor: raw[12] };
  }
  t.log('reply', reply);
}

async function openWithChannel(t: CaseContext): Promise<RawClient> {
  const c = await t.raw();
  await c.openChannel(1);
  return c;
}

const declareArgs = (queue: string): MethodArgsInput<'queue.declare'> => ({ queue, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });

test('protocol-header-wrong-version', 'spec 4.2.2: "the server MUST respond with a valid protocol header and close the socket"', async (t) => {
  await headerReply(t, Buffer.from('AMQP\x00\x00\x09\x02', 'latin1'));
});

test('protocol-header-http', 'spec 4.2.2 protocol header negotiation', async (t) => {
  await headerReply(t, Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'));
});

test('protocol-header-amqp-0-9', 'rabbitmq.com/specification.html (0-9 and 0-8 headers accepted by RabbitMQ)', async (t) => {
  await headerReply(t, Buffer.from('AMQP\x01\x01\x00\x09', 'latin1'), 300);
});

test('protocol-header-amqp-0-8', 'rabbitmq.com/specification.html (0-8 accepted by RabbitMQ)', async (t) => {
  await headerReply(t, Buffer.from('AMQP\x01\x01\x08\x00', 'latin1'), 300);
});

test('protocol-header-amqp-1-0-without-plugin', 'rabbitmq.com/amqp-1-0.html (AMQP 1.0 needs the rabbitmq_amqp1_0 plugin)', async (t) => {
  await headerReply(t, Buffer.from('AMQP\x00\x01\x00\x00', 'latin1'));
});

test('protocol-header-partial-waits', 'spec 4.2.2: the server reads the 8-octet header before answering', async (t) => {
  const c = await t.rawSocket();
  c.write(Buffer.from('AMQP', 'latin1'));
  await t.sleep(200);
  t.log('after-200ms', { bytes: c.raw.length, socketClosed: c.closed });
  c.write(Buffer.from('\x00\x00\x09\x01', 'latin1'));
  c.startFrames();
  t.log('start', (await c.nextMethod(['connection.start']))?.name ?? null);
});

test('bad-frame-end', 'spec 4.2.3: "if the frame-end octet is not correct the peer MUST close the connection with 501 FRAME_ERROR"', async (t) => {
  const c = await openWithChannel(t);
  // A fixed name: RabbitMQ quotes the frame's first 16 octets in the reply text.
  c.write(frameBytes(1, 1, payloadOf('queue.declare', declareArgs('bad-frame-end-q')), 0x00));
  t.log('outcome', await c.outcome(300));
});

test('frame-too-large', 'spec 4.2.3 frame-max: "a peer MUST NOT send frames larger than the agreed size"; 501 FRAME_ERROR', async (t) => {
  const c = await t.raw({ frameMax: 4096 });
  await c.openChannel(1);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(encodeContentHeaderFrame(1, 60, 5000, {}));
  c.write(frameBytes(3, 1, Buffer.alloc(5000, 0x61)));
  t.log('outcome', await c.outcome(300));
});

test('unknown-frame-type', 'spec 4.2.3 frame types 1,2,3,8; RabbitMQ: 501 unknown_frame', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(5, 1, Buffer.from('hello')));
  t.log('outcome', await c.outcome());
});

test('method-frame-too-short', 'spec 4.2.4 method frames carry class-id and method-id', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(1, 1, Buffer.from([0, 50])));
  t.log('outcome', await c.outcome());
});

test('header-frame-too-short', 'spec 4.2.6 content header frame layout', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(frameBytes(2, 1, Buffer.from([0, 60, 0, 0])));
  t.log('outcome', await c.outcome());
});

test('heartbeat-with-payload', 'spec 4.2.7 heartbeat frames have no payload', async (t) => {
  const c = await t.raw();
  c.write(frameBytes(8, 0, Buffer.from('x')));
  t.log('outcome', await c.outcome());
});

test('heartbeat-on-channel-1', 'spec 4.2.7: "heartbeat frames MUST use channel number 0"', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(8, 1, Buffer.alloc(0)));
  c.method(1, 'queue.declare', declareArgs(''));
  const m = await c.nextMethod([], 1500);
  t.log('next', m ? { name: m.name, channel: m.name === 'connection.close' ? 0 : 1, args: m.name === 'connection.close' ? m.args : null } : null);
});

test('header-without-publish', 'spec 4.2.6: content header only after a content-bearing method; 505 UNEXPECTED_FRAME', async (t) => {
  const c = await openWithChannel(t);
  c.write(encodeContentHeaderFrame(1, 60, 3, {}));
  t.log('outcome', await c.outcome());
});

test('body-without-publish', 'spec 4.2.6: 505 UNEXPECTED_FRAME for a body frame outside content', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(3, 1, Buffer.from('abc')));
  t.log('outcome', await c.outcome());
});

test('method-instead-of-header', 'spec 4.2.6: content header must follow basic.publish; 505', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.method(1, 'queue.declare', declareArgs(''));
  t.log('outcome', await c.outcome());
});

test('method-instead-of-body', 'spec 4.2.6: body frames must follow until body-size is reached; 505', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(encodeContentHeaderFrame(1, 60, 10, {}));
  c.write(frameBytes(3, 1, Buffer.from('abc')));
  c.method(1, 'queue.declare', declareArgs(''));
  t.log('outcome', await c.outcome());
});

test('body-after-empty-content', 'spec 4.2.6: a body-size of 0 means no body frames', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(encodeContentHeaderFrame(1, 60, 0, {}));
  c.write(frameBytes(3, 1, Buffer.from('abc')));
  t.log('outcome', await c.outcome());
});

test('body-larger-than-declared', 'spec 4.2.6.2: body frames carry exactly body-size octets', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(encodeContentHeaderFrame(1, 60, 3, {}));
  c.write(frameBytes(3, 1, Buffer.from('abcdef')));
  c.method(1, 'queue.declare', declareArgs(''));
  const m = await c.nextMethod([], 1500);
  t.log('next', m ? { name: m.name, args: m.name === 'queue.declare-ok' ? null : m.args } : null);
});

test('header-wrong-class', 'spec 4.2.6.1: the content header class-id must match the method', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  c.write(encodeFrame(2, 1, encodeContentHeaderPayload(10, 0, {})));
  const q = t.q();
  c.method(1, 'queue.declare', declareArgs(q));
  const m = await c.nextMethod([], 1500);
  t.log('next', m ? { name: m.name, args: m.name === 'queue.declare-ok' ? null : m.args } : null);
});

test('unknown-class-id', 'spec 4.2.4; RabbitMQ 3.10 crashes the reader: the socket closes without connection.close', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(1, 1, Buffer.concat([u16(99), u16(10)])));
  t.log('outcome', await c.outcome());
});

test('unknown-method-id', 'spec 4.2.4; RabbitMQ 3.10: unknown method id of a known class', async (t) => {
  const c = await openWithChannel(t);
  c.write(frameBytes(1, 1, Buffer.concat([u16(50), u16(99)])));
  t.log('outcome', await c.outcome());
});

test('truncated-method-arguments', 'spec 4.2.5: method arguments that do not decode; RabbitMQ: 501 FRAME_ERROR "cannot decode"', async (t) => {
  const c = await openWithChannel(t);
  const p = payloadOf('queue.declare', declareArgs('some-queue'));
  c.write(frameBytes(1, 1, p.subarray(0, p.length - 6)));
  t.log('outcome', await c.outcome());
});

test('trailing-bytes-after-arguments', 'spec 4.2.5; RabbitMQ decodes method arguments strictly', async (t) => {
  const c = await openWithChannel(t);
  const p = payloadOf('channel.flow', { active: true });
  c.write(frameBytes(1, 1, Buffer.concat([p, Buffer.from([1, 2, 3])])));
  t.log('outcome', await c.outcome());
});

test('malformed-utf8-shortstr', 'spec 4.2.5.3 shortstr is UTF-8; RabbitMQ: 501 "Malformed UTF-8 in shortstr"', async (t) => {
  const c = await openWithChannel(t);
  const p = payloadOf('queue.declare', declareArgs('abcd'));
  const i = p.indexOf(Buffer.from('abcd'));
  p[i + 1] = 0xc0;
  p[i + 2] = 0x80;
  c.write(frameBytes(1, 1, p));
  t.log('outcome', await c.outcome());
});

test('bad-arguments-table', 'spec 4.2.5.5 field tables; RabbitMQ 3.10: an unparseable table in method arguments', async (t) => {
  const c = await openWithChannel(t);
  const good = payloadOf('queue.declare', { ...declareArgs('abcd'), arguments: { k: F.int32(1) } });
  // Replace the field type 'I' by an unknown tag 'Z'.
  const i = good.lastIndexOf(Buffer.from('kI'));
  good[i + 1] = 0x5a;
  c.write(frameBytes(1, 1, good));
  t.log('outcome', await c.outcome());
});

test('bad-headers-table-in-properties', 'spec 4.2.6.1 content properties; a headers table that does not parse', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.publish', { exchange: '', routingKey: 'x', mandatory: false, immediate: false });
  const table = encodeTable({ k: F.int32(1) });
  table[table.length - 5] = 0x5a;
  const payload = Buffer.concat([u16(60), u16(0), Buffer.alloc(8), u16(0x2000), table]);
  c.write(encodeFrame(2, 1, payload));
  t.log('outcome', await c.outcome());
});

test('publish-immediate', 'rabbitmq.com/specification.html: immediate flag is not supported (540 NOT_IMPLEMENTED)', async (t) => {
  const c = await openWithChannel(t);
  c.publish(1, '', t.name('q'), 'x', {}, { immediate: true });
  t.log('outcome', await c.outcome());
});

test('queue-declare-on-channel-zero', 'spec 2.3.5: channel 0 carries connection methods only', async (t) => {
  const c = await t.raw();
  c.method(0, 'queue.declare', declareArgs(''));
  t.log('outcome', await c.outcome());
});

test('publish-on-unopened-channel', 'spec 2.3.5; RabbitMQ: 504 CHANNEL_ERROR', async (t) => {
  const c = await t.raw();
  c.publish(4, '', 'x', 'body');
  t.log('outcome', await c.outcome());
});

test('server-method-from-client', 'spec 1.8.2.7 basic.deliver is sent by the server only', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'basic.deliver', { consumerTag: 'x', deliveryTag: 1, redelivered: false, exchange: '', routingKey: 'x' });
  c.method(1, 'queue.declare', declareArgs(''));
  const m = await c.nextMethod([], 1500);
  t.log('next', m ? { name: m.name, args: m.name === 'queue.declare-ok' ? null : m.args } : null);
});

test('channel-close-ok-without-close', 'spec 1.5.2.6 channel.close-ok answers a close', async (t) => {
  const c = await openWithChannel(t);
  c.method(1, 'channel.close-ok', {});
  c.method(1, 'queue.declare', declareArgs(''));
  const m = await c.nextMethod([], 1500);
  t.log('next', m ? { name: m.name, args: m.name === 'queue.declare-ok' ? null : m.args } : null);
});

test('connection-open-twice', 'spec 1.4.2.7 connection.open is sent once', async (t) => {
  const c = await t.raw();
  c.method(0, 'connection.open', { virtualHost: '/' });
  t.log('outcome', await c.outcome());
});

test('channel-before-connection-open', 'spec 4.2.1: no channels before the connection is open', async (t) => {
  const c = await t.rawSocket();
  c.sendProtocolHeader();
  await c.expect('connection.start');
  c.method(1, 'channel.open', {});
  t.log('outcome', await c.outcome(300));
});

test('connection-close-ok-unsolicited', 'spec 1.4.2.10 connection.close-ok answers a close', async (t) => {
  const c = await t.raw();
  c.method(0, 'connection.close-ok', {});
  t.log('outcome', await c.outcome());
});

test('garbage-after-handshake', 'spec 4.2.3 framing; the broker must survive garbage and keep serving others', async (t) => {
  const c = await t.raw();
  c.write(Buffer.from('this is not an AMQP frame at all, not even close.'));
  t.log('outcome', await c.outcome(300));
  const ok = await t.raw();
  await ok.openChannel(1);
  t.log('other-client-fine', true);
});

test('client-sends-server-methods', 'rabbit_reader: connection.blocked/unblocked and secure-ok after open are unexpected (504); an unsolicited channel.flow-ok is unimplemented (503)', async (t) => {
  const sends: Array<[string, (c: RawClient) => void]> = [
    ['connection.blocked', (c) => c.method(0, 'connection.blocked', { reason: 'x' })],
    ['connection.unblocked', (c) => c.method(0, 'connection.unblocked', {})],
    ['connection.secure-ok', (c) => c.method(0, 'connection.secure-ok', { response: Buffer.from('x') })],
    ['channel.flow-ok', (c) => c.method(1, 'channel.flow-ok', { active: true })],
  ];
  for (const [label, send] of sends) {
    const c = await t.raw();
    await c.openChannel(1);
    send(c);
    t.log(label, await c.connectionOutcome());
  }
});

test('content-frames-on-channel-0', 'rabbit_reader: a content header or body on channel 0 is 505, naming the frame and its octets', async (t) => {
  for (const [label, type, payload] of [
    ['header', 2, encodeContentHeaderPayload(60, 1, {})],
    ['body', 3, Buffer.from('x')],
  ] as const) {
    const c = await t.raw();
    c.frame(type, 0, payload);
    t.log(label, await c.connectionOutcome());
  }
});

test('oversized-body-awaited', 'rabbit_channel:check_msg_size runs on the whole content: a body over max_message_size is awaited (a method meanwhile is 505), then 406', async (t) => {
  const q = t.q();
  const over = 134217729; // RabbitMQ 3.10's default max_message_size is 128 MiB
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'basic.publish', { exchange: '', routingKey: q, mandatory: false, immediate: false });
  c.write(encodeContentHeaderFrame(1, 60, over, {}));
  c.frame(3, 1, Buffer.alloc(100));
  const early = await c.next(() => true, 300);
  t.log('while the body is incomplete', early ? summariseFrameName(early) : 'nothing');
  c.method(1, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false });
  t.log('a method meanwhile', await c.connectionOutcome());
});

function summariseFrameName(f: { method?: { name: string } }): string {
  return f.method?.name ?? 'a frame';
}
