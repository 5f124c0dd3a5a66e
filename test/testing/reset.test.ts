import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { BrokerOptions } from '../../src/config.js';
import type { PolicyRecord } from '../../src/policy/policy.js';
import { channel, confirmChannel, connect, connectionClosed } from '../support/amqp.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';

const STANDARD_EXCHANGES = ['', 'amq.direct', 'amq.fanout', 'amq.headers', 'amq.match', 'amq.rabbitmq.trace', 'amq.topic'];
const CONFIG_POLICY: PolicyRecord = { vhost: '/', name: 'short', pattern: '^short\\.', 'apply-to': 'queues', definition: { 'message-ttl': 1000 }, priority: 0 };
const OPTIONS: BrokerOptions = { port: 0, logLevel: 'silent', vhosts: ['/', 'other'], policies: [CONFIG_POLICY] };

/** Declares a bit of everything in vhost, as an application would: queues, exchanges, bindings, messages, a consumer. */
async function populate(url: string, vhost: string): Promise<void> {
  const conn = await connect(`${url}/${encodeURIComponent(vhost)}`);
  const ch = await channel(conn);
  await ch.assertExchange('orders', 'topic', { durable: true });
  await ch.assertExchange('later', 'x-delayed-message', { durable: true, arguments: { 'x-delayed-type': 'direct' } });
  await ch.assertQueue('orders.all', { durable: true });
  await ch.assertQueue('short.lived', { durable: false });
  await ch.bindQueue('orders.all', 'orders', '#');
  await ch.bindExchange('amq.fanout', 'amq.topic', '#'); // between standard exchanges
  ch.publish('orders', 'eu', Buffer.from('persisted'), { persistent: true });
  ch.publish('later', 'k', Buffer.from('delayed'), { persistent: true, headers: { 'x-delay': 3_600_000 } });
  await ch.checkQueue('orders.all');
  await conn.close();
}

/** What a fresh broker shows of a vhost: standard exchanges only, nothing else. */
function expectPristine(running: RunningBroker, vhost: string): void {
  expect(running.inspect.queues({ vhost })).to.deep.equal([]);
  expect(running.inspect.exchanges({ vhost }).map((x) => x.name).sort()).to.deep.equal(STANDARD_EXCHANGES);
  expect(running.inspect.bindings({ vhost })).to.deep.equal([]);
}

/**
 * broker.reset() (docs/testing.md): back to the state right after start — configured vhosts,
 * their standard exchanges, configured policies — with every other object and message gone,
 * from the data dir too, and open connections closed as a broker stop closes them.
 */
describe('test toolkit: reset', () => {
  let running: RunningBroker;
  afterEach(() => running?.close());

  it('removes every queue, message, exchange, binding and policy; closes connections with 320; clears faults', async () => {
    running = await startBroker(OPTIONS);
    await populate(running.url, '/');
    await populate(running.url, 'other');
    running.broker.policies.put('policy', 'other', 'added', { pattern: '.*', definition: { 'max-length': 5 } });
    // Vhosts, users and permissions changed at run time.
    running.broker.putVhost('extra', { description: 'made by a test' });
    running.broker.putVhost('other', { description: 'changed', tags: ['t'] });
    running.broker.putVhost('/', { description: 'changed too', tags: [] });
    running.broker.access.putUser('temp', { password: 'pw', tags: ['monitoring'] });
    running.broker.access.setPermission('temp', 'extra', { configure: '.*', write: '.*', read: '.*' });
    running.broker.access.clearPermission('guest', 'other');
    // An open connection with an exclusive queue, an unacknowledged delivery and a consumer.
    const conn = await connect(running.url);
    const ch = await channel(conn);
    const { queue: exclusive } = await ch.assertQueue('', { exclusive: true });
    await ch.consume('orders.all', () => {});
    await running.until.queue('orders.all', (q) => q.unacked === 1);
    running.faults.raiseAlarm('memory');
    running.faults.nackPublishes(5);
    const closed = connectionClosed(conn);

    await running.reset();

    expect(await closed).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'" });
    expect(running.inspect.connections()).to.deep.equal([]);
    expectPristine(running, '/');
    expectPristine(running, 'other');
    const other = await connect(`${running.url}/other`); // guest may use 'other' again
    await other.close();
    expect(running.inspect.queue(exclusive)).to.equal(undefined);
    expect(running.broker.policies.list('policy')).to.deep.equal([CONFIG_POLICY]);
    expect([...running.broker.vhosts.keys()].sort()).to.deep.equal(['/', 'other']);
    expect(running.broker.vhosts.get('other')!.metadata).to.deep.include({ description: '', tags: [] });
    // As on a new data dir: RabbitMQ's default vhost is "Default virtual host".
    expect(running.broker.vhosts.get('/')!.metadata).to.deep.include({ description: 'Default virtual host', tags: [] });
    expect(running.broker.access.users().map((u) => u.name)).to.deep.equal(['guest']);
    expect(running.broker.access.permissions().map((p) => `${p.user}@${p.vhost}`).sort()).to.deep.equal(['guest@/', 'guest@other']);
    expect(running.broker.store.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
    expect(running.broker.store.metadata.loadDelayed()).to.deep.equal([]);

    // Faults are gone too: a new publisher is neither blocked nor nacked, and the names are free again.
    const again = await connect(running.url);
    const cch = await confirmChannel(again);
    await cch.assertExchange('orders', 'fanout'); // another type than before: the old one is gone
    await cch.assertQueue('short.q');
    expect(running.inspect.queue('short.q')).to.include({ policy: 'short' }); // the configured policy applies
    cch.sendToQueue('short.q', Buffer.from('x'));
    await cch.waitForConfirms();
    expect(running.inspect.queue('short.q')).to.include({ ready: 1 });
    await again.close();
  });

  it('with a data dir: nothing of it is recovered after a restart', async () => {
    const dir = makeTmpDir('warren-reset-');
    try {
      running = await startBroker({ ...OPTIONS, dataDir: dir, freeDiskSpace: () => 10e9 });
      await populate(running.url, '/');
      running.broker.policies.put('policy', '/', 'added', { pattern: '.*', definition: { 'max-length': 5 } });
      running.broker.putVhost('extra', {});
      running.broker.access.putUser('temp', { password: 'pw', tags: [] });
      expect(running.broker.store.metadata.loadDelayed()).to.have.length(1);
      await running.reset();
      expectPristine(running, '/');
      await running.close();

      running = await startBroker({ ...OPTIONS, dataDir: dir, freeDiskSpace: () => 10e9 });
      expectPristine(running, '/');
      expect(running.broker.access.users().map((u) => u.name)).to.deep.equal(['guest']);
      expect(running.broker.store.messages.stats()).to.deep.equal({ messages: 0, entries: 0 });
      expect(running.broker.store.metadata.loadDelayed()).to.deep.equal([]);
      expect(running.broker.policies.list('policy')).to.deep.equal([CONFIG_POLICY]);
      expect([...running.broker.vhosts.keys()].sort()).to.deep.equal(['/', 'other']);
    } finally {
      await running.close();
      removeDir(dir);
    }
  });

  it('removes vhost limits, runtime and global parameters added since, keeps the internal cluster id, and applies the configured ones again', async () => {
    const dir = makeTmpDir('warren-reset-');
    const configured = {
      clusterName: 'configured',
      globalParameters: [{ name: 'region', value: 'eu' }],
      parameters: [{ vhost: 'other', component: 'vhost-limits', name: 'limits', value: { 'max-queues': 3 } }],
    };
    try {
      running = await startBroker({ ...OPTIONS, ...configured, dataDir: dir, freeDiskSpace: () => 10e9 });
      const { broker } = running;
      const id = broker.globalParameters.internalClusterId();
      broker.vhostLimits.put('/', 'max-queues', 0);
      broker.vhostLimits.put('other', 'max-connections', 0);
      broker.parameters.put('operator_policy', '/', 'op', { pattern: '.*', definition: { 'max-length': 1 }, priority: 0 });
      broker.globalParameters.put('added', 1);
      broker.globalParameters.put('region', 'us');
      broker.globalParameters.setClusterName('changed');
      await running.reset();
      const expectConfigured = (b: typeof broker) => {
        expect(b.parameters.list()).to.deep.equal([{ value: { 'max-queues': 3 }, vhost: 'other', component: 'vhost-limits', name: 'limits' }]);
        expect(b.vhosts.get('/')!.limits).to.deep.equal({});
        expect(b.vhosts.get('other')!.limits).to.deep.equal({ maxQueues: 3 });
        expect(b.globalParameters.list()).to.deep.equal([
          { name: 'cluster_name', value: 'configured' },
          { name: 'internal_cluster_id', value: id },
          { name: 'region', value: 'eu' },
        ]);
      };
      expectConfigured(broker);
      const conn = await connect(running.url); // no limit left on '/'
      await (await channel(conn)).assertQueue('q');
      await conn.close();
      await running.close();

      running = await startBroker({ ...OPTIONS, ...configured, dataDir: dir, freeDiskSpace: () => 10e9 });
      expectConfigured(running.broker);
    } finally {
      await running.close();
      removeDir(dir);
    }
  });
});
