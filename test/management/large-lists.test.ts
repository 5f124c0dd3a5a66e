import { expect } from 'chai';
import amqp from 'amqplib';
import { compareUtf8 } from '../../src/sorted.js';
import { useManagedBroker } from '../support/management.js';

/**
 * GET /api/queues of a broker with thousands of queues: the list is written a chunk of items
 * per turn (chunked transfer encoding), each item made as its chunk is written, and the page
 * asked for is the only one made. Before, 100,000 queues were made and encoded at once, holding
 * the event loop (every AMQP client) for 13 s; a page of 100 held it for 1.8 s. What a client
 * reads is what RabbitMQ's rules give: default order vhost then name (bytewise), and the same
 * pages, filters, columns and sorts as for a short list.
 */
describe('management API: lists of thousands of queues', function () {
  this.timeout(60000);
  const b = useManagedBroker();
  const N = 1200;
  const names = Array.from({ length: N }, (_, i) => `q-${(i * 7919) % N}`);
  const others = ['Z', 'a', 'é', '\u{1F600}', '\uE000'];
  /** Every queue in RabbitMQ's default order: vhost, then name, as UTF-8 octets. */
  const expected = [
    ...[...names].sort(compareUtf8).map((name) => ({ vhost: '/', name })),
    ...[...others].sort(compareUtf8).map((name) => ({ vhost: 'other', name })),
  ];

  before(async () => {
    expect((await b.api('PUT', '/api/vhosts/other')).status).to.equal(201);
    expect((await b.api('PUT', '/api/permissions/other/guest', { body: { configure: '.*', write: '.*', read: '.*' } })).status).to.be.oneOf([201, 204]);
    for (const [vhost, list] of [['/', names], ['other', others]] as const) {
      const conn = await amqp.connect(`${b.url}/${encodeURIComponent(vhost)}`);
      const ch = await conn.createChannel();
      for (const name of list) void ch.assertQueue(name, { durable: false });
      await ch.checkQueue(list.at(-1)!);
      await conn.close();
    }
  });

  const key = (q: Record<string, unknown>): string => `${String(q['vhost'])} ${String(q['name'])}`;

  it('writes a long list in chunks (no content-length), in the default order, each item as the queue alone shows it', async () => {
    const res = await b.api('GET', '/api/queues');
    expect(res.status).to.equal(200);
    expect(res.headers.get('transfer-encoding')).to.equal('chunked');
    expect(res.headers.get('content-length')).to.equal(null);
    expect(res.headers.get('content-type')).to.equal('application/json');
    const list = res.json as Array<Record<string, unknown>>;
    expect(list.map(key)).to.deep.equal(expected.map(key));
    const one = (await b.api('GET', '/api/queues/%2F/q-42')).json as Record<string, unknown>;
    const listed = list.find((q) => q['name'] === 'q-42')!;
    for (const field of ['name', 'vhost', 'durable', 'auto_delete', 'exclusive', 'arguments', 'type', 'state', 'node', 'messages', 'messages_ready', 'consumers', 'policy']) {
      expect(listed[field], field).to.deep.equal(one[field]);
    }
  });

  it('gives the same queues page by page, filtered by name, reversed, cut to columns or sorted by a field', async () => {
    const pages: Array<Record<string, unknown>> = [];
    for (let page = 1; page <= 3; page++) {
      const env = (await b.api('GET', `/api/queues?page=${page}&page_size=500`)).json;
      expect([env.page, env.page_size, env.page_count, env.total_count, env.filtered_count]).to.deep.equal([page, 500, 3, N + others.length, N + others.length]);
      pages.push(...env.items);
    }
    expect(pages.map(key)).to.deep.equal(expected.map(key));

    const filtered = (await b.api('GET', '/api/queues?page=1&page_size=500&name=Q-11')).json;
    const wanted = expected.filter((q) => q.name.includes('q-11'));
    expect(filtered.items.map(key)).to.deep.equal(wanted.map(key));
    expect(filtered.filtered_count).to.equal(wanted.length);
    const regex = (await b.api('GET', `/api/queues?page=1&page_size=500&use_regex=true&name=${encodeURIComponent('^q-11.$')}`)).json;
    expect(regex.items.map(key)).to.deep.equal(expected.filter((q) => /^q-11.$/.test(q.name)).map(key));

    const reversed = (await b.api('GET', '/api/queues?sort_reverse=true')).json as Array<Record<string, unknown>>;
    expect(reversed.map(key)).to.deep.equal(expected.map(key).reverse());

    const cut = await b.api('GET', '/api/queues?columns=name,vhost');
    expect(cut.headers.get('transfer-encoding')).to.equal('chunked');
    expect(cut.json).to.deep.equal(expected);

    // A sort of its own: every item is made and sorted (name, then the default keys).
    const byName = (await b.api('GET', '/api/queues?sort=name&columns=name,vhost')).json as Array<{ vhost: string; name: string }>;
    expect(byName).to.deep.equal([...expected].sort((x, y) => compareUtf8(x.name, y.name) || compareUtf8(x.vhost, y.vhost)));
  });

  it('lists thousands of bindings in chunks, in the order the fully sorted list has', async () => {
    // Bindings of their own beside the default exchange's implicit ones: two destinations of one
    // name (a queue and an exchange), and one routing key with and without arguments.
    const conn = await amqp.connect(b.url);
    const ch = await conn.createChannel();
    await ch.assertExchange('q-7', 'fanout', { durable: false });
    await ch.assertExchange('src', 'direct', { durable: false });
    await ch.bindQueue('q-7', 'src', 'k');
    await ch.bindExchange('q-7', 'src', 'k');
    await ch.bindQueue('q-7', 'src', 'k', { x: 1 });
    await ch.bindQueue('q-3', 'src', 'é');
    await conn.close();
    const res = await b.api('GET', '/api/bindings');
    expect(res.headers.get('transfer-encoding')).to.equal('chunked');
    const list = res.json as Array<Record<string, unknown>>;
    expect(list).to.have.length(N + others.length + 4);
    // The same bindings as listReply sorts them when every item is made first (a columns cut
    // that keeps every sort key).
    const all = (await b.api('GET', '/api/bindings?columns=vhost,source,destination,destination_type,routing_key,arguments,properties_key')).json;
    expect(list).to.deep.equal(all);
    const reversed = (await b.api('GET', '/api/bindings?sort_reverse=true')).json as unknown[];
    expect(reversed).to.deep.equal([...list].reverse());
    // By destination (q-3 before q-7), routing key, properties_key, then the whole item.
    expect(list.filter((x) => x['source'] === 'src').map((x) => [x['destination_type'], x['routing_key'], x['properties_key']])).to.deep.equal([
      ['queue', 'é', '%C3%A9'],
      ['exchange', 'k', 'k'],
      ['queue', 'k', 'k'],
      ['queue', 'k', list.find((x) => x['source'] === 'src' && Object.keys(x['arguments'] as object).length > 0)!['properties_key']],
    ]);
  });

  it('writes a list that fits in one turn at once, with its content-length', async () => {
    const res = await b.api('GET', '/api/queues/other');
    expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(res.text)));
    expect((res.json as Array<{ vhost: string; name: string }>).map(key)).to.deep.equal(expected.filter((q) => q.vhost === 'other').map(key));
  });
});
