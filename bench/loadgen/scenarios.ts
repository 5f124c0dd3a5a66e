/**
 * Scenarios driven by the load generator (bench/loadgen/worker.ts) instead of amqplib: the same
 * window, marks, checks and broker CPU sampling as the amqplib scenarios (bench/scenarios.ts),
 * with clients that are not the bottleneck. Named lg-*; their targets are issue 19's.
 */
import {
  confirmRound, consumeSpec, e2eRound, fanoutRound, publishRound, publishSpec, setupTopic10k, teardownTopic10k, topicRound,
  TOPIC_EX, type Scenario, type Target,
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
  round: (t, o) => publishRound(t, o, 'bench-lg-publish', lgPublish(t, { routingKey: 'bench-lg-publish' })),
};

const e2e: Scenario = {
  name: 'lg-e2e',
  title: 'load generator: end to end, 1 publisher → queue → 1 consumer (prefetch 1000, ack every 100 multiple), 16 B, ≤ 50k ahead',
  metrics: [{ key: 'rate', label: 'lg end-to-end', unit: 'msg/s', better: 'higher', targetAbsolute: 300_000 }],
  runsOnRef: true,
  round: (t, o) => e2eRound(t, o, 'bench-lg-e2e', (queue) => lgPublish(t, { routingKey: queue, aheadLimit: 50000 }), (queue) => lgConsume(t, { queues: [queue] })),
};

const confirm: Scenario = {
  name: 'lg-confirm',
  title: 'load generator: confirmed persistent publish 16 B, durable queue, 4 publishers (2 processes × 2 connections), window 1000 each',
  metrics: [{ key: 'rate', label: 'lg confirmed publish 16 B, 4 publishers', unit: 'msg/s', better: 'higher', targetAbsolute: 150_000 }],
  runsOnRef: true,
  round(t, o) {
    const spec = lgPublish(t, { routingKey: 'bench-lg-confirm', persistent: true, confirmWindow: 1000, connections: 2 });
    return confirmRound(t, o, 'bench-lg-confirm', [spec, { ...spec }]);
  },
};

const fanout: Scenario = {
  name: 'lg-fanout',
  title: 'load generator: fanout to 10 queues, 1 publisher (16 B, ≤ 5k ahead), 2 consumer processes × 5 queues (prefetch 1000, ack every 100)',
  metrics: [{ key: 'rate', label: 'lg fanout ×10 deliveries', unit: 'deliveries/s', better: 'higher', targetAbsolute: 1_000_000 }],
  runsOnRef: true,
  round: (t, o) => fanoutRound(t, o, 'bench-lg-fanout', (ex) => lgPublish(t, { exchange: ex, aheadLimit: 5000, deliveriesPerMessage: 10 }), (queues) => lgConsume(t, { queues })),
};

const topic: Scenario = {
  name: 'lg-topic-10k',
  title: 'load generator: topic exchange with 10,000 bindings (as topic-10k), 1 publisher (≤ 20k ahead), 2 consumer processes × 5 queues (prefetch 1000, ack every 100)',
  metrics: [{ key: 'rate', label: 'lg topic, 10k bindings', unit: 'msg/s', better: 'higher', targetRatio: 10 }],
  runsOnRef: true,
  setupTarget: setupTopic10k,
  teardownRef: teardownTopic10k,
  round: (t, o) => topicRound(t, o, lgPublish(t, { exchange: TOPIC_EX, routingKey: 'topic10k', aheadLimit: 20000 }), (queues) => lgConsume(t, { queues })),
};

export const LOADGEN_SCENARIOS: Scenario[] = [publish, e2e, confirm, fanout, topic];
