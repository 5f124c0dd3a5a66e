/**
 * The benchmark scenarios. Each round of a scenario runs against one broker ("target") with
 * amqplib clients in separate worker processes (bench/worker.ts) and returns its figures plus
 * the CPU used by the broker and by the clients over the measured window.
 */
import { performance } from 'node:perf_hooks';
import amqp from 'amqplib';
import type { Channel, ChannelModel } from 'amqplib';
import { processCpuMs, systemBusyMs } from './lib/proc.js';
import type { ConsumeSpec, PublishSpec, Sample, WorkerSpec } from './lib/protocol.js';
import { allReady, stopAll, WorkerHandle } from './lib/workers.js';
import { streamReplay } from './stream-scenario.js';

export interface BenchOptions {
  /** Seconds before the measured window (JIT warm-up, queues reach steady state). */
  warmup: number;
  /** Seconds of the measured window. */
  duration: number;
  /** Messages pre-filled for the consume scenarios. */
  fill: number;
  /** Connections opened by the connections scenario. */
  connections: number;
  /** Rate of the latency scenario, msgs/s. */
  latencyRate: number;
  /** Warren start-ups timed by the listen scenario. */
  listenRuns: number;
}

/** One broker under test, as seen by a scenario round. */
export interface Target {
  kind: 'warren' | 'ref';
  url: string;
  pid: number;
  admin: ChannelModel;
  ch: Channel;
  /** Time to listen of this Warren process (ms); NaN for the reference. */
  listenMs: number;
  /** Figure given on the command line for the reference (--ref-listen-ms). */
  givenListenMs: number;
  /** Starts a fresh Warren and returns its listen time (listen scenario). */
  startWarrenOnce?: () => Promise<number>;
}

export interface RoundOutcome {
  metrics: Record<string, number>;
  /** Broker CPU over the window, % of one core. */
  brokerCpu: number;
  /** All client processes together, % of one core. */
  clientCpu: number;
  /** The busiest client process, % of one core (≈100: that client is the bottleneck). */
  clientCpuMax: number;
  /** Everything else on the machine over the window (other processes: noise), % of one core. */
  otherCpu: number;
  /** CPU % of each client process (diagnostics; in the JSON output). */
  clients?: Record<string, number>;
  /** Things that went wrong: lost messages, errors, timeouts. */
  problems: string[];
}

export interface MetricDef {
  key: string;
  label: string;
  unit: string;
  better: 'higher' | 'lower';
  /** Target as a ratio Warren/reference (≥ for higher-better, ≤ for lower-better). */
  targetRatio?: number;
  /** Target as an absolute bound on Warren's figure (≤ for lower-better). */
  targetAbsolute?: number;
}

export interface Scenario {
  name: string;
  title: string;
  metrics: MetricDef[];
  /** False: the reference is not run (its figure may come from the command line). */
  runsOnRef: boolean;
  /** Starts its own brokers (the outer loop does not start Warren for it). */
  ownBroker?: boolean;
  setupTarget?(t: Target, o: BenchOptions): Promise<void>;
  round(t: Target, o: BenchOptions): Promise<RoundOutcome>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- building blocks -------------------------------------------------------------------------

function publishSpec(t: Target, p: Partial<PublishSpec>): PublishSpec {
  return {
    role: 'publish', url: t.url, exchange: '', routingKey: '', size: 16, persistent: false, confirmWindow: 0,
    rate: 0, timestamp: false, aheadLimit: 0, deliveriesPerMessage: 1, maxMessages: 20_000_000, fill: 0,
    brokerPid: t.pid, ...p,
  };
}

function consumeSpec(t: Target, c: Partial<ConsumeSpec>): ConsumeSpec {
  return {
    role: 'consume', url: t.url, queues: [], noAck: false, ackEvery: 1, prefetch: 1000, expect: 0,
    latency: false, progress: false, brokerPid: t.pid, ...c,
  };
}

let workerSeq = 0;
function spawnWorkers(specs: WorkerSpec[]): WorkerHandle[] {
  return specs.map((s) => new WorkerHandle(s, `${s.role}#${++workerSeq}`));
}

/** Counting rate (per second) between a worker's two marks. */
function rateOf(marks: Sample[]): number {
  const [a, b] = marks;
  if (!a || !b || b.t <= a.t) return NaN;
  return ((b.count - a.count) * 1000) / (b.t - a.t);
}

function cpuOf(marks: Sample[]): number {
  const [a, b] = marks;
  if (!a || !b || b.t <= a.t) return NaN;
  return ((b.cpuMs - a.cpuMs) * 100) / (b.t - a.t);
}

function clientCpu(workers: WorkerHandle[]): { total: number; max: number } {
  const each = workers.map((w) => cpuOf(w.marks)).filter(Number.isFinite);
  return { total: each.reduce((a, b) => a + b, 0), max: each.length ? Math.max(...each) : NaN };
}

function workerProblems(workers: WorkerHandle[]): string[] {
  const out: string[] = [];
  for (const w of workers) {
    if (w.error) out.push(w.error);
    for (const e of w.result?.errors ?? []) out.push(`${w.name}: ${e}`);
  }
  return out;
}

async function resetQueue(t: Target, name: string, durable: boolean): Promise<void> {
  await t.ch.deleteQueue(name);
  await t.ch.assertQueue(name, { durable, autoDelete: false });
}

/** Polls the queue depth until it equals `expected` (or stops changing for 3 s). */
async function awaitDepth(t: Target, queue: string, expected: number, timeoutMs = 20000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const { messageCount } = await t.ch.checkQueue(queue);
    if (messageCount === expected) return messageCount;
    if (messageCount !== last) {
      last = messageCount;
      lastChange = Date.now();
    }
    if (Date.now() > deadline || Date.now() - lastChange > 3000) return messageCount;
    await sleep(50);
  }
}

interface WindowRun {
  /** Messages per second that entered depthQueue over the window (broker side). */
  depthRate: number;
  workers: WorkerHandle[];
  publishers: WorkerHandle[];
  consumers: WorkerHandle[];
  brokerCpu: number;
  systemCpu: number;
  problems: string[];
}

/**
 * Runs publishers and consumers: start, warm up, mark, measure, mark, then stop the publishers,
 * let the consumers catch up (checking that every published message was delivered: expected
 * deliveries = published × deliveriesPerMessage) and stop them.
 */
async function windowRun(t: Target, o: BenchOptions, pubs: PublishSpec[], cons: ConsumeSpec[], checkDelivered: boolean, depthQueue?: string): Promise<WindowRun> {
  const consumers = spawnWorkers(cons);
  const publishers = spawnWorkers(pubs);
  const workers = [...consumers, ...publishers];
  const problems: string[] = [];
  let brokerCpu = NaN;
  let systemCpu = NaN;
  let depthRate = NaN;
  const depth = async () => (depthQueue ? (await t.ch.checkQueue(depthQueue)).messageCount : NaN);
  try {
    await allReady(workers);
    const consumed = () => consumers.reduce((a, c) => a + c.progress, 0);
    if (pubs.some((p) => p.aheadLimit > 0)) {
      for (const c of consumers) c.onProgress = () => {
        const n = consumed();
        for (const p of publishers) p.send({ cmd: 'credit', consumed: n });
      };
    }
    for (const w of workers) w.send({ cmd: 'start' });
    await sleep(o.warmup * 1000);
    const b0 = processCpuMs(t.pid);
    const s0 = systemBusyMs();
    const t0 = performance.now();
    for (const w of workers) w.send({ cmd: 'mark' });
    const d0 = await depth();
    const dt0 = performance.now();
    await Promise.all(workers.map((w) => w.until(() => w.marks.length >= 1, 10000, 'mark')));
    await sleep(o.duration * 1000);
    const b1 = processCpuMs(t.pid);
    const s1 = systemBusyMs();
    const t1 = performance.now();
    for (const w of workers) w.send({ cmd: 'mark' });
    const d1 = await depth();
    depthRate = ((d1 - d0) * 1000) / (performance.now() - dt0);
    await Promise.all(workers.map((w) => w.until(() => w.marks.length >= 2, 10000, 'mark')));
    brokerCpu = ((b1 - b0) * 100) / (t1 - t0);
    systemCpu = ((s1 - s0) * 100) / (t1 - t0);
    for (const c of consumers) c.onProgress = undefined;
    await stopAll(publishers);
    if (checkDelivered && consumers.length > 0) {
      const perMessage = pubs[0]?.deliveriesPerMessage ?? 1;
      const expected = publishers.reduce((a, p) => a + (p.result?.total ?? 0), 0) * perMessage;
      const deadline = Date.now() + 15000;
      while (consumed() < expected && Date.now() < deadline && consumers.every((c) => !c.exited)) await sleep(20);
      // The last progress report may lag by one interval.
      await sleep(30);
      if (consumed() < expected) problems.push(`consumers got ${consumed()} of ${expected} deliveries (${expected - consumed()} missing after 15 s)`);
      if (consumed() > expected) problems.push(`consumers got ${consumed()} deliveries, more than the ${expected} expected (duplicates?)`);
    }
    await stopAll(consumers);
  } catch (err) {
    problems.push((err as Error).message);
  } finally {
    for (const w of workers) w.kill();
  }
  problems.push(...workerProblems(workers));
  return { depthRate, workers, publishers, consumers, brokerCpu, systemCpu, problems };
}

function outcome(run: WindowRun, metrics: Record<string, number>): RoundOutcome {
  const cpu = clientCpu(run.workers);
  const clients = Object.fromEntries(run.workers.map((w) => [w.name, cpuOf(w.marks)]));
  return {
    metrics, brokerCpu: run.brokerCpu, clientCpu: cpu.total, clientCpuMax: cpu.max,
    otherCpu: other(run.systemCpu, run.brokerCpu, cpu.total), clients, problems: run.problems,
  };
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
const other = (system: number, broker: number, clients: number) => Math.max(0, system - (Number.isFinite(broker) ? broker : 0) - clients);

// ---- publish ---------------------------------------------------------------------------------

function transientPublish(size: number, name: string, label: string): Scenario {
  const queue = `bench-${name}`;
  return {
    name,
    title: `transient publish, ${label} bodies, 1 publisher, no consumer`,
    metrics: [
      { key: 'rate', label: `publish ${label}, into the queue`, unit: 'msg/s', better: 'higher', targetRatio: 2 },
      { key: 'clientRate', label: `publish ${label}, client side`, unit: 'msg/s', better: 'higher' },
    ],
    runsOnRef: true,
    async round(t, o) {
      await resetQueue(t, queue, false);
      const run = await windowRun(t, o, [publishSpec(t, { routingKey: queue, size })], [], false, queue);
      const published = run.publishers[0]?.result?.total ?? 0;
      if (published > 0) {
        const depth = await awaitDepth(t, queue, published);
        if (depth !== published) run.problems.push(`queue holds ${depth} of ${published} published messages`);
      }
      await t.ch.deleteQueue(queue);
      return outcome(run, { rate: run.depthRate, clientRate: sum(run.publishers.map((p) => rateOf(p.marks))) });
    },
  };
}

function confirmedPublish(size: number, name: string, label: string): Scenario {
  const queue = `bench-${name}`;
  return {
    name,
    title: `confirmed persistent publish, ${label} bodies, durable queue, window of 1000 unconfirmed`,
    metrics: [{ key: 'rate', label: `confirmed publish ${label}`, unit: 'msg/s', better: 'higher', targetRatio: 1.5 }],
    runsOnRef: true,
    async round(t, o) {
      await resetQueue(t, queue, true);
      const run = await windowRun(t, o, [publishSpec(t, { routingKey: queue, size, persistent: true, confirmWindow: 1000 })], [], false);
      const r = run.publishers[0]?.result;
      if (r) {
        if (r.nacked) run.problems.push(`${r.nacked} publishes nacked`);
        if ((r.confirmed ?? 0) + (r.nacked ?? 0) !== r.total) run.problems.push(`${r.total - (r.confirmed ?? 0) - (r.nacked ?? 0)} of ${r.total} publishes never confirmed`);
        const depth = await awaitDepth(t, queue, r.total);
        if (depth !== r.total) run.problems.push(`queue holds ${depth} of ${r.total} published messages`);
      }
      await t.ch.deleteQueue(queue);
      return outcome(run, { rate: rateOf(run.publishers[0]?.marks ?? []) });
    },
  };
}

// ---- consume from a pre-filled queue -----------------------------------------------------------

function drainConsume(name: string, label: string, consumerOptions: Partial<ConsumeSpec>, targetRatio: number): Scenario {
  const queue = `bench-${name}`;
  return {
    name,
    title: `consume a pre-filled queue (16 B bodies), ${label}`,
    metrics: [{ key: 'rate', label: `consume, ${label}`, unit: 'msg/s', better: 'higher', targetRatio }],
    runsOnRef: true,
    async round(t, o) {
      await resetQueue(t, queue, false);
      const problems: string[] = [];
      const [filler] = spawnWorkers([publishSpec(t, { routingKey: queue, size: 16, fill: o.fill })]) as [WorkerHandle];
      try {
        await allReady([filler]);
        filler.send({ cmd: 'start' });
        await filler.until(() => filler.filled >= 0, 300000, 'the queue to fill');
      } catch (err) {
        problems.push(`fill: ${(err as Error).message}`);
      }
      await stopAll([filler]);
      const depth = await awaitDepth(t, queue, o.fill, 60000);
      if (depth !== o.fill) problems.push(`pre-fill: queue holds ${depth} of ${o.fill} messages`);
      const [consumer] = spawnWorkers([consumeSpec(t, { queues: [queue], expect: depth, ...consumerOptions })]) as [WorkerHandle];
      try {
        await allReady([consumer]);
        await consumer.until(() => consumer.marks.length >= 3, 300000, `${depth} deliveries`);
      } catch (err) {
        problems.push((err as Error).message);
      }
      await stopAll([consumer]);
      problems.push(...workerProblems([filler, consumer]));
      await t.ch.deleteQueue(queue);
      // marks: subscribed, 5% delivered, all delivered. CPU from subscription, rate from 5%.
      const [a, b, c] = consumer.marks;
      const brokerCpu = a && c ? ((c.brokerCpuMs - a.brokerCpuMs) * 100) / (c.t - a.t) : NaN;
      const systemCpu = a && c ? ((c.systemMs - a.systemMs) * 100) / (c.t - a.t) : NaN;
      const cpu = a && c ? cpuOf([a, c]) : NaN;
      return {
        metrics: { rate: b && c ? rateOf([b, c]) : NaN }, brokerCpu, clientCpu: cpu, clientCpuMax: cpu,
        otherCpu: other(systemCpu, brokerCpu, cpu), problems,
      };
    },
  };
}

// ---- end to end, latency --------------------------------------------------------------------

const e2e: Scenario = {
  name: 'e2e',
  title: 'end-to-end: 1 publisher → queue → 1 consumer (ack each, prefetch 1000), 16 B, publisher ≤ 20k ahead',
  metrics: [{ key: 'rate', label: 'end-to-end', unit: 'msg/s', better: 'higher', targetRatio: 2 }],
  runsOnRef: true,
  async round(t, o) {
    const queue = 'bench-e2e';
    await resetQueue(t, queue, false);
    const run = await windowRun(t, o,
      [publishSpec(t, { routingKey: queue, aheadLimit: 20000 })],
      [consumeSpec(t, { queues: [queue], progress: true })], true);
    await t.ch.deleteQueue(queue);
    return outcome(run, { rate: rateOf(run.consumers[0]?.marks ?? []) });
  },
};

const latency: Scenario = {
  name: 'latency',
  title: 'latency at a fixed rate: publisher paced, timestamp in the body, consumer acks each (prefetch 1000)',
  metrics: [
    { key: 'p50', label: 'latency p50', unit: 'ms', better: 'lower' },
    { key: 'p99', label: 'latency p99', unit: 'ms', better: 'lower' },
    { key: 'rate', label: 'latency run rate', unit: 'msg/s', better: 'higher' },
  ],
  runsOnRef: true,
  async round(t, o) {
    const queue = 'bench-latency';
    await resetQueue(t, queue, false);
    const run = await windowRun(t, o,
      [publishSpec(t, { routingKey: queue, rate: o.latencyRate, timestamp: true })],
      [consumeSpec(t, { queues: [queue], latency: true, progress: true })], true);
    await t.ch.deleteQueue(queue);
    const lat = run.consumers[0]?.result?.latency;
    return outcome(run, { p50: lat?.p50 ?? NaN, p99: lat?.p99 ?? NaN, rate: rateOf(run.consumers[0]?.marks ?? []) });
  },
};

// ---- fanout, topic ---------------------------------------------------------------------------

const QUEUES10 = Array.from({ length: 10 }, (_, i) => i);

const fanout: Scenario = {
  name: 'fanout',
  title: 'fanout to 10 queues: 1 publisher (16 B, ≤ 5k ahead), 2 consumer processes × 5 queues, no-ack',
  metrics: [{ key: 'rate', label: 'fanout ×10 deliveries', unit: 'deliveries/s', better: 'higher', targetRatio: 2 }],
  runsOnRef: true,
  async round(t, o) {
    const ex = 'bench-fanout';
    const queues = QUEUES10.map((i) => `bench-fanout-${i}`);
    await t.ch.assertExchange(ex, 'fanout', { durable: false });
    for (const q of queues) {
      await resetQueue(t, q, false);
      await t.ch.bindQueue(q, ex, '');
    }
    const run = await windowRun(t, o,
      [publishSpec(t, { exchange: ex, aheadLimit: 5000, deliveriesPerMessage: 10 })],
      [0, 1].map((k) => consumeSpec(t, { queues: queues.slice(k * 5, k * 5 + 5), noAck: true, progress: true })), true);
    for (const q of queues) await t.ch.deleteQueue(q);
    await t.ch.deleteExchange(ex);
    return outcome(run, {
      rate: sum(run.consumers.map((c) => rateOf(c.marks))),
    });
  },
};

const TOPIC_EX = 'bench-topic';
const topicQueues = QUEUES10.map((i) => `bench-topic-${i}`);

/** Binding i (0..9999) goes to queue i % 10; every published key t.K.e matches exactly one. */
function topicPattern(i: number): string {
  switch (i % 3) {
    case 0: return `t.${i}.*`;
    case 1: return `t.${i}.#`;
    default: return `*.${i}.e`;
  }
}

const topic: Scenario = {
  name: 'topic-10k',
  title: 'topic exchange with 10,000 bindings (t.N.*, t.N.#, *.N.e) over 10 queues; keys t.K.e cycle 0..9999; 2 consumer processes, no-ack',
  metrics: [{ key: 'rate', label: 'topic, 10k bindings', unit: 'msg/s', better: 'higher', targetRatio: 10 }],
  runsOnRef: true,
  async setupTarget(t) {
    await t.ch.assertExchange(TOPIC_EX, 'topic', { durable: false });
    for (const q of topicQueues) await resetQueue(t, q, false);
    // Several channels in parallel: amqplib runs one RPC at a time per channel.
    const chans = await Promise.all(Array.from({ length: 16 }, () => t.admin.createChannel()));
    await Promise.all(chans.map(async (c, k) => {
      for (let i = k; i < 10000; i += chans.length) await c.bindQueue(topicQueues[i % 10] as string, TOPIC_EX, topicPattern(i));
    }));
    await Promise.all(chans.map((c) => c.close()));
  },
  async round(t, o) {
    for (const q of topicQueues) await t.ch.purgeQueue(q);
    const run = await windowRun(t, o,
      [publishSpec(t, { exchange: TOPIC_EX, routingKey: 'topic10k', aheadLimit: 20000 })],
      [0, 1].map((k) => consumeSpec(t, { queues: topicQueues.slice(k * 5, k * 5 + 5), noAck: true, progress: true })), true);
    return outcome(run, { rate: sum(run.consumers.map((c) => rateOf(c.marks))) });
  },
};

// ---- connections, listen ---------------------------------------------------------------------

const connections: Scenario = {
  name: 'connections',
  title: 'open N connections (20 in parallel), then a channel on each; broker RSS (VmRSS) deltas',
  metrics: [
    { key: 'openRate', label: 'connection open rate', unit: 'conn/s', better: 'higher' },
    { key: 'kibPerConn', label: 'broker memory per connection', unit: 'KiB', better: 'lower', targetRatio: 0.5 },
    { key: 'kibPerConnCh', label: 'memory per connection + channel', unit: 'KiB', better: 'lower' },
  ],
  runsOnRef: true,
  async round(t, o) {
    const [w] = spawnWorkers([{ role: 'connections', url: t.url, count: o.connections, concurrency: 20, brokerPid: t.pid, settleMs: 1000 }]) as [WorkerHandle];
    const problems: string[] = [];
    try {
      await allReady([w]);
      w.send({ cmd: 'start' });
      await w.until(() => w.result !== undefined, 300000, 'connections');
    } catch (err) {
      problems.push((err as Error).message);
    }
    await stopAll([w]);
    problems.push(...workerProblems([w]));
    const c = w.result?.connections;
    if (!c) return { metrics: {} as Record<string, number>, brokerCpu: NaN, clientCpu: NaN, clientCpuMax: NaN, otherCpu: NaN, problems };
    if (c.opened !== o.connections) problems.push(`opened ${c.opened} of ${o.connections} connections`);
    const clientCpu = (c.clientCpuMs * 100) / c.openMs;
    return {
      metrics: {
        openRate: (c.opened * 1000) / c.openMs,
        kibPerConn: (c.brokerRssConnsKiB - c.brokerRssBeforeKiB) / c.opened,
        kibPerConnCh: (c.brokerRssChannelsKiB - c.brokerRssBeforeKiB) / c.opened,
      },
      brokerCpu: (c.brokerCpuMs * 100) / c.openMs,
      clientCpu,
      clientCpuMax: clientCpu,
      otherCpu: other((c.systemMs * 100) / c.openMs, (c.brokerCpuMs * 100) / c.openMs, clientCpu),
      problems,
    };
  },
};

const listen: Scenario = {
  name: 'listen',
  title: 'time to listen: spawn → port accepting TCP (Warren: node dist/main.js, fresh data dir)',
  metrics: [{ key: 'ms', label: 'time to listen', unit: 'ms', better: 'lower', targetAbsolute: 300 }],
  runsOnRef: false,
  ownBroker: true,
  async round(t, o) {
    const times: number[] = [];
    if (t.kind === 'ref') {
      times.push(t.givenListenMs);
    } else if (t.startWarrenOnce) {
      for (let i = 0; i < o.listenRuns; i++) times.push(await t.startWarrenOnce());
    }
    times.sort((a, b) => a - b);
    return { metrics: { ms: times[times.length >> 1] ?? NaN }, brokerCpu: NaN, clientCpu: NaN, clientCpuMax: NaN, otherCpu: NaN, problems: [] };
  },
};

export const SCENARIOS: Scenario[] = [
  // First, while the long-running reference broker is least disturbed by earlier scenarios
  // (its RSS baseline matters for memory per connection).
  listen,
  connections,
  transientPublish(16, 'publish-16', '16 B'),
  transientPublish(1024, 'publish-1k', '1 KiB'),
  confirmedPublish(16, 'confirm-16', '16 B'),
  confirmedPublish(1024, 'confirm-1k', '1 KiB'),
  drainConsume('consume-ack', 'ack each (prefetch 1000)', { ackEvery: 1, prefetch: 1000 }, 2),
  drainConsume('consume-ack100', 'ack every 100, multiple (prefetch 1000)', { ackEvery: 100, prefetch: 1000 }, 2),
  drainConsume('consume-noack', 'no-ack', { noAck: true }, 1.5),
  e2e,
  latency,
  fanout,
  topic,
  streamReplay,
];

/** Opens the orchestrator's admin connection to a broker. */
export async function openAdmin(url: string): Promise<{ admin: ChannelModel; ch: Channel }> {
  const admin = await amqp.connect(url);
  admin.on('error', () => {});
  const ch = await admin.createChannel();
  ch.on('error', () => {});
  return { admin, ch };
}
