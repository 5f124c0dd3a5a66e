/**
 * Latency at 50 % of the saturation rate: the amqplib `e2e` scenario of bench/scenarios.ts
 * (1 publisher → queue → 1 consumer acking each, prefetch 1000) measures the saturation rate of
 * this broker on this machine, then the `latency` scenario (publisher paced, a CLOCK_MONOTONIC
 * timestamp in every body, p50 / p99 of publish → delivery at the consumer) runs at `fraction`
 * of it. Each broker is paced at half of its own saturation rate; `atRate` adds a run at a given
 * rate (the reference's half-saturation rate), so both brokers are also seen at the same load.
 */
import { median } from '../lib/stats.js';
import { openAdmin, SCENARIOS, type BenchOptions, type Target } from '../scenarios.js';
import { log } from './common.js';

export interface LatencyResult {
  saturation: number;
  rate: number;
  p50: number;
  p99: number;
  /** p50 / p99 when paced at `atRate` (if given). */
  atRate?: { rate: number; p50: number; p99: number };
  problems: string[];
}

const scenario = (name: string) => {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s) throw new Error(`no scenario ${name}`);
  return s;
};

export async function latencyAtHalf(kind: 'warren' | 'ref', url: string, pid: number, o: { rounds: number; fraction: number; atRate?: number }): Promise<LatencyResult> {
  const { admin, ch } = await openAdmin(url);
  const t: Target = { kind, url, pid, admin, ch, listenMs: NaN, givenListenMs: NaN };
  const bench: BenchOptions = { warmup: 1, duration: 3, fill: 0, connections: 0, latencyRate: 0, listenRuns: 0 };
  const problems: string[] = [];
  try {
    const sat: number[] = [];
    for (let r = 0; r < o.rounds; r++) {
      const out = await scenario('e2e').round(t, bench);
      problems.push(...out.problems);
      sat.push(out.metrics['rate'] ?? NaN);
      log(`    ${kind} e2e saturation round ${r + 1}: ${Math.round(out.metrics['rate'] ?? NaN)} msg/s`);
    }
    const saturation = median(sat);
    const paced = async (rate: number) => {
      const p50: number[] = [];
      const p99: number[] = [];
      const got: number[] = [];
      for (let r = 0; r < o.rounds; r++) {
        const out = await scenario('latency').round(t, { ...bench, latencyRate: Math.round(rate) });
        problems.push(...out.problems);
        p50.push(out.metrics['p50'] ?? NaN);
        p99.push(out.metrics['p99'] ?? NaN);
        got.push(out.metrics['rate'] ?? NaN);
        log(`    ${kind} latency at ${Math.round(rate)} msg/s, round ${r + 1}: p50 ${out.metrics['p50']?.toFixed(2)} ms, p99 ${out.metrics['p99']?.toFixed(2)} ms (ran at ${Math.round(out.metrics['rate'] ?? NaN)} msg/s)`);
      }
      return { rate: median(got), p50: median(p50), p99: median(p99) };
    };
    const half = await paced(saturation * o.fraction);
    const atRate = o.atRate !== undefined && Number.isFinite(o.atRate) ? await paced(o.atRate) : undefined;
    return { saturation, ...half, ...(atRate ? { atRate } : {}), problems };
  } finally {
    await admin.close().catch(() => {});
  }
}
