import { expect } from 'chai';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { startBroker } from '../../src/broker.js';
import { call, useManagedBroker } from '../support/management.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { nodeName } from '../../src/node-name.js';

const NODE = nodeName();

const publishOver = (b: { api: ReturnType<typeof useManagedBroker>['api'] }, queue: string, payload: string, extra: Record<string, unknown> = {}) =>
  b.api('POST', '/api/exchanges/%2F/amq.default/publish', { body: { routing_key: queue, payload, payload_encoding: 'string', properties: {}, ...extra } });
const getOver = (b: { api: ReturnType<typeof useManagedBroker>['api'] }, queue: string, body: Record<string, unknown>) =>
  b.api('POST', `/api/queues/%2F/${queue}/get`, { body: { encoding: 'auto', ...body } });

/** /api/queues driven over HTTP and observed over AMQP (amqplib), and the reverse. */
describe('management API: queues', () => {
  const b = useManagedBroker({ prometheusPort: 0 });
  let conn: ChannelModel;
  let ch: Channel;
  before(async () => {
    conn = await amqp.connect(b.url);
    ch = await conn.createChannel();
  });
  after(async () => {
    await conn.close().catch(() => {}); // the broker (closed first) may have closed it
  });

  it('shows a quorum queue with the keys RabbitMQ 3.10.8 gives one (recorded), not a classic queue\'s', async () => {
    await b.api('PUT', '/api/queues/%2F/h.quorum-keys', { body: { durable: true, arguments: { 'x-queue-type': 'quorum' } } });
    const keys = [
      'arguments', 'auto_delete', 'consumer_capacity', 'consumer_utilisation', 'consumers', 'durable', 'effective_policy_definition', 'exclusive',
      'garbage_collection', 'leader', 'members', 'memory', 'message_bytes', 'message_bytes_dlx', 'message_bytes_persistent', 'message_bytes_ram',
      'message_bytes_ready', 'message_bytes_unacknowledged', 'messages', 'messages_details', 'messages_dlx', 'messages_persistent', 'messages_ram',
      'messages_ready', 'messages_ready_details', 'messages_unacknowledged', 'messages_unacknowledged_details', 'name', 'node', 'online',
      'open_files', 'operator_policy', 'policy', 'reductions', 'reductions_details', 'single_active_consumer_ctag', 'state', 'type', 'vhost',
    ];
    const listed = ((await b.api('GET', '/api/queues/%2F')).json as Array<Record<string, unknown>>).find((q) => q['name'] === 'h.quorum-keys')!;
    expect(Object.keys(listed)).to.deep.equal(keys);
    const detail = (await b.api('GET', '/api/queues/%2F/h.quorum-keys')).json as Record<string, unknown>;
    expect(Object.keys(detail)).to.deep.equal(['consumer_details', ...[...keys, 'deliveries', 'incoming'].sort()]);
    expect(detail).to.deep.include({ open_files: { [NODE]: 0 }, messages_dlx: 0, single_active_consumer_ctag: null, leader: NODE });
    await b.api('DELETE', '/api/queues/%2F/h.quorum-keys');
  });

  it('head_message_timestamp is the older of the ready head\'s and the oldest unacknowledged message\'s (recorded from 3.10.8), in the API and Prometheus', async () => {
    const queue = 'h.head-ts';
    await ch.assertQueue(queue, { durable: false });
    ch.sendToQueue(queue, Buffer.from('a'), { timestamp: 2000 });
    ch.sendToQueue(queue, Buffer.from('b'), { timestamp: 1000 });
    ch.sendToQueue(queue, Buffer.from('c'), { timestamp: 3000 });
    const head = async () => {
      const api = (await b.api('GET', `/api/queues/%2F/${queue}`)).json.head_message_timestamp as number | null;
      const listed = ((await b.api('GET', '/api/queues/%2F')).json as Array<Record<string, unknown>>).find((q) => q['name'] === queue)!['head_message_timestamp'];
      const text = await (await fetch(`${b.running.broker.prometheusUrl}/metrics/per-object`)).text();
      const sample = new RegExp(`^rabbitmq_queue_head_message_timestamp\\{vhost="/",queue="${queue}"\\} (\\S+)$`, 'm').exec(text)?.[1];
      expect(listed).to.equal(api);
      return [api, sample];
    };
    await ch.checkQueue(queue);
    // The head only, not the lowest of the ready messages.
    expect(await head()).to.deep.equal([2000, '2000']);
    const consumer = await conn.createChannel();
    await consumer.prefetch(2);
    const got: amqp.ConsumeMessage[] = [];
    await consumer.consume(queue, (m) => got.push(m!));
    while (got.length < 2) await new Promise((r) => setTimeout(r, 10));
    // a and b unacknowledged, c ready: the oldest unacknowledged one (a, the lowest seq) counts.
    expect(await head()).to.deep.equal([2000, '2000']);
    consumer.ack(got[0]!);
    await consumer.checkQueue(queue);
    expect(await head()).to.deep.equal([1000, '1000']);
    consumer.ack(got[1]!);
    await consumer.checkQueue(queue);
    while (got.length < 3) await new Promise((r) => setTimeout(r, 10));
    // c delivered and unacknowledged, nothing ready.
    expect(await head()).to.deep.equal([3000, '3000']);
    consumer.ack(got[2]!);
    await consumer.checkQueue(queue);
    expect(await head()).to.deep.equal([null, 'NaN']);
    await consumer.close();
  });

  it('declares over HTTP what AMQP then finds, and counts what AMQP publishes, live', async () => {
    expect((await b.api('PUT', '/api/queues/%2F/h.orders', { body: { durable: true, arguments: { 'x-message-ttl': 60000 } } })).status).to.equal(201);
    // Equivalent over AMQP (same durability and arguments), so no error.
    expect((await ch.assertQueue('h.orders', { durable: true, arguments: { 'x-message-ttl': 60000 } })).queue).to.equal('h.orders');
    ch.sendToQueue('h.orders', Buffer.from('persistent one'), { persistent: true });
    ch.sendToQueue('h.orders', Buffer.from('two'));
    await ch.checkQueue('h.orders');
    const q = (await b.api('GET', '/api/queues/%2F/h.orders')).json;
    expect([q.messages, q.messages_ready, q.messages_unacknowledged, q.messages_persistent]).to.deep.equal([2, 2, 0, 1]);
    expect([q.message_bytes, q.message_bytes_persistent]).to.deep.equal([17, 14]);
    expect([q.durable, q.arguments, q.type, q.state, q.node]).to.deep.equal([true, { 'x-message-ttl': 60000 }, 'classic', 'running', NODE]);
    const m = await ch.get('h.orders', { noAck: false });
    const held = (await b.api('GET', '/api/queues/%2F/h.orders')).json;
    expect([held.messages, held.messages_ready, held.messages_unacknowledged, held.message_bytes_unacknowledged]).to.deep.equal([2, 1, 1, 14]);
    ch.ack(m as amqp.GetMessage);
    await ch.purgeQueue('h.orders');
  });

  it('answers a redeclaration that differs with RabbitMQ\'s 400 wording', async () => {
    const res = await b.api('PUT', '/api/queues/%2F/h.orders', { body: { durable: false } });
    expect([res.status, res.json]).to.deep.equal([400, { error: 'bad_request', reason: "inequivalent arg 'durable' for queue 'h.orders' in vhost '/': received 'false' but current is 'true'" }]);
    const ttl = await b.api('PUT', '/api/queues/%2F/h.orders', { body: { durable: true, arguments: { 'x-message-ttl': 1000 } } });
    expect(ttl.json.reason).to.equal("inequivalent arg 'x-message-ttl' for queue 'h.orders' in vhost '/': received '1000' but current is '60000'");
    expect((await b.api('PUT', '/api/queues/%2F/amq.h', { body: {} })).text).to.equal('{"error":"not_authorised","reason":"Access refused."}');
    const quorum = await b.api('PUT', '/api/queues/%2F/h.q', { body: { arguments: { 'x-queue-type': 'quorum' } } });
    expect(quorum.json).to.deep.equal({ error: 'bad_request', reason: "invalid property 'non-durable' for queue 'h.q' in vhost '/'" });
  });

  describe('POST …/get', () => {
    beforeEach(async () => {
      await ch.purgeQueue('h.orders');
    });

    it('ack_requeue_true: leaves the messages, which come back redelivered (to HTTP and to AMQP)', async () => {
      await publishOver(b, 'h.orders', 'first');
      await publishOver(b, 'h.orders', 'second');
      const got = (await getOver(b, 'h.orders', { count: 5, ackmode: 'ack_requeue_true' })).json;
      expect(got.map((m: { payload: string; redelivered: boolean; message_count: number }) => [m.payload, m.redelivered, m.message_count]))
        .to.deep.equal([['first', false, 1], ['second', false, 0]]);
      const again = (await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_true' })).json;
      expect([again[0].payload, again[0].redelivered, again[0].message_count]).to.deep.equal(['first', true, 1]);
      const m = await ch.get('h.orders', { noAck: true });
      expect(m && [m.content.toString(), m.fields.redelivered]).to.deep.equal(['first', true]);
    });

    it('reject_requeue_true: rejects each message after getting them all, so count=2 gets two messages', async () => {
      await publishOver(b, 'h.orders', 'a');
      await publishOver(b, 'h.orders', 'b');
      const got = (await getOver(b, 'h.orders', { count: '2', ackmode: 'reject_requeue_true' })).json;
      expect(got.map((m: { payload: string }) => m.payload)).to.deep.equal(['a', 'b']);
      const q = (await b.api('GET', '/api/queues/%2F/h.orders')).json;
      expect([q.messages_ready, q.messages_unacknowledged]).to.deep.equal([2, 0]);
      const m = await ch.get('h.orders', { noAck: true });
      expect(m && [m.content.toString(), m.fields.redelivered]).to.deep.equal(['a', true]);
    });

    it('ack_requeue_false: takes the messages for good', async () => {
      await publishOver(b, 'h.orders', 'gone');
      await publishOver(b, 'h.orders', 'stays');
      const got = (await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_false' })).json;
      expect([got[0].payload, got[0].redelivered, got[0].message_count]).to.deep.equal(['gone', false, 1]);
      const m = await ch.get('h.orders', { noAck: true });
      expect(m && [m.content.toString(), m.fields.redelivered]).to.deep.equal(['stays', false]);
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_false' })).json).to.deep.equal([]);
    });

    it('reject_requeue_false: dead-letters the messages (reason rejected)', async () => {
      await ch.assertQueue('h.dlq');
      await ch.assertQueue('h.dl', { arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': 'h.dlq' } });
      await publishOver(b, 'h.dl', 'bad');
      const got = (await getOver(b, 'h.dl', { count: 1, ackmode: 'reject_requeue_false' })).json;
      expect(got[0].payload).to.equal('bad');
      const dead = await ch.get('h.dlq', { noAck: true });
      expect(dead && dead.content.toString()).to.equal('bad');
      const death = (dead as amqp.GetMessage).properties.headers!['x-death']![0]!;
      expect([death.reason, death.queue]).to.deep.equal(['rejected', 'h.dl']);
      expect((await b.api('GET', '/api/queues/%2F/h.dl')).json.messages).to.equal(0);
    });

    it('shows properties and headers, [] for none; base64 for bodies that are not UTF-8; truncates', async () => {
      ch.sendToQueue('h.orders', Buffer.from([0xff, 0xfe, 0x41]), {
        contentType: 'application/octet-stream', headers: { n: 1, s: 'x', f: 1.5, nested: { t: true }, list: [1, 'a'] }, priority: 3, timestamp: 1700000000, messageId: 'm1',
      });
      await ch.checkQueue('h.orders');
      await publishOver(b, 'h.orders', 'hello world');
      const [bin, text] = (await getOver(b, 'h.orders', { count: 2, ackmode: 'ack_requeue_true', truncate: 5 })).json;
      expect(bin).to.deep.equal({
        payload_bytes: 3, redelivered: false, exchange: '', routing_key: 'h.orders', message_count: 1,
        properties: { message_id: 'm1', timestamp: 1700000000, priority: 3, headers: { list: [1, 'a'], n: 1, nested: { t: true }, s: 'x', f: 1.5 }, content_type: 'application/octet-stream' },
        payload: '//5B', payload_encoding: 'base64',
      });
      expect([text.payload, text.payload_bytes, text.properties, text.payload_encoding]).to.deep.equal(['hello', 11, [], 'string']);
      const b64 = (await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_true', encoding: 'base64' })).json;
      expect(b64[0]).to.include({ payload: '//5B', payload_encoding: 'base64', redelivered: true });
    });

    it('adds x-delivery-count on a quorum queue, as basic.get does', async () => {
      await b.api('PUT', '/api/queues/%2F/h.quorum', { body: { durable: true, arguments: { 'x-queue-type': 'quorum' } } });
      await publishOver(b, 'h.quorum', 'q', { properties: { delivery_mode: 2 } });
      const first = (await getOver(b, 'h.quorum', { count: 1, ackmode: 'ack_requeue_true' })).json[0];
      const second = (await getOver(b, 'h.quorum', { count: 1, ackmode: 'ack_requeue_true' })).json[0];
      expect([first.properties, first.redelivered]).to.deep.equal([{ delivery_mode: 2, headers: { 'x-delivery-count': 0 } }, false]);
      expect([second.properties, second.redelivered]).to.deep.equal([{ delivery_mode: 2, headers: { 'x-delivery-count': 1 } }, true]);
    });

    it('refuses as RabbitMQ does: missing keys, bad count, encoding, a missing queue', async () => {
      expect((await b.api('POST', '/api/queues/%2F/h.orders/get', { body: { count: 1, ackmode: 'ack_requeue_true' } })).text)
        .to.equal('{"error":"bad_request","reason":"[{key_missing,encoding}]"}');
      expect((await getOver(b, 'h.orders', { count: 'x', ackmode: 'ack_requeue_true' })).text).to.equal('{"error":"bad_request","reason":["not_integer","x"]}');
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_true', encoding: 'utf8' })).text)
        .to.equal('{"error":"bad_request","reason":"Unsupported encoding. Please use auto or base64."}');
      const missing = await getOver(b, 'nope', { count: 1, ackmode: 'ack_requeue_true' });
      expect([missing.status, missing.text]).to.deep.equal([404, `{"error":"not_found","reason":"NOT_FOUND - no queue 'nope' in vhost '/'"}`]);
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: 'no_such_mode' })).status).to.equal(500);
      // JSON null is a value there (get_or_missing), refused as any other.
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_true', encoding: null })).text)
        .to.equal('{"error":"bad_request","reason":"Unsupported encoding. Please use auto or base64."}');
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: 'ack_requeue_true', truncate: null })).text).to.equal('{"error":"bad_request","reason":["not_integer",null]}');
      expect((await getOver(b, 'h.orders', { count: 1, ackmode: null })).status).to.equal(500);
    });
  });

  it('purges (DELETE …/contents) and deletes with if-empty and if-unused, cancelling consumers', async () => {
    await b.api('PUT', '/api/queues/%2F/h.del', { body: {} });
    await publishOver(b, 'h.del', 'x');
    const notEmpty = await b.api('DELETE', '/api/queues/%2F/h.del?if-empty=true');
    expect([notEmpty.status, notEmpty.json.reason]).to.deep.equal([400, "queue 'h.del' in vhost '/' not empty"]);
    expect((await b.api('DELETE', '/api/queues/%2F/h.del/contents')).status).to.equal(204);
    expect((await ch.checkQueue('h.del')).messageCount).to.equal(0);
    const consumer = await conn.createChannel();
    const cancelled = new Promise<unknown>((resolve) => void consumer.consume('h.del', (msg) => { if (msg === null) resolve(msg); }));
    await consumer.checkQueue('h.del');
    expect((await b.api('DELETE', '/api/queues/%2F/h.del?if-unused=true')).json.reason).to.equal("queue 'h.del' in vhost '/' in use");
    expect((await b.api('DELETE', '/api/queues/%2F/h.del?if-empty=true')).status).to.equal(204);
    expect(await cancelled).to.equal(null);
    expect((await b.api('GET', '/api/queues/%2F/h.del')).status).to.equal(404);
    await consumer.close();
  });

  it('keeps another connection\'s exclusive queue locked, in RabbitMQ\'s words for each call', async () => {
    const { queue } = await ch.assertQueue('h.excl', { exclusive: true });
    const locked = `cannot obtain exclusive access to locked queue '${queue}' in vhost '/'. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.`;
    const path = `/api/queues/%2F/${encodeURIComponent(queue)}`;
    expect((await b.api('DELETE', path)).json).to.deep.equal({ error: 'bad_request', reason: locked });
    expect((await b.api('DELETE', `${path}/contents`)).json).to.deep.equal({ error: 'bad_request', reason: locked });
    expect((await b.api('PUT', path, { body: {} })).json).to.deep.equal({ error: 'bad_request', reason: locked });
    expect((await b.api('POST', `${path}/get`, { body: { count: 1, ackmode: 'ack_requeue_true', encoding: 'auto' } })).json)
      .to.deep.equal({ error: 'bad_request', reason: `405 RESOURCE_LOCKED - ${locked}` });
    const q = (await b.api('GET', path)).json;
    expect([q.exclusive, q.owner_pid_details.name]).to.deep.equal([true, (await b.api('GET', '/api/connections')).json[0].name]);
  });

  it('reports the policy and operator policy that apply and their merged definition (src/policy)', async () => {
    const policies = b.running.broker.policies;
    policies.put('policy', '/', 'ttl', { pattern: '^h\\.pol$', definition: { 'message-ttl': 5000, 'max-length': 10 }, priority: 1, applyTo: 'queues' });
    policies.put('operator-policy', '/', 'cap', { pattern: '^h\\.pol$', definition: { 'max-length': 5 }, applyTo: 'queues' });
    try {
      await b.api('PUT', '/api/queues/%2F/h.pol', { body: {} });
      const q = (await b.api('GET', '/api/queues/%2F/h.pol')).json;
      expect([q.policy, q.operator_policy, q.effective_policy_definition]).to.deep.equal(['ttl', 'cap', { 'max-length': 5, 'message-ttl': 5000 }]);
      const other = (await b.api('GET', '/api/queues/%2F/h.orders')).json;
      expect([other.policy, other.operator_policy, other.effective_policy_definition]).to.deep.equal([null, null, {}]);
    } finally {
      policies.delete('policy', '/', 'ttl');
      policies.delete('operator-policy', '/', 'cap');
    }
  });

  it('lists a queue\'s bindings with the default exchange\'s first', async () => {
    await ch.bindQueue('h.orders', 'amq.topic', 'a.#');
    const res = await b.api('GET', '/api/queues/%2F/h.orders/bindings');
    expect(res.json.map((x: { source: string; routing_key: string; properties_key: string }) => [x.source, x.routing_key, x.properties_key]))
      .to.deep.equal([['', 'h.orders', 'h.orders'], ['amq.topic', 'a.#', 'a.%23']]);
  });
});

describe('management API: a queue declared over HTTP is durable like one declared over AMQP', () => {
  it('survives a restart with its persistent messages', async () => {
    const dataDir = makeTmpDir('warren-mgmt-');
    try {
      let running = await startBroker({ port: 0, managementPort: 0, dataDir, logLevel: 'silent' });
      const base = () => running.managementUrl!;
      expect((await call(base(), 'PUT', '/api/queues/%2F/kept', { body: { durable: 'true' } })).status).to.equal(201);
      const pub = await call(base(), 'POST', '/api/exchanges/%2F/amq.default/publish', { body: { routing_key: 'kept', payload: 'persisted', payload_encoding: 'string', properties: { delivery_mode: 2 } } });
      expect(pub.json).to.deep.equal({ routed: true });
      await running.close();
      running = await startBroker({ port: 0, managementPort: 0, dataDir, logLevel: 'silent' });
      const q = (await call(base(), 'GET', '/api/queues/%2F/kept')).json;
      expect([q.durable, q.messages, q.messages_persistent]).to.deep.equal([true, 1, 1]);
      const got = (await call(base(), 'POST', '/api/queues/%2F/kept/get', { body: { count: 1, ackmode: 'ack_requeue_false', encoding: 'auto' } })).json;
      expect(got[0].payload).to.equal('persisted');
      await running.close();
    } finally {
      removeDir(dataDir);
    }
  });
});
