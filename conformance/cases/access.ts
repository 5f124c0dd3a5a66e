/**
 * Access control: vhost access, configure/write/read permissions in every method RabbitMQ checks
 * them, topic permissions, user_id validation, user limits, and what deleting users and vhosts
 * does to open connections. Users, permissions and vhosts are made through the runner's admin
 * (lib/admin.ts) under names unique to the case.
 *
 * Resource names are cf.<token>.<case>.<suffix>, so the patterns below grant by suffix: '\.cfg'
 * matches a name whose suffix starts with cfg (patterns are searched, not anchored).
 */
import type { Channel, ChannelModel } from 'amqplib';
import type { Permissions, UserLimits } from '../lib/admin.js';
import { area } from '../lib/case.js';
import type { CaseContext } from '../lib/context.js';

const test = area('access');
const PW = 'cf-password';
const DOC = 'rabbitmq.com/access-control.html';
const FULL: Permissions = { configure: '.*', write: '.*', read: '.*' };
/** configure on names ending .cfg…, write on .wr…, read on .rd…. */
const BY_SUFFIX: Permissions = { configure: '\\.cfg[^.]*$', write: '\\.wr[^.]*$', read: '\\.rd[^.]*$' };

/** A new user with perms on vhost ('/' by default; null = no permission entry). */
async function userWith(t: CaseContext, perms: Permissions | null, opts: { suffix?: string; vhost?: string; tags?: string[]; limits?: UserLimits } = {}): Promise<string> {
  const name = t.user(opts.suffix ?? 'u');
  await t.admin.putUser(name, PW, opts.tags ?? [], opts.limits);
  if (perms) await t.admin.setPermissions(opts.vhost ?? '/', name, perms);
  return name;
}

function connectAs(t: CaseContext, user: string, vhost?: string): Promise<ChannelModel> {
  return t.connect({ url: t.urlFor(user, PW, vhost) });
}

/** Records the outcome of one operation on a fresh channel of conn. */
async function attempt(t: CaseContext, conn: ChannelModel, label: string, op: (ch: Channel) => Promise<unknown>): Promise<void> {
  const ch = await t.channel(conn);
  await t.stepOk(label, () => op(ch), ch);
}

/** Publishes on a fresh channel and records whether the channel stays open (a refused publish closes it). */
async function publish(t: CaseContext, conn: ChannelModel, label: string, exchange: string, routingKey: string, options: Record<string, unknown> = {}): Promise<void> {
  const ch = await t.confirmChannel(conn);
  ch.publish(exchange, routingKey, Buffer.from('m'), options);
  const confirmed = await ch.waitForConfirms().then(() => true, () => false);
  t.log(label, confirmed ? { ok: true } : await t.closeOf(ch));
}

/** Declares with the case's own (guest) connection: what the user under test is given. */
async function asGuest(t: CaseContext, op: (ch: Channel) => Promise<unknown>): Promise<void> {
  await op(await t.channel());
}

// ---- vhost access --------------------------------------------------------------------------

test('vhost-refused-without-permission', `${DOC}#authorisation: a user reaches a vhost only with a permission entry there (530 NOT_ALLOWED)`, async (t) => {
  const user = await userWith(t, null);
  const c = await t.rawSocket();
  const r = await c.handshake({ user, password: PW });
  t.log('handshake', { opened: r.opened, close: r.close ?? null });
});

test('vhost-refused-other-vhost', `${DOC}#authorisation: permissions are per vhost`, async (t) => {
  const vhost = t.vhost();
  await t.admin.putVhost(vhost);
  const user = await userWith(t, FULL, { vhost });
  const c = await t.rawSocket();
  const r = await c.handshake({ user, password: PW, vhost: '/' });
  t.log('root', { opened: r.opened, close: r.close ?? null });
  const ok = await t.rawSocket();
  t.log('own', { opened: (await ok.handshake({ user, password: PW, vhost })).opened });
});

test('empty-patterns-grant-nothing', `${DOC}#authorisation: an empty pattern stands for ^$ (rabbit_auth_backend_internal)`, async (t) => {
  const user = await userWith(t, { configure: '', write: '', read: '' });
  const conn = await connectAs(t, user);
  await attempt(t, conn, 'declare', (ch) => ch.assertQueue(t.q('cfg')));
  await publish(t, conn, 'publish-default', '', t.q('cfg'));
  await attempt(t, conn, 'passive', (ch) => ch.checkExchange('amq.direct'));
});

test('patterns-are-searched', `${DOC}#authorisation: the regular expression is matched anywhere in the name (re:run)`, async (t) => {
  const user = await userWith(t, { configure: 'fg', write: '', read: '' });
  const conn = await connectAs(t, user);
  await attempt(t, conn, 'cfgx', (ch) => ch.assertExchange(t.x('cfgx'), 'direct'));
  await attempt(t, conn, 'ab', (ch) => ch.assertExchange(t.x('ab'), 'direct'));
});

test('patterns-match-utf8-bytes', `${DOC}#authorisation: names and patterns are matched as bytes`, async (t) => {
  const oneChar = await userWith(t, { configure: '\\..$', write: '', read: '' }, { suffix: 'one' });
  const twoChars = await userWith(t, { configure: '\\...$', write: '', read: '' }, { suffix: 'two' });
  await attempt(t, await connectAs(t, oneChar), 'one', (ch) => ch.assertExchange(t.x('é'), 'direct'));
  await attempt(t, await connectAs(t, twoChars), 'two', (ch) => ch.assertExchange(t.x('é'), 'direct'));
});

// ---- configure -----------------------------------------------------------------------------

test('exchange-declare', `${DOC}#permissions: exchange.declare needs configure; passive declares need nothing`, async (t) => {
  const other = t.x('other');
  await asGuest(t, (ch) => ch.assertExchange(other, 'direct'));
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'cfg', (ch) => ch.assertExchange(t.x('cfg'), 'direct'));
  await attempt(t, conn, 'other', (ch) => ch.assertExchange(other, 'direct'));
  await attempt(t, conn, 'new', (ch) => ch.assertExchange(t.x('new'), 'direct'));
  await attempt(t, conn, 'passive', (ch) => ch.checkExchange(other));
  await attempt(t, conn, 'passive-default', (ch) => ch.checkExchange(''));
});

test('exchange-declare-reserved-names', `${DOC}#permissions: configure is checked before the amq.* prefix rule`, async (t) => {
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'amq-new', (ch) => ch.assertExchange(`amq.${t.name('cfg')}`, 'direct'));
  await attempt(t, conn, 'amq-direct', (ch) => ch.assertExchange('amq.direct', 'direct'));
  await attempt(t, conn, 'default', (ch) => ch.assertExchange('', 'direct'));
});

test('exchange-declare-alternate-exchange', `${DOC}#permissions: a new exchange with an alternate exchange needs read on it and write on the alternate`, async (t) => {
  const user = await userWith(t, { configure: '.*', write: '\\.wr[^.]*$', read: '\\.rd[^.]*$' });
  const conn = await connectAs(t, user);
  await attempt(t, conn, 'ae-not-writable', (ch) => ch.assertExchange(t.x('rd1'), 'direct', { alternateExchange: t.x('other') }));
  await attempt(t, conn, 'x-not-readable', (ch) => ch.assertExchange(t.x('other2'), 'direct', { alternateExchange: t.x('wr1') }));
  await attempt(t, conn, 'both', (ch) => ch.assertExchange(t.x('rd2'), 'direct', { alternateExchange: t.x('wr2') }));
});

test('exchange-delete', `${DOC}#permissions: exchange.delete needs configure, even on a missing exchange; amq.* first`, async (t) => {
  const other = t.x('other');
  const cfg = t.x('cfg');
  await asGuest(t, async (ch) => {
    await ch.assertExchange(other, 'direct');
    await ch.assertExchange(cfg, 'direct');
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'other', (ch) => ch.deleteExchange(other));
  await attempt(t, conn, 'missing', (ch) => ch.deleteExchange(t.x('missing')));
  await attempt(t, conn, 'system', (ch) => ch.deleteExchange('amq.direct'));
  await attempt(t, conn, 'cfg', (ch) => ch.deleteExchange(cfg));
});

test('queue-declare', `${DOC}#permissions: queue.declare needs configure, on the generated name for server-named queues`, async (t) => {
  const other = t.q('other');
  await asGuest(t, (ch) => ch.assertQueue(other));
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'cfg', (ch) => ch.assertQueue(t.q('cfg')));
  await attempt(t, conn, 'other', (ch) => ch.assertQueue(other));
  await attempt(t, conn, 'server-named', (ch) => ch.assertQueue('', { exclusive: true }));
  await attempt(t, conn, 'amq-prefix', (ch) => ch.assertQueue(`amq.${t.name('cfg')}`));
  await attempt(t, conn, 'passive', (ch) => ch.checkQueue(other));
  await attempt(t, conn, 'passive-missing', (ch) => ch.checkQueue(t.q('missing')));
});

test('queue-declare-dead-letter-exchange', `${DOC}#permissions: a new queue with a dead-letter exchange needs read on it and write on the exchange`, async (t) => {
  const conn = await connectAs(t, await userWith(t, { configure: '.*', write: '\\.wr[^.]*$', read: '\\.rd[^.]*$' }));
  await attempt(t, conn, 'dlx-not-writable', (ch) => ch.assertQueue(t.q('rd1'), { deadLetterExchange: t.x('other') }));
  await attempt(t, conn, 'queue-not-readable', (ch) => ch.assertQueue(t.q('other2'), { deadLetterExchange: t.x('wr1') }));
  await attempt(t, conn, 'default-exchange', (ch) => ch.assertQueue(t.q('rd2'), { deadLetterExchange: '' }));
  await attempt(t, conn, 'both', (ch) => ch.assertQueue(t.q('rd3'), { deadLetterExchange: t.x('wr2') }));
});

test('queue-delete', `${DOC}#permissions: queue.delete needs configure, even on a missing queue`, async (t) => {
  const other = t.q('other');
  const cfg = t.q('cfg');
  await asGuest(t, async (ch) => {
    await ch.assertQueue(other);
    await ch.assertQueue(cfg);
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'other', (ch) => ch.deleteQueue(other));
  await attempt(t, conn, 'missing', (ch) => ch.deleteQueue(t.q('missing')));
  await attempt(t, conn, 'cfg', (ch) => ch.deleteQueue(cfg));
});

// ---- read ----------------------------------------------------------------------------------

test('read-purge-get-consume', `${DOC}#permissions: queue.purge, basic.get and basic.consume need read, checked before the queue is looked up`, async (t) => {
  const other = t.q('other');
  const rd = t.q('rd');
  await asGuest(t, async (ch) => {
    await ch.assertQueue(other);
    await ch.assertQueue(rd);
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'purge-other', (ch) => ch.purgeQueue(other));
  await attempt(t, conn, 'purge-missing', (ch) => ch.purgeQueue(t.q('missing')));
  await attempt(t, conn, 'purge-rd', (ch) => ch.purgeQueue(rd));
  await attempt(t, conn, 'get-other', (ch) => ch.get(other));
  await attempt(t, conn, 'get-missing', (ch) => ch.get(t.q('missing')));
  await attempt(t, conn, 'get-rd', (ch) => ch.get(rd));
  await attempt(t, conn, 'consume-other', (ch) => ch.consume(other, () => {}));
  await attempt(t, conn, 'consume-rd', (ch) => ch.consume(rd, () => {}));
  await attempt(t, conn, 'consume-reply-to', (ch) => ch.consume('amq.rabbitmq.reply-to', () => {}, { noAck: true }));
});

// ---- write ---------------------------------------------------------------------------------

test('basic-publish', `${DOC}#permissions: basic.publish needs write on the exchange (amq.default for the default one), checked before it is looked up`, async (t) => {
  const other = t.x('other');
  const wr = t.x('wr');
  await asGuest(t, async (ch) => {
    await ch.assertExchange(other, 'direct');
    await ch.assertExchange(wr, 'direct');
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await publish(t, conn, 'other', other, 'k');
  await publish(t, conn, 'wr', wr, 'k');
  await publish(t, conn, 'default', '', 'k');
  await publish(t, conn, 'missing', t.x('missing'), 'k');
  await publish(t, conn, 'missing-writable', t.x('wrmissing'), 'k');
});

test('publish-default-exchange-granted', `${DOC}#permissions: the default exchange is the resource amq.default`, async (t) => {
  const conn = await connectAs(t, await userWith(t, { configure: '', write: '^amq\\.default$', read: '' }));
  await publish(t, conn, 'default', '', t.q('anything'));
});

// ---- bindings ------------------------------------------------------------------------------

test('queue-bind-unbind', `${DOC}#permissions: queue.bind and queue.unbind need write on the queue and read on the exchange`, async (t) => {
  const names = { wrq: t.q('wrq'), other: t.q('other'), rdx: t.x('rdx'), otherx: t.x('otherx') };
  await asGuest(t, async (ch) => {
    await ch.assertQueue(names.wrq);
    await ch.assertQueue(names.other);
    await ch.assertExchange(names.rdx, 'direct');
    await ch.assertExchange(names.otherx, 'direct');
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'queue-not-writable', (ch) => ch.bindQueue(names.other, names.rdx, 'k'));
  await attempt(t, conn, 'exchange-not-readable', (ch) => ch.bindQueue(names.wrq, names.otherx, 'k'));
  await attempt(t, conn, 'missing-exchange-not-readable', (ch) => ch.bindQueue(names.wrq, t.x('missing'), 'k'));
  await attempt(t, conn, 'missing-exchange-readable', (ch) => ch.bindQueue(names.wrq, t.x('rdmissing'), 'k'));
  await attempt(t, conn, 'missing-queue-writable', (ch) => ch.bindQueue(t.q('wrmissing'), names.rdx, 'k'));
  await attempt(t, conn, 'default-exchange', (ch) => ch.bindQueue(names.wrq, '', 'k'));
  await attempt(t, conn, 'bind', (ch) => ch.bindQueue(names.wrq, names.rdx, 'k'));
  await attempt(t, conn, 'unbind-not-writable', (ch) => ch.unbindQueue(names.other, names.rdx, 'k'));
  await attempt(t, conn, 'unbind-not-readable', (ch) => ch.unbindQueue(names.wrq, names.otherx, 'k'));
  await attempt(t, conn, 'unbind', (ch) => ch.unbindQueue(names.wrq, names.rdx, 'k'));
});

test('exchange-bind-unbind', `${DOC}#permissions: exchange.bind and exchange.unbind need write on the destination and read on the source`, async (t) => {
  const names = { wrx: t.x('wrx'), rdx: t.x('rdx'), otherx: t.x('otherx') };
  await asGuest(t, async (ch) => {
    for (const x of Object.values(names)) await ch.assertExchange(x, 'direct');
  });
  const conn = await connectAs(t, await userWith(t, BY_SUFFIX));
  await attempt(t, conn, 'destination-not-writable', (ch) => ch.bindExchange(names.otherx, names.rdx, 'k'));
  await attempt(t, conn, 'source-not-readable', (ch) => ch.bindExchange(names.wrx, names.otherx, 'k'));
  await attempt(t, conn, 'bind', (ch) => ch.bindExchange(names.wrx, names.rdx, 'k'));
  await attempt(t, conn, 'unbind-not-writable', (ch) => ch.unbindExchange(names.otherx, names.rdx, 'k'));
  await attempt(t, conn, 'unbind', (ch) => ch.unbindExchange(names.wrx, names.rdx, 'k'));
});

// ---- topic permissions ---------------------------------------------------------------------

test('topic-publish', `${DOC}#topic-authorisation: write on the routing key of a topic exchange, {username} expanded`, async (t) => {
  const x = t.x('topic');
  await asGuest(t, (ch) => ch.assertExchange(x, 'topic'));
  const user = await userWith(t, FULL);
  await t.admin.setTopicPermissions('/', user, x, '^{username}\\.', '.*');
  const conn = await connectAs(t, user);
  await publish(t, conn, 'own-prefix', x, `${user}.key`);
  await publish(t, conn, 'other', x, 'other.key');
});

test('topic-bind-unbind', `${DOC}#topic-authorisation: read on the binding key of queue.bind, queue.unbind and exchange.bind, {vhost} expanded`, async (t) => {
  const x = t.x('topic');
  const q = t.q('q');
  const dst = t.x('dst');
  await asGuest(t, async (ch) => {
    await ch.assertExchange(x, 'topic');
    await ch.assertExchange(dst, 'topic');
    await ch.assertQueue(q);
  });
  const user = await userWith(t, FULL);
  await t.admin.setTopicPermissions('/', user, x, '.*', '^{vhost}-r\\.');
  const conn = await connectAs(t, user);
  await attempt(t, conn, 'bind-allowed', (ch) => ch.bindQueue(q, x, '/-r.#'));
  await attempt(t, conn, 'bind-refused', (ch) => ch.bindQueue(q, x, 'x.#'));
  await attempt(t, conn, 'unbind-refused', (ch) => ch.unbindQueue(q, x, 'x.#'));
  await attempt(t, conn, 'exchange-bind-refused', (ch) => ch.bindExchange(dst, x, 'x.#'));
});

test('topic-other-exchanges', `${DOC}#topic-authorisation: only topic exchanges, and only the exchange named, are checked`, async (t) => {
  const direct = t.x('direct');
  const topic = t.x('topic');
  const q = t.q('q');
  await asGuest(t, async (ch) => {
    await ch.assertExchange(direct, 'direct');
    await ch.assertExchange(topic, 'topic');
    await ch.assertQueue(q);
  });
  const user = await userWith(t, FULL);
  await t.admin.setTopicPermissions('/', user, direct, '^nomatch$', '^nomatch$');
  const conn = await connectAs(t, user);
  await publish(t, conn, 'direct', direct, 'key');
  await attempt(t, conn, 'bind-direct', (ch) => ch.bindQueue(q, direct, 'key'));
  await publish(t, conn, 'other-topic', topic, 'key');
});

test('topic-empty-pattern', `${DOC}#topic-authorisation: an empty pattern matches only the empty routing key`, async (t) => {
  const x = t.x('topic');
  const q = t.q('q');
  await asGuest(t, async (ch) => {
    await ch.assertExchange(x, 'topic');
    await ch.assertQueue(q);
  });
  const user = await userWith(t, FULL);
  await t.admin.setTopicPermissions('/', user, x, '', '');
  const conn = await connectAs(t, user);
  await publish(t, conn, 'empty', x, '');
  await publish(t, conn, 'key', x, 'a');
  await attempt(t, conn, 'bind-empty', (ch) => ch.bindQueue(q, x, ''));
  await attempt(t, conn, 'bind-key', (ch) => ch.bindQueue(q, x, 'a'));
});

// ---- user_id -------------------------------------------------------------------------------

test('user-id-validation', 'rabbitmq.com/validated-user-id.html: user_id must name the publishing user, unless it has the impersonator tag', async (t) => {
  const plain = await userWith(t, FULL, { suffix: 'plain' });
  const impersonator = await userWith(t, FULL, { suffix: 'imp', tags: ['impersonator'] });
  const conn = await connectAs(t, plain);
  await publish(t, conn, 'other-user', 'amq.direct', 'k', { userId: 'guest' });
  await publish(t, conn, 'self', 'amq.direct', 'k', { userId: plain });
  await publish(t, await connectAs(t, impersonator), 'impersonator', 'amq.direct', 'k', { userId: 'guest' });
});

// ---- changes while connected ---------------------------------------------------------------

test('permission-revoked', `${DOC}: a revoked permission refuses the next operation; the connection stays open`, async (t) => {
  const user = await userWith(t, FULL);
  const conn = await connectAs(t, user);
  const q = t.q('q');
  await attempt(t, conn, 'before', (ch) => ch.assertQueue(q));
  await t.admin.clearPermissions('/', user);
  await attempt(t, conn, 'after', (ch) => ch.assertQueue(q));
});

test('user-deleted', 'rabbitmq.com/access-control.html: deleting a user closes its connections (rabbit_connection_tracking)', async (t) => {
  const user = await userWith(t, FULL);
  const conn = await connectAs(t, user);
  await t.admin.deleteUser(user);
  t.log('close', await t.connectionCloseOf(conn));
});

test('vhost-deleted', 'rabbitmq.com/vhosts.html: deleting a vhost closes its connections and deletes its queues', async (t) => {
  const vhost = t.vhost();
  await t.admin.putVhost(vhost);
  const conn = await t.connect({ vhost });
  const ch = await t.confirmChannel(conn);
  const q = t.name('q');
  await ch.assertQueue(q, { durable: true });
  ch.sendToQueue(q, Buffer.from('m'), { persistent: true });
  await ch.waitForConfirms();
  await t.admin.deleteVhost(vhost);
  const close = await t.connectionCloseOf(conn);
  // RabbitMQ's connection tracker closes them as the vhost is deleted ("is deleted") or, when
  // its vhost supervisor stops first, as it is down ("is down"): both are recorded as one.
  t.log('close', close && { ...close, text: close.text.replace(/ is (deleted|down)$/, ' is deleted|down') });
  await t.admin.putVhost(vhost);
  const again = await t.connect({ vhost });
  await attempt(t, again, 'queue-after', (c) => c.checkQueue(q));
});

// ---- user limits ---------------------------------------------------------------------------

test('user-max-connections', 'rabbitmq.com/user-limits.html: max-connections (0 refuses all)', async (t) => {
  const one = await userWith(t, FULL, { suffix: 'one', limits: { 'max-connections': 1 } });
  const none = await userWith(t, FULL, { suffix: 'none', limits: { 'max-connections': 0 } });
  const first = await t.rawSocket();
  t.log('first', { opened: (await first.handshake({ user: one, password: PW })).opened });
  const second = await t.rawSocket();
  const r = await second.handshake({ user: one, password: PW });
  t.log('second', { opened: r.opened, close: r.close ?? null });
  const zero = await t.rawSocket();
  const z = await zero.handshake({ user: none, password: PW });
  t.log('zero', { opened: z.opened, close: z.close ?? null });
});

test('user-max-channels', 'rabbitmq.com/user-limits.html: max-channels, across the connection', async (t) => {
  const user = await userWith(t, FULL, { limits: { 'max-channels': 2 } });
  const c = await t.rawSocket();
  await c.handshake({ user, password: PW });
  c.method(1, 'channel.open', {});
  t.log('first', (await c.nextMethod(['channel.open-ok'], 2000))?.name ?? null);
  c.method(2, 'channel.open', {});
  t.log('second', (await c.nextMethod(['channel.open-ok'], 2000))?.name ?? null);
  c.method(3, 'channel.open', {});
  t.log('third', await c.connectionOutcome());
});
