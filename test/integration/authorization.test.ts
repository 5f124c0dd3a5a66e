import { expect } from 'chai';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Permissions } from '../../src/access/records.js';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { useBroker } from '../support/broker.js';
import { connect } from '../support/amqp.js';

/**
 * Authorization as RabbitMQ 3.10 checks it (rabbit_channel check_*_permitted,
 * rabbit_access_control), driven over amqplib. Every refusal text and the order of the checks
 * were first observed on a reference RabbitMQ 3.10.8 with the same users and permissions (the
 * conformance cases in conformance/cases/access.ts record them).
 */

type Outcome = 'ok' | { code: number; text: string; classId: number; methodId: number };

/** Runs op on a fresh confirm channel; 'ok' once it and its publishes (confirmed) are done, else the channel's close. */
async function attempt(conn: ChannelModel, op: (ch: ConfirmChannel) => Promise<unknown>): Promise<Outcome> {
  const ch = await conn.createConfirmChannel();
  let error: (Error & { code?: number; classId?: number; methodId?: number }) | undefined;
  ch.on('error', (e: Error) => {
    error = e;
  });
  const closed = new Promise<void>((resolve) => ch.once('close', () => resolve()));
  try {
    await op(ch);
    await ch.waitForConfirms();
    await ch.close();
    return 'ok';
  } catch (thrown) {
    await closed;
    const e = error ?? (thrown as NonNullable<typeof error>);
    const m = /with message "(.*)"$/.exec(e.message);
    // Server-named queues get random names: the text names one, whichever it is.
    const text = (m ? m[1]! : e.message).replace(/amq\.gen-[A-Za-z0-9_-]{22}/, 'amq.gen-*');
    return { code: e.code ?? 0, text, classId: e.classId ?? 0, methodId: e.methodId ?? 0 };
  }
}

const refused = (what: string, user: string, classId: number, methodId: number): Outcome => ({
  code: 403, text: `ACCESS_REFUSED - access to ${what} refused for user '${user}'`, classId, methodId,
});

const FULL: Permissions = { configure: '.*', write: '.*', read: '.*' };

describe('authorization: deny by default', () => {
  const b = useBroker();

  before(() => {
    const access = b.running.broker.access;
    access.putUser('nobody', { password: 'pw', tags: [] });
    access.putUser('dev-only', { password: 'pw', tags: [] });
    b.running.broker.putVhost('dev', {});
    access.setPermission('dev-only', 'dev', FULL);
  });

  it('refuses connection.open without a permission entry in the vhost: 530, as check_vhost_access', async () => {
    for (const [user, vhost] of [['nobody', '/'], ['dev-only', '/'], ['guest', 'dev']] as const) {
      const c = await RawClient.connect(b.url);
      const { opened, close } = await c.handshake({ user, password: user === 'guest' ? 'guest' : 'pw', vhost });
      c.destroy();
      expect(opened, `${user} on ${vhost}`).to.equal(false);
      expect(close).to.deep.equal({ code: 530, text: `NOT_ALLOWED - access to vhost '${vhost}' refused for user '${user}'`, classId: 10, methodId: 40 });
    }
    const ok = await RawClient.open(b.url, { user: 'dev-only', password: 'pw', vhost: 'dev' });
    ok.destroy();
  });

  it('an empty pattern grants nothing: a user with "" "" "" opens the vhost and may touch nothing', async () => {
    b.running.broker.access.setPermission('nobody', '/', { configure: '', write: '', read: '' });
    const conn = await connect(b.url.replace('guest:guest', 'nobody:pw'));
    try {
      expect(await attempt(conn, (ch) => ch.assertQueue('anything'))).to.deep.equal(refused("queue 'anything' in vhost '/'", 'nobody', 50, 10));
      expect(await attempt(conn, async (ch) => ch.publish('', 'anything', Buffer.from('x')))).to.deep.equal(refused("exchange 'amq.default' in vhost '/'", 'nobody', 60, 40));
    } finally {
      await conn.close();
    }
  });
});

/**
 * The matrix: for each AMQP method RabbitMQ checks, a user holding every permission and three
 * users each lacking one of configure, write and read. A method is refused for a user exactly
 * when it needs the permission that user lacks, naming the first resource RabbitMQ checks it on.
 */
describe('authorization matrix: each method against each missing permission', () => {
  const b = useBroker();
  const users: Record<string, Permissions> = {
    full: FULL,
    noconfigure: { configure: '', write: '.*', read: '.*' },
    nowrite: { configure: '.*', write: '', read: '.*' },
    noread: { configure: '.*', write: '.*', read: '' },
  };
  const conns = new Map<string, ChannelModel>();

  type Need = { permission: keyof Permissions; what: (u: string) => string };
  interface Row {
    method: string;
    classId: number;
    methodId: number;
    /** What the method needs, in the order RabbitMQ checks it. */
    needs: Need[];
    op: (ch: ConfirmChannel, user: string) => Promise<unknown>;
  }
  const need = (permission: keyof Permissions, kind: 'queue' | 'exchange', name: string | ((u: string) => string)): Need => ({
    permission, what: (u) => `${kind} '${typeof name === 'string' ? name : name(u)}' in vhost '/'`,
  });
  const rows: Row[] = [
    { method: 'exchange.declare', classId: 40, methodId: 10, needs: [need('configure', 'exchange', (u) => `mx.x.${u}`)], op: (ch, u) => ch.assertExchange(`mx.x.${u}`, 'direct') },
    { method: 'exchange.declare passive', classId: 40, methodId: 10, needs: [], op: (ch) => ch.checkExchange('mx.src') },
    {
      method: 'exchange.declare with an alternate exchange', classId: 40, methodId: 10,
      needs: [need('configure', 'exchange', (u) => `mx.ae-user.${u}`), need('read', 'exchange', (u) => `mx.ae-user.${u}`), need('write', 'exchange', 'mx.ae')],
      op: (ch, u) => ch.assertExchange(`mx.ae-user.${u}`, 'direct', { alternateExchange: 'mx.ae' }),
    },
    { method: 'exchange.delete', classId: 40, methodId: 20, needs: [need('configure', 'exchange', (u) => `mx.del-x.${u}`)], op: (ch, u) => ch.deleteExchange(`mx.del-x.${u}`) },
    { method: 'queue.declare', classId: 50, methodId: 10, needs: [need('configure', 'queue', (u) => `mx.q.${u}`)], op: (ch, u) => ch.assertQueue(`mx.q.${u}`) },
    { method: 'queue.declare server-named', classId: 50, methodId: 10, needs: [need('configure', 'queue', 'amq.gen-*')], op: (ch) => ch.assertQueue('', { exclusive: true }) },
    {
      method: 'queue.declare with a dead-letter exchange', classId: 50, methodId: 10,
      needs: [need('configure', 'queue', (u) => `mx.dlq.${u}`), need('read', 'queue', (u) => `mx.dlq.${u}`), need('write', 'exchange', 'mx.dlx')],
      op: (ch, u) => ch.assertQueue(`mx.dlq.${u}`, { deadLetterExchange: 'mx.dlx' }),
    },
    { method: 'queue.declare passive', classId: 50, methodId: 10, needs: [], op: (ch) => ch.checkQueue('mx.q') },
    { method: 'queue.delete', classId: 50, methodId: 40, needs: [need('configure', 'queue', (u) => `mx.del-q.${u}`)], op: (ch, u) => ch.deleteQueue(`mx.del-q.${u}`) },
    { method: 'queue.purge', classId: 50, methodId: 30, needs: [need('read', 'queue', 'mx.q')], op: (ch) => ch.purgeQueue('mx.q') },
    { method: 'queue.bind', classId: 50, methodId: 20, needs: [need('write', 'queue', 'mx.q'), need('read', 'exchange', 'mx.src')], op: (ch, u) => ch.bindQueue('mx.q', 'mx.src', u) },
    { method: 'queue.unbind', classId: 50, methodId: 50, needs: [need('write', 'queue', 'mx.q'), need('read', 'exchange', 'mx.src')], op: (ch, u) => ch.unbindQueue('mx.q', 'mx.src', u) },
    { method: 'exchange.bind', classId: 40, methodId: 30, needs: [need('write', 'exchange', 'mx.dst'), need('read', 'exchange', 'mx.src')], op: (ch, u) => ch.bindExchange('mx.dst', 'mx.src', u) },
    { method: 'exchange.unbind', classId: 40, methodId: 40, needs: [need('write', 'exchange', 'mx.dst'), need('read', 'exchange', 'mx.src')], op: (ch, u) => ch.unbindExchange('mx.dst', 'mx.src', u) },
    { method: 'basic.publish', classId: 60, methodId: 40, needs: [need('write', 'exchange', 'mx.src')], op: async (ch) => ch.publish('mx.src', 'k', Buffer.from('m')) },
    { method: 'basic.publish to the default exchange', classId: 60, methodId: 40, needs: [need('write', 'exchange', 'amq.default')], op: async (ch) => ch.sendToQueue('mx.q', Buffer.from('m')) },
    { method: 'basic.get', classId: 60, methodId: 70, needs: [need('read', 'queue', 'mx.q')], op: (ch) => ch.get('mx.q', { noAck: true }) },
    {
      method: 'basic.consume', classId: 60, methodId: 20, needs: [need('read', 'queue', 'mx.q')],
      op: async (ch) => ch.cancel((await ch.consume('mx.q', () => {}, { noAck: true })).consumerTag),
    },
    { method: 'basic.consume of amq.rabbitmq.reply-to', classId: 60, methodId: 20, needs: [], op: (ch) => ch.consume('amq.rabbitmq.reply-to', () => {}, { noAck: true }) },
  ];

  before(async () => {
    const { broker } = b.running;
    const guest = await connect(b.url);
    const ch = await guest.createChannel();
    await ch.assertExchange('mx.src', 'direct');
    await ch.assertExchange('mx.dst', 'fanout');
    await ch.assertExchange('mx.ae', 'fanout');
    await ch.assertExchange('mx.dlx', 'fanout');
    await ch.assertQueue('mx.q');
    for (const [user, perms] of Object.entries(users)) {
      broker.access.putUser(user, { password: 'pw', tags: [] });
      broker.access.setPermission(user, '/', perms);
      await ch.assertExchange(`mx.del-x.${user}`, 'direct');
      await ch.assertQueue(`mx.del-q.${user}`);
      conns.set(user, await connect(b.url.replace('guest:guest', `${user}:pw`)));
    }
    await guest.close();
  });

  after(async () => {
    for (const c of conns.values()) await c.close().catch(() => {});
  });

  for (const row of rows) {
    it(`${row.method}: needs ${row.needs.length ? [...new Set(row.needs.map((n) => n.permission))].join(' and ') : 'no permission'}`, async () => {
      for (const [user, perms] of Object.entries(users)) {
        const missing = (Object.keys(perms) as Array<keyof Permissions>).find((p) => perms[p] === '');
        const first = row.needs.find((n) => n.permission === missing);
        const expected = first ? refused(first.what(user), user, row.classId, row.methodId) : 'ok';
        expect(await attempt(conns.get(user)!, (ch) => row.op(ch, user)), `${row.method} by ${user}`).to.deep.equal(expected);
      }
    });
  }
});

/** The rules around the permission checks, each seen on RabbitMQ 3.10.8 with the same user. */
describe('authorization: order of checks and special names', () => {
  const b = useBroker();
  let conn: ChannelModel;
  const user = 'rx';

  before(async () => {
    const { broker } = b.running;
    broker.access.putUser(user, { password: 'pw', tags: [] });
    // Patterns are searched, not anchored: '^cfg' is a prefix, 'fg' would match 'cfgx'.
    broker.access.setPermission(user, '/', { configure: '^cfg', write: '^wr', read: '^rd' });
    const guest = await connect(b.url);
    const ch = await guest.createChannel();
    for (const q of ['cfgq', 'wrq', 'rdq', 'other']) await ch.assertQueue(q);
    for (const x of ['cfgx', 'wrx', 'rdx', 'otherx']) await ch.assertExchange(x, 'direct');
    await guest.close();
    conn = await connect(b.url.replace('guest:guest', `${user}:pw`));
  });

  after(() => conn.close().catch(() => {}));

  const expectRefused = async (op: (ch: ConfirmChannel) => Promise<unknown>, what: string, classId: number, methodId: number) =>
    expect(await attempt(conn, op)).to.deep.equal(refused(what, user, classId, methodId));

  it('exchange.declare checks configure before the amq.* prefix and before looking the exchange up', async () => {
    await expectRefused((ch) => ch.assertExchange('amq.foo', 'direct'), "exchange 'amq.foo' in vhost '/'", 40, 10);
    await expectRefused((ch) => ch.assertExchange('amq.direct', 'direct'), "exchange 'amq.direct' in vhost '/'", 40, 10);
    expect(await attempt(conn, (ch) => ch.assertExchange('cfg-new', 'direct'))).to.equal('ok');
  });

  it('exchange.delete refuses system exchanges before checking configure, and checks configure on a missing exchange', async () => {
    expect(await attempt(conn, (ch) => ch.deleteExchange('amq.direct'))).to.deep.equal({
      code: 403, text: "ACCESS_REFUSED - deletion of system exchange 'amq.direct' in vhost '/' not allowed", classId: 40, methodId: 20,
    });
    await expectRefused((ch) => ch.deleteExchange('nosuchx'), "exchange 'nosuchx' in vhost '/'", 40, 20);
  });

  it('queue.declare refuses the amq.* prefix before checking configure', async () => {
    expect(await attempt(conn, (ch) => ch.assertQueue('amq.foo'))).to.deep.equal({
      code: 403, text: "ACCESS_REFUSED - queue name 'amq.foo' contains reserved prefix 'amq.*'", classId: 50, methodId: 10,
    });
  });

  it('a refusal comes before a missing resource: 403, not 404, without the permission', async () => {
    await expectRefused((ch) => ch.deleteQueue('missingq'), "queue 'missingq' in vhost '/'", 50, 40);
    await expectRefused((ch) => ch.purgeQueue('missingq'), "queue 'missingq' in vhost '/'", 50, 30);
    await expectRefused((ch) => ch.get('missingq'), "queue 'missingq' in vhost '/'", 60, 70);
    await expectRefused((ch) => ch.bindQueue('wrq', 'missingx', 'k'), "exchange 'missingx' in vhost '/'", 50, 20);
    await expectRefused(async (ch) => ch.publish('missingx', 'k', Buffer.from('m')), "exchange 'missingx' in vhost '/'", 60, 40);
    // With the permission, the resource's absence is what is reported.
    expect(await attempt(conn, async (ch) => ch.publish('wrmissing', 'k', Buffer.from('m')))).to.deep.equal({
      code: 404, text: "NOT_FOUND - no exchange 'wrmissing' in vhost '/'", classId: 60, methodId: 40,
    });
    expect(await attempt(conn, (ch) => ch.bindQueue('wrq', 'rdmissing', 'k'))).to.deep.equal({
      code: 404, text: "NOT_FOUND - no exchange 'rdmissing' in vhost '/'", classId: 50, methodId: 20,
    });
    expect(await attempt(conn, (ch) => ch.checkQueue('missingq'))).to.deep.equal({
      code: 404, text: "NOT_FOUND - no queue 'missingq' in vhost '/'", classId: 50, methodId: 10,
    });
  });

  it('binding to or from the default exchange is refused after write on the destination', async () => {
    expect(await attempt(conn, (ch) => ch.bindQueue('wrq', '', 'k'))).to.deep.equal({
      code: 403, text: 'ACCESS_REFUSED - operation not permitted on the default exchange', classId: 50, methodId: 20,
    });
    await expectRefused((ch) => ch.bindQueue('other', '', 'k'), "queue 'other' in vhost '/'", 50, 20);
  });

  it('what passes: each permission on the names its pattern matches', async () => {
    expect(await attempt(conn, (ch) => ch.bindQueue('wrq', 'rdx', 'k'))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.bindExchange('wrx', 'rdx', 'k'))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.purgeQueue('rdq'))).to.equal('ok');
    expect(await attempt(conn, async (ch) => ch.publish('wrx', 'k', Buffer.from('m')))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.assertQueue('cfgq'))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.checkQueue('other'))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.checkExchange('otherx'))).to.equal('ok');
  });

  it('a permission change applies to the next operation, also on connections and channels already open', async () => {
    const { access } = b.running.broker;
    const ch = await conn.createConfirmChannel();
    ch.on('error', () => {});
    ch.publish('wrx', 'k', Buffer.from('m'));
    await ch.waitForConfirms();
    access.setPermission(user, '/', { configure: '^cfg', write: '^nothing$', read: '^rd' });
    try {
      const closed = new Promise<Error>((resolve) => ch.once('error', resolve));
      ch.publish('wrx', 'k', Buffer.from('m'));
      expect((await closed).message).to.contain(`ACCESS_REFUSED - access to exchange 'wrx' in vhost '/' refused for user '${user}'`);
    } finally {
      access.setPermission(user, '/', { configure: '^cfg', write: '^wr', read: '^rd' });
    }
    expect(await attempt(conn, async (c) => c.publish('wrx', 'k', Buffer.from('m')))).to.equal('ok');
  });
});

describe('authorization: topic permissions', () => {
  const b = useBroker();
  let conn: ChannelModel;
  let devConn: ChannelModel;

  before(async () => {
    const { broker } = b.running;
    broker.putVhost('tv', {});
    broker.access.putUser('tp', { password: 'pw', tags: [] });
    broker.access.setPermission('tp', '/', FULL);
    broker.access.setPermission('tp', 'tv', FULL);
    broker.access.setTopicPermission('tp', '/', 'amq.topic', { write: '^{username}\\.', read: '^{vhost}-r\\.' });
    broker.access.setTopicPermission('tp', '/', 'amq.direct', { write: '^nomatch$', read: '^nomatch$' });
    broker.access.setTopicPermission('tp', 'tv', 'amq.topic', { write: '^a', read: '' });
    conn = await connect(b.url.replace('guest:guest', 'tp:pw'));
    devConn = await connect(`${b.url.replace('guest:guest', 'tp:pw')}/tv`);
    const ch = await conn.createChannel();
    await ch.assertQueue('tq');
    await ch.assertExchange('tx2', 'topic');
    await ch.close();
    const dch = await devConn.createChannel();
    await dch.assertQueue('tvq');
    await dch.close();
  });

  after(async () => {
    await conn.close().catch(() => {});
    await devConn.close().catch(() => {});
  });

  const topicRefused = (key: string, vhost: string, classId: number, methodId: number): Outcome => ({
    code: 403, text: `ACCESS_REFUSED - access to topic '${key}' in exchange 'amq.topic' in vhost '${vhost}' refused for user 'tp'`, classId, methodId,
  });

  it('publish: write on the routing key, {username} expanded', async () => {
    expect(await attempt(conn, async (ch) => ch.publish('amq.topic', 'tp.x', Buffer.from('m')))).to.equal('ok');
    expect(await attempt(conn, async (ch) => ch.publish('amq.topic', 'other.x', Buffer.from('m')))).to.deep.equal(topicRefused('other.x', '/', 60, 40));
  });

  it('applies to topic exchanges only, and only to the exchange it names', async () => {
    expect(await attempt(conn, async (ch) => ch.publish('tx2', 'other.x', Buffer.from('m')))).to.equal('ok');
    expect(await attempt(conn, async (ch) => ch.publish('amq.direct', 'other.x', Buffer.from('m')))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.bindQueue('tq', 'amq.direct', 'x.#'))).to.equal('ok');
  });

  it('queue.bind, queue.unbind and exchange.bind: read on the binding key, {vhost} expanded', async () => {
    expect(await attempt(conn, (ch) => ch.bindQueue('tq', 'amq.topic', '/-r.#'))).to.equal('ok');
    expect(await attempt(conn, (ch) => ch.bindQueue('tq', 'amq.topic', 'x.#'))).to.deep.equal(topicRefused('x.#', '/', 50, 20));
    expect(await attempt(conn, (ch) => ch.unbindQueue('tq', 'amq.topic', 'x.#'))).to.deep.equal(topicRefused('x.#', '/', 50, 50));
    expect(await attempt(conn, (ch) => ch.bindExchange('tx2', 'amq.topic', 'x.#'))).to.deep.equal(topicRefused('x.#', '/', 40, 30));
  });

  it('patterns are per vhost, and an empty one matches only the empty key', async () => {
    expect(await attempt(devConn, async (ch) => ch.publish('amq.topic', 'abc', Buffer.from('m')))).to.equal('ok');
    expect(await attempt(devConn, async (ch) => ch.publish('amq.topic', 'bc', Buffer.from('m')))).to.deep.equal(topicRefused('bc', 'tv', 60, 40));
    expect(await attempt(devConn, async (ch) => ch.publish('amq.topic', '', Buffer.from('m')))).to.deep.equal(topicRefused('', 'tv', 60, 40));
    expect(await attempt(devConn, (ch) => ch.bindQueue('tvq', 'amq.topic', ''))).to.equal('ok');
    expect(await attempt(devConn, (ch) => ch.bindQueue('tvq', 'amq.topic', 'x'))).to.deep.equal(topicRefused('x', 'tv', 50, 20));
  });
});

describe('authorization: user_id validation on publish', () => {
  const b = useBroker();

  before(() => {
    const { access } = b.running.broker;
    access.putUser('plain', { password: 'pw', tags: [] });
    access.putUser('imp', { password: 'pw', tags: ['impersonator'] });
    access.setPermission('plain', '/', FULL);
    access.setPermission('imp', '/', FULL);
  });

  it("refuses a user_id that is not the publisher's with 406, unless the publisher has the impersonator tag", async () => {
    const plain = await connect(b.url.replace('guest:guest', 'plain:pw'));
    const imp = await connect(b.url.replace('guest:guest', 'imp:pw'));
    try {
      expect(await attempt(plain, async (ch) => ch.publish('amq.direct', 'k', Buffer.from('m'), { userId: 'guest' }))).to.deep.equal({
        code: 406, text: "PRECONDITION_FAILED - user_id property set to 'guest' but authenticated user was 'plain'", classId: 60, methodId: 40,
      });
      expect(await attempt(plain, async (ch) => ch.publish('amq.direct', 'k', Buffer.from('m'), { userId: 'plain' }))).to.equal('ok');
      expect(await attempt(imp, async (ch) => ch.publish('amq.direct', 'k', Buffer.from('m'), { userId: 'guest' }))).to.equal('ok');
    } finally {
      await plain.close();
      await imp.close();
    }
  });
});

describe('authorization: user limits (max-connections, max-channels)', () => {
  const b = useBroker();

  before(() => {
    const { access } = b.running.broker;
    access.putUser('lim1', { password: 'pw', tags: [], limits: { 'max-connections': 1, 'max-channels': 2 } });
    access.putUser('lim0', { password: 'pw', tags: [], limits: { 'max-connections': 0 } });
    access.putUser('limneg', { password: 'pw', tags: [], limits: { 'max-connections': -1 } });
    for (const u of ['lim1', 'lim0', 'limneg']) access.setPermission(u, '/', FULL);
  });

  it('refuses connection.open past max-connections with 530 (0 refuses all, a negative limit is none)', async () => {
    const first = await RawClient.open(b.url, { user: 'lim1', password: 'pw' });
    const second = await RawClient.connect(b.url);
    expect((await second.handshake({ user: 'lim1', password: 'pw' })).close).to.deep.equal({
      code: 530, text: "NOT_ALLOWED - connection refused for user 'lim1': user connection limit (1) is reached", classId: 10, methodId: 40,
    });
    const zero = await RawClient.connect(b.url);
    expect((await zero.handshake({ user: 'lim0', password: 'pw' })).close).to.deep.equal({
      code: 530, text: "NOT_ALLOWED - connection refused for user 'lim0': user connection limit (0) is reached", classId: 10, methodId: 40,
    });
    const unlimited = await RawClient.connect(b.url);
    expect((await unlimited.handshake({ user: 'limneg', password: 'pw' })).opened).to.equal(true);
    for (const c of [first, second, zero, unlimited]) c.destroy();
  });

  it('closes the connection when a channel would pass max-channels, as rabbit_reader:create_channel does', async () => {
    const c = await RawClient.open(b.url, { user: 'lim1', password: 'pw' });
    c.method(1, 'channel.open', {});
    await c.expect('channel.open-ok');
    c.method(2, 'channel.open', {});
    await c.expect('channel.open-ok');
    c.method(3, 'channel.open', {});
    expect(await c.connectionOutcome()).to.deep.equal({
      close: { code: 530, text: "NOT_ALLOWED - number of channels opened for user 'lim1' has reached the maximum allowed user limit of (2)", classId: 0, methodId: 0 },
      socketClosed: true,
    });
  });
});
