import { expect } from 'chai';
import { RawClient } from '../../conformance/lib/raw-client.js';
import type { Permissions } from '../../src/access/records.js';
import { channel, closedWith, connect } from '../support/amqp.js';
import { useBroker, waitUntil } from '../support/broker.js';

/**
 * Vhost limits (rabbitmq.com/vhosts.html#limits) as RabbitMQ 3.10 enforces them: max-connections
 * at connection.open (rabbit_reader:is_over_vhost_connection_limit, checked before the user's
 * connection limit and the vhost permission), max-queues when a queue.declare would create a
 * queue (rabbit_channel:check_vhost_queue_limit, after the existence check). Every text and the
 * order of the checks were first observed on a reference RabbitMQ 3.10.8 with the same users,
 * permissions and limits (conformance/cases/limits.ts records them as golden traces).
 */

const FULL: Permissions = { configure: '.*', write: '.*', read: '.*' };
const notAllowed = (text: string) => ({ code: 530, text: `NOT_ALLOWED - ${text}`, classId: 10, methodId: 40 });

async function handshake(url: string, user: string, password: string, vhost: string) {
  const c = await RawClient.connect(url);
  const r = await c.handshake({ user, password, vhost });
  return { c, opened: r.opened, close: r.close, socketClosed: r.socketClosed };
}

describe('vhost limits: max-connections at connection.open', () => {
  const b = useBroker();
  const clients: RawClient[] = [];
  const open = async (user: string, password: string, vhost: string) => {
    const h = await handshake(b.url, user, password, vhost);
    clients.push(h.c);
    return h;
  };

  before(() => {
    const { broker } = b.running;
    broker.putVhost('lim', {});
    broker.access.setPermission('guest', 'lim', FULL);
    broker.access.putUser('no-perm', { password: 'pw', tags: [] });
    broker.access.putUser('user-lim0', { password: 'pw', tags: [], limits: { 'max-connections': 0 } });
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.destroy();
    b.running.broker.vhostLimits.delete('lim', 'max-connections');
  });

  it('refuses connection.open once the vhost holds max-connections connections (530), and takes one again when one closes', async () => {
    b.running.broker.vhostLimits.put('lim', 'max-connections', 1);
    const first = await open('guest', 'guest', 'lim');
    expect(first.opened).to.equal(true);
    const second = await open('guest', 'guest', 'lim');
    expect(second.close).to.deep.equal(notAllowed("access to vhost 'lim' refused for user 'guest': connection limit (1) is reached"));
    expect(second.socketClosed).to.equal(true);
    // Other vhosts are not limited.
    expect((await open('guest', 'guest', '/')).opened).to.equal(true);
    first.c.socket.end();
    await first.c.waitClosed(4000);
    await waitUntil(() => ![...b.running.broker.connections].some((c) => c.vhost?.name === 'lim'), "the broker to drop the vhost's connection");
    expect((await open('guest', 'guest', 'lim')).opened).to.equal(true);
  });

  it("checks the vhost's limit before the user's connection limit and before the permission, as rabbit_reader does", async () => {
    b.running.broker.vhostLimits.put('lim', 'max-connections', 1);
    expect((await open('guest', 'guest', 'lim')).opened).to.equal(true);
    expect((await open('no-perm', 'pw', 'lim')).close).to.deep.equal(
      notAllowed("access to vhost 'lim' refused for user 'no-perm': connection limit (1) is reached"),
    );
    expect((await open('user-lim0', 'pw', 'lim')).close).to.deep.equal(
      notAllowed("access to vhost 'lim' refused for user 'user-lim0': connection limit (1) is reached"),
    );
    // Where the vhost has room, the user's limit comes before the permission check.
    expect((await open('user-lim0', 'pw', '/')).close).to.deep.equal(
      notAllowed("connection refused for user 'user-lim0': user connection limit (0) is reached"),
    );
    expect((await open('no-perm', 'pw', '/')).close).to.deep.equal(notAllowed("access to vhost '/' refused for user 'no-perm'"));
  });

  it('0 admits no connection at all; a negative limit is no limit; a vhost that does not exist is refused first', async () => {
    const { vhostLimits } = b.running.broker;
    vhostLimits.put('lim', 'max-connections', 0);
    expect((await open('guest', 'guest', 'lim')).close).to.deep.equal(
      notAllowed("access to vhost 'lim' refused for user 'guest': connection limit (0) is reached"),
    );
    vhostLimits.put('lim', 'max-connections', -1);
    for (let i = 0; i < 3; i++) expect((await open('guest', 'guest', 'lim')).opened).to.equal(true);
    expect((await open('guest', 'guest', 'nope')).close).to.deep.equal(notAllowed('vhost nope not found'));
  });

  it('a limit lowered below the connections open closes none of them; clearing it (or the parameter) lifts it', async () => {
    const { broker } = b.running;
    const held = [await open('guest', 'guest', 'lim'), await open('guest', 'guest', 'lim')];
    broker.parameters.put('vhost-limits', 'lim', 'limits', { 'max-connections': 1 });
    expect((await open('guest', 'guest', 'lim')).close?.code).to.equal(530);
    expect(held.every((h) => !h.c.closed)).to.equal(true);
    broker.parameters.delete('vhost-limits', 'lim', 'limits');
    expect((await open('guest', 'guest', 'lim')).opened).to.equal(true);
  });
});

describe('vhost limits: max-queues at queue.declare', () => {
  const b = useBroker();

  before(() => {
    const { broker } = b.running;
    broker.putVhost('qlim', {});
    broker.access.setPermission('guest', 'qlim', FULL);
  });

  const url = () => `${b.url}/qlim`;

  it('refuses a new queue past max-queues with 406, named or server-named; redeclaring an existing queue is fine', async () => {
    b.running.broker.vhostLimits.put('qlim', 'max-queues', 1);
    const conn = await connect(url());
    try {
      let ch = await channel(conn);
      expect((await ch.assertQueue('q1')).queue).to.equal('q1');
      expect((await ch.assertQueue('q1')).queue).to.equal('q1');
      expect(await closedWith(ch.assertQueue('q2'))).to.deep.include({
        code: 406, text: "PRECONDITION_FAILED - cannot declare queue 'q2': queue limit in vhost 'qlim' (1) is reached",
      });
      ch = await channel(conn);
      const serverNamed = await closedWith(ch.assertQueue(''));
      expect(serverNamed.code).to.equal(406);
      expect(serverNamed.text).to.match(/^PRECONDITION_FAILED - cannot declare queue 'amq\.gen-[A-Za-z0-9_-]{22}': queue limit in vhost 'qlim' \(1\) is reached$/);
      ch = await channel(conn);
      await ch.checkQueue('q1');
      expect(b.running.broker.vhosts.get('qlim')!.queues.size).to.equal(1);
    } finally {
      await conn.close();
      b.running.broker.vhostLimits.delete('qlim', 'max-queues');
      b.running.broker.vhosts.get('qlim')!.deleteQueue('q1', {}, { ifUnused: false, ifEmpty: false });
    }
  });

  it('checks the limit after the name, existence and equivalence checks and before the arguments, as rabbit_channel does', async () => {
    const { broker } = b.running;
    const conn = await connect(url());
    try {
      let ch = await channel(conn);
      await ch.assertQueue('held', { durable: true });
      broker.vhostLimits.put('qlim', 'max-queues', 1);
      expect(await closedWith(ch.assertQueue('bad-args', { arguments: { 'x-max-length': 'not a number' } }))).to.deep.include({
        code: 406, text: "PRECONDITION_FAILED - cannot declare queue 'bad-args': queue limit in vhost 'qlim' (1) is reached",
      });
      ch = await channel(conn);
      expect(await closedWith(ch.assertQueue('amq.reserved'))).to.deep.include({
        code: 403, text: "ACCESS_REFUSED - queue name 'amq.reserved' contains reserved prefix 'amq.*'",
      });
      ch = await channel(conn);
      expect(await closedWith(ch.checkQueue('missing'))).to.deep.include({ code: 404, text: "NOT_FOUND - no queue 'missing' in vhost 'qlim'" });
      ch = await channel(conn);
      expect(await closedWith(ch.assertQueue('held', { durable: false }))).to.deep.include({
        code: 406, text: "PRECONDITION_FAILED - inequivalent arg 'durable' for queue 'held' in vhost 'qlim': received 'false' but current is 'true'",
      });
    } finally {
      await conn.close();
      broker.vhostLimits.delete('qlim', 'max-queues');
      broker.vhosts.get('qlim')!.deleteQueue('held', {}, { ifUnused: false, ifEmpty: false });
    }
  });

  it('0 admits no new queue; a negative limit is none; exclusive queues count; a lowered limit deletes nothing', async () => {
    const { broker } = b.running;
    const conn = await connect(url());
    try {
      let ch = await channel(conn);
      await ch.assertQueue('excl', { exclusive: true });
      await ch.assertQueue('shared');
      broker.vhostLimits.put('qlim', 'max-queues', 2);
      expect((await closedWith(ch.assertQueue('third'))).text).to.equal("PRECONDITION_FAILED - cannot declare queue 'third': queue limit in vhost 'qlim' (2) is reached");
      ch = await channel(conn);
      broker.vhostLimits.put('qlim', 'max-queues', 0);
      expect((await closedWith(ch.assertQueue('third'))).text).to.equal("PRECONDITION_FAILED - cannot declare queue 'third': queue limit in vhost 'qlim' (0) is reached");
      ch = await channel(conn);
      await ch.assertQueue('shared');
      expect([...broker.vhosts.get('qlim')!.queues.keys()].sort()).to.deep.equal(['excl', 'shared']);
      broker.vhostLimits.put('qlim', 'max-queues', -3);
      await ch.assertQueue('third');
      await ch.assertQueue('fourth');
      expect(broker.vhosts.get('qlim')!.queues.size).to.equal(4);
    } finally {
      await conn.close();
      broker.vhostLimits.delete('qlim', 'max-queues');
      for (const q of ['shared', 'third', 'fourth']) broker.vhosts.get('qlim')!.deleteQueue(q, {}, { ifUnused: false, ifEmpty: false });
    }
  });

  it('a queue deleted makes room for another', async () => {
    const { broker } = b.running;
    broker.vhostLimits.put('qlim', 'max-queues', 1);
    const conn = await connect(url());
    try {
      const ch = await channel(conn);
      await ch.assertQueue('one');
      await ch.deleteQueue('one');
      await ch.assertQueue('two');
    } finally {
      await conn.close();
      broker.vhostLimits.delete('qlim', 'max-queues');
      broker.vhosts.get('qlim')!.deleteQueue('two', {}, { ifUnused: false, ifEmpty: false });
    }
  });
});

describe('cluster_name in connection.start', () => {
  const b = useBroker();

  it("is the cluster name: the default (rabbit@<fqdn>), then the cluster_name global parameter", async () => {
    const { globalParameters } = b.running.broker;
    const before = await connect(b.url);
    const props = (before as unknown as { connection: { serverProperties: Record<string, unknown> } }).connection.serverProperties;
    expect(props['cluster_name']).to.equal(globalParameters.clusterName());
    expect(props['cluster_name']).to.match(/^rabbit@./);
    await before.close();
    globalParameters.setClusterName('my-cluster');
    const after = await connect(b.url);
    expect((after as unknown as { connection: { serverProperties: Record<string, unknown> } }).connection.serverProperties['cluster_name']).to.equal('my-cluster');
    await after.close();
  });
});
