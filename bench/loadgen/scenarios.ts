/**
 * Scenarios driven by the load generator (bench/loadgen/worker.ts) instead of amqplib: the same
 * window, marks, checks and broker CPU sampling as the amqplib scenarios (bench/scenarios.ts),
 * with clients that are not the bottleneck. Named lg-*; their targets are issue 19's.
 */
import {
  awaitDepth, consumeSpec, outcome, publishSpec, QUEUES10, rateOf, resetQueue, setupTopic10k, sum, teardownTopic10k,
  topicQueues, TOPIC_EX, windowRun, type Scenario, type Target,
} from '../scenarios.js';
import type { ConsumeSpec, PublishSpec } from '../lib/protocol.js';

const lgPublish = (t: Target, p: Partial<PublishSpec>): PublishSpec => publishSpec(t, { engine: 'loadgen', ...p });
const lgConsume = (t: Target, c: Partial<ConsumeSpec>): ConsumeSpec =>
  consumeSpec(t, { engine: 'loadgen', prefetch: 1000, ackEvery: 100, progress: true, ...c });

const publish: Scenario = {
  name: 'lg-publish',
  title: 'load generator: transient publish 16 B into a queue, 1 publisher, no consumer',
  metrics: [
    { key: 'rate', label: 'lg publish 16 B, into the queue', unit: 'msg/s', better: 'higher', targetAbsolute: 600_000 },
    { key: 'clientRate', label: 'lg publish 16 B, client side', unit: 'msg/s', better: 'higher' },
  ],
  runsOnRef: true,
  async round(t, o) {
    const queue = 'bench-lg-publish';
    await resetQueue(t, queue, false);
    const run = await windowRun(t, o, [lgPublish(t, { routingKey: queue })], [], false, queue);
    const published = run.publishers[0]?.result?.total ?? 0;
    if (published > 0) {
      const depth = await awaitDepth(t, queue, published);
      if (depth !== published) run.problems.push(`queue holds ${depth} of ${published} published messages`);
    } else {
      run.problems.push('nothing published');
    }
    await t.ch.deleteQueue(queue);
    return outcome(run, { rate: run.depthRate, clientRate: sum(run.publishers.map((p) => rateOf(p.marks))) });
  },
};

const e2e: Scenario = {
  name: 'lg-e2e',
  title: 'load generator: end to end, 1 publisher → queue → 1 consumer (prefetch 1000, ack every 100 multiple), 16 B, ≤ 50k ahead',
  metrics: [{ key: 'rate', label: 'lg end-to-end', unit: 'msg/s', better: 'higher', targetAbsolute: 300_000 }],
  runsOnRef: true,
  async round(t, o) {
    const queue = 'bench-lg-e2e';
    await resetQueue(t, queue, false);
    const run = await windowRun(t, o,
      [lgPublish(t, { routingKey: queue, aheadLimit: 50000 })],
      [lgConsume(t, { queues: [queue] })], true);
    await t.ch.deleteQueue(queue);
    return outcome(run, { rate: rateOf(run.consumers[0]?.marks ?? []) });
  },
};

const confirm: Scenario = {
  name: 'lg-confirm',
  title: 'load generator: confirmed persistent publish 16 B, durable queue, 4 publishers (2 processes × 2 connections), window 1000 each',
  metrics: [{ key: 'rate', label: 'lg confirmed publish 16 B, 4 publishers', unit: 'msg/s', better: 'higher', targetAbsolute: 150_000 }],
  runsOnRef: true,
  async round(t, o) {
    const queue = 'bench-lg-confirm';
    await resetQueue(t, queue, true);
    const spec = lgPublish(t, { routingKey: queue, persistent: true, confirmWindow: 1000, connections: 2 });
    const run = await windowRun(t, o, [spec, { ...spec }], [], false);
    let total = 0;
    for (const p of run.publishers) {
      const r = p.result;
      if (!r) continue;
      total += r.total;
      if (r.nacked) run.problems.push(`${p.name}: ${r.nacked} publishes nacked`);
      if ((r.confirmed ?? 0) + (r.nacked ?? 0) !== r.total) run.problems.push(`${p.name}: ${r.total - (r.confirmed ?? 0) - (r.nacked ?? 0)} of ${r.total} publishes never confirmed`);
    }
    if (total > 0) {
      const depth = await awaitDepth(t, queue, total);
      if (depth !== total) run.problems.push(`queue holds ${depth} of ${total} published messages`);
    } else {
      run.problems.push('nothing published');
    }
    await t.ch.deleteQueue(queue);
    return outcome(run, { rate: sum(run.publishers.map((p) => rateOf(p.marks))) });
  },
};

const fanout: Scenario = {
  name: 'lg-fanout',
  title: 'load generator: fanout to 10 queues, 1 publisher (16 B, ≤ 5k ahead), 2 consumer processes × 5 queues (prefetch 1000, ack every 100)',
  metrics: [{ key: 'rate', label: 'lg fanout ×10 deliveries', unit: 'deliveries/s', better: 'higher', targetAbsolute: 1_000_000 }],
  runsOnRef: true,
  async round(t, o) {
    const ex = 'bench-lg-fanout';
    const queues = QUEUES10.map((i) => `bench-lg-fanout-${i}`);
    await t.ch.assertExchange(ex, 'fanout', { durable: false });
    for (const q of queues) {
      await resetQueue(t, q, false);
      await t.ch.bindQueue(q, ex, '');
    }
    const run = await windowRun(t, o,
      [lgPublish(t, { exchange: ex, aheadLimit: 5000, deliveriesPerMessage: 10 })],
      [0, 1].map((k) => lgConsume(t, { queues: queues.slice(k * 5, k * 5 + 5) })), true);
    for (const q of queues) await t.ch.deleteQueue(q);
    await t.ch.deleteExchange(ex);
    return outcome(run, { rate: sum(run.consumers.map((c) => rateOf(c.marks))) });
  },
};

const topic: Scenario = {
  name: 'lg-topic-10k',
  title: 'load generator: topic exchange with 10,000 bindings (as topic-10k), 1 publisher (≤ 20k ahead), 2 consumer processes × 5 queues (prefetch 1000, ack every 100)',
  metrics: [{ key: 'rate', label: 'lg topic, 10k bindings', unit: 'msg/s', better: 'higher', targetRatio: 10 }],
  runsOnRef: true,
  setupTarget: setupTopic10k,
  teardownRef: teardownTopic10k,
  async round(t, o) {
    for (const q of topicQueues) await t.ch.purgeQueue(q);
    const run = await windowRun(t, o,
      [lgPublish(t, { exchange: TOPIC_EX, routingKey: 'topic10k', aheadLimit: 20000 })],
      [0, 1].map((k) => lgConsume(t, { queues: topicQueues.slice(k * 5, k * 5 + 5) })), true);
    return outcome(run, { rate: sum(run.consumers.map((c) => rateOf(c.marks))) });
  },
};

export const LOADGEN_SCENARIOS: Scenario[] = [publish, e2e, confirm, fanout, topic];
