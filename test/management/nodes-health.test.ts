import { expect } from 'chai';
import amqp from 'amqplib';
import { FakeClock } from '../../src/clock.js';
import { parseCli } from '../../src/main.js';
import { useManagedBroker } from '../support/management.js';
import { hostname } from 'node:os';
import { nodeName } from '../../src/node-name.js';

const NODE = nodeName();
const CLUSTER = `rabbit@${hostname()}`;

/** /api/nodes, /api/overview's identity and listeners, and the health checks, from the live process. */
describe('management API: node, overview and health checks', () => {
  const b = useManagedBroker();

  it('reports the node from the process: pid, memory as the alarm measures it, its watermark, descriptors, uptime', async () => {
    const [node] = (await b.api('GET', '/api/nodes')).json;
    const broker = b.running.broker;
    expect(node).to.deep.include({
      name: NODE, type: 'disc', running: true, os_pid: String(process.pid), mem_limit: broker.memory.limitBytes,
      mem_alarm: false, disk_free_alarm: false, disk_free_limit: broker.config.diskFreeLimit, mem_calculation_strategy: 'allocated',
    });
    expect(node.mem_used).to.be.greaterThan(1024 * 1024);
    expect(node.fd_used).to.be.within(1, node.fd_total);
    expect(node.disk_free).to.be.greaterThan(0);
    expect(node.uptime).to.be.within(1, Math.ceil(process.uptime() * 1000) + 1);
    expect(node.exchange_types.map((t: { name: string }) => t.name)).to.include.members(['direct', 'topic', 'x-consistent-hash', 'x-delayed-message']);
    expect((await b.api('GET', `/api/nodes/${NODE}?columns=name,os_pid`)).json).to.deep.equal({ name: NODE, os_pid: String(process.pid) });
  });

  it('names the product as connection.start does and lists its listeners and web context', async () => {
    const o = (await b.api('GET', '/api/overview')).json;
    expect(o).to.deep.include({ product_name: 'RabbitMQ', product_version: '3.10.8', rabbitmq_version: '3.10.8', management_version: '3.10.8', node: NODE, cluster_name: CLUSTER, rates_mode: 'basic' });
    expect(o.warren_version).to.match(/^\d+\.\d+\.\d+/);
    const port = Number(new URL(b.base).port);
    expect(o.listeners.map((l: { protocol: string; port: number }) => [l.protocol, l.port])).to.deep.equal([['amqp', b.running.port], ['http', port]]);
    expect(o.contexts).to.deep.equal([{ ssl_opts: [], node: NODE, description: 'RabbitMQ Management', path: '/', cowboy_opts: '[{sendfile,false}]', ip: '127.0.0.1', port: String(port) }]);
    expect((await b.api('GET', '/api/cluster-name')).json).to.deep.equal({ name: CLUSTER });
  });

  it('counts objects and messages live in the overview', async () => {
    const conn = await amqp.connect(b.url);
    try {
      const ch = await conn.createChannel();
      await ch.assertQueue('n.q');
      ch.sendToQueue('n.q', Buffer.from('x'));
      ch.sendToQueue('n.q', Buffer.from('y'));
      await ch.get('n.q');
      const o = (await b.api('GET', '/api/overview')).json;
      expect(o.object_totals).to.deep.equal({ channels: 1, connections: 1, consumers: 0, exchanges: 7, queues: 1 });
      expect([o.queue_totals.messages, o.queue_totals.messages_ready, o.queue_totals.messages_unacknowledged]).to.deep.equal([2, 1, 1]);
      const vhost = (await b.api('GET', '/api/vhosts/%2F')).json;
      expect([vhost.messages, vhost.messages_ready, vhost.messages_unacknowledged, vhost.description]).to.deep.equal([2, 1, 1, 'Default virtual host']);
      expect(vhost.recv_oct).to.be.greaterThan(0);
    } finally {
      await conn.close();
    }
  });

  it('runs the aliveness test as RabbitMQ does: exactly {"status":"ok"}, leaving the aliveness-test queue', async () => {
    const res = await b.api('GET', '/api/aliveness-test/%2F');
    expect([res.status, res.text]).to.deep.equal([200, '{"status":"ok"}']);
    const q = (await b.api('GET', '/api/queues/%2F/aliveness-test')).json;
    expect([q.durable, q.messages]).to.deep.equal([false, 0]);
    expect((await b.api('GET', '/api/aliveness-test/nope')).status).to.equal(404);
  });

  it('checks listeners by port and by protocol, with RabbitMQ\'s 503 bodies', async () => {
    const amqpPort = b.running.port;
    expect((await b.api('GET', `/api/health/checks/port-listener/${amqpPort}`)).json).to.deep.equal({ status: 'ok', port: amqpPort });
    const missing = await b.api('GET', '/api/health/checks/port-listener/1');
    expect([missing.status, missing.json]).to.deep.equal([503, { status: 'failed', reason: 'No active listener', missing: 1, ports: [amqpPort, Number(new URL(b.base).port)] }]);
    expect((await b.api('GET', '/api/health/checks/port-listener/abc')).text).to.equal('{"error":"bad_request","reason":"Invalid port"}');
    expect((await b.api('GET', '/api/health/checks/protocol-listener/AMQP091')).text).to.equal('{"status":"ok","protocol":"amqp"}');
    const mqtt = await b.api('GET', '/api/health/checks/protocol-listener/mqtt');
    expect([mqtt.status, mqtt.json]).to.deep.equal([503, { status: 'failed', reason: 'No active listener', missing: 'mqtt', protocols: ['amqp', 'http'] }]);
    expect((await b.api('GET', '/api/health/checks/virtual-hosts')).text).to.equal('{"status":"ok"}');
    expect((await b.api('GET', '/api/health/checks/alarms')).text).to.equal('{"status":"ok"}');
  });

  it('passes the cluster checks of a single node, saying so, and checks certificates only where TLS listens (recorded from 3.10.8)', async () => {
    for (const check of ['node-is-quorum-critical', 'node-is-mirror-sync-critical']) {
      expect((await b.api('GET', `/api/health/checks/${check}`)).text).to.equal('{"status":"ok","reason":"single node cluster"}');
    }
    expect((await b.api('GET', '/api/health/checks/certificate-expiration/1/days')).text).to.equal('{"status":"ok"}');
    expect((await b.api('GET', '/api/health/checks/certificate-expiration/1/bogus')).text).to.equal('{"error":"bad_request","reason":"Time unit not recognised. Supported units: days, weeks, months, years."}');
    expect((await b.api('GET', '/api/health/checks/certificate-expiration/x/days')).text).to.equal('{"error":"bad_request","reason":"Invalid expiration value."}');
  });

  it('counts login attempts by protocol, resets them, and has nothing to rebalance', async () => {
    expect((await b.api('DELETE', `/api/auth/attempts/${NODE}`)).status).to.equal(204);
    const conn = await amqp.connect(b.running.url);
    await conn.close();
    await amqp.connect(b.running.url.replace('guest:guest', 'guest:wrong')).then((c) => c.close(), () => undefined);
    await b.api('GET', '/api/overview', { password: 'wrong' });
    const rows = (await b.api('GET', `/api/auth/attempts/${NODE}`)).json as Array<Record<string, unknown>>;
    const amqp091 = rows.find((r) => r['protocol'] === 'amqp091');
    expect(amqp091).to.deep.equal({ protocol: 'amqp091', auth_attempts: 2, auth_attempts_failed: 1, auth_attempts_succeeded: 1 });
    expect(rows.find((r) => r['protocol'] === 'http')).to.deep.equal({ protocol: 'http', auth_attempts: 2, auth_attempts_failed: 1, auth_attempts_succeeded: 1 });
    expect((await b.api('GET', `/api/auth/attempts/${NODE}/source`)).json).to.deep.equal([]);
    expect((await b.api('GET', '/api/auth/attempts/nonode@nowhere')).status).to.equal(404);
    expect((await b.api('DELETE', `/api/auth/attempts/${NODE}`)).status).to.equal(204);
    // The reset, then this request's own login.
    expect((await b.api('GET', `/api/auth/attempts/${NODE}`)).json).to.deep.equal([{ protocol: 'http', auth_attempts: 1, auth_attempts_failed: 0, auth_attempts_succeeded: 1 }]);
    const get = await b.api('GET', '/api/rebalance/queues');
    expect([get.status, get.headers.get('allow')]).to.deep.equal([405, 'POST, OPTIONS']);
    expect((await b.api('POST', '/api/rebalance/queues')).status).to.equal(204);
  });
});

describe('management API: health checks under a memory alarm', () => {
  const clock = new FakeClock();
  // A watermark so low that the first memory check raises the alarm.
  const b = useManagedBroker({ clock, memoryHighWatermark: 1e-9 });

  it('answers 503 with the alarm, as rabbit_alarm:format_as_map shows it, and reports it on the node', async () => {
    clock.advance(1000);
    const alarms = await b.api('GET', '/api/health/checks/alarms');
    expect([alarms.status, alarms.json]).to.deep.equal([503, { status: 'failed', reason: 'There are alarms in effect in the cluster', alarms: [{ node: NODE, resource: 'memory' }] }]);
    const local = await b.api('GET', '/api/health/checks/local-alarms');
    expect([local.status, local.json.reason]).to.deep.equal([503, 'There are alarms in effect on the node']);
    expect((await b.api('GET', '/api/nodes')).json[0].mem_alarm).to.equal(true);
  });
});

describe('management API: command line', () => {
  it('takes --management-port N, 0 or off, and WARREN_MANAGEMENT_PORT; refuses anything else', () => {
    expect(parseCli(['--management-port', '15673'], {})).to.include({ managementPort: 15673 });
    expect(parseCli(['--management-port', 'off'], {})).to.include({ managementPort: 'off' });
    expect(parseCli([], { WARREN_MANAGEMENT_PORT: '0' })).to.include({ managementPort: 0 });
    expect(parseCli(['--management-port', '1'], { WARREN_MANAGEMENT_PORT: '2' })).to.include({ managementPort: 1 });
    expect(parseCli([], {})).to.not.have.property('managementPort');
    expect(() => parseCli(['--management-port', 'on'], {})).to.throw("invalid management port: 'on' is not a port (0..65535) or \"off\"");
  });
});
