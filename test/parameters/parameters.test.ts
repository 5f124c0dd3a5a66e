import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Broker } from '../../src/broker.js';
import { canonicalHostName, clusterNameFromJson, defaultClusterName } from '../../src/parameters/cluster-name.js';
import { ParameterInternalError } from '../../src/parameters/errors.js';
import { storedValue } from '../../src/parameters/value.js';
import { limitsOf } from '../../src/parameters/vhost-limits-component.js';

const recorded = JSON.parse(readFileSync(new URL('./fixtures/http-3.10.8.json', import.meta.url), 'utf8')) as {
  defaultClusterName: { node: string; host: string; value: string };
};

describe('parameters: values, limits, the cluster name', () => {
  it('keeps values as RabbitMQ does: a top-level object becomes a proplist ({} is []), objects ordered by key at every depth', () => {
    expect(storedValue({})).to.deep.equal([]);
    expect(JSON.stringify(storedValue({ b: 1, a: { z: {}, y: [] } }))).to.equal('{"a":{"y":[],"z":{}},"b":1}');
    expect(JSON.stringify(storedValue([{ b: 1, a: 2 }]))).to.equal('[{"a":2,"b":1}]');
    expect(storedValue(null)).to.equal(null);
    const withProto = storedValue(JSON.parse('{"__proto__": 1}')) as Record<string, unknown>;
    expect(Object.keys(withProto)).to.deep.equal(['__proto__']);
    expect(() => storedValue(undefined)).to.throw(TypeError);
  });

  it('reads limits as rabbit_vhost_limit:get_limit does: a negative limit is none, 0 is 0', () => {
    expect(limitsOf({ 'max-connections': -1, 'max-queues': 0 })).to.deep.equal({ maxQueues: 0 });
    expect(limitsOf({ 'max-connections': 7 })).to.deep.equal({ maxConnections: 7 });
    expect(limitsOf([])).to.deep.equal({});
  });

  it('names the cluster by default as rabbit_nodes:cluster_name_default/0: node id @ the canonical host name', () => {
    const { node, host, value } = recorded.defaultClusterName;
    expect(defaultClusterName(node.split('@')[0], host, `127.0.0.1 localhost\n127.0.0.1 ${host}\n`)).to.equal(value);
    const hosts = '# comment\n127.0.0.1 localhost\n127.0.1.1\tbox.example.com box # the host\n';
    expect(canonicalHostName('box', hosts)).to.equal('box.example.com');
    expect(canonicalHostName('BOX', hosts)).to.equal('box.example.com');
    expect(canonicalHostName('other', hosts)).to.equal('other');
    expect(defaultClusterName(undefined, 'box', hosts)).to.equal('rabbit@box.example.com');
  });

  it('takes PUT /api/cluster-name\'s name as rabbit_mgmt_wm_cluster_name:as_binary does (an iolist), else crashes (500)', () => {
    expect(clusterNameFromJson('héllo')).to.equal('héllo');
    expect(clusterNameFromJson(['a', 'b', [99]])).to.equal('abc');
    expect(clusterNameFromJson([0xc3, 0xa9])).to.equal('é');
    for (const bad of [5, null, true, { a: 1 }, [256], [-1], [1.5], [{}], [0xff]]) {
      expect(() => clusterNameFromJson(bad), JSON.stringify(bad)).to.throw(ParameterInternalError);
    }
  });

  it('generates internal_cluster_id once ("rabbitmq-cluster-id-" + 22 base64url characters) and sends a non-string cluster_name as its JSON text', async () => {
    const broker = new Broker({ logLevel: 'silent' });
    try {
      const { globalParameters } = broker;
      expect(globalParameters.internalClusterId()).to.match(/^rabbitmq-cluster-id-[A-Za-z0-9_-]{22}$/);
      expect(globalParameters.list().map((p) => p.name)).to.deep.equal(['internal_cluster_id']);
      globalParameters.put('cluster_name', { n: 5 });
      expect(globalParameters.clusterName()).to.deep.equal({ n: 5 });
      expect(broker.identity.cluster).to.equal('{"n":5}');
    } finally {
      await broker.close();
    }
  });

  it('tells the queue limit a definitions import exceeds with rabbit_definitions:validate_vhost_queue_limit\'s text', async () => {
    const broker = new Broker({ logLevel: 'silent' });
    try {
      const { vhostLimits } = broker;
      expect(vhostLimits.importQueueLimitError('/', 5)).to.equal(undefined);
      vhostLimits.put('/', 'max-queues', 4);
      expect(vhostLimits.importQueueLimitError('/', 4)).to.equal(undefined);
      expect(vhostLimits.importQueueLimitError('/', 0)).to.equal(undefined);
      expect(vhostLimits.importQueueLimitError('/', 5)).to.equal(
        'Adding 5 queue(s) to virtual host "/" would exceed the limit of 4 queue(s).\n\nThis virtual host currently has 0 queue(s) defined.\n\nImport aborted!',
      );
      vhostLimits.put('/', 'max-queues', 0);
      expect(vhostLimits.importQueueLimitError('/', 1)).to.match(/^Adding 1 queue\(s\) to virtual host "\/" would exceed the limit of 0 queue\(s\)/);
    } finally {
      await broker.close();
    }
  });
});
