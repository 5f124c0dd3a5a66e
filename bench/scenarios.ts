/**
 * The benchmark scenarios. Each round of a scenario runs against one broker ("target") with
 * amqplib clients in separate worker processes (bench/worker.ts) and returns its figures plus
 * the CPU used by the broker and by the clients over the measured window.
 */
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import amqp from 'amqplib';
import type { Channel, ChannelModel } from 'amqplib';
import { processCpuMs, systemBusyMs } from './lib/proc.js';
import type { ConsumeSpec, PublishSpec, Sample, WorkerSpec } from './lib/protocol.js';
import { allReady, stopAll, WorkerHandle, workerProblems } from './lib/workers.js';
import { lgStream, streamReplay } from './stream-scenario.js';

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
  /**
   * Broker CPU µs per message by metric key, where the scenario counts it itself (when the CPU
   * window and the rate window differ); otherwise it is derived (brokerUsPerMessage).
   */
  brokerUsPerMsg?: Record<string, number>;
  /** Rate of each client process over the window, msg/s (published, confirmed or delivered). */
  clientRates?: Record<string, number>;
  /** Things that went wrong: lost messages, errors, timeouts. */
  problems: string[];
  /** The machine's speed just before the round (lib/machine-speed.ts, MB/s); set by the runner. */
  machineSpeed?: number;
}

export interface MetricDef {
  key: string;
  label: string;
  unit: string;
  better: 'higher' | 'lower';
  /** Target as a ratio Warren/reference (≥ for higher-better, ≤ for lower-better). */
  targetRatio?: number;
  /** Target as an absolute bound on Warren's figure (≤ for lower-better, ≥ for higher-better). */
  targetAbsolute?: number;
}

/**
 * Broker CPU time per message, µs, for a throughput metric (unit …/s, connections excepted):
 * broker CPU % of one core over the window divided by the rate. Independent of how fast the
 * clients are: it holds when the machine, not the broker, is the limit. NaN for other metrics.
 */
export function brokerUsPerMessage(m: MetricDef, r: RoundOutcome): number {
  const own = r.brokerUsPerMsg?.[m.key];
  if (own !== undefined) return own;
  if (!/\/s$/.test(m.unit) || m.unit === 'conn/s') return NaN;
  return (r.brokerCpu * 10000) / (r.metrics[m.key] ?? NaN);
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
  /** Leaves the long-running reference clean after the scenario (Warren is thrown away anyway). */
  teardownRef?(url: string): Promise<void>;
  round(t: Target, o: BenchOptions): Promise<RoundOutcome>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- building blocks -------------------------------------------------------------------------

export function publishSpec(t: Target, p: Partial<PublishSpec>): PublishSpec {
  return {
    role: 'publish', url: t.url, exchange: '', routingKey: '', size: 16, persistent: false, confirmWindow: 0,
    rate: 0, timestamp: false, aheadLimit: 0, deliveriesPerMessage: 1, maxMessages: 20_000_000, fill: 0,
    brokerPid: t.pid, ...p,
  };
}

export function consumeSpec(t: Target, c: Partial<ConsumeSpec>): ConsumeSpec {
  return {
    role: 'consume', url: t.url, queues: [], noAck: false, ackEvery: 1, prefetch: 1000, expect: 0,
    latency: false, progress: false, brokerPid: t.pid, ...c,
  };
}

let workerSeq = 0;
export function spawnWorkers(specs: WorkerSpec[]): WorkerHandle[] {
  return specs.map((s) => new WorkerHandle(s, `${'engine' in s && s.engine === 'loadgen' ? 'lg-' : ''}${s.role}#${++workerSeq}`));
}

/** Counting rate (per second) between a worker's two marks. */
export function rateOf(marks: Sample[]): number {
  const [a, b] = marks;
  if (!a || !b || b.t <= a.t) return NaN;
  return ((b.count - a.count) * 1000) / (b.t - a.t);
}

export function cpuOf(marks: Sample[]): number {
  const [a, b] = marks;
  if (!a || !b || b.t <= a.t) return NaN;
  return ((b.cpuMs - a.cpuMs) * 100) / (b.t - a.t);
}

export function clientCpu(workers: WorkerHandle[]): { total: number; max: number } {
  const each = workers.map((w) => cpuOf(w.marks)).filter(Number.isFinite);
  return { total: each.reduce((a, b) => a + b, 0), max: each.length ? Math.max(...each) : NaN };
}

export async function resetQueue(t: Target, name: string, durable: boolean): Promise<void> {
  await t.ch.deleteQueue(name);
  await t.ch.assertQueue(name, { durable, autoDelete: false });
}

/** Polls the queue depth until it equals `expected` (or stops changing for 3 s). */
export async function awaitDepth(t: Target, queue: string, expected: number, timeoutMs = 20000): Promise<number> {
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

export interface WindowRun {
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
export async function windowRun(t: Target, o: BenchOptions, pubs: PublishSpec[], cons: ConsumeSpec[], checkDelivered: boolean, depthQueue?: string): Promise<WindowRun> {
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

export function outcome(run: WindowRun, metrics: Record<string, number>): RoundOutcome {
  const cpu = clientCpu(run.workers);
  const clients = Object.fromEntries(run.workers.map((w) => [w.name, cpuOf(w.marks)]));
  const clientRates = Object.fromEntries(run.workers.map((w) => [w.name, rateOf(w.marks)]));
  return {
    metrics, brokerCpu: run.brokerCpu, clientCpu: cpu.total, clientCpuMax: cpu.max,
    otherCpu: other(run.systemCpu, run.brokerCpu, cpu.total), clients, clientRates, problems: run.problems,
  };
}

export const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
export const other = (system: number, broker: number, clients: number) => Math.max(0, system - (Number.isFinite(broker) ? broker : 0) - clients);

// ---- publish ---------------------------------------------------------------------------------

/**
 * The round of a publish into a queue nobody consumes: the queue's depth rate ("into the
 * queue") and the publishers' own rate, checking that the queue holds what they published.
 */
export async function publishRound(t: Target, o: BenchOptions, queue: string, publisher: PublishSpec): Promise<RoundOutcome> {
  await resetQueue(t, queue, false);
  const run = await windowRun(t, o, [publisher], [], false, queue);
  const published = run.publishers[0]?.result?.total ?? 0;
  if (published > 0) {
    const depth = await awaitDepth(t, queue, published);
    if (depth !== published) run.problems.push(`queue holds ${depth} of ${published} published messages`);
  } else {
    run.problems.push('nothing published');
  }
  await t.ch.deleteQueue(queue);
  return outcome(run, { rate: run.depthRate, clientRate: sum(run.publishers.map((p) => rateOf(p.marks))) });
}

/**
 * The round of confirmed persistent publishes into a durable queue: the publishers' summed
 * rate, checking that every publish was confirmed and that the queue holds them all.
 */
export async function confirmRound(t: Target, o: BenchOptions, queue: string, publishers: PublishSpec[]): Promise<RoundOutcome> {
  await resetQueue(t, queue, true);
  const run = await windowRun(t, o, publishers, [], false);
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
}

function transientPublish(size: number, name: string, label: string): Scenario {
  return {
    name,
    title: `transient publish, ${label} bodies, 1 publisher, no consumer`,
    metrics: [
      { key: 'rate', label: `publish ${label}, into the queue`, unit: 'msg/s', better: 'higher', targetRatio: 2 },
      { key: 'clientRate', label: `publish ${label}, client side`, unit: 'msg/s', better: 'higher' },
    ],
    runsOnRef: true,
    round: (t, o) => publishRound(t, o, `bench-${name}`, publishSpec(t, { routingKey: `bench-${name}`, size })),
  };
}

function confirmedPublish(size: number, name: string, label: string): Scenario {
  const queue = `bench-${name}`;
  return {
    name,
    title: `confirmed persistent publish, ${label} bodies, durable queue, window of 1000 unconfirmed`,
    metrics: [{ key: 'rate', label: `confirmed publish ${label}`, unit: 'msg/s', better: 'higher', targetRatio: 1.5 }],
    runsOnRef: true,
    round: (t, o) => confirmRound(t, o, queue, [publishSpec(t, { routingKey: queue, size, persistent: true, confirmWindow: 1000 })]),
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
        // all the broker's CPU from subscription to the last delivery, over all the deliveries
        brokerUsPerMsg: { rate: a && c ? ((c.brokerCpuMs - a.brokerCpuMs) * 1000) / (c.count - a.count) : NaN },
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
  round: (t, o) => e2eRound(t, o, 'bench-e2e', (queue) => publishSpec(t, { routingKey: queue, aheadLimit: 20000 }), (queue) => consumeSpec(t, { queues: [queue], progress: true })),
};

/** The round of one publisher → a queue → one consumer: the consumer's rate, every message delivered once. */
export async function e2eRound(t: Target, o: BenchOptions, queue: string, publisher: (queue: string) => PublishSpec, consumer: (queue: string) => ConsumeSpec): Promise<RoundOutcome> {
  await resetQueue(t, queue, false);
  const run = await windowRun(t, o, [publisher(queue)], [consumer(queue)], true);
  await t.ch.deleteQueue(queue);
  return outcome(run, { rate: rateOf(run.consumers[0]?.marks ?? []) });
}

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

export const QUEUES10 = Array.from({ length: 10 }, (_, i) => i);

const fanout: Scenario = {
  name: 'fanout',
  title: 'fanout to 10 queues: 1 publisher (16 B, ≤ 5k ahead), 2 consumer processes × 5 queues, no-ack',
  metrics: [{ key: 'rate', label: 'fanout ×10 deliveries', unit: 'deliveries/s', better: 'higher', targetRatio: 2 }],
  runsOnRef: true,
  round: (t, o) => fanoutRound(t, o, 'bench-fanout', (ex) => publishSpec(t, { exchange: ex, aheadLimit: 5000, deliveriesPerMessage: 10 }), (queues) => consumeSpec(t, { queues, noAck: true, progress: true })),
};

/**
 * The round of a fanout exchange (`name`) to 10 queues: one publisher, two consumer processes
 * of 5 queues each; the deliveries per second of both, every delivery made once.
 */
export async function fanoutRound(t: Target, o: BenchOptions, name: string, publisher: (exchange: string) => PublishSpec, consumer: (queues: string[]) => ConsumeSpec): Promise<RoundOutcome> {
  const queues = QUEUES10.map((i) => `${name}-${i}`);
  await t.ch.assertExchange(name, 'fanout', { durable: false });
  for (const q of queues) {
    await resetQueue(t, q, false);
    await t.ch.bindQueue(q, name, '');
  }
  const run = await windowRun(t, o, [publisher(name)], [0, 1].map((k) => consumer(queues.slice(k * 5, k * 5 + 5))), true);
  for (const q of queues) await t.ch.deleteQueue(q);
  await t.ch.deleteExchange(name);
  return outcome(run, { rate: sum(run.consumers.map((c) => rateOf(c.marks))) });
}

export const TOPIC_EX = 'bench-topic';
export const topicQueues = QUEUES10.map((i) => `bench-topic-${i}`);

/** Binding i (0..9999) goes to queue i % 10; every published key t.K.e matches exactly one. */
function topicPattern(i: number): string {
  switch (i % 3) {
    case 0: return `t.${i}.*`;
    case 1: return `t.${i}.#`;
    default: return `*.${i}.e`;
  }
}

/** Declares the topic exchange, its 10 queues and the 10,000 bindings. */
export async function setupTopic10k(t: Target): Promise<void> {
  await t.ch.assertExchange(TOPIC_EX, 'topic', { durable: false });
  for (const q of topicQueues) await resetQueue(t, q, false);
  // Several channels in parallel: amqplib runs one RPC at a time per channel.
  const chans = await Promise.all(Array.from({ length: 16 }, () => t.admin.createChannel()));
  await Promise.all(chans.map(async (c, k) => {
    for (let i = k; i < 10000; i += chans.length) await c.bindQueue(topicQueues[i % 10] as string, TOPIC_EX, topicPattern(i));
  }));
  await Promise.all(chans.map((c) => c.close()));
}

/** Deletes the topic exchange (its 10,000 bindings go with it) and its queues. */
export async function teardownTopic10k(url: string): Promise<void> {
  const { admin, ch } = await openAdmin(url);
  try {
    await ch.deleteExchange(TOPIC_EX);
    for (const q of topicQueues) await ch.deleteQueue(q);
  } finally {
    await admin.close();
  }
}

const topic: Scenario = {
  name: 'topic-10k',
  title: 'topic exchange with 10,000 bindings (t.N.*, t.N.#, *.N.e) over 10 queues; keys t.K.e cycle 0..9999; 2 consumer processes, no-ack',
  metrics: [{ key: 'rate', label: 'topic, 10k bindings', unit: 'msg/s', better: 'higher', targetRatio: 10 }],
  runsOnRef: true,
  setupTarget: setupTopic10k,
  teardownRef: teardownTopic10k,
  round: (t, o) => topicRound(t, o, publishSpec(t, { exchange: TOPIC_EX, routingKey: 'topic10k', aheadLimit: 20000 }), (queues) => consumeSpec(t, { queues, noAck: true, progress: true })),
};

/** The round of the topic exchange set up by setupTopic10k: one publisher, two consumer processes of 5 queues each. */
export async function topicRound(t: Target, o: BenchOptions, publisher: PublishSpec, consumer: (queues: string[]) => ConsumeSpec): Promise<RoundOutcome> {
  for (const q of topicQueues) await t.ch.purgeQueue(q);
  const run = await windowRun(t, o, [publisher], [0, 1].map((k) => consumer(topicQueues.slice(k * 5, k * 5 + 5))), true);
  return outcome(run, { rate: sum(run.consumers.map((c) => rateOf(c.marks))) });
}

// ---- deduplication exchange ----------------------------------------------------------------

const DEDUP_ENTRIES = 1_000_000;

/** Waits (at most maxMs) until the broker process used under 5 % of a core over 300 ms. */
async function brokerIdle(pid: number, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const a = processCpuMs(pid);
    const t0 = Date.now();
    await sleep(300);
    if (((processCpuMs(pid) - a) * 100) / (Date.now() - t0) < 5 || Date.now() >= deadline) return;
  }
}

/** bench/dedup-memory.ts in a Node of its own (it needs --expose-gc): memory per cache entry (heap and typed arrays). */
function dedupMemory(entries: number): { bytesPerEntry: number; stringKeyBytesPerEntry: number } {
  const script = fileURLToPath(new URL('./dedup-memory.ts', import.meta.url));
  const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', script, String(entries)], { encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').pop() as string) as { bytesPerEntry: number; stringKeyBytesPerEntry: number };
}

/**
 * Issue 16: publishing through an x-message-deduplication exchange whose cache is full
 * (1,000,000 entries: every publish inserts one and evicts the oldest) costs at most 1.5× a plain
 * fanout exchange. Same publisher, same messages (16 B, a unique integer x-deduplication-header
 * each), one bound queue capped by x-max-length so the queue costs the same in both; two
 * windows of each, alternating, each after the broker went idle; the rate is the publisher's (open loop: TCP holds it to what the broker takes). The cache's memory per
 * entry comes from a dedicated measurement (bench/dedup-memory.ts: the same DedupCache, heap and
 * typed arrays between full collections), as the broker's RSS moves with its garbage. Warren only: RabbitMQ
 * 3.10 has no such exchange without the community plugin.
 */
const dedup: Scenario = {
  name: 'dedup-1m',
  title: 'x-message-deduplication, full 1,000,000-entry cache, vs fanout: 1 publisher, 16 B, unique header each, 1 queue (x-max-length 10000)',
  metrics: [
    { key: 'dedupRate', label: 'publish via dedup exchange (cache full)', unit: 'msg/s', better: 'higher' },
    { key: 'fanoutRate', label: 'publish via fanout, same messages', unit: 'msg/s', better: 'higher' },
    { key: 'cost', label: 'dedup cost (fanout rate / dedup rate)', unit: '×', better: 'lower', targetAbsolute: 1.5 },
    { key: 'dedupUs', label: 'broker CPU per message via dedup', unit: 'µs', better: 'lower' },
    { key: 'fanoutUs', label: 'broker CPU per message via fanout', unit: 'µs', better: 'lower' },
    { key: 'cpuCost', label: 'dedup CPU cost (µs per message, dedup / fanout)', unit: '×', better: 'lower', targetAbsolute: 1.5 },
    { key: 'bytesPerEntry', label: 'cache memory per entry (integer header)', unit: 'B', better: 'lower' },
    { key: 'stringBytesPerEntry', label: 'cache memory per entry (36-char string header)', unit: 'B', better: 'lower' },
  ],
  runsOnRef: false,
  async round(t, o) {
    const dedupEx = 'bench-dedup';
    const fanoutEx = 'bench-dedup-fanout';
    const queue = 'bench-dedup-q';
    await t.ch.deleteExchange(dedupEx);
    await t.ch.assertExchange(dedupEx, 'x-message-deduplication', { durable: false, arguments: { 'x-cache-size': DEDUP_ENTRIES } });
    await t.ch.assertExchange(fanoutEx, 'fanout', { durable: false });
    await t.ch.deleteQueue(queue);
    await t.ch.assertQueue(queue, { durable: false, arguments: { 'x-max-length': 10000 } });
    await t.ch.bindQueue(queue, dedupEx, '');
    await t.ch.bindQueue(queue, fanoutEx, '');
    const problems: string[] = [];
    // Fill the cache: DEDUP_ENTRIES unique values.
    const [filler] = spawnWorkers([publishSpec(t, { exchange: dedupEx, fill: DEDUP_ENTRIES, confirmWindow: 1000, dedupHeaders: { offset: 0 } })]) as [WorkerHandle];
    try {
      await allReady([filler]);
      filler.send({ cmd: 'start' });
      await filler.until(() => filler.filled >= 0, 600000, 'the cache to fill');
    } catch (err) {
      problems.push(`fill: ${(err as Error).message}`);
    }
    await stopAll([filler]);
    problems.push(...workerProblems([filler]));
    // Measured: fanout, dedup (new values through the full cache), fanout, dedup — each after the
    // broker went idle, so neither kind pays for the garbage of the fill or of the other (a
    // major collection of a heap holding the cache lands in whichever window comes first).
    const windows: Record<'dedup' | 'fanout', WindowRun[]> = { dedup: [], fanout: [] };
    let offset = DEDUP_ENTRIES;
    for (const kind of ['fanout', 'dedup', 'fanout', 'dedup'] as const) {
      await brokerIdle(t.pid, 10000);
      const run = await windowRun(t, o, [publishSpec(t, { exchange: kind === 'dedup' ? dedupEx : fanoutEx, dedupHeaders: { offset } })], [], false);
      offset += run.publishers[0]?.result?.total ?? 0;
      windows[kind].push(run);
    }
    const rates = (runs: WindowRun[]) => runs.map((r) => rateOf(r.publishers[0]?.marks ?? []));
    const mean = (xs: number[]) => sum(xs) / xs.length;
    const dedupRate = mean(rates(windows.dedup));
    const fanoutRate = mean(rates(windows.fanout));
    // Broker CPU (% of one core) per message: µs, over both windows of a kind.
    const usPerMessage = (runs: WindowRun[]) => (mean(runs.map((r) => r.brokerCpu)) * 1e4) / mean(rates(runs));
    const dedupUs = usPerMessage(windows.dedup);
    const fanoutUs = usPerMessage(windows.fanout);
    const viaDedup = windows.dedup[0]!;
    const memory = dedupMemory(DEDUP_ENTRIES);
    await t.ch.deleteQueue(queue);
    await t.ch.deleteExchange(dedupEx);
    await t.ch.deleteExchange(fanoutEx);
    const run = { ...viaDedup, problems: [...problems, ...[...windows.dedup, ...windows.fanout].flatMap((r) => r.problems)] };
    return {
      ...outcome(run, {
        dedupRate, fanoutRate, cost: fanoutRate / dedupRate, dedupUs, fanoutUs, cpuCost: dedupUs / fanoutUs,
        bytesPerEntry: memory.bytesPerEntry, stringBytesPerEntry: memory.stringKeyBytesPerEntry,
      }),
      // Each rate over its own windows' broker CPU (the round's CPU columns are the first dedup window's).
      brokerUsPerMsg: { dedupRate: dedupUs, fanoutRate: fanoutUs },
    };
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
  title: 'time to listen: spawn → port accepting TCP (Warren: node dist/bundle/main.cjs, fresh data dir)',
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
  dedup,
  streamReplay,
  lgStream,
];

/** Opens the orchestrator's admin connection to a broker. */
export async function openAdmin(url: string): Promise<{ admin: ChannelModel; ch: Channel }> {
  const admin = await amqp.connect(url);
  admin.on('error', () => {});
  const ch = await admin.createChannel();
  ch.on('error', () => {});
  return { admin, ch };
}
