import { readFileSync } from 'node:fs';
import http from 'node:http';
import amqp from 'amqplib';
import { gunzipSync } from 'node:zlib';
import { expect } from 'chai';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { Channel } from '../../src/connection/channel.js';
import { waitUntil } from '../support/broker.js';
import { BrokerProcess } from '../support/broker-process.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { COUNTER, parseFamilies, samples } from './prometheus-text.js';
import { QUEUES, runScenario, scenarioPerObject } from './scenario.js';

/**
 * The Prometheus endpoint and the counters behind it, checked against RabbitMQ 3.10.8: the
 * traffic of scenario.ts ran against the reference broker (record-reference.ts) and what its
 * /metrics, /metrics/per-object and management API reported is in
 * fixtures/reference-3.10.8.json. Warren must report the same numbers for the same traffic,
 * parsed by an npm Prometheus parser (parse-prometheus-text-format).
 */
interface Reference {
  counters: Record<string, number>;
  perObject: Record<string, number | null>;
  management: {
    queues: Record<string, Record<string, number>>;
    exchanges: Record<string, Record<string, number>>;
    channels: Record<string, Record<string, number>>;
    overview: Record<string, number>;
    vhost: Record<string, number>;
  };
}

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8');
const reference = JSON.parse(fixture('reference-3.10.8.json')) as Reference;

describe('Prometheus metrics (rabbitmq_prometheus)', function () {
  this.timeout(30000);
  let running: RunningBroker;
  let metricsUrl: string;
  /** Captured while the scenario's connection was open. */
  let whileOpen: { perObject: Map<string, number>; management: Reference['management'] };
  let aggregated: string;

  const scrape = async (path = '/metrics', headers: Record<string, string> = {}) => fetch(metricsUrl + path, { headers });
  const text = async (path = '/metrics') => (await scrape(path)).text();

  before(async () => {
    running = await startBroker({ port: 0, prometheusPort: 0, logLevel: 'silent' });
    metricsUrl = running.broker.prometheusUrl!;
    await runScenario({
      url: running.url,
      settle: async () => {},
      whileOpen: async () => {
        whileOpen = { perObject: scenarioPerObject(await text('/metrics/per-object')), management: managementStats(running) };
      },
    });
    // The server sees the last sockets close a little after the client does.
    await waitUntil(() => running.broker.connections.size === 0, 'every connection closed');
    aggregated = await text('/metrics');
  });

  after(async () => {
    await running?.close();
  });

  describe('the counters of the scenario equal RabbitMQ 3.10.8s', () => {
    it('global message counters, dead-lettering, churn and AMQP logins (/metrics)', () => {
      const got = samples(aggregated);
      const mine: Record<string, number | undefined> = {};
      for (const key of Object.keys(reference.counters)) mine[key] = got.get(key);
      expect(mine).to.deep.equal(reference.counters);
      // ...and no such counter that RabbitMQ does not have.
      expect([...got.keys()].filter((k) => COUNTER.test(k) && !(k in reference.counters))).to.deep.equal([]);
    });

    it('per channel, exchange and queue (/metrics/per-object), for the families Warren writes', () => {
      // Those of /metrics, and those only per object (rabbitmq_queue_messages_persistent_bytes).
      const families = new Set([...parseFamilies(aggregated).map((f) => f.name), ...[...whileOpen.perObject.keys()].map((k) => k.slice(0, k.indexOf('{')))]);
      const expected = Object.entries(reference.perObject).filter(([k]) => families.has(k.slice(0, k.indexOf('{'))));
      // The recording is JSON: a NaN sample (no head_message_timestamp) is null there.
      expect(Object.fromEntries([...whileOpen.perObject].filter(([k]) => families.has(k.slice(0, k.indexOf('{')))).map(([k, v]) => [k, Number.isNaN(v) ? null : v])))
        .to.deep.equal(Object.fromEntries(expected));
      // The channel families were compared, not just queue gauges.
      expect(expected.filter(([k]) => k.startsWith('rabbitmq_channel_messages_published_total'))).to.have.length(5);
      expect(expected.filter(([k]) => k.startsWith('rabbitmq_queue_messages_published_total'))).to.have.length(10);
      // So were the byte and persistent counts, of the quorum queues too.
      expect(expected.filter(([k]) => k.startsWith('rabbitmq_queue_messages_persistent_bytes{queue="mt.qq"'))).to.have.length(1);
      expect(expected.filter(([k]) => k.startsWith('rabbitmq_queue_messages_unacked_bytes'))).to.have.length(11);
    });

    it('the management API message_stats: queues, exchanges, channels, vhost, overview (broker.metrics)', () => {
      expect(whileOpen.management).to.deep.equal(reference.management);
    });

    it('churn as the management overview counts it', () => {
      const c = reference.counters;
      expect(running.broker.metrics.churnStats()).to.deep.equal({
        connection_created: c['rabbitmq_connections_opened_total{}'],
        connection_closed: c['rabbitmq_connections_closed_total{}'],
        channel_created: c['rabbitmq_channels_opened_total{}'],
        channel_closed: c['rabbitmq_channels_closed_total{}'],
        queue_declared: c['rabbitmq_queues_declared_total{}'],
        queue_created: c['rabbitmq_queues_created_total{}'],
        queue_deleted: c['rabbitmq_queues_deleted_total{}'],
      });
    });
  });

  describe('what the broker looks like now', () => {
    it('queue depths, consumers and totals', () => {
      const got = samples(aggregated);
      // mt.fb 1, mt.dlq 4 (rejected, expired, maxlen, delivery_limit), mt.max 1.
      expect(got.get('rabbitmq_queue_messages_ready{}')).to.equal(6);
      expect(got.get('rabbitmq_queue_messages_unacked{}')).to.equal(0);
      expect(got.get('rabbitmq_queue_messages{}')).to.equal(6);
      expect(got.get('rabbitmq_queues{}')).to.equal(10);
      expect(got.get('rabbitmq_connections{}')).to.equal(0);
      expect(got.get('rabbitmq_channels{}')).to.equal(0);
      expect(got.get('rabbitmq_consumers{}')).to.equal(0);
      expect(got.get('rabbitmq_global_publishers{protocol="amqp091"}')).to.equal(0);
      expect(got.get('rabbitmq_global_consumers{protocol="amqp091"}')).to.equal(0);
    });

    it('identity and build info', () => {
      const got = samples(aggregated);
      const { node, cluster, clusterPermanentId } = running.broker.identity;
      expect(node).to.match(/^rabbit@[^.]+$/);
      expect(clusterPermanentId).to.match(/^rabbitmq-cluster-id-[A-Za-z0-9_-]{22}$/);
      expect(got.get(`rabbitmq_identity_info{rabbitmq_cluster=${JSON.stringify(cluster)},rabbitmq_cluster_permanent_id=${JSON.stringify(clusterPermanentId)},rabbitmq_node=${JSON.stringify(node)}}`))
        .to.equal(1);
      const build = parseFamilies(aggregated).find((f) => f.name === 'rabbitmq_build_info')!;
      expect(build.metrics[0]!.labels!['rabbitmq_version']).to.equal('3.10.8');
    });

    it('node gauges: memory against its watermark, descriptors, uptime, no alarms', () => {
      const got = samples(aggregated);
      expect(got.get('rabbitmq_resident_memory_limit_bytes{}')).to.equal(running.broker.memory.limitBytes);
      expect(got.get('rabbitmq_process_resident_memory_bytes{}')).to.be.greaterThan(0);
      expect(got.get('rabbitmq_process_open_fds{}')).to.be.greaterThan(0);
      expect(got.get('rabbitmq_process_max_fds{}')).to.be.greaterThan(got.get('rabbitmq_process_open_fds{}')!);
      expect(got.get('rabbitmq_disk_space_available_limit_bytes{}')).to.equal(50_000_000);
      // Without a data directory there is no disk to watch: no sample.
      expect(got.has('rabbitmq_disk_space_available_bytes{}')).to.equal(false);
      expect(got.get('rabbitmq_erlang_uptime_seconds{}')).to.be.greaterThan(0);
      expect(got.get('rabbitmq_alarms_memory_used_watermark{}')).to.equal(0);
      expect(got.get('rabbitmq_alarms_free_disk_space_watermark{}')).to.equal(0);
    });
  });

  describe('HTTP, as rabbitmq_prometheus answers', () => {
    it('text/plain; version=0.0.4, identity unless the scraper accepts gzip', async () => {
      // fetch asks for gzip and decompresses by itself: node:http shows the bytes as sent.
      const plain = await rawGet(`${metricsUrl}/metrics`, {});
      expect(plain.status).to.equal(200);
      expect(plain.headers['content-type']).to.equal('text/plain; version=0.0.4');
      expect(plain.headers['content-encoding']).to.equal('identity');
      expect(plain.body.toString()).to.include('# TYPE rabbitmq_identity_info untyped');
      const raw = await rawGet(`${metricsUrl}/metrics`, { 'accept-encoding': 'gzip' });
      expect(raw.headers['content-encoding']).to.equal('gzip');
      expect(gunzipSync(raw.body).toString()).to.include('# TYPE rabbitmq_identity_info untyped');
    });

    it('404 Unknown Registry for another /metrics/X, the JSON 404 elsewhere, 405 for POST, 204 for HEAD', async () => {
      const unknown = await scrape('/metrics/nope');
      expect([unknown.status, unknown.headers.get('content-type'), await unknown.text()]).to.deep.equal([404, 'text/plain', 'Unknown Registry']);
      const elsewhere = await scrape('/api/overview');
      expect([elsewhere.status, await elsewhere.text()]).to.deep.equal([404, '{"error":"Object Not Found","reason":"Not Found"}']);
      const post = await fetch(`${metricsUrl}/metrics`, { method: 'POST' });
      expect([post.status, post.headers.get('allow')]).to.deep.equal([405, 'HEAD, GET, OPTIONS']);
      const head = await fetch(`${metricsUrl}/metrics`, { method: 'HEAD' });
      expect(head.status).to.equal(204);
      expect((await scrape('/metrics/')).status).to.equal(200);
      expect((await scrape('/metrics/per-object/')).status).to.equal(200);
    });

    it('/metrics/detailed writes the families asked for, per object, for the vhosts asked for', async () => {
      const detailed = await text('/metrics/detailed?family=queue_coarse_metrics&family=queue_consumer_count&family=no_such_family');
      const names = parseFamilies(detailed).map((f) => f.name);
      expect(names).to.deep.equal([
        'rabbitmq_detailed_queue_messages_ready', 'rabbitmq_detailed_queue_messages_unacked', 'rabbitmq_detailed_queue_messages',
        'rabbitmq_detailed_queue_consumers', 'rabbitmq_build_info', 'rabbitmq_identity_info',
      ]);
      const got = samples(detailed);
      expect(got.get('rabbitmq_detailed_queue_messages_ready{queue="mt.dlq",vhost="/"}')).to.equal(4);
      expect(got.get('rabbitmq_detailed_queue_consumers{queue="mt.dlq",vhost="/"}')).to.equal(0);
      // An unknown vhost selects no queue; the families are still there.
      const none = parseFamilies(await text('/metrics/detailed?family=queue_coarse_metrics&vhost=nope'));
      expect(none.find((f) => f.name === 'rabbitmq_detailed_queue_messages_ready')!.metrics).to.deep.equal([]);
      const some = samples(await text('/metrics/detailed?family=queue_coarse_metrics&vhost=%2F'));
      expect(some.get('rabbitmq_detailed_queue_messages{queue="mt.max",vhost="/"}')).to.equal(1);
    });

    it('/metrics/detailed: cluster-wide vhost and exchange families', async () => {
      const got = samples(await text('/metrics/detailed?family=vhost_status&family=exchange_bindings&family=exchange_names'));
      expect(got.get('rabbitmq_cluster_vhost_status{vhost="/"}')).to.equal(1);
      expect(got.get('rabbitmq_cluster_exchange_bindings{exchange="mt.fan",type="fanout",vhost="/"}')).to.equal(2);
      expect(got.get('rabbitmq_cluster_exchange_name{exchange="amq.topic",type="topic",vhost="/"}')).to.equal(1);
      // Neither the default exchange nor the internal trace exchange is listed.
      expect([...got.keys()].filter((k) => k.includes('exchange=""') || k.includes('amq.rabbitmq.trace'))).to.deep.equal([]);
    });
  });
});

describe('Prometheus queue families of a stream', function () {
  this.timeout(30000);
  let running: RunningBroker;
  before(async () => {
    running = await startBroker({ port: 0, prometheusPort: 0, logLevel: 'silent' });
  });
  after(async () => {
    await running.close();
  });

  it('a stream has only its depth and consumers, as RabbitMQ 3.10.8 writes it (recorded)', async () => {
    const conn = await amqp.connect(running.url);
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertQueue('s.prom', { durable: true, arguments: { 'x-queue-type': 'stream' } });
      for (const size of [10, 20, 5, 30, 7]) ch.sendToQueue('s.prom', Buffer.alloc(size), { persistent: size % 2 === 0 });
      await ch.waitForConfirms();
      const got = [...samples(await (await fetch(running.broker.prometheusUrl + '/metrics/per-object')).text())].filter(([k]) => k.includes('{queue="s.prom",vhost="/"}'));
      // RabbitMQ 3.10.8 also writes its queue process's reductions and memory (left out: golden.test.ts).
      expect(Object.fromEntries(got)).to.deep.equal({
        'rabbitmq_queue_messages_ready{queue="s.prom",vhost="/"}': 5,
        'rabbitmq_queue_messages_unacked{queue="s.prom",vhost="/"}': 0,
        'rabbitmq_queue_messages{queue="s.prom",vhost="/"}': 5,
        'rabbitmq_queue_consumers{queue="s.prom",vhost="/"}': 0,
      });
    } finally {
      await conn.close();
    }
  });
});

describe('Prometheus scrapes of a broker of many queues', function () {
  this.timeout(60000);
  const N = 1500;
  let running: RunningBroker;

  before(async () => {
    running = await startBroker({ port: 0, prometheusPort: 0, logLevel: 'silent' });
    const conn = await amqp.connect(running.url);
    const ch = await conn.createChannel();
    for (let i = 0; i < N; i++) void ch.assertQueue(`many-${i}`, { durable: false });
    await ch.checkQueue(`many-${N - 1}`);
    for (let i = 0; i < 3; i++) ch.sendToQueue(`many-${i * 700}`, Buffer.from('x'));
    await ch.checkQueue('many-0');
    await conn.close();
  });
  after(async () => {
    await running.close();
  });

  it('/metrics/per-object of more samples than a part is written a part per turn (chunked), every queue in it, gzipped alike', async () => {
    const url = running.broker.prometheusUrl! + '/metrics/per-object';
    // Raw octets and headers (fetch asks for gzip and decodes it itself).
    const get = (encoding: string) =>
      new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
        http.get(url, { headers: { 'accept-encoding': encoding } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) })).on('error', reject);
        }).on('error', reject);
      });
    const plain = await get('identity');
    expect(plain.headers['transfer-encoding']).to.equal('chunked');
    expect(plain.headers['content-length']).to.equal(undefined);
    expect(plain.headers['content-encoding']).to.equal('identity');
    const got = samples(plain.body.toString());
    for (let i = 0; i < N; i++) expect(got.get(`rabbitmq_queue_messages{queue="many-${i}",vhost="/"}`), `many-${i}`).to.equal(i % 700 === 0 ? 1 : 0);
    const zipped = await get('gzip');
    expect(zipped.headers['content-encoding']).to.equal('gzip');
    expect(zipped.headers['transfer-encoding']).to.equal('chunked');
    const unzipped = samples(gunzipSync(zipped.body).toString());
    const queueSamples = (m: Map<string, number>) => [...m].filter(([k]) => k.startsWith('rabbitmq_queue_'));
    // 18 per classic queue: the 3 coarse ones, consumers and 14 more of queue_metrics.
    expect(queueSamples(unzipped)).to.have.length(N * 18);
    expect(queueSamples(unzipped)).to.deep.equal(queueSamples(got));
  });

  it('/metrics sums them and is sent whole, with its length', async () => {
    const res = await fetch(running.broker.prometheusUrl! + '/metrics');
    expect(res.headers.get('content-length')).to.not.equal(null);
    const got = samples(await res.text());
    expect(got.get('rabbitmq_queues{}')).to.equal(N);
    expect(got.get('rabbitmq_queue_messages{}')).to.equal(3);
  });
});

describe('Prometheus endpoint settings', () => {
  it('with a data directory: free disk space and the disk alarm', async () => {
    const dataDir = makeTmpDir('warren-metrics-');
    let free = 80_000_000;
    const b = await startBroker({ port: 0, prometheusPort: 0, logLevel: 'silent', dataDir, freeDiskSpace: () => free });
    try {
      const url = `${b.broker.prometheusUrl}/metrics`;
      let got = samples(await (await fetch(url)).text());
      expect(got.get('rabbitmq_disk_space_available_bytes{}')).to.equal(80_000_000);
      expect(got.get('rabbitmq_alarms_free_disk_space_watermark{}')).to.equal(0);
      free = 40_000_000; // under the 50 MB limit
      b.broker.disk!.check();
      got = samples(await (await fetch(url)).text());
      expect(got.get('rabbitmq_disk_space_available_bytes{}')).to.equal(40_000_000);
      expect(got.get('rabbitmq_alarms_free_disk_space_watermark{}')).to.equal(1);
    } finally {
      await b.close();
      removeDir(dataDir);
    }
  });

  it('the permanent cluster id is made once and kept in the data directory', async () => {
    const dataDir = makeTmpDir('warren-identity-');
    try {
      const first = await startBroker({ port: 0, logLevel: 'silent', dataDir });
      const id = first.broker.identity.clusterPermanentId;
      await first.close();
      const again = await startBroker({ port: 0, logLevel: 'silent', dataDir });
      expect(again.broker.identity.clusterPermanentId).to.equal(id);
      await again.close();
    } finally {
      removeDir(dataDir);
    }
    const other = await startBroker({ port: 0, logLevel: 'silent' });
    expect(other.broker.identity.clusterPermanentId).to.match(/^rabbitmq-cluster-id-/);
    await other.close();
  });

  it('the warren command: --prometheus-port, logged once listening', async () => {
    const dataDir = makeTmpDir('warren-cli-metrics-');
    const proc = await BrokerProcess.start(dataDir, { args: ['--prometheus-port', '0'] });
    try {
      const entry = await proc.waitForLog((e) => typeof e.msg === 'string' && e.msg.startsWith('Prometheus metrics on'));
      const res = await fetch(`http://127.0.0.1:${entry.port}/metrics`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('rabbitmq_identity_info{rabbitmq_node="rabbit@');
    } finally {
      await proc.stop();
      removeDir(dataDir);
    }
  });

  it('an embedded broker has none unless asked; closing the broker closes it', async () => {
    const quiet = await startBroker({ port: 0, logLevel: 'silent' });
    expect(quiet.broker.prometheusUrl).to.equal(undefined);
    await quiet.close();
    const b = await startBroker({ port: 0, prometheusPort: 0, logLevel: 'silent' });
    const url = b.broker.prometheusUrl!;
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${url}/metrics`)).status).to.equal(200);
    await b.close();
    const refused = await fetch(`${url}/metrics`).then(() => 'answered', (err: Error) => (err.cause as NodeJS.ErrnoException)?.code);
    expect(refused).to.equal('ECONNREFUSED');
  });
});

/**
 * What the management API would report as message_stats (the read API of broker.metrics), in
 * the fixture's shape: the scenario's queues, exchanges (the default one as amq.default, as
 * RabbitMQ's API names it) and channels by number, the vhost, the overview.
 */
function managementStats(running: RunningBroker): Reference['management'] {
  const m = running.broker.metrics;
  const vhost = running.broker.vhosts.get('/')!;
  const queues: Record<string, Record<string, number>> = {};
  for (const name of QUEUES) queues[name] = { ...m.queue(vhost.queues.get(name)!) };
  const [conn] = [...running.broker.connections].filter((c) => c.channels.size > 0);
  const channels: Record<string, Record<string, number>> = {};
  for (const [n, ch] of conn!.channels) channels[String(n)] = { ...m.channel(ch as Channel) };
  return {
    queues,
    exchanges: {
      'mt.fan': { ...m.exchange(vhost.exchanges.get('mt.fan')!) },
      'amq.default': { ...m.exchange(vhost.defaultExchange) },
      'amq.direct': { ...m.exchange(vhost.exchanges.get('amq.direct')!) },
    },
    channels,
    overview: { ...m.overview() },
    vhost: { ...m.vhost(vhost) },
  };
}

/** A GET whose body is not decoded (fetch would gunzip it). */
async function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  const { get } = await import('node:http');
  return new Promise((resolve, reject) => {
    get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}
