import { expect } from 'chai';
import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { channel, confirmChannel, connectionClosed } from '../support/amqp.js';
import { useToolkitBroker } from '../support/management.js';

function publishConfirmed(ch: ConfirmChannel, queue: string, body: string, persistent = false): Promise<string> {
  return new Promise((resolve) => {
    ch.sendToQueue(queue, Buffer.from(body), { persistent }, (err: Error | null) => resolve(err ? err.message : 'ack'));
  });
}

function event<T = unknown>(conn: ChannelModel, name: string): Promise<T> {
  return new Promise((resolve) => conn.once(name, resolve));
}

/**
 * POST /api/warren/until and /api/warren/faults/* (docs/testing.md, "Over HTTP"): the test
 * toolkit's waits and faults for test suites in other languages, driven with fetch while
 * amqplib clients see what the faults do (the same failures test/testing/faults.test.ts checks
 * through the embedded API).
 */
describe('management API: /api/warren/until and /api/warren/faults (waits and faults over HTTP)', () => {
  const toolkit = useToolkitBroker();
  const { api, open } = toolkit;

  describe('until', () => {
    it('answers a queue_length wait once the messages are there, with the queue state', async () => {
      const ch = await channel(await open());
      await ch.assertQueue('jobs', { durable: false });
      const waiting = api('POST', '/api/warren/until', { body: { condition: 'queue_length', queue: 'jobs', length: 2, timeout: 5000 } });
      // Resolved by the enqueue events, not by a poll: the answer says what satisfied it.
      ch.sendToQueue('jobs', Buffer.from('1'));
      ch.sendToQueue('jobs', Buffer.from('2'));
      const res = await waiting;
      expect(res.status).to.equal(200);
      expect(res.json).to.include({ vhost: '/', name: 'jobs', ready: 2, unacked: 0, consumers: 0 });
    });

    it('queue_drained, consumer_count and connection resolve on the broker events', async () => {
      const conn = await open();
      const ch = await channel(conn);
      await ch.assertQueue('work', { durable: false });
      ch.sendToQueue('work', Buffer.from('w'));
      const consumers = api('POST', '/api/warren/until', { body: { condition: 'consumer_count', queue: 'work', count: 1, timeout: 5000 } });
      const drained = api('POST', '/api/warren/until', { body: { condition: 'queue_drained', queue: 'work', timeout: 5000 } });
      const named = api('POST', '/api/warren/until', { body: { condition: 'connection', connection_name: 'late-worker', timeout: 5000 } });
      await ch.consume('work', (m: ConsumeMessage | null) => m && ch.ack(m));
      expect((await consumers).json).to.include({ consumers: 1 });
      expect((await drained).json).to.include({ ready: 0, unacked: 0 });
      await open('late-worker');
      const res = await named;
      expect(res.status).to.equal(200);
      expect(res.json).to.include({ connectionName: 'late-worker', user: 'guest', vhost: '/' });
    });

    it('times out with 408 and the message saying what was still awaited', async () => {
      const ch = await channel(await open());
      await ch.assertQueue('slow', { durable: false });
      ch.sendToQueue('slow', Buffer.from('only one'));
      await toolkit.running.until.queueLength('slow', 1);
      const res = await api('POST', '/api/warren/until', { body: { condition: 'queue_length', queue: 'slow', length: 3, timeout: 50 } });
      expect(res.status).to.equal(408);
      expect(res.json).to.deep.equal({
        error: 'timeout',
        reason: "until.queueLength('slow'): still waiting after 50 ms for queue 'slow' in vhost '/' to hold at least 3 ready message(s); it has 1 ready and 0 unacknowledged message(s) and 0 consumer(s)",
      });
    });

    it('refuses unknown conditions, missing or bad fields and unknown vhosts; administrators only', async () => {
      const bad = async (body: unknown) => {
        const res = await api('POST', '/api/warren/until', { body });
        return { status: res.status, reason: res.json.reason };
      };
      expect(await bad({ condition: 'routed', queue: 'q' })).to.deep.equal({
        status: 400, reason: '"routed" waits for a message routed from now on: start it with POST /api/warren/waits before publishing, then GET /api/warren/waits/{id}',
      });
      expect(await bad({ condition: 'queue_size', queue: 'q' })).to.deep.equal({
        status: 400, reason: '"condition" must be one of "queue_length", "queue_drained", "consumer_count", "connection" (got "queue_size")',
      });
      expect(await bad({ condition: 'queue_length', queue: 'q' })).to.deep.equal({ status: 400, reason: '"length" is required' });
      expect(await bad({ condition: 'queue_length', queue: 'q', length: -1 })).to.deep.equal({ status: 400, reason: '"length" must be a whole number, 0 or more (got -1)' });
      expect(await bad({ condition: 'queue_drained', queue: 'q', timeout: 10e6 })).to.deep.equal({ status: 400, reason: '"timeout" must be at most 120000 ms (got 10000000)' });
      expect(await bad({ condition: 'queue_drained', queue: 'q', vhost: 'nope' })).to.deep.equal({ status: 404, reason: "no vhost 'nope'" });
      const denied = await api('POST', '/api/warren/until', { user: 'app', password: 'p', body: { condition: 'queue_drained', queue: 'q' } });
      expect({ status: denied.status, body: denied.json }).to.deep.equal({ status: 401, body: { error: 'not_authorised', reason: 'Not administrator user' } });
    });
  });

  describe('waits started before the client acts (POST /api/warren/waits, GET /api/warren/waits/{id})', () => {
    it('routed: the next message routed to the queue from the POST on, read by the GET', async () => {
      const ch = await channel(await open());
      await ch.assertQueue('orders', { durable: false });
      ch.sendToQueue('orders', Buffer.from('already there'));
      await toolkit.running.until.queueLength('orders', 1);
      const started = await api('POST', '/api/warren/waits', { body: { condition: 'routed', queue: 'orders', timeout: 5000 } });
      expect(started.status).to.equal(201);
      expect(started.json).to.have.keys(['id']);
      // The wait is registered once the POST is answered: this publish cannot race it.
      ch.sendToQueue('orders', Buffer.from('order-1'), { messageId: 'm-1' });
      const res = await api('GET', `/api/warren/waits/${started.json.id}`);
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.include({ body: Buffer.from('order-1').toString('base64'), exchange: '', routingKey: 'orders', redelivered: false });
      expect(res.json.properties).to.deep.include({ messageId: 'm-1' });
      // An outcome is read once.
      const again = await api('GET', `/api/warren/waits/${started.json.id}`);
      expect({ status: again.status, error: again.json.error }).to.deep.equal({ status: 404, error: 'not_found' });
    });

    it('a wait that times out is read as 408 with what was awaited; any condition can be started this way', async () => {
      const ch = await channel(await open());
      await ch.assertQueue('quiet', { durable: false });
      const routed = await api('POST', '/api/warren/waits', { body: { condition: 'routed', queue: 'quiet', timeout: 30 } });
      const length = await api('POST', '/api/warren/waits', { body: { condition: 'queue_length', queue: 'quiet', length: 0 } });
      const timedOut = await api('GET', `/api/warren/waits/${routed.json.id}`);
      expect({ status: timedOut.status, body: timedOut.json }).to.deep.equal({
        status: 408, body: { error: 'timeout', reason: "until.routed('quiet'): still waiting after 30 ms for a message routed to queue 'quiet' in vhost '/' (none arrived)" },
      });
      expect((await api('GET', `/api/warren/waits/${length.json.id}`)).json).to.include({ name: 'quiet', ready: 0 });
      const bad = await api('POST', '/api/warren/waits', { body: { condition: 'routed' } });
      expect({ status: bad.status, reason: bad.json.reason }).to.deep.equal({ status: 400, reason: '"queue" is required' });
    });
  });

  describe('faults', () => {
    it('close-connection: connection.close with the chosen code and reason to the named connection; 404 when none is open', async () => {
      const victim = await open('victim');
      await open('bystander');
      const closed = connectionClosed(victim);
      const res = await api('POST', '/api/warren/faults/close-connection', { body: { connection: 'victim', code: 320, reason: 'test says bye' } });
      expect({ status: res.status, body: res.json }).to.deep.equal({ status: 200, body: { connections: 1 } });
      expect(await closed).to.deep.equal({ code: 320, text: 'CONNECTION_FORCED - test says bye' });
      expect(toolkit.running.inspect.connections().map((c) => c.connectionName)).to.deep.equal(['bystander']);
      const missing = await api('POST', '/api/warren/faults/close-connection', { body: { connection: 'elsewhere' } });
      expect({ status: missing.status, body: missing.json }).to.deep.equal({
        status: 404, body: { error: 'not_found', reason: "faults.closeConnection: no connection 'elsewhere' is open" },
      });
      const badCode = await api('POST', '/api/warren/faults/close-connection', { body: { connection: 'bystander', code: 200 } });
      expect(badCode.status).to.equal(400);
    });

    it('close-all-connections: as a broker shutdown closes them', async () => {
      const conns = [await open(), await open()];
      const closed = conns.map(connectionClosed);
      expect((await api('POST', '/api/warren/faults/close-all-connections')).json).to.deep.equal({ connections: 2 });
      for (const c of await Promise.all(closed)) {
        expect(c).to.deep.equal({ code: 320, text: "CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'" });
      }
    });

    it('drop-connection: the socket is reset without connection.close; the unacked message comes back redelivered', async () => {
      const worker = await open('worker');
      const ch = await channel(worker);
      await ch.assertQueue('jobs', { durable: false });
      ch.sendToQueue('jobs', Buffer.from('job'));
      await new Promise<void>((resolve) => void ch.consume('jobs', (m) => m && resolve()));
      const closed = connectionClosed(worker);
      expect((await api('POST', '/api/warren/faults/drop-connection', { body: { connection: 'worker' } })).json).to.deep.equal({ connections: 1 });
      expect((await closed).code).to.equal('ECONNRESET');
      expect(toolkit.running.inspect.messages('jobs').ready[0]).to.include({ redelivered: true });
    });

    it('nack-publishes: the next n publishes in confirm mode are nacked and not routed', async () => {
      const ch = await confirmChannel(await open('pub'));
      await ch.assertQueue('q', { durable: false });
      const res = await api('POST', '/api/warren/faults/nack-publishes', { body: { count: 2, connection: 'pub' } });
      expect(res.json).to.deep.equal({ pending: 2 });
      expect(await Promise.all(['1', '2', '3'].map((b) => publishConfirmed(ch, 'q', b)))).to.deep.equal(['message nacked', 'message nacked', 'ack']);
      expect(toolkit.running.inspect.messages('q').ready.map((m) => m.body.toString())).to.deep.equal(['3']);
    });

    it('hold-confirms / release-confirms: publishes are routed, their confirms wait for the release', async () => {
      const ch = await confirmChannel(await open());
      await ch.assertQueue('q', { durable: false });
      expect((await api('POST', '/api/warren/faults/hold-confirms')).status).to.equal(204);
      const confirms: string[] = [];
      const all = Promise.all(['1', '2'].map((b) => publishConfirmed(ch, 'q', b).then((r) => confirms.push(r))));
      expect((await ch.checkQueue('q')).messageCount).to.equal(2);
      await ch.checkQueue('q');
      expect(confirms).to.deep.equal([]);
      expect((await api('POST', '/api/warren/faults/release-confirms')).status).to.equal(204);
      await all;
      expect(confirms).to.deep.equal(['ack', 'ack']);
    });

    it('raise-alarm / clear-alarm: a publisher gets connection.blocked "low on memory" and is read again after the clear', async () => {
      const conn = await open('pub');
      const ch = await channel(conn);
      await ch.assertQueue('q', { durable: false });
      const blocked = event<string>(conn, 'blocked');
      expect((await api('POST', '/api/warren/faults/raise-alarm', { body: { resource: 'memory' } })).status).to.equal(204);
      ch.sendToQueue('q', Buffer.from('during'));
      expect(await blocked).to.equal('low on memory');
      const unblocked = event(conn, 'unblocked');
      const arrived = toolkit.running.until.routed('q');
      expect((await api('POST', '/api/warren/faults/clear-alarm', { body: { resource: 'memory' } })).status).to.equal(204);
      await unblocked;
      expect((await arrived).body.toString()).to.equal('during');
      const bad = await api('POST', '/api/warren/faults/raise-alarm', { body: { resource: 'cpu' } });
      expect({ status: bad.status, reason: bad.json.reason }).to.deep.equal({ status: 400, reason: '"resource" must be "memory" or "disk" (got "cpu")' });
    });

    it('fail-next-commit / resume-store: the waiting confirm is nacked and the publisher blocked "low on disk" until the store resumes', async () => {
      const conn = await open();
      const ch = await confirmChannel(conn);
      await ch.assertQueue('durable', { durable: true });
      expect((await api('POST', '/api/warren/faults/fail-next-commit')).status).to.equal(204);
      const blocked = event<string>(conn, 'blocked');
      expect(await publishConfirmed(ch, 'durable', 'lost?', true)).to.equal('message nacked');
      const kept = publishConfirmed(ch, 'durable', 'kept', true);
      expect(await blocked).to.equal('low on disk');
      const unblocked = event(conn, 'unblocked');
      expect((await api('POST', '/api/warren/faults/resume-store')).status).to.equal(204);
      await unblocked;
      expect(await kept).to.equal('ack');
    });

    it('clear takes every fault back (held confirms are sent)', async () => {
      const ch = await confirmChannel(await open());
      await ch.assertQueue('q', { durable: false });
      await api('POST', '/api/warren/faults/hold-confirms');
      await api('POST', '/api/warren/faults/nack-publishes', { body: { count: 5 } });
      const held = publishConfirmed(ch, 'q', 'x');
      await ch.checkQueue('q');
      expect((await api('POST', '/api/warren/faults/clear')).status).to.equal(204);
      expect(await held).to.equal('message nacked');
      expect(await publishConfirmed(ch, 'q', 'y')).to.equal('ack');
      expect(toolkit.running.faults.pendingNacks).to.equal(0);
    });
  });
});
