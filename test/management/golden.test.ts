import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { ChannelModel } from 'amqplib';
import { RECORDED } from '../fixtures/management/record.js';
import { parseShape, sampleScenario, shapeDifferences, useManagedBroker, type ShapeRules } from '../support/management.js';

const FIXTURES = new URL('../fixtures/management/', import.meta.url);
const fixture = (file: string) => readFileSync(new URL(file, FIXTURES), 'utf8');

/**
 * Keys whose own members are data (arguments, client properties, node names) are not compared;
 * message_stats are counted by src/metrics, not here; a few keys hold null or a string
 * depending on state (a policy applies, a consumer is exclusive).
 */
const RULES: ShapeRules = {
  openMaps: ['arguments', 'client_properties', 'cluster_state', 'effective_policy_definition', 'socket_opts', 'ra_open_file_metrics', 'headers', 'backing_queue_status'],
  skip: ['message_stats'],
  nullable: ['policy', 'operator_policy', 'exclusive_consumer_tag', 'single_active_consumer_tag', 'head_message_timestamp'],
};

/**
 * Golden key sets: every response carries at least every key RabbitMQ 3.10.8's carries in the
 * same state, with the same JSON type (integers and floats told apart), for the fixtures
 * recorded by test/fixtures/management/record.ts from the reference RabbitMQ.
 */
describe('management API: key sets and types against RabbitMQ 3.10.8 (golden)', () => {
  const b = useManagedBroker();
  let conn: ChannelModel;
  let connectionName = '';
  let channelName = '';

  before(async () => {
    ({ conn, connectionName } = await sampleScenario(b.url, b.base));
    const get = await b.api('POST', '/api/queues/%2F/jobs.dlq/get', { body: { count: 1, ackmode: 'ack_requeue_true', encoding: 'auto' } });
    expect(shapeDifferences(parseShape(fixture('get-response.json')), parseShape(get.text), RULES)).to.deep.equal([]);
    const channels = (await b.api('GET', '/api/channels')).json as Array<{ name: string; consumer_count: number }>;
    channelName = channels.find((c) => c.consumer_count > 0)!.name;
  });
  after(async () => {
    await conn?.close().catch(() => {}); // the broker may have closed it first
  });

  for (const [file, path] of RECORDED) {
    it(`${typeof path === 'string' ? path : file.replace('.json', '')} carries every key of ${file}`, async () => {
      const p = typeof path === 'string' ? path : path(connectionName, channelName);
      const res = await b.api('GET', p);
      expect(res.status, res.text).to.equal(200);
      expect(shapeDifferences(parseShape(fixture(file)), parseShape(res.text), RULES)).to.deep.equal([]);
    });
  }

  it('lists the same objects as RabbitMQ in the same state and order (queues, exchanges, bindings, vhosts)', async () => {
    const names = (text: string, key: string) => (JSON.parse(text) as Array<Record<string, string>>).map((o) => o[key]);
    for (const [file, path, key] of [
      ['queues.json', '/api/queues', 'name'], ['exchanges.json', '/api/exchanges/%2F', 'name'],
      ['vhosts.json', '/api/vhosts', 'name'], ['consumers.json', '/api/consumers', 'consumer_tag'],
    ] as const) {
      // Recorded lists keep their first items only.
      const recorded = names(fixture(file), key);
      expect(names((await b.api('GET', path)).text, key).slice(0, recorded.length), path).to.deep.equal(recorded);
    }
    const bindings = (text: string) => (JSON.parse(text) as Array<Record<string, string>>).map((o) => `${o['source']}>${o['destination']}:${o['properties_key']}`);
    const recorded = bindings(fixture('bindings.json'));
    expect(bindings((await b.api('GET', '/api/bindings/%2F')).text).slice(0, recorded.length)).to.deep.equal(recorded);
  });

  it('counts messages live, as the fixture does after RabbitMQ\'s stats interval', async () => {
    const q = (await b.api('GET', '/api/queues/%2F/orders.created')).json;
    const ref = JSON.parse(fixture('queue-orders.created.json'));
    for (const k of ['messages', 'messages_ready', 'messages_unacknowledged', 'consumers', 'durable', 'arguments']) expect(q[k], k).to.deep.equal(ref[k]);
    const overview = (await b.api('GET', '/api/overview')).json;
    const refOverview = JSON.parse(fixture('overview.json'));
    expect(overview.queue_totals.messages).to.equal(refOverview.queue_totals.messages);
    expect(overview.object_totals).to.deep.equal(refOverview.object_totals);
  });

  it('answers the overview\'s columns as RabbitMQ does: a dotted column brings its whole map', async () => {
    const res = await b.api('GET', '/api/overview?columns=rabbitmq_version,cluster_name,queue_totals.messages,object_totals.queues');
    const ref = JSON.parse(fixture('overview-columns.json'));
    expect(Object.keys(res.json)).to.deep.equal(Object.keys(ref));
    // Warren does not sample rates: its _details are {rate: 0.0}.
    const counts = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([k]) => !k.endsWith('_details')));
    expect(counts(res.json.queue_totals)).to.deep.equal(counts(ref.queue_totals));
    expect(res.json.object_totals).to.deep.equal(ref.object_totals);
  });
});
