import { expect } from 'chai';
import amqp from 'amqplib';
import { useManagedBroker } from '../support/management.js';

/** The keys of a message_stats object without their _details, with their values. */
function counts(stats: Record<string, unknown> | undefined): string[] | undefined {
  return stats && Object.entries(stats).filter(([k]) => !k.endsWith('_details')).map(([k, v]) => `${k}=${String(v)}`);
}

/**
 * message_stats as RabbitMQ 3.10.8 shows them (recorded from the reference): its counts are
 * records, one per group (what was published, what queues handed out), each shown whole, zeros
 * included, once anything in it was counted; what the management API itself publishes and gets
 * is counted as its channel would be.
 */
describe('management API: message_stats groups and what the API itself counts', () => {
  const b = useManagedBroker({ vhosts: ['/', 'stats'] });

  it('shows a group whole once anything in it was counted: a queue, a channel, a vhost (its groups in their order)', async () => {
    const conn = await amqp.connect(`${b.url}/stats`);
    const ch = await conn.createChannel();
    await ch.assertQueue('q', { durable: false });
    const queue = async () => (await b.api('GET', '/api/queues/stats/q')).json.message_stats as Record<string, unknown> | undefined;
    const channel = async () => ((await b.api('GET', '/api/vhosts/stats/channels')).json as Array<{ message_stats?: Record<string, unknown> }>)[0]!.message_stats;
    const vhost = async () => (await b.api('GET', '/api/vhosts/stats')).json.message_stats as Record<string, unknown> | undefined;
    expect(await queue()).to.equal(undefined);
    ch.sendToQueue('q', Buffer.from('a'));
    await ch.checkQueue('q');
    expect(counts(await queue())).to.deep.equal(['publish=1']);
    expect(counts(await channel())).to.deep.equal(['confirm=0', 'drop_unroutable=0', 'publish=1', 'return_unroutable=0']);
    expect(counts(await vhost())).to.deep.equal(['publish=1', 'confirm=0', 'return_unroutable=0', 'drop_unroutable=0']);
    await ch.get('q', { noAck: true });
    expect(counts(await queue())).to.deep.equal([
      'ack=0', 'deliver=0', 'deliver_get=1', 'deliver_no_ack=0', 'get=0', 'get_empty=0', 'get_no_ack=1', 'publish=1', 'redeliver=0',
    ]);
    expect(counts(await channel())).to.deep.equal([
      'ack=0', 'confirm=0', 'deliver=0', 'deliver_get=1', 'deliver_no_ack=0', 'drop_unroutable=0', 'get=0', 'get_empty=0', 'get_no_ack=1', 'publish=1', 'redeliver=0', 'return_unroutable=0',
    ]);
    expect(counts(await vhost())).to.deep.equal([
      'publish=1', 'confirm=0', 'return_unroutable=0', 'drop_unroutable=0',
      'get=0', 'get_no_ack=1', 'deliver=0', 'deliver_no_ack=0', 'redeliver=0', 'ack=0', 'deliver_get=1', 'get_empty=0',
    ]);
    await conn.close();
  });

  it('counts publishes and gets of the API as its own confirm channel would (mandatory, confirmed; get_empty where a get finds nothing)', async () => {
    await b.api('PUT', '/api/queues/%2F/api.q', { body: {} });
    const before = (await b.api('GET', '/api/overview')).json.message_stats as Record<string, number>;
    const publish = (routingKey: string) => b.api('POST', '/api/exchanges/%2F/amq.default/publish', { body: { routing_key: routingKey, payload: 'x', payload_encoding: 'string', properties: {} } });
    const get = (count: number, ackmode: string) => b.api('POST', '/api/queues/%2F/api.q/get', { body: { count, ackmode, encoding: 'auto' } });
    expect((await publish('api.q')).json).to.deep.equal({ routed: true });
    expect((await publish('nowhere')).json).to.deep.equal({ routed: false });
    await get(1, 'ack_requeue_true');
    await get(1, 'reject_requeue_true');
    await get(2, 'ack_requeue_false');
    const after = (await b.api('GET', '/api/overview')).json.message_stats as Record<string, number>;
    const moved = Object.fromEntries(Object.keys(after).filter((k) => !k.endsWith('_details') && after[k] !== (before[k] ?? 0)).map((k) => [k, after[k]! - (before[k] ?? 0)]));
    // What RabbitMQ 3.10.8's overview moved by for the same requests.
    expect(moved).to.deep.equal({ publish: 2, confirm: 2, return_unroutable: 1, get: 2, get_no_ack: 1, get_empty: 1, deliver_get: 3, redeliver: 2 });
    expect(counts((await b.api('GET', '/api/queues/%2F/api.q')).json.message_stats)).to.deep.equal([
      'ack=0', 'deliver=0', 'deliver_get=3', 'deliver_no_ack=0', 'get=2', 'get_empty=1', 'get_no_ack=1', 'publish=1', 'redeliver=2',
    ]);
  });

  it('answers a publish or get in a vhost that does not exist as its refused channel: 401 "Access refused."', async () => {
    const refused = { error: 'not_authorised', reason: 'Access refused.' };
    const publish = await b.api('POST', '/api/exchanges/nosuch/amq.default/publish', { body: { routing_key: 'x', payload: 'x', payload_encoding: 'string', properties: {} } });
    expect([publish.status, publish.json]).to.deep.equal([401, refused]);
    const get = await b.api('POST', '/api/queues/nosuch/x/get', { body: { count: 1, ackmode: 'ack_requeue_true', encoding: 'auto' } });
    expect([get.status, get.json]).to.deep.equal([401, refused]);
  });

  it('lists nothing, with 200, for bindings in a vhost that does not exist, and a user\'s connections by name', async () => {
    for (const path of ['/api/exchanges/nov/x/bindings/source', '/api/exchanges/nov/x/bindings/destination', '/api/queues/nov/x/bindings', '/api/bindings/nov/e/x/q/y', '/api/connections/username/nosuch']) {
      const res = await b.api('GET', path);
      expect([res.status, res.json], path).to.deep.equal([200, []]);
    }
    const conn = await amqp.connect(b.url);
    const [listed] = (await b.api('GET', '/api/connections/username/guest')).json as Array<Record<string, string>>;
    expect(Object.keys(listed!)).to.deep.equal(['name', 'vhost', 'user', 'node']);
    expect(listed).to.include({ vhost: '/', user: 'guest' });
    const closed = new Promise<string>((resolve) => conn.on('close', (err: Error | undefined) => resolve(String(err?.message))));
    conn.on('error', () => {});
    expect((await b.api('DELETE', '/api/connections/username/guest', { headers: { 'x-reason': 'bye' } })).status).to.equal(204);
    expect(await closed).to.contain('CONNECTION_FORCED - bye');
  });

  it('reports queue totals once a queue has been in a vhost: {} on a new node, zeros after the last queue is gone', async () => {
    // (This broker's vhosts have had queues by now; a fresh one has not.)
    const totals = async () => (await b.api('GET', '/api/overview')).json.queue_totals as Record<string, unknown>;
    await b.api('PUT', '/api/queues/%2F/totals.q', { body: {} });
    await b.api('DELETE', '/api/queues/%2F/totals.q');
    expect(await totals()).to.include({ messages: 0, messages_ready: 0, messages_unacknowledged: 0 });
  });
});

describe('management API: queue totals of a new node', () => {
  const b = useManagedBroker();

  it('has none before any queue', async () => {
    expect((await b.api('GET', '/api/overview')).json.queue_totals).to.deep.equal({});
  });
});
