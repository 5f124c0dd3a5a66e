import { expect } from 'chai';
import type { ChannelModel } from 'amqplib';
import { RawClient, typedProperties } from '../../conformance/lib/raw-client.js';
import { channel, closedWith, connect, type Channel } from '../support/amqp.js';
import { startBroker } from '../../src/broker.js';
import { useManagedBroker } from '../support/management.js';
import { useTmpDir } from '../support/tmp-dir.js';

/**
 * RabbitMQ's firehose tracer (https://www.rabbitmq.com/firehose.html, rabbit_trace.erl): while
 * tracing is on for a vhost, amq.rabbitmq.trace gets a `publish.<exchange>` copy of every
 * publish and a `deliver.<queue>` copy of every delivery. Every expected message below (routing
 * keys, header names, order and field types, properties) was recorded from RabbitMQ 3.10.8
 * (`rabbitmqctl trace_on`, a queue bound to amq.rabbitmq.trace with '#', read with a raw client
 * that keeps field types); only the connection's ports and the node name differ per run.
 */
describe('firehose tracing (amq.rabbitmq.trace)', () => {
  const broker = useManagedBroker();
  let conn: ChannelModel;
  let ch: Channel;
  let raw: RawClient;
  let seq = 0;
  const uniq = (p: string): string => `${p}-${++seq}`;

  beforeEach(async () => {
    conn = await connect(broker.url);
    ch = await channel(conn);
    raw = await RawClient.open(broker.url);
    await raw.openChannel(1);
  });
  afterEach(async () => {
    broker.running.broker.tracing.clear();
    raw.destroy();
    await conn.close().catch(() => {});
  });

  /** RabbitMQ's connection name for an amqplib connection: "client -> server". */
  function connName(c: ChannelModel): string {
    const socket = (c as unknown as { connection: { stream: { localPort: number } } }).connection.stream;
    return `127.0.0.1:${socket.localPort} -> 127.0.0.1:${broker.running.port}`;
  }

  /** A queue bound to amq.rabbitmq.trace with '#'. */
  async function traceQueue(): Promise<string> {
    const q = uniq('trace');
    await ch.assertQueue(q, { durable: false });
    await ch.bindQueue(q, 'amq.rabbitmq.trace', '#');
    return q;
  }

  /** Every traced message in q as the raw client reads it: routing fields, typed headers, body. */
  async function drainTrace(q: string): Promise<Array<{ exchange: string; routingKey: string; properties: Record<string, unknown>; body: string }>> {
    const out = [];
    for (;;) {
      const m = await raw.get(1, q);
      if (!m) return out;
      const args = m.method.args as { exchange: string; routingKey: string };
      out.push({ exchange: args.exchange, routingKey: args.routingKey, properties: typedProperties(m.header.properties), body: m.body.toString() });
    }
  }

  const node = (): string => `S:${broker.running.broker.identity.node}`;

  it('amq.rabbitmq.trace is a durable internal topic exchange in every vhost; clients cannot publish to it', async () => {
    const res = await broker.api('GET', '/api/exchanges/%2F/amq.rabbitmq.trace');
    expect(res.status).to.equal(200);
    expect({ type: res.json.type, durable: res.json.durable, internal: res.json.internal, auto_delete: res.json.auto_delete })
      .to.deep.equal({ type: 'topic', durable: true, internal: true, auto_delete: false });
    ch.publish('amq.rabbitmq.trace', 'x', Buffer.from('direct'));
    expect(await closedWith(ch.checkQueue('nothing-needed').catch((e) => { throw e; }))).to.deep.include({
      code: 403, text: "ACCESS_REFUSED - cannot publish to internal exchange 'amq.rabbitmq.trace' in vhost '/'",
    });
  });

  it('copies nothing while tracing is off (the publish and deliver paths see no tracer)', async () => {
    const tq = await traceQueue();
    const q = uniq('q');
    await ch.assertQueue(q, { durable: false });
    ch.sendToQueue(q, Buffer.from('quiet'));
    const got = await ch.get(q, { noAck: true });
    expect(got && got.content.toString()).to.equal('quiet');
    expect(broker.running.broker.vhosts.get('/')!.tracer).to.equal(undefined);
    expect(await drainTrace(tq)).to.deep.equal([]);
  });

  it('traces publishes to the default and named exchanges, unroutable and mandatory ones, gets and deliveries, with RabbitMQ headers', async () => {
    const tq = await traceQueue();
    const q1 = uniq('q1');
    const q2 = uniq('q2');
    const missing = uniq('no-such-queue');
    await ch.assertQueue(q1, { durable: false });
    await ch.assertQueue(q2, { durable: false });
    await ch.bindQueue(q1, 'amq.direct', `k-${q1}`);
    await ch.bindQueue(q2, 'amq.direct', `k2-${q2}`);
    broker.running.broker.tracing.start('/');
    ch.publish('', q1, Buffer.from('hello'), {
      contentType: 'text/plain', contentEncoding: 'utf8', headers: { a: 1, s: 'x', big: 5000000000, f: 1.5, b: true, arr: [1, 'two'] },
      deliveryMode: 2, priority: 3, correlationId: 'corr', replyTo: 'rto', expiration: '60000', messageId: 'mid',
      timestamp: 1700000000, type: 'typ', userId: 'guest', appId: 'app',
    });
    ch.publish('amq.direct', `k-${q1}`, Buffer.from('cc'), { headers: { CC: [`k2-${q2}`], BCC: ['q1x'] } });
    ch.publish('amq.topic', 'nowhere', Buffer.from('lost'));
    ch.publish('', missing, Buffer.from('lost2'));
    ch.publish('amq.direct', 'none', Buffer.from('ret'), { mandatory: true });
    const m1 = await ch.get(q1, { noAck: false });
    if (!m1) throw new Error('no message in q1');
    ch.nack(m1, false, true);
    await ch.get(q1, { noAck: true });
    await new Promise<void>((resolve) => {
      void ch.consume(q1, (m) => {
        if (m) {
          ch.ack(m);
          resolve();
        }
      });
    });
    // A transactional publish is traced at basic.publish, before tx.commit (rolled back here).
    raw.method(2, 'channel.open', { reserved1: '' });
    await raw.expect('channel.open-ok');
    raw.method(2, 'tx.select', {});
    await raw.expect('tx.select-ok');
    raw.publish(2, '', q2, 'txmsg');
    raw.method(2, 'tx.rollback', {});
    await raw.expect('tx.rollback-ok');

    const c = `S:${connName(conn)}`;
    const rawName = `S:127.0.0.1:${raw.socket.localPort} -> 127.0.0.1:${broker.running.port}`;
    const allProps = {
      app_id: 'S:app', user_id: 'S:guest', type: 'S:typ', timestamp: 'I:1700000000', message_id: 'S:mid', expiration: 'S:60000',
      reply_to: 'S:rto', correlation_id: 'S:corr', priority: 'I:3', delivery_mode: 'I:2',
      headers: { a: 'b:1', s: 'S:x', big: 'l:5000000000', f: 'd:1.5', b: 't:true', arr: ['b:1', 'S:two'] },
      content_encoding: 'S:utf8', content_type: 'S:text/plain',
    };
    const publish = (exchange: string, keys: string[], properties: object, routed: string[], conn = c, ch = 'I:1') => ({
      exchange_name: `S:${exchange}`, routing_keys: keys.map((k) => `S:${k}`), properties, node: node(),
      vhost: 'S:/', connection: conn, channel: ch, user: 'S:guest', routed_queues: routed.map((q) => `S:${q}`),
    });
    const deliver = (exchange: string, keys: string[], properties: object, redelivered: number) => ({
      exchange_name: `S:${exchange}`, routing_keys: keys.map((k) => `S:${k}`), properties, node: node(),
      redelivered: `I:${redelivered}`, vhost: 'S:/', connection: c, channel: 'I:1', user: 'S:guest',
    });
    const traced = await drainTrace(tq);
    const expected = [
      { routingKey: 'publish.', headers: publish('', [q1], allProps, [q1]), body: 'hello' },
      { routingKey: 'publish.amq.direct', headers: publish('amq.direct', [`k-${q1}`, `k2-${q2}`, 'q1x'], { headers: { CC: [`S:k2-${q2}`] } }, [q1, q2]), body: 'cc' },
      { routingKey: 'publish.amq.topic', headers: publish('amq.topic', ['nowhere'], { headers: {} }, []), body: 'lost' },
      { routingKey: 'publish.', headers: publish('', [missing], { headers: {} }, [missing]), body: 'lost2' },
      { routingKey: 'publish.amq.direct', headers: publish('amq.direct', ['none'], { headers: {} }, []), body: 'ret' },
      { routingKey: `deliver.${q1}`, headers: deliver('', [q1], allProps, 0), body: 'hello' },
      { routingKey: `deliver.${q1}`, headers: deliver('', [q1], allProps, 1), body: 'hello' },
      { routingKey: `deliver.${q1}`, headers: deliver('amq.direct', [`k-${q1}`, `k2-${q2}`, 'q1x'], { headers: { CC: [`S:k2-${q2}`] } }, 0), body: 'cc' },
      { routingKey: 'publish.', headers: publish('', [q2], {}, [q2], rawName, 'I:2'), body: 'txmsg' },
    ];
    // Compared as JSON so that the order of the header fields counts too.
    expect(JSON.stringify(traced)).to.equal(JSON.stringify(expected.map((e) => ({
      exchange: 'amq.rabbitmq.trace', routingKey: e.routingKey, properties: { headers: e.headers }, body: e.body,
    }))));
    // Reading the copies (get-ok of messages from amq.rabbitmq.trace) was not traced again.
    expect(await raw.get(1, tq)).to.equal(null);
  });

  it('lists the queues rabbit_exchange:route returns: through alternate and exchange-to-exchange bindings, sorted; default-exchange CC keys as named', async () => {
    const tq = await traceQueue();
    const [zq, aq, aeq] = ['zq', 'aq', 'ae-q'].map((p) => `${p}-${uniq('r')}`) as [string, string, string];
    for (const q of [zq, aq, aeq]) await ch.assertQueue(q, { durable: false });
    const ae = uniq('ae');
    const withAe = uniq('withae');
    const fan = uniq('fan');
    const e2e = uniq('e2e');
    await ch.assertExchange(ae, 'fanout', { durable: false });
    await ch.bindQueue(aeq, ae, '');
    await ch.assertExchange(withAe, 'direct', { durable: false, alternateExchange: ae });
    await ch.assertExchange(fan, 'fanout', { durable: false });
    await ch.bindQueue(zq, fan, '');
    await ch.bindQueue(aq, fan, '');
    await ch.assertExchange(e2e, 'fanout', { durable: false });
    await ch.bindExchange(e2e, fan, '');
    await ch.bindQueue(aeq, e2e, '');
    broker.running.broker.tracing.start('/');
    ch.publish(withAe, 'x', Buffer.from('to-ae'));
    ch.publish(fan, 'x', Buffer.from('fanned'));
    ch.publish('', zq, Buffer.from('cc-default'), { headers: { CC: [aq, zq, 'missing'] } });
    await ch.checkQueue(zq);
    const routed = (await drainTrace(tq)).map((m) => ({
      key: m.routingKey, keys: (m.properties['headers'] as Record<string, unknown>)['routing_keys'],
      routed: (m.properties['headers'] as Record<string, unknown>)['routed_queues'],
    }));
    expect(routed).to.deep.equal([
      { key: `publish.${withAe}`, keys: ['S:x'], routed: [`S:${aeq}`] },
      { key: `publish.${fan}`, keys: ['S:x'], routed: [`S:${aeq}`, `S:${aq}`, `S:${zq}`] },
      { key: 'publish.', keys: [`S:${zq}`, `S:${aq}`, `S:${zq}`, 'S:missing'], routed: [`S:${aq}`, 'S:missing', `S:${zq}`] },
    ]);
  });

  it('traces the delivery of a dead-lettered message with its x-death headers, and not the dead-lettering itself', async () => {
    const tq = await traceQueue();
    const src = uniq('src');
    const dlq = uniq('dlq');
    await ch.assertQueue(dlq, { durable: false });
    await ch.assertQueue(src, { durable: false, arguments: { 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq } });
    broker.running.broker.tracing.start('/');
    ch.sendToQueue(src, Buffer.from('dead'), { persistent: false });
    const m = await ch.get(src, { noAck: false });
    if (!m) throw new Error('no message');
    ch.reject(m, false);
    await ch.checkQueue(dlq);
    await ch.get(dlq, { noAck: true });
    const traced = await drainTrace(tq);
    expect(traced.map((t) => t.routingKey)).to.deep.equal(['publish.', `deliver.${src}`, `deliver.${dlq}`]);
    const h = traced[2]!.properties['headers'] as Record<string, any>;
    expect(h['routing_keys']).to.deep.equal([`S:${dlq}`]);
    expect(Object.keys(h['properties'])).to.deep.equal(['delivery_mode', 'headers']);
    expect(Object.keys(h['properties']['headers'])).to.deep.equal(['x-death', 'x-first-death-exchange', 'x-first-death-queue', 'x-first-death-reason']);
    expect(h['properties']['headers']['x-death'][0]).to.deep.include({ count: 'l:1', reason: 'S:rejected', queue: `S:${src}`, exchange: 'S:' });
  });

  it('traces a quorum queue\'s deliveries with the x-delivery-count the client got', async () => {
    const tq = await traceQueue();
    const qq = uniq('qq');
    await ch.assertQueue(qq, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    broker.running.broker.tracing.start('/');
    ch.sendToQueue(qq, Buffer.from('quorum'));
    const first = await ch.get(qq, { noAck: false });
    if (!first) throw new Error('no message');
    ch.nack(first, false, true);
    await ch.get(qq, { noAck: true });
    const traced = await drainTrace(tq);
    expect(traced.map((t) => [t.routingKey, (t.properties['headers'] as Record<string, any>)['properties'], (t.properties['headers'] as Record<string, any>)['redelivered']])).to.deep.equal([
      ['publish.', { headers: {} }, undefined],
      [`deliver.${qq}`, { headers: { 'x-delivery-count': 'l:0' } }, 'I:0'],
      [`deliver.${qq}`, { headers: { 'x-delivery-count': 'l:1' } }, 'I:1'],
    ]);
    await ch.deleteQueue(qq);
  });

  it('traces publishes and gets made through the management API as its direct connection makes them', async () => {
    const tq = await traceQueue();
    const q = uniq('q');
    await ch.assertQueue(q, { durable: false });
    broker.running.broker.tracing.start('/');
    const published = await broker.api('POST', '/api/exchanges/%2F/amq.default/publish', {
      body: { routing_key: q, payload: 'via-http', payload_encoding: 'string', properties: { headers: { h: 'v' } } },
    });
    expect(published.json).to.deep.equal({ routed: true });
    expect((await broker.api('POST', `/api/queues/%2F/${q}/get`, { body: { count: 1, ackmode: 'ack_requeue_false', encoding: 'auto' } })).status).to.equal(200);
    const traced = await drainTrace(tq);
    const pid = new RegExp(`^S:<${broker.running.broker.identity.node.replace(/[.]/g, '\\.')}\\.\\d+\\.\\d+\\.0>$`);
    const [p, d] = traced.map((t) => t.properties['headers'] as Record<string, any>);
    expect(traced.map((t) => t.routingKey)).to.deep.equal(['publish.', `deliver.${q}`]);
    expect(p!['connection']).to.match(pid);
    expect(d!['connection']).to.match(pid);
    // One direct connection per request, as the management plugin opens them.
    expect(p!['connection']).to.not.equal(d!['connection']);
    expect(JSON.stringify(p)).to.equal(JSON.stringify({
      exchange_name: 'S:', routing_keys: [`S:${q}`], properties: { headers: { h: 'S:v' } }, node: node(),
      vhost: 'S:/', connection: p!['connection'], channel: 'I:1', user: 'S:guest', routed_queues: [`S:${q}`],
    }));
    expect(JSON.stringify(d)).to.equal(JSON.stringify({
      exchange_name: 'S:', routing_keys: [`S:${q}`], properties: { headers: { h: 'S:v' } }, node: node(),
      redelivered: 'I:0', vhost: 'S:/', connection: d!['connection'], channel: 'I:1', user: 'S:guest',
    }));
  });

  it('PUT /api/vhosts/{vhost} with "tracing" turns it on and off as rabbit_vhost:put_vhost does; GET shows it; other values are refused', async () => {
    const tq = await traceQueue();
    const q = uniq('q');
    await ch.assertQueue(q, { durable: false });
    expect((await broker.api('PUT', '/api/vhosts/%2F', { body: { tracing: true } })).status).to.equal(204);
    expect((await broker.api('GET', '/api/vhosts/%2F')).json.tracing).to.equal(true);
    const listed = (await broker.api('GET', '/api/vhosts')).json as Array<{ name: string; tracing: boolean }>;
    expect(listed.find((v) => v.name === '/')?.tracing).to.equal(true);
    ch.sendToQueue(q, Buffer.from('on'));
    // A PUT without "tracing" leaves it as it is.
    expect((await broker.api('PUT', '/api/vhosts/%2F', { body: { description: 'Default virtual host' } })).status).to.equal(204);
    expect((await broker.api('GET', '/api/vhosts/%2F')).json.tracing).to.equal(true);
    for (const bad of ['yes', 1, null]) {
      const res = await broker.api('PUT', '/api/vhosts/%2F', { body: { tracing: bad } });
      expect({ status: res.status, body: res.json }).to.deep.equal({ status: 400, body: { error: 'bad_request', reason: ['not_boolean', bad] } });
    }
    expect((await broker.api('PUT', '/api/vhosts/%2F', { body: { tracing: 'false' } })).status).to.equal(204);
    expect((await broker.api('GET', '/api/vhosts/%2F')).json.tracing).to.equal(false);
    ch.sendToQueue(q, Buffer.from('off'));
    await ch.checkQueue(q);
    expect((await drainTrace(tq)).map((t) => t.body)).to.deep.equal(['on']);
  });

  it('a new vhost PUT with "tracing": true is traced; the definitions export leaves tracing out, an import with it turns it on', async () => {
    const v = uniq('traced-vhost');
    expect((await broker.api('PUT', `/api/vhosts/${v}`, { body: { tracing: true } })).status).to.equal(201);
    expect((await broker.api('GET', `/api/vhosts/${v}`)).json.tracing).to.equal(true);
    const defs = (await broker.api('GET', '/api/definitions')).json as { vhosts: Array<Record<string, unknown>> };
    expect(defs.vhosts.find((x) => x['name'] === v)).to.not.have.property('tracing');
    const w = uniq('imported-vhost');
    expect((await broker.api('POST', '/api/definitions', { body: { vhosts: [{ name: w, tracing: true }] } })).status).to.be.oneOf([200, 201, 204]);
    expect(broker.running.broker.tracing.enabled(w)).to.equal(true);
    expect((await broker.api('GET', `/api/vhosts/${w}`)).json.tracing).to.equal(true);
    await broker.api('DELETE', `/api/vhosts/${v}`);
    await broker.api('DELETE', `/api/vhosts/${w}`);
  });

  it('reset() turns tracing off', async () => {
    broker.running.broker.tracing.start('/');
    await broker.running.reset();
    conn = await connect(broker.url);
    raw = await RawClient.open(broker.url);
    expect(broker.running.broker.tracing.enabled('/')).to.equal(false);
    expect((await broker.api('GET', '/api/vhosts/%2F')).json.tracing).to.equal(false);
  });
});

describe('firehose tracing of messages read back from the store', () => {
  const dir = useTmpDir('warren-trace-bcc-');

  it('a delivery after a restart lists the BCC keys the message was published with, as RabbitMQ 3.10.8 does', async () => {
    let b = await startBroker({ port: 0, dataDir: dir.path, logLevel: 'silent' });
    try {
      const c = await connect(b.url);
      const ch = await c.createConfirmChannel();
      await ch.assertQueue('bccq', { durable: true });
      ch.publish('', 'nothing', Buffer.from('x'), { persistent: true, headers: { BCC: ['bccq'], CC: ['also-nothing'] } });
      await ch.waitForConfirms();
      await c.close();
      await b.close();
      b = await startBroker({ port: 0, dataDir: dir.path, logLevel: 'silent' });
      b.broker.tracing.start('/');
      const r = await connect(b.url);
      const rch = await r.createChannel();
      const t = await rch.assertQueue('', { exclusive: true });
      await rch.bindQueue(t.queue, 'amq.rabbitmq.trace', '#');
      const m = await rch.get('bccq', { noAck: true });
      expect(m && m.properties.headers).to.deep.equal({ CC: ['also-nothing'] });
      await b.until.queueLength(t.queue, 1);
      const traced = await rch.get(t.queue, { noAck: true });
      // Recorded: RabbitMQ 3.10.8, the same publish, rabbitmqctl stop_app/start_app, trace_on, basic.get.
      expect(traced && [traced.fields.routingKey, traced.properties.headers?.['routing_keys']]).to.deep.equal(['deliver.bccq', ['nothing', 'also-nothing', 'bccq']]);
      await r.close();
    } finally {
      await b.close();
    }
  });
});
