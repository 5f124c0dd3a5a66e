/**
 * Streams (issue 15): publish into a stream with confirms, then 10 consumers (2 processes × 5)
 * replay it from `first`, acking every 100 (prefetch 1000: acks only return credit). Reports the
 * confirmed publish rate and the replay rate over all consumers, each with the broker's CPU per
 * message measured over its own phase, and the broker's memory. Memory is its anonymous resident
 * memory (RssAnon): RSS also counts LMDB's file-backed mmap pages, which grow with the stream
 * whatever the broker holds, and which the kernel drops when it needs the memory. To show that
 * memory stays flat as the stream grows, it is sampled through the fill: the growth over the fill's
 * second half is beside the growth over the whole fill (which includes the warm-up of the first
 * half: JIT, buffers, the store's caches). lg-stream is the same confirmed fill from the load
 * generator's client (not the bottleneck), without the replay.
 */
import { performance } from 'node:perf_hooks';
import { processAnonKiB, processCpuMs, processRssKiB, systemBusyMs } from './lib/proc.js';
import type { ConsumeSpec, Engine, PublishSpec } from './lib/protocol.js';
import { allReady, stopAll, WorkerHandle, workerProblems } from './lib/workers.js';
import type { BenchOptions, RoundOutcome, Scenario, Target } from './scenarios.js';

const QUEUE = 'bench-stream';
const CONSUMER_PROCESSES = 2;
const CONSUMERS_PER_PROCESS = 5;

let seq = 0;
const worker = (spec: PublishSpec | ConsumeSpec) => new WorkerHandle(spec, `${spec.role}#stream${++seq}`);

/** What a confirmed fill of the stream measured. */
interface Fill {
  publishRate: number;
  publishUs: number;
  anon0: number;
  anon1: number;
  /** Anonymous memory near the middle of the fill (KiB), if sampled. */
  anonMid: number | undefined;
  rssGrowthKiB: number;
}

/**
 * Declares the stream afresh and fills it with o.fill confirmed 16 B messages from one
 * connection (window 1000) of the given client, sampling the broker's anonymous memory.
 */
async function fillStream(t: Target, o: BenchOptions, engine: Engine, problems: string[], count = o.fill): Promise<Fill> {
  await t.ch.deleteQueue(QUEUE);
  await t.ch.assertQueue(QUEUE, { durable: true, arguments: { 'x-queue-type': 'stream' } });
  const rss0 = processRssKiB(t.pid);
  const anon0 = processAnonKiB(t.pid);
  const filler = worker({
    role: 'publish', engine, url: t.url, exchange: '', routingKey: QUEUE, size: 16, persistent: true, confirmWindow: 1000,
    rate: 0, timestamp: false, aheadLimit: 0, deliveriesPerMessage: 1, maxMessages: count, fill: count, brokerPid: t.pid,
  });
  let publishRate = NaN;
  let publishUs = NaN;
  /** Anonymous memory through the fill: [ms since its start, KiB]. */
  const anonSamples: Array<[number, number]> = [];
  let sampler: NodeJS.Timeout | undefined;
  let fillMs = NaN;
  try {
    await allReady([filler]);
    const start = performance.now();
    const c0 = processCpuMs(t.pid);
    sampler = setInterval(() => anonSamples.push([performance.now() - start, processAnonKiB(t.pid)]), 100);
    filler.send({ cmd: 'start' });
    await filler.until(() => filler.filled >= 0, 600000, 'the stream to fill');
    fillMs = performance.now() - start;
    publishRate = (filler.filled * 1000) / fillMs;
    publishUs = ((processCpuMs(t.pid) - c0) * 1000) / filler.filled;
  } catch (err) {
    problems.push(`fill: ${(err as Error).message}`);
  }
  clearInterval(sampler);
  await stopAll([filler]);
  problems.push(...workerProblems([filler]));
  if (filler.result && filler.result.total > 0 && filler.result.confirmed !== undefined && filler.result.confirmed !== filler.result.total) {
    problems.push(`${filler.name}: ${filler.result.confirmed} of ${filler.result.total} publishes confirmed`);
  }
  // The sample nearest the middle of the fill (messages go in at a steady rate).
  const mid = anonSamples.reduce<[number, number] | undefined>((best, s) => (best === undefined || Math.abs(s[0] - fillMs / 2) < Math.abs(best[0] - fillMs / 2) ? s : best), undefined);
  return { publishRate, publishUs, anon0, anon1: processAnonKiB(t.pid), anonMid: mid?.[1], rssGrowthKiB: processRssKiB(t.pid) - rss0 };
}

/**
 * Before the first round, unmeasured: the fill (a tenth of one for lg-stream), then for
 * stream-replay the consumers' replay of it and the stream deleted, as a round does them, and one
 * more fill and deletion. Round 1 then measures a warm broker, as the window scenarios' warm-up
 * has them do:
 * - a Warren started for the scenario compiles its publish path during its first fill, and a
 *   tenth of a fill is too few commits for V8 to compile the store's commit path (430–460 ms of
 *   compiler threads in the next fill in the eighteenth session's traces: 1.4 µs a message);
 * - its first replay changes the shapes of objects the publish path uses, so the fill after it
 *   compiles parts of that path again (170–190 ms in the same traces);
 * - its first queue deletion makes fields V8 compiled as constants mutable (Queue.deleted, the
 *   store's queue key), which throws the commit path's compiled code away once per process: the
 *   fill after it compiles that again (V8's worker threads 0.9 µs a message more in round 1 than
 *   in later rounds, in the nineteenth session's per-thread split), so the warm-up fills once more.
 */
async function warmUp(t: Target, o: BenchOptions, engine: Engine, replay: boolean): Promise<void> {
  const problems: string[] = [];
  const count = replay ? o.fill : Math.max(1000, Math.round(o.fill / 10));
  await fillStream(t, o, engine, problems, count);
  if (replay && problems.length === 0) {
    await replayStream(t, count, problems);
    if (problems.length === 0) await fillStream(t, o, engine, problems, count);
  }
  await t.ch.deleteQueue(QUEUE);
  if (problems.length > 0) throw new Error(`stream warm-up: ${problems.join('; ')}`);
}

/** What a replay of `count` messages by every consumer measured. */
interface Replay {
  rate: number;
  us: number;
  brokerCpu: number;
  clientCpu: number;
  clientCpuMax: number;
  otherCpu: number;
  anon: number;
}

/**
 * The consumers (CONSUMER_PROCESSES × CONSUMERS_PER_PROCESS) replay the stream's `count`
 * messages from first: the rate over all of them, and the broker's CPU per delivery.
 */
async function replayStream(t: Target, count: number, problems: string[]): Promise<Replay> {
  const expect = count * CONSUMERS_PER_PROCESS;
  const consumers = Array.from({ length: CONSUMER_PROCESSES }, () => worker({
    role: 'consume', url: t.url, queues: Array<string>(CONSUMERS_PER_PROCESS).fill(QUEUE), noAck: false, ackEvery: 100,
    prefetch: 1000, expect, latency: false, progress: false, brokerPid: t.pid, arguments: { 'x-stream-offset': 'first' },
  }));
  const b0 = processCpuMs(t.pid);
  const s0 = systemBusyMs();
  const t0 = performance.now();
  try {
    await allReady(consumers);
    await Promise.all(consumers.map((c) => c.until(() => c.marks.length >= 3, 600000, `${expect} deliveries`)));
  } catch (err) {
    problems.push((err as Error).message);
  }
  const elapsed = performance.now() - t0;
  const brokerMs = processCpuMs(t.pid) - b0;
  const us = (brokerMs * 1000) / (expect * CONSUMER_PROCESSES);
  const brokerCpu = (brokerMs * 100) / elapsed;
  const systemCpu = ((systemBusyMs() - s0) * 100) / elapsed;
  const anon = processAnonKiB(t.pid);
  await stopAll(consumers);
  problems.push(...workerProblems(consumers));
  // Each consumer process marks at subscription, at 5 % and at all of its deliveries.
  const rate = consumers.reduce((sum, c) => {
    const [, b, e] = c.marks;
    return sum + (b && e && e.t > b.t ? ((e.count - b.count) * 1000) / (e.t - b.t) : NaN);
  }, 0);
  const clientCpus = consumers.map((c) => {
    const [a, , e] = c.marks;
    return a && e && e.t > a.t ? ((e.cpuMs - a.cpuMs) * 100) / (e.t - a.t) : NaN;
  });
  const clientCpu = clientCpus.reduce((a, b) => a + b, 0);
  return { rate, us, brokerCpu, clientCpu, clientCpuMax: Math.max(...clientCpus), otherCpu: Math.max(0, systemCpu - brokerCpu - clientCpu), anon };
}

const fillMetrics = (prefix: string): Scenario['metrics'] => [
  { key: 'anonFillMiB', label: `${prefix}broker anonymous memory growth over the fill`, unit: 'MiB', better: 'lower' },
  { key: 'anonHalfMiB', label: `${prefix}broker anonymous memory growth over the fill's second half`, unit: 'MiB', better: 'lower' },
];

function fillFigures(f: Fill): Record<string, number> {
  return {
    anonFillMiB: (f.anon1 - f.anon0) / 1024,
    anonHalfMiB: f.anonMid === undefined ? NaN : (f.anon1 - f.anonMid) / 1024,
  };
}

/**
 * The same confirmed fill with the load generator's client (bench/loadgen), which is not the
 * bottleneck: the stream's confirmed publish rate as the broker allows it (issue 19's method).
 */
export const lgStream: Scenario = {
  name: 'lg-stream',
  title: 'load generator: confirmed publish into a stream (16 B, 1 connection, window 1000); broker memory',
  metrics: [
    { key: 'publish', label: 'lg stream confirmed publish', unit: 'msg/s', better: 'higher', targetRatio: 2 },
    ...fillMetrics('lg stream: '),
  ],
  runsOnRef: true,
  setupTarget: (t, o) => warmUp(t, o, 'loadgen', false),
  async round(t: Target, o: BenchOptions): Promise<RoundOutcome> {
    const problems: string[] = [];
    const b0 = processCpuMs(t.pid);
    const s0 = systemBusyMs();
    const t0 = performance.now();
    const f = await fillStream(t, o, 'loadgen', problems);
    const elapsed = performance.now() - t0;
    const brokerCpu = ((processCpuMs(t.pid) - b0) * 100) / elapsed;
    const systemCpu = ((systemBusyMs() - s0) * 100) / elapsed;
    await t.ch.deleteQueue(QUEUE);
    return {
      metrics: { publish: f.publishRate, ...fillFigures(f) },
      brokerUsPerMsg: { publish: f.publishUs },
      brokerCpu,
      clientCpu: NaN,
      clientCpuMax: NaN,
      otherCpu: Math.max(0, systemCpu - brokerCpu),
      problems,
    };
  },
};

export const streamReplay: Scenario = {
  name: 'stream-replay',
  title: `stream: confirmed publish (16 B, window 1000), then ${CONSUMER_PROCESSES * CONSUMERS_PER_PROCESS} consumers replay from first (prefetch 1000, ack every 100); broker memory`,
  metrics: [
    { key: 'publish', label: 'stream confirmed publish', unit: 'msg/s', better: 'higher', targetRatio: 2 },
    { key: 'replay', label: 'stream replay, 10 consumers', unit: 'deliveries/s', better: 'higher', targetRatio: 2 },
    ...fillMetrics(''),
    { key: 'anonReplayMiB', label: 'broker anonymous memory growth over fill + replay', unit: 'MiB', better: 'lower' },
    { key: 'rssFillMiB', label: 'broker RSS growth over the fill (with LMDB\'s file pages)', unit: 'MiB', better: 'lower' },
  ],
  runsOnRef: true,
  setupTarget: (t, o) => warmUp(t, o, 'amqplib', true),
  async round(t: Target, o: BenchOptions): Promise<RoundOutcome> {
    const problems: string[] = [];
    const fill = await fillStream(t, o, 'amqplib', problems);
    const replay = await replayStream(t, o.fill, problems);
    await t.ch.deleteQueue(QUEUE);
    return {
      metrics: {
        publish: fill.publishRate,
        replay: replay.rate,
        ...fillFigures(fill),
        anonReplayMiB: (replay.anon - fill.anon0) / 1024,
        rssFillMiB: fill.rssGrowthKiB / 1024,
      },
      // Each over its own phase (the round's broker CPU is the replay's).
      brokerUsPerMsg: { publish: fill.publishUs, replay: replay.us },
      brokerCpu: replay.brokerCpu,
      clientCpu: replay.clientCpu,
      clientCpuMax: replay.clientCpuMax,
      otherCpu: replay.otherCpu,
      problems,
    };
  },
};
