/**
 * Scale: one durable queue filled to `messages` persistent messages (confirmed publishes from
 * the load generator's client, bench/loadgen/client.ts: pre-encoded frames, one connection,
 * a window of unconfirmed publishes), nobody consuming. At `points` evenly spaced fill levels
 * (after every publish so far is confirmed) it reads the broker's RSS and the bytes its data
 * directory holds on disk, so that flat memory shows as a flat RSS column and disk use per
 * message as the slope of the disk column.
 */
import { encodeMethodFrame, METHODS } from '../../src/frame/generated/methods.js';
import { LoadClient } from '../loadgen/client.js';
import { benchBody, encodePublishRing } from '../loadgen/wire.js';
import { processAnonKiB, processRssKiB } from '../lib/proc.js';
import { diskBytes, log, sleep } from './common.js';

const DECLARE_OK = (METHODS['queue.declare-ok'].classId << 16) | METHODS['queue.declare-ok'].methodId;

export interface DeepPoint {
  messages: number;
  rssKiB: number;
  /** RSS without file-backed pages (LMDB maps its data file: those pages are in RSS too). */
  rssAnonKiB: number;
  diskBytes: number;
  /** Seconds since the fill started. */
  s: number;
}

export interface DeepResult {
  queue: string;
  size: number;
  points: DeepPoint[];
  /** Fill rate over the whole fill, confirmed msg/s (noisy on a shared machine). */
  rate: number;
  /** Disk bytes per message between the first and the last point. */
  diskPerMessage: number;
  /** RSS growth per message between the first and the last point (bytes). */
  rssPerMessage: number;
  problems: string[];
}

export async function deepQueue(url: string, pid: number, dataDir: string, o: { messages: number; size: number; points: number; window: number; capS: number }): Promise<DeepResult> {
  const queue = 'scale-deep';
  const problems: string[] = [];
  const c = await LoadClient.open({ url });
  try {
    await c.rpc(encodeMethodFrame(1, 'queue.declare', { queue, passive: false, durable: true, exclusive: false, autoDelete: false, noWait: false, arguments: {} }), DECLARE_OK);
    await c.confirmSelect(o.window);
    c.setRing(encodePublishRing(1, '', [queue], benchBody(o.size), { deliveryMode: 2 }, 2000), 64 * 1024);
    const sample = async (messages: number, s: number): Promise<DeepPoint> => {
      await sleep(500);
      return { messages, rssKiB: processRssKiB(pid), rssAnonKiB: processAnonKiB(pid), diskBytes: diskBytes(dataDir).allocated, s };
    };
    const points: DeepPoint[] = [await sample(0, 0)];
    const t0 = performance.now();
    for (let k = 1; k <= o.points; k++) {
      const target = Math.round((o.messages * k) / o.points);
      c.maxMessages = target;
      const reached = new Promise<void>((resolve) => { c.onLimit = resolve; });
      c.startPublishing();
      await Promise.race([reached, sleep(o.capS * 1000)]);
      c.stopPublishing();
      await c.settleAll(60000);
      if (c.failure) throw new Error(c.failure);
      if (c.nacked) problems.push(`${c.nacked} publishes nacked`);
      const p = await sample(c.confirmed, (performance.now() - t0) / 1000);
      points.push(p);
      log(`    ${p.messages} messages: RSS ${(p.rssKiB / 1024).toFixed(0)} MiB (anon ${(p.rssAnonKiB / 1024).toFixed(0)}), disk ${(p.diskBytes / 1048576).toFixed(0)} MiB, ${p.s.toFixed(0)} s`);
      if (c.confirmed < target) {
        problems.push(`fill stopped at ${c.confirmed} of ${o.messages} messages (cap ${o.capS} s per step)`);
        break;
      }
      if (performance.now() - t0 > o.capS * 1000 * 3) {
        problems.push(`fill stopped at ${c.confirmed} of ${o.messages} messages (total cap)`);
        break;
      }
    }
    const first = points[1] ?? points[0]!;
    const last = points[points.length - 1]!;
    const depth = last.messages - first.messages;
    const fillS = last.s;
    return {
      queue, size: o.size, points, rate: last.messages / fillS,
      diskPerMessage: depth > 0 ? (last.diskBytes - first.diskBytes) / depth : NaN,
      rssPerMessage: depth > 0 ? ((last.rssKiB - first.rssKiB) * 1024) / depth : NaN,
      problems,
    };
  } finally {
    await c.close().catch(() => {});
  }
}
