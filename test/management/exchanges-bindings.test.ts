import { expect } from 'chai';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { useManagedBroker } from '../support/management.js';

/** /api/exchanges and /api/bindings over HTTP, observed over AMQP. */
describe('management API: exchanges and bindings', () => {
  const b = useManagedBroker();
  let conn: ChannelModel;
  let ch: Channel;
  before(async () => {
    conn = await amqp.connect(b.url);
    ch = await conn.createChannel();
    await ch.assertQueue('x.q', { durable: true });
  });
  after(async () => {
    await conn.close().catch(() => {}); // the broker (closed first) may have closed it
  });

  it('declares an exchange (201, then 204), refuses a different redeclaration and reserved names as RabbitMQ', async () => {
    expect((await b.api('PUT', '/api/exchanges/%2F/x.orders', { body: { type: 'topic', durable: 'true' } })).status).to.equal(201);
    expect((await b.api('PUT', '/api/exchanges/%2F/x.orders', { body: { type: 'topic', durable: 'true' } })).status).to.equal(204);
    await ch.checkExchange('x.orders');
    const x = (await b.api('GET', '/api/exchanges/%2F/x.orders')).json;
    expect(x).to.deep.include({ name: 'x.orders', vhost: '/', type: 'topic', durable: true, auto_delete: false, internal: false, arguments: {}, user_who_performed_action: 'guest', incoming: [], outgoing: [] });
    const other = await b.api('PUT', '/api/exchanges/%2F/x.orders', { body: { type: 'direct', durable: true } });
    expect(other.json).to.deep.equal({ error: 'bad_request', reason: "inequivalent arg 'type' for exchange 'x.orders' in vhost '/': received 'direct' but current is 'topic'" });
    expect((await b.api('PUT', '/api/exchanges/%2F/amq.mine', { body: {} })).text).to.equal('{"error":"not_authorised","reason":"Access refused."}');
    expect((await b.api('GET', '/api/exchanges/%2F/amq.default')).json).to.deep.include({ name: '', type: 'direct', user_who_performed_action: 'rmq-internal' });
  });

  it('binds with POST (201 and a Location naming the binding by its properties_key), as RabbitMQ 3.10.8 answered', async () => {
    const made: Array<[string, Record<string, unknown>, string]> = [
      ['/api/bindings/%2F/e/x.orders/q/x.q', { routing_key: 'order.*' }, 'x.q/order.%252A'],
      ['/api/bindings/%2F/e/x.orders/q/x.q', { routing_key: 'job.#', arguments: { 'x-foo': 'bar' } }, 'x.q/job.%2523~EDqv5Q'],
      ['/api/bindings/%2F/e/x.orders/q/x.q', {}, 'x.q/~'],
      ['/api/bindings/%2F/e/x.orders/e/amq.direct', { routing_key: 'a~b c/d' }, 'amq.direct/a%257Eb%2Bc%252Fd'],
      ['/api/bindings/%2F/e/x.orders/q/x.q', { routing_key: 'x', arguments: { b: 1, a: 's', c: true, d: 1.5, e: [1, 'a'], f: { g: 1 } } }, 'x.q/x~JaLtTA'],
    ];
    for (const [path, body, location] of made) {
      const res = await b.api('POST', path, { body });
      expect([res.status, res.headers.get('location')], JSON.stringify(body)).to.deep.equal([201, location]);
    }
    const listed = (await b.api('GET', '/api/bindings/%2F/e/x.orders/q/x.q')).json;
    expect(listed.map((x: { routing_key: string; properties_key: string }) => [x.routing_key, x.properties_key])).to.deep.equal([
      ['', '~'], ['job.#', 'job.%23~EDqv5Q'], ['order.*', 'order.%2A'], ['x', 'x~JaLtTA'],
    ]);
  });

  it('routes over AMQP through what it bound over HTTP', async () => {
    ch.publish('x.orders', 'order.created', Buffer.from('o'));
    ch.publish('x.orders', 'job.1', Buffer.from('j'), { headers: {} });
    await ch.checkQueue('x.q');
    expect((await b.api('GET', '/api/queues/%2F/x.q')).json.messages).to.equal(2);
    await ch.purgeQueue('x.q');
  });

  it('finds one binding by properties_key (GET) and deletes it (DELETE), then 404s', async () => {
    const one = await b.api('GET', '/api/bindings/%2F/e/x.orders/q/x.q/job.%2523~EDqv5Q');
    expect(one.json).to.deep.equal({ source: 'x.orders', vhost: '/', destination: 'x.q', destination_type: 'queue', routing_key: 'job.#', arguments: { 'x-foo': 'bar' }, properties_key: 'job.%23~EDqv5Q' });
    expect((await b.api('DELETE', '/api/bindings/%2F/e/x.orders/q/x.q/order.%252A')).status).to.equal(204);
    expect((await b.api('DELETE', '/api/bindings/%2F/e/x.orders/q/x.q/order.%252A')).status).to.equal(404);
    ch.publish('x.orders', 'order.created', Buffer.from('o'));
    await ch.checkQueue('x.q');
    expect((await b.api('GET', '/api/queues/%2F/x.q')).json.messages).to.equal(0);
    expect((await b.api('GET', '/api/bindings/%2F/e/x.orders/q/x.q/nope')).status).to.equal(404);
  });

  it('lists the default exchange\'s implicit bindings, and refuses to touch them', async () => {
    const all = (await b.api('GET', '/api/bindings?columns=source,destination,routing_key')).json;
    expect(all).to.deep.include({ source: '', destination: 'x.q', routing_key: 'x.q' });
    expect((await b.api('GET', '/api/bindings/%2F/e/amq.default/q/x.q/x.q')).json.source).to.equal('');
    expect((await b.api('POST', '/api/bindings/%2F/e/amq.default/q/x.q', { body: { routing_key: 'k' } })).text).to.equal('{"error":"not_authorised","reason":"Access refused."}');
    expect((await b.api('DELETE', '/api/bindings/%2F/e/amq.default/q/x.q/x.q')).text).to.equal('{"error":"not_authorised","reason":"Access refused."}');
    const source = (await b.api('GET', '/api/exchanges/%2F/x.orders/bindings/source?columns=destination')).json;
    expect(source).to.deep.equal([{ destination: 'amq.direct' }, { destination: 'x.q' }, { destination: 'x.q' }, { destination: 'x.q' }]);
    expect((await b.api('GET', '/api/exchanges/%2F/amq.direct/bindings/destination?columns=source')).json).to.deep.equal([{ source: 'x.orders' }]);
  });

  it('refuses bindings as RabbitMQ words it', async () => {
    expect((await b.api('POST', '/api/bindings/%2F/e/nope/q/x.q', { body: {} })).text).to.equal(`{"error":"not_found","reason":"no exchange 'nope' in vhost '/'"}`);
    expect((await b.api('POST', '/api/bindings/%2F/e/x.orders/q/nope', { body: {} })).text).to.equal(`{"error":"not_found","reason":"no queue 'nope' in vhost '/'"}`);
    expect((await b.api('POST', '/api/bindings/nope/e/x.orders/q/x.q', { body: {} })).text).to.equal('{"error":"not_found","reason":"vhost_not_found"}');
    expect((await b.api('POST', '/api/bindings/%2F/e/x.orders/z/x.q', { body: {} })).status).to.equal(500);
  });

  describe('POST …/publish', () => {
    const publish = (exchange: string, body: Record<string, unknown>) =>
      b.api('POST', `/api/exchanges/%2F/${exchange}/publish`, { body: { routing_key: 'x.q', payload: 'p', payload_encoding: 'string', properties: {}, ...body } });

    it('publishes through the default exchange (amq.default) and says whether it was routed', async () => {
      expect((await publish('amq.default', {})).text).to.equal('{"routed":true}');
      expect((await publish('amq.default', { routing_key: 'nowhere' })).text).to.equal('{"routed":false}');
      const m = await ch.get('x.q', { noAck: true });
      expect(m && m.content.toString()).to.equal('p');
    });

    it('sends properties and base64 payloads as given', async () => {
      const res = await publish('amq.default', { payload: 'aGk=', payload_encoding: 'base64', properties: { content_type: 'text/plain', delivery_mode: 2, priority: 1, headers: { n: 1, s: 'v' }, message_id: 'id1', timestamp: 1700000000 } });
      expect(res.json).to.deep.equal({ routed: true });
      const m = await ch.get('x.q', { noAck: true }) as amqp.GetMessage;
      expect(m.content.toString()).to.equal('hi');
      expect(m.properties).to.deep.include({ contentType: 'text/plain', deliveryMode: 2, priority: 1, messageId: 'id1', timestamp: 1700000000 });
      expect(m.properties.headers).to.deep.equal({ n: 1, s: 'v' });
    });

    it('answers a message queue limits refuse with RabbitMQ\'s "rejected" 400', async () => {
      await ch.assertQueue('x.full', { arguments: { 'x-max-length': 0, 'x-overflow': 'reject-publish' } });
      expect((await publish('amq.default', { routing_key: 'x.full' })).text).to.equal('{"error":"bad_request","reason":"rejected Unable to publish message. Check queue limits."}');
    });

    it('refuses as RabbitMQ words it', async () => {
      const cases: Array<[string, Record<string, unknown>, string]> = [
        ['amq.default', { properties: undefined }, '"[{key_missing,properties}]"'],
        ['amq.default', { payload: 5 }, '"payload_not_string"'],
        ['amq.default', { payload_encoding: 'zip' }, '["unsupported_encoding","zip"]'],
        ['amq.default', { payload: 'aGk', payload_encoding: 'base64' }, '["not_base64","aGk"]'],
        ['amq.default', { properties: { delivery_mode: '2' } }, '["not_int","delivery_mode"]'],
        ['amq.default', { properties: { expiration: 60000 } }, '["not_string","expiration"]'],
        ['amq.default', { properties: { expiration: 'abc' } }, `"406 PRECONDITION_FAILED - invalid expiration 'abc': no_integer"`],
        ['amq.default', { properties: { user_id: 'bob' } }, `"406 PRECONDITION_FAILED - user_id property set to 'bob' but authenticated user was 'guest'"`],
        ['amq.default', { properties: { delivery_mode: 7 } }, '"406 PRECONDITION_FAILED - invalid message: {delivery_mode_unknown,7}"'],
        ['nope', {}, `"404 NOT_FOUND - no exchange 'nope' in vhost '/'"`],
        ['amq.rabbitmq.trace', {}, `"403 ACCESS_REFUSED - cannot publish to internal exchange 'amq.rabbitmq.trace' in vhost '/'"`],
      ];
      for (const [exchange, body, reason] of cases) {
        const res = await publish(exchange, body);
        expect([res.status, res.text], JSON.stringify(body)).to.deep.equal([400, `{"error":"bad_request","reason":${reason}}`]);
      }
    });
  });

  it('deletes exchanges (if-unused), and not the standard ones', async () => {
    expect((await b.api('DELETE', '/api/exchanges/%2F/x.orders?if-unused=true')).json.reason).to.equal("exchange 'x.orders' in vhost '/' in use");
    expect((await b.api('DELETE', '/api/exchanges/%2F/amq.direct')).text).to.equal('{"error":"not_authorised","reason":"Access refused."}');
    expect((await b.api('DELETE', '/api/exchanges/%2F/x.orders')).status).to.equal(204);
    expect((await b.api('GET', '/api/exchanges/%2F/x.orders')).status).to.equal(404);
    expect((await b.api('GET', '/api/bindings/%2F/e/x.orders/q/x.q')).json).to.deep.equal([]);
  });
});
