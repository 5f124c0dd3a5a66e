import { expect } from 'chai';
import amqp from 'amqplib';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { startBroker } from '../../src/broker.js';
import { FakeClock } from '../../src/clock.js';
import { parseCli } from '../../src/main.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { channel, confirmChannel, connect, connectionClosed } from '../support/amqp.js';
import { call, useToolkitBroker } from '../support/management.js';

/**
 * /api/warren/ (docs/testing.md, "Over HTTP"): the test toolkit's reset, inspect and time
 * controls on the management port, for administrators, driven with fetch while amqplib
 * clients observe what a test in another language would.
 */
describe('management API: /api/warren/ (the test toolkit over HTTP)', () => {
  const clock = new FakeClock();
  const toolkit = useToolkitBroker({ clock });
  const { api, open } = toolkit;

  it('lists queues, exchanges, bindings, consumers and connections as the inspect objects', async () => {
    const conn = await open('orders-app');
    const ch = await channel(conn);
    await ch.assertExchange('orders', 'topic', { durable: false });
    await ch.assertQueue('orders.created', { durable: false, arguments: { 'x-max-length': 10 } });
    await ch.bindQueue('orders.created', 'orders', 'order.#');
    await ch.prefetch(5);
    const { consumerTag } = await ch.consume('orders.created', () => {});

    const queues = await api('GET', '/api/warren/queues');
    expect(queues.status).to.equal(200);
    expect(queues.json).to.deep.equal([{
      vhost: '/', name: 'orders.created', type: 'classic', durable: false, autoDelete: false, exclusive: false,
      arguments: { 'x-max-length': 10 }, messages: 0, ready: 0, unacked: 0, consumers: 1, policy: null,
    }]);
    expect((await api('GET', '/api/warren/queues/%2F/orders.created')).json).to.deep.equal(queues.json[0]);
    expect((await api('GET', '/api/warren/queues?vhost=%2F')).json).to.deep.equal(queues.json);

    const exchanges = (await api('GET', '/api/warren/exchanges')).json as Array<{ name: string }>;
    expect(exchanges.find((x) => x.name === 'orders')).to.deep.equal({
      vhost: '/', name: 'orders', type: 'topic', durable: false, autoDelete: false, internal: false, arguments: {},
    });
    expect(exchanges.map((x) => x.name)).to.include.members(['', 'amq.direct', 'amq.topic']);

    expect((await api('GET', '/api/warren/bindings')).json).to.deep.equal([
      { vhost: '/', source: '', destination: 'orders.created', destinationType: 'queue', routingKey: 'orders.created', arguments: {} },
      { vhost: '/', source: 'orders', destination: 'orders.created', destinationType: 'queue', routingKey: 'order.#', arguments: {} },
    ]);

    const consumers = (await api('GET', '/api/warren/consumers')).json;
    expect(consumers).to.have.length(1);
    expect(consumers[0]).to.include({ vhost: '/', queue: 'orders.created', consumerTag, connectionName: 'orders-app', channel: 1, ack: true, prefetch: 5, active: true, unacked: 0 });

    const connections = (await api('GET', '/api/warren/connections')).json;
    expect(connections).to.have.length(1);
    expect(connections[0]).to.include({ connectionName: 'orders-app', user: 'guest', vhost: '/', state: 'open', channels: 1, blocked: false });
    expect(connections[0].clientProperties).to.include({ connection_name: 'orders-app', product: 'amqplib' });
    expect(connections[0].name).to.equal(consumers[0].connection);
  });

  it('shows a queue\'s messages (payload in base64, properties as RabbitMQ shows them) without consuming them', async () => {
    const conn = await open();
    const ch = await channel(conn);
    await ch.assertQueue('jobs', { durable: true });
    ch.sendToQueue('jobs', Buffer.from('first'), { persistent: true, contentType: 'text/plain', headers: { attempt: 1 }, messageId: 'm-1' });
    ch.sendToQueue('jobs', Buffer.from([0, 1, 2, 255]));
    ch.sendToQueue('jobs', Buffer.from('third'));
    await toolkit.running.until.queueLength('jobs', 3);

    // One delivered and not acknowledged: it is listed under unacked, with its delivery.
    const got = await ch.get('jobs', { noAck: false });
    expect(got && got.content.toString()).to.equal('first');

    const res = await api('GET', '/api/warren/queues/%2F/jobs/messages');
    expect(res.status).to.equal(200);
    const { ready, unacked } = res.json;
    expect(ready.map((m: { payload: string }) => Buffer.from(m.payload, 'base64'))).to.deep.equal([Buffer.from([0, 1, 2, 255]), Buffer.from('third')]);
    expect(ready[0]).to.deep.equal({
      payload_bytes: 4, redelivered: false, exchange: '', routing_key: 'jobs', properties: { headers: {} },
      payload: Buffer.from([0, 1, 2, 255]).toString('base64'), payload_encoding: 'base64', delivery_count: 0, expires_at: null, persistent: false,
    });
    expect(unacked).to.have.length(1);
    expect(unacked[0]).to.deep.include({
      payload: Buffer.from('first').toString('base64'), payload_encoding: 'base64', payload_bytes: 5, persistent: true,
      properties: { message_id: 'm-1', delivery_mode: 2, headers: { attempt: 1 }, content_type: 'text/plain' },
    });
    expect(unacked[0].delivery).to.include({ channel: 1, delivery_tag: (got as amqp.GetMessage).fields.deliveryTag, consumer_tag: null });

    // Nothing was taken: a second look and the client see all three.
    expect((await api('GET', '/api/warren/queues/%2F/jobs/messages')).json).to.deep.equal(res.json);
    expect((await api('GET', '/api/warren/queues/%2F/jobs')).json).to.include({ ready: 2, unacked: 1, messages: 3 });
    ch.nack(got as amqp.GetMessage, false, true);
    const again: string[] = [];
    for (let i = 0; i < 3; i++) {
      const m = await ch.get('jobs', { noAck: true });
      again.push(m ? m.content.toString('hex') : 'none');
    }
    expect(again).to.deep.equal([Buffer.from('first').toString('hex'), '000102ff', Buffer.from('third').toString('hex')]);
  });

  it('answers 404 for a queue or vhost that does not exist', async () => {
    expect(await api('GET', '/api/warren/queues/%2F/nope')).to.deep.include({ status: 404, json: { error: 'not_found', reason: "no queue 'nope' in vhost '/'" } });
    expect(await api('GET', '/api/warren/queues/nowhere/q/messages')).to.deep.include({ status: 404, json: { error: 'not_found', reason: "no vhost 'nowhere'" } });
    expect(await api('GET', '/api/warren/queues?vhost=nowhere')).to.deep.include({ status: 404, json: { error: 'not_found', reason: "no vhost 'nowhere'" } });
    expect((await api('GET', '/api/warren/nothing')).status).to.equal(404);
  });

  it('POST /api/warren/reset answers 204 once done: clients closed with 320, queues gone, faults taken back', async () => {
    const conn = await open();
    const closed = connectionClosed(conn);
    const ch = await channel(conn);
    await ch.assertQueue('left.over', { durable: true });
    ch.sendToQueue('left.over', Buffer.from('x'));
    await toolkit.running.until.queueLength('left.over', 1);
    toolkit.running.faults.nackPublishes(1); // armed through startBroker()'s object: the same toolkit

    const res = await api('POST', '/api/warren/reset');
    expect(res.status).to.equal(204);
    expect(res.text).to.equal('');
    expect(await closed).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'" });
    expect((await api('GET', '/api/warren/queues')).json).to.deep.equal([]);
    expect((await api('GET', '/api/warren/connections')).json).to.deep.equal([]);

    const after = await open();
    const cc = await confirmChannel(after);
    await cc.assertQueue('fresh');
    cc.sendToQueue('fresh', Buffer.from('y'));
    await cc.waitForConfirms(); // acked: the nack fault went with the reset
    expect((await api('GET', '/api/warren/queues/%2F/fresh')).json).to.include({ ready: 1 });
  });

  it('is for administrators only: 401 "Not administrator user" otherwise', async () => {
    const before = clock.now();
    for (const [method, path] of [['GET', '/api/warren/queues'], ['POST', '/api/warren/reset'], ['POST', '/api/warren/clock/advance'], ['GET', '/api/warren/queues/%2F/q/messages']]) {
      const res = await api(method!, path!, { user: 'app', password: 'p', body: method === 'POST' ? { ms: 1 } : undefined });
      expect(res, `${method} ${path}`).to.deep.include({ status: 401, json: { error: 'not_authorised', reason: 'Not administrator user' } });
    }
    expect((await api('GET', '/api/warren/queues', { auth: false })).status).to.equal(401);
    expect(clock.now()).to.equal(before); // the refused advance did not move time
  });

  it('POST /api/warren/clock/advance moves the FakeClock: a message with a TTL expires', async () => {
    const start = (await api('GET', '/api/warren/clock')).json;
    expect(start).to.deep.equal({ now: clock.now(), fake: true });
    const conn = await open();
    const ch = await channel(conn);
    await ch.assertQueue('short-lived', { arguments: { 'x-message-ttl': 30_000 } });
    ch.sendToQueue('short-lived', Buffer.from('soon gone'));
    await toolkit.running.until.queueLength('short-lived', 1);
    const [message] = (await api('GET', '/api/warren/queues/%2F/short-lived/messages')).json.ready;
    expect(message.expires_at).to.equal(start.now + 30_000);

    expect(await api('POST', '/api/warren/clock/advance', { body: { ms: 29_999 } })).to.deep.include({ status: 200, json: { now: start.now + 29_999 } });
    expect((await api('GET', '/api/warren/queues/%2F/short-lived')).json).to.include({ ready: 1 });
    expect(await api('POST', '/api/warren/clock/advance', { body: { ms: 1 } })).to.deep.include({ status: 200, json: { now: start.now + 30_000 } });
    expect((await api('GET', '/api/warren/queues/%2F/short-lived')).json).to.include({ ready: 0 });
    expect(await ch.get('short-lived')).to.equal(false);
  });

  it('refuses an advance without a number of milliseconds', async () => {
    const before = clock.now();
    for (const body of [{}, { ms: 'ten' }, { ms: -1 }, { ms: null }]) {
      const res = await api('POST', '/api/warren/clock/advance', { body });
      expect(res.status, JSON.stringify(body)).to.equal(400);
      expect(res.json.error).to.equal('bad_request');
      expect(res.json.reason).to.match(/^"ms" must be a number of milliseconds/);
    }
    expect(clock.now()).to.equal(before);
  });

  it('a broker not on a FakeClock refuses to advance, saying why', async () => {
    const plain = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent' });
    try {
      const res = await call(plain.managementUrl!, 'POST', '/api/warren/clock/advance', { body: { ms: 1000 } });
      expect(res.status).to.equal(400);
      expect(res.json).to.deep.equal({
        error: 'bad_request', reason: 'the broker was not started with --fake-clock (time moves only on a broker whose clock is a FakeClock)',
      });
      expect((await call(plain.managementUrl!, 'GET', '/api/warren/clock')).json).to.include({ fake: false });
    } finally {
      await plain.close();
    }
  });
});

describe('warren --fake-clock', () => {
  it('parses the flag and WARREN_FAKE_CLOCK', () => {
    expect(parseCli(['--fake-clock'], {})).to.include({ fakeClock: true });
    expect(parseCli([], { WARREN_FAKE_CLOCK: '1' })).to.include({ fakeClock: true });
    expect(parseCli([], { WARREN_FAKE_CLOCK: '0' })).not.to.have.property('fakeClock');
    expect(parseCli([], {})).not.to.have.property('fakeClock');
    expect(() => parseCli([], { WARREN_FAKE_CLOCK: 'yes please' })).to.throw("invalid WARREN_FAKE_CLOCK 'yes please'");
  });

  it('the command on a fake clock: time moves only by POST /api/warren/clock/advance', async function () {
    this.timeout(30_000);
    const dir = makeTmpDir('warren-fake-clock-');
    const child = spawn(process.execPath, [
      '--import', 'tsx', 'src/main.ts', '--port', '0', '--management-port', '0', '--prometheus-port', 'off', '--fake-clock', '--ready-json', '--data-dir', dir,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        void exited.then((code) => reject(new Error(`warren exited with ${code}: ${stderr}`)));
      });
      const ready = JSON.parse(line) as { amqp: string; management: string };
      const first = await call(ready.management, 'GET', '/api/warren/clock');
      expect(first.json.fake).to.equal(true);
      // Starts at the wall time of its start (within the minute this test takes at most).
      expect(Math.abs(first.json.now - Date.now())).to.be.below(60_000);
      expect((await call(ready.management, 'GET', '/api/warren/clock')).json.now).to.equal(first.json.now);
      const advanced = await call(ready.management, 'POST', '/api/warren/clock/advance', { body: { ms: 3_600_000 } });
      expect(advanced).to.deep.include({ status: 200, json: { now: first.json.now + 3_600_000 } });
      // A client works as usual on it.
      const conn = await connect(ready.amqp);
      const ch = await channel(conn);
      await ch.assertQueue('on-fake-time');
      await conn.close();
      expect((await call(ready.management, 'GET', '/api/warren/queues')).json.map((q: { name: string }) => q.name)).to.deep.equal(['on-fake-time']);
    } finally {
      child.kill('SIGTERM');
      expect(await exited, stderr).to.equal(0);
      removeDir(dir);
    }
  });
});
