/**
 * Streams (issue 15): publish into a stream with confirms, then 10 consumers (2 processes × 5)
 * replay it from `first`, acking every 100 (prefetch 1000: acks only return credit). Reports the
 * confirmed publish rate, the replay rate over all consumers, and the broker's RSS before the
 * fill, after it and after the replay, so that memory staying flat as the stream grows shows.
 */
import { performance } from 'node:perf_hooks';
import { processCpuMs, processRssKiB, systemBusyMs } from './lib/proc.js';
import type { ConsumeSpec, PublishSpec } from './lib/protocol.js';
import { allReady, stopAll, WorkerHandle } from './lib/workers.js';
import type { BenchOptions, RoundOutcome, Scenario, Target } from './scenarios.js';

const QUEUE = 'bench-stream';
const CONSUMER_PROCESSES = 2;
const CONSUMERS_PER_PROCESS = 5;

let seq = 0;
const worker = (spec: PublishSpec | ConsumeSpec) => new WorkerHandle(spec, `${spec.role}#stream${++seq}`);

export const streamReplay: Scenario = {
  name: 'stream-replay',
  title: `stream: confirmed publish (16 B, window 1000), then ${CONSUMER_PROCESSES * CONSUMERS_PER_PROCESS} consumers replay from first (prefetch 1000, ack every 100); broker RSS`,
  metrics: [
    { key: 'publish', label: 'stream confirmed publish', unit: 'msg/s', better: 'higher', targetRatio: 2 },
    { key: 'replay', label: 'stream replay, 10 consumers', unit: 'deliveries/s', better: 'higher', targetRatio: 2 },
    { key: 'rssFillMiB', label: 'broker RSS growth over the fill', unit: 'MiB', better: 'lower' },
    { key: 'rssReplayMiB', label: 'broker RSS growth over fill + replay', unit: 'MiB', better: 'lower' },
  ],
  runsOnRef: true,
  async round(t: Target, o: BenchOptions): Promise<RoundOutcome> {
    const problems: string[] = [];
    await t.ch.deleteQueue(QUEUE);
    await t.ch.assertQueue(QUEUE, { durable: true, arguments: { 'x-queue-type': 'stream' } });
    const rss0 = processRssKiB(t.pid);
    const filler = worker({
      role: 'publish', url: t.url, exchange: '', routingKey: QUEUE, size: 16, persistent: true, confirmWindow: 1000,
      rate: 0, timestamp: false, aheadLimit: 0, deliveriesPerMessage: 1, maxMessages: o.fill, fill: o.fill, brokerPid: t.pid,
    });
    let publishRate = NaN;
    try {
      await allReady([filler]);
      const start = performance.now();
      filler.send({ cmd: 'start' });
      await filler.until(() => filler.filled >= 0, 600000, 'the stream to fill');
      publishRate = (filler.filled * 1000) / (performance.now() - start);
    } catch (err) {
      problems.push(`fill: ${(err as Error).message}`);
    }
    await stopAll([filler]);
    const rss1 = processRssKiB(t.pid);
    const expect = o.fill * CONSUMERS_PER_PROCESS;
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
    const brokerCpu = ((processCpuMs(t.pid) - b0) * 100) / elapsed;
    const systemCpu = ((systemBusyMs() - s0) * 100) / elapsed;
    const rss2 = processRssKiB(t.pid);
    await stopAll(consumers);
    for (const w of [filler, ...consumers]) {
      if (w.error) problems.push(w.error);
      for (const e of w.result?.errors ?? []) problems.push(`${w.name}: ${e}`);
    }
    await t.ch.deleteQueue(QUEUE);
    // Each consumer process marks at subscription, at 5 % and at all of its deliveries.
    const replay = consumers.reduce((sum, c) => {
      const [, b, e] = c.marks;
      return sum + (b && e && e.t > b.t ? ((e.count - b.count) * 1000) / (e.t - b.t) : NaN);
    }, 0);
    const clientCpus = consumers.map((c) => {
      const [a, , e] = c.marks;
      return a && e && e.t > a.t ? ((e.cpuMs - a.cpuMs) * 100) / (e.t - a.t) : NaN;
    });
    const clientCpu = clientCpus.reduce((a, b) => a + b, 0);
    return {
      metrics: { publish: publishRate, replay, rssFillMiB: (rss1 - rss0) / 1024, rssReplayMiB: (rss2 - rss0) / 1024 },
      brokerCpu,
      clientCpu,
      clientCpuMax: Math.max(...clientCpus),
      otherCpu: Math.max(0, systemCpu - brokerCpu - clientCpu),
      problems,
    };
  },
};
