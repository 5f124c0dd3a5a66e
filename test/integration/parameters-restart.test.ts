import { expect } from 'chai';
import { RawClient } from '../../conformance/lib/raw-client.js';
import { startBroker } from '../../src/broker.js';
import { ParameterValidationError } from '../../src/parameters/errors.js';
import { channel, closedWith, connect } from '../support/amqp.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * Runtime and global parameters are durable definitions (RabbitMQ keeps them in its metadata
 * store): they survive a restart and vhost limits are in force again at once; the internal
 * cluster id is generated once; deleting a vhost takes its parameters with it; the config
 * file's parameters, global parameters and cluster name are applied at each boot.
 */
describe('parameters across restarts, vhost deletion and the config file', function () {
  this.timeout(30000);
  const dataDir = useTmpDir('warren-parameters-');

  it('vhost limits, global parameters, the cluster name and the internal cluster id survive a restart', async () => {
    const first = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    const id = first.broker.globalParameters.internalClusterId();
    expect(id).to.match(/^rabbitmq-cluster-id-[A-Za-z0-9_-]{22}$/);
    first.broker.vhostLimits.put('/', 'max-queues', 1);
    first.broker.vhostLimits.put('/', 'max-connections', 5);
    first.broker.globalParameters.put('custom', { b: [1, {}], a: 'x' });
    first.broker.globalParameters.put('gone', 1);
    first.broker.globalParameters.delete('gone');
    first.broker.globalParameters.setClusterName('durable-name');
    first.broker.parameters.put('operator_policy', '/', 'op', { pattern: '^x', definition: { 'max-length': 3 }, priority: 1 });
    const conn = await connect(first.url);
    await (await channel(conn)).assertQueue('kept', { durable: true });
    await conn.close();
    await first.close();

    const second = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      const { broker } = second;
      expect(broker.vhostLimits.list('/')).to.deep.equal([{ vhost: '/', value: { 'max-connections': 5, 'max-queues': 1 } }]);
      expect(JSON.stringify(broker.parameters.list())).to.equal(JSON.stringify([
        { value: { 'max-connections': 5, 'max-queues': 1 }, vhost: '/', component: 'vhost-limits', name: 'limits' },
        { value: { pattern: '^x', definition: { 'max-length': 3 }, priority: 1, 'apply-to': 'all' }, vhost: '/', component: 'operator_policy', name: 'op' },
      ]));
      expect(JSON.stringify(broker.globalParameters.list())).to.equal(JSON.stringify([
        { name: 'cluster_name', value: 'durable-name' },
        { name: 'custom', value: { a: 'x', b: [1, {}] } },
        { name: 'internal_cluster_id', value: id },
      ]));
      const c = await connect(second.url);
      expect((c as unknown as { connection: { serverProperties: Record<string, unknown> } }).connection.serverProperties['cluster_name']).to.equal('durable-name');
      const ch = await channel(c);
      await ch.assertQueue('kept', { durable: true });
      expect((await closedWith(ch.assertQueue('new'))).text).to.equal("PRECONDITION_FAILED - cannot declare queue 'new': queue limit in vhost '/' (1) is reached");
      await c.close();
      // Deleted: internal_cluster_id is generated again at the next boot, as rabbit_nodes:boot does.
      broker.globalParameters.delete('internal_cluster_id');
    } finally {
      await second.close();
    }
    const third = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      const again = third.broker.globalParameters.internalClusterId();
      expect(again).to.match(/^rabbitmq-cluster-id-[A-Za-z0-9_-]{22}$/);
      expect(again).to.not.equal(id);
    } finally {
      await third.close();
    }
  });

  it("deleting a vhost deletes its parameters, also from the store: a vhost of the same name starts without limits", async () => {
    const first = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    const { broker } = first;
    broker.putVhost('doomed', {});
    broker.putVhost('kept', {});
    broker.vhostLimits.put('doomed', 'max-queues', 0);
    broker.vhostLimits.put('kept', 'max-queues', 0);
    broker.parameters.put('operator_policy', 'doomed', 'op', { pattern: '.*', definition: { 'max-length': 1 }, priority: 0 });
    broker.deleteVhost('doomed');
    expect(broker.parameters.list()!.map((p) => `${p.vhost}/${p.component}`)).to.deep.equal(['kept/vhost-limits']);
    broker.putVhost('doomed', {});
    expect(broker.vhostLimits.list('doomed')).to.deep.equal([]);
    await first.close();

    const second = await startBroker({ port: 0, logLevel: 'silent', dataDir: dataDir.path });
    try {
      expect(second.broker.parameters.list()!.map((p) => `${p.vhost}/${p.component}`)).to.deep.equal(['kept/vhost-limits']);
      expect(second.broker.vhosts.get('doomed')!.limits).to.deep.equal({});
      expect(second.broker.vhosts.get('kept')!.limits).to.deep.equal({ maxQueues: 0 });
    } finally {
      await second.close();
    }
  });

  it("applies the config file's parameters, global parameters and cluster name at each boot; refuses an invalid one with RabbitMQ's import text", async () => {
    const config = {
      dataDir: dataDir.path,
      clusterName: 'configured',
      globalParameters: [{ name: 'from-config', value: {} }],
      parameters: [{ vhost: '/', component: 'vhost-limits', name: 'limits', value: { 'max-connections': 0 } }],
    };
    const first = await startBroker({ port: 0, logLevel: 'silent', ...config });
    try {
      expect(first.broker.globalParameters.clusterName()).to.equal('configured');
      expect(first.broker.globalParameters.get('from-config')).to.deep.equal({ value: [], name: 'from-config' });
      expect(first.broker.vhosts.get('/')!.limits).to.deep.equal({ maxConnections: 0 });
      const raw = await RawClient.connect(first.url);
      expect((await raw.handshake()).close?.text).to.equal("NOT_ALLOWED - access to vhost '/' refused for user 'guest': connection limit (0) is reached");
      raw.destroy();
      first.broker.globalParameters.setClusterName('changed at run time');
    } finally {
      await first.close();
    }
    const second = await startBroker({ port: 0, logLevel: 'silent', ...config });
    try {
      // RabbitMQ's cluster_name setting is applied at every boot.
      expect(second.broker.globalParameters.clusterName()).to.equal('configured');
    } finally {
      await second.close();
    }
    const bad = [{ vhost: '/', component: 'vhost-limits', name: 'limits', value: { 'max-queues': 'x' } }];
    await startBroker({ port: 0, logLevel: 'silent', parameters: bad }).then(
      () => expect.fail('expected the broker to refuse the config'),
      (e: Error) => {
        expect(e).to.be.instanceOf(ParameterValidationError);
        expect(e.message).to.equal('Validation failed\n\nmax-queues should be a number, actually was <<"x">>\n (//vhost-limits/limits)');
      },
    );
  });
});
