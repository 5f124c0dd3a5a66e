/** Connection and channel lifecycle: handshake, server properties, auth, vhosts, tuning, channels. */
import { F } from '../../src/frame/field-table.js';
import { encodeContentHeaderFrame } from '../../src/frame/generated/properties.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';
import { serverPropertyValue } from '../lib/normalise.js';
import type { HandshakeOptions, HandshakeResult, RawClient } from '../lib/raw-client.js';
import { typedTable, type Typed } from '../lib/typed.js';

const test = area('connection');

function handshakeFacts(r: HandshakeResult): unknown {
  return { opened: r.opened, close: r.close ?? null, socketClosed: r.socketClosed };
}

async function tryHandshake(t: CaseContext, opts: HandshakeOptions): Promise<HandshakeResult> {
  const c = await t.rawSocket();
  return c.handshake(opts);
}

test('start-version-mechanisms-locales', 'spec 1.4.2.1 connection.start; rabbitmq.com/amqp-0-9-1-reference.html#connection.start', async (t) => {
  const c = await t.rawSocket();
  c.sendProtocolHeader();
  const s = await c.expect('connection.start');
  t.log('start', { versionMajor: s.versionMajor, versionMinor: s.versionMinor, mechanisms: s.mechanisms.toString(), locales: s.locales.toString() });
});

test('server-properties', 'rabbitmq.com/connections.html#capabilities; spec 1.4.2.1.3 server-properties', async (t) => {
  const c = await t.rawSocket();
  c.sendProtocolHeader();
  const s = await c.expect('connection.start');
  const props = typedTable(s.serverProperties);
  const out: Record<string, Typed> = {};
  for (const [k, v] of Object.entries(props)) out[k] = typeof v === 'string' ? serverPropertyValue(k, v) : v;
  t.log('serverProperties', out);
});

test('tune-defaults', 'spec 1.4.2.5 connection.tune; rabbitmq.com/configure.html (channel_max 2047, frame_max 131072, heartbeat 60)', async (t) => {
  const c = await t.rawSocket();
  const r = await c.handshake();
  t.log('tune', r.tune ?? null);
  t.log('opened', r.opened);
});

test('open-ok', 'spec 1.4.2.8 connection.open-ok', async (t) => {
  const c = await t.raw();
  const f = c.frames.find((x) => x.method?.name === 'connection.open-ok');
  t.log('open-ok', f ? (f.method?.args as Record<string, unknown>) : null);
});

test('auth-bad-password', 'rabbitmq.com/access-control.html; rabbitmq.com/auth-notification.html (authentication_failure_close)', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { password: 'wrong-password' })));
});

test('auth-unknown-user', 'rabbitmq.com/access-control.html; rabbitmq.com/auth-notification.html', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { user: 'no-such-user', password: 'x' })));
});

test('auth-failure-without-capability', 'rabbitmq.com/auth-notification.html: without authentication_failure_close the server just closes the socket', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { password: 'wrong-password', capabilities: null })));
});

test('auth-unknown-mechanism', 'spec 1.4.2.2 connection.start-ok mechanism: "must contain one of the security mechanisms proposed by the server"', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { mechanism: 'FOO' })));
});

test('auth-amqplain', 'rabbitmq.com/access-control.html#mechanisms (AMQPLAIN)', async (t) => {
  const c = await t.rawSocket();
  // AMQPLAIN's response is a field table without its length prefix.
  const table = Buffer.concat([
    Buffer.from([5]), Buffer.from('LOGIN'), Buffer.from('S'), u32(5), Buffer.from('guest'),
    Buffer.from([8]), Buffer.from('PASSWORD'), Buffer.from('S'), u32(5), Buffer.from('guest'),
  ]);
  t.log('handshake', handshakeFacts(await c.handshake({ mechanism: 'AMQPLAIN', response: table })));
});

test('plain-malformed-response', 'rabbitmq.com/access-control.html#mechanisms (PLAIN response \\0user\\0pass)', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { response: Buffer.from('guest') })));
});

test('vhost-not-found', 'rabbitmq.com/vhosts.html; spec 1.4.2.7 connection.open', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { vhost: 'no-such-vhost' })));
});

test('frame-max-below-minimum', 'spec 1.4.2.6.2 connection.tune-ok frame-max: "at least frame-min-size (4096)"', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { frameMax: 4095 })));
});

test('frame-max-above-server', 'spec 1.4.2.6 connection.tune-ok rule: frame-max must not exceed the server\'s', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { frameMax: 131073 })));
});

test('frame-max-zero', 'spec 1.4.2.6 frame-max 0 means no limit; rabbitmq.com/configure.html frame_max', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { frameMax: 0 })));
});

test('channel-max-above-server', 'spec 1.4.2.6 connection.tune-ok channel-max: must not exceed the server\'s', async (t) => {
  t.log('handshake', handshakeFacts(await tryHandshake(t, { channelMax: 5000 })));
});

test('channel-above-negotiated-max', 'spec 1.4.2.6 channel-max; rabbitmq.com/channels.html#channel-max', async (t) => {
  const c = await t.raw({ channelMax: 10 });
  c.method(11, 'channel.open', {});
  const m = await c.nextMethod([], 2000);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('channel-count-above-negotiated-max', 'spec 1.4.2.6 channel-max; rabbitmq.com/channels.html#channel-max (rabbit_reader counts open channels)', async (t) => {
  const c = await t.raw({ channelMax: 3 });
  // The limit counts open channels, not channel numbers: 1, 2 and 40 fit in channel_max 3,
  // and a closed channel frees its place.
  for (const n of [1, 2, 40]) await c.openChannel(n);
  c.method(2, 'channel.close', { replyCode: 200, replyText: 'bye', classId: 0, methodId: 0 });
  t.log('close-ok', (await c.nextMethod(['channel.close-ok', 'connection.close']))?.name ?? null);
  c.method(7, 'channel.open', {});
  t.log('reopen', (await c.nextMethod(['channel.open-ok', 'connection.close']))?.name ?? null);
  c.method(8, 'channel.open', {});
  t.log('outcome', await c.outcome());
});

test('channel-max-counts-any-frame', 'spec 1.4.2.6 channel-max; rabbit_reader:process_frame creates a channel for any frame on a new channel number', async (t) => {
  // At the limit, a method other than channel.open or a content header on a new channel is
  // refused with 530 too (below it they are 504 / 505).
  for (const [label, send] of [
    ['qos', (c: RawClient) => c.method(5, 'basic.qos', { prefetchSize: 0, prefetchCount: 1, global: false })],
    ['header', (c: RawClient) => c.write(encodeContentHeaderFrame(5, 60, 0, {}))],
  ] as const) {
    const c = await t.raw({ channelMax: 2 });
    for (const n of [1, 2]) await c.openChannel(n);
    send(c);
    t.log(label, await c.outcome());
  }
});

test('channel-open-close-reopen', 'spec 1.5.2.1 channel.open, 1.5.2.5 channel.close; a closed channel number may be reused', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'channel.close', { replyCode: 200, replyText: 'bye', classId: 0, methodId: 0 });
  t.log('close-ok', (await c.nextMethod(['channel.close-ok', 'connection.close']))?.name ?? null);
  c.method(1, 'channel.open', {});
  t.log('reopen', (await c.nextMethod(['channel.open-ok', 'connection.close']))?.name ?? null);
});

test('channel-open-twice', 'spec 1.5.2.1 channel.open; RabbitMQ: second channel.open is a 504 CHANNEL_ERROR', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'channel.open', {});
  t.log('outcome', await c.outcome());
});

test('channel-zero-open', 'spec 2.3.5 channel 0 is the connection channel', async (t) => {
  const c = await t.raw();
  c.method(0, 'channel.open', {});
  t.log('outcome', await c.outcome());
});

test('method-on-unopened-channel', 'spec 2.3.5: a peer must not use a channel that is not open; RabbitMQ: 504 CHANNEL_ERROR', async (t) => {
  const c = await t.raw();
  c.method(3, 'queue.declare', { queue: t.name('q'), passive: false, durable: false, exclusive: true, autoDelete: false, noWait: false, arguments: {} });
  t.log('outcome', await c.outcome());
});

test('channel-flow-active', 'spec 1.5.2.3 channel.flow', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'channel.flow', { active: true });
  const m = await c.nextMethod(['channel.flow-ok', 'channel.close', 'connection.close']);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('channel-flow-inactive', 'spec 1.5.2.3 channel.flow active=false; RabbitMQ does not support stopping the flow from the client', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'channel.flow', { active: false });
  t.log('outcome', await c.outcome());
});

test('client-connection-close', 'spec 1.4.2.9 connection.close / close-ok', async (t) => {
  const c = await t.raw();
  c.method(0, 'connection.close', { replyCode: 200, replyText: 'Goodbye', classId: 0, methodId: 0 });
  const m = await c.nextMethod(['connection.close-ok']);
  t.log('close-ok', m?.name ?? null);
  t.log('socketClosedWithin300ms', await c.waitClosed(300));
});

test('methods-ignored-until-close-ok', 'spec 1.5.2.5 channel.close: "after sending this method, any received methods except Close and Close-OK MUST be discarded"', async (t) => {
  const c = await t.raw();
  c.autoChannelCloseOk = false;
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: t.name('missing'), passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false });
  const close = await c.nextClose();
  t.log('close', close);
  // The channel is closing: this declare must be ignored, not answered.
  c.method(1, 'queue.declare', { queue: '', passive: false, durable: false, exclusive: true, autoDelete: true, noWait: false });
  c.method(1, 'channel.close-ok', {});
  c.method(1, 'channel.open', {});
  const next = await c.nextMethod([]);
  t.log('next', next?.name ?? null);
});

test('access-request', 'spec 1.6 access.request (deprecated); RabbitMQ answers access.request-ok', async (t) => {
  const c = await t.raw();
  await c.openChannel(1);
  c.method(1, 'access.request', { realm: '/data', exclusive: false, passive: true, active: true, write: true, read: true });
  const m = await c.nextMethod([]);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('heartbeat-sent-by-server', 'spec 4.2.7 heartbeat frames; rabbitmq.com/heartbeats.html', async (t) => {
  const c = await t.raw({ heartbeat: 1 });
  const hb = await c.next((f) => f.type === 8, 3000);
  t.log('heartbeat', hb ? { channel: hb.channel, size: hb.payload.length } : null);
}, { timeoutMs: 6000 });

test('heartbeat-from-client-accepted', 'spec 4.2.7: heartbeat frames on channel 0 are always allowed', async (t) => {
  const c = await t.raw();
  c.frame(8, 0, Buffer.alloc(0));
  await c.openChannel(1);
  t.log('channel-open-after-heartbeat', true);
});

test('update-secret', 'rabbitmq.com/amqp-0-9-1-reference.html#connection.update-secret', async (t) => {
  const c = await t.raw();
  c.method(0, 'connection.update-secret', { newSecret: Buffer.from('guest'), reason: 'rotate' });
  const m = await c.nextMethod([], 2000);
  t.log('reply', m ? { name: m.name, args: m.args } : null);
});

test('amqplib-connect-and-channels', 'rabbitmq.com/channels.html: many channels on one connection', async (t) => {
  const conn = await t.connect();
  const chans = await Promise.all([1, 2, 3].map(() => t.channel(conn)));
  t.log('channels', chans.map((c) => t.channelNumber(c)));
  const q = t.q();
  await chans[0]!.assertQueue(q, { durable: false });
  chans[1]!.sendToQueue(q, Buffer.from('via channel 2'));
  const m = await t.waitFor(() => chans[2]!.get(q, { noAck: true }));
  t.log('got', t.msg(m));
});

test('soft-error-keeps-connection', 'spec 1.5.2.5: channel errors close only the channel', async (t) => {
  const conn = await t.connect();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  await t.step('passive-missing', a.checkQueue(t.name('missing')));
  await t.step('other-channel-still-works', b.assertQueue('', { exclusive: true }), (r) => ({ messageCount: r.messageCount, consumerCount: r.consumerCount }));
});

test('hard-error-closes-all-channels', 'spec 1.4.2.9: connection exceptions close the connection and all its channels', async (t) => {
  const conn = await t.connect();
  const a = await t.channel(conn);
  const b = await t.channel(conn);
  await t.step('declare-bad-type', a.assertExchange(t.x(), 'no-such-type'));
  t.log('other-channel', await t.closeOf(b));
  t.log('connection', await t.connectionCloseOf(conn));
});

test('client-properties-capabilities-ignored-if-absent', 'rabbitmq.com/consumer-cancel.html: clients without consumer_cancel_notify get no basic.cancel', async (t) => {
  const c = await t.raw({ capabilities: { publisher_confirms: F.bool(true) } });
  await c.openChannel(1);
  const q = t.q();
  c.method(1, 'queue.declare', { queue: q, passive: false, durable: false, exclusive: false, autoDelete: false, noWait: false });
  await c.expect('queue.declare-ok');
  c.method(1, 'basic.consume', { queue: q, consumerTag: 'c1', noLocal: false, noAck: true, exclusive: false, noWait: false });
  await c.expect('basic.consume-ok');
  const conn = await t.connect();
  const ch = await t.channel(conn);
  await ch.deleteQueue(q);
  await t.sleep(150);
  t.log('after-queue-delete', c.drain());
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

test('auth-plain-with-authzid', 'rabbit_auth_mechanism_plain: the response is \\0user\\0password; one with an authorisation identity is invalid, and the socket is closed', async (t) => {
  for (const authzid of ['guest', 'x']) {
    t.log(authzid, handshakeFacts(await tryHandshake(t, { response: Buffer.from(`${authzid}\u0000guest\u0000guest`) })));
  }
});

test('auth-amqplain-malformed', 'rabbit_auth_mechanism_amqplain: a response without LOGIN or PASSWORD, or not a table, is a protocol error: the socket is closed without a frame', async (t) => {
  const login = Buffer.concat([Buffer.from([5]), Buffer.from('LOGIN'), Buffer.from('S'), u32(5), Buffer.from('guest')]);
  t.log('login only', handshakeFacts(await tryHandshake(t, { mechanism: 'AMQPLAIN', response: login })));
  t.log('not a table', handshakeFacts(await tryHandshake(t, { mechanism: 'AMQPLAIN', response: Buffer.from('zzzz') })));
});

test('channel-open-before-close-ok', 'rabbit_reader: a channel the server closed stays open until the client\'s close-ok; a channel.open for it before that is a second channel.open (504)', async (t) => {
  const c = await t.raw();
  c.autoChannelCloseOk = false;
  await c.openChannel(1);
  c.method(1, 'queue.declare', { queue: t.q('missing'), passive: true, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
  const close = await c.nextMethod(['channel.close']);
  t.log('server closes the channel', close ? close.name : null);
  c.method(1, 'channel.open', { reserved1: '' });
  t.log('channel.open before close-ok', await c.connectionOutcome());
});
