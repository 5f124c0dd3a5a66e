/**
 * Scale: one durable queue filled to `messages` persistent messages (confirmed publishes from
 * the load generator's client, bench/loadgen/client.ts: pre-encoded frames, one connection,
 * a window of unconfirmed publishes), nobody consuming. At `points` evenly spaced fill levels
 * (after every publish so far is confirmed) it reads the broker's RSS and the bytes its data
 * directory holds on disk, so that flat memory shows as a flat RSS column and disk use per
 * message as the slope of the disk column. Then it deletes the queue and reports how long
 * delete-ok took and, meanwhile, the slowest round trip (queue.declare, passive) of a second
 * connection: whether one client deleting a deep queue holds up the others.
 */
import { encodeMethodFrame, METHODS } from '../../src/frame/generated/methods.js';
import { LoadClient } from '../loadgen/client.js';
import { benchBody, encodePublishRing } from '../loadgen/wire.js';
import { processAnonKiB, processRssKiB } from '../lib/proc.js';
import { diskBytes, log, sleep } from './common.js';

const DECLARE_OK = (METHODS['queue.declare-ok'].classId << 16) | METHODS['queue.declare-ok'].methodId;
const DELETE_OK = (METHODS['queue.delete-ok'].classId << 16) | METHODS['queue.delete-ok'].methodId;

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
  /** queue.delete of the full queue: ms until delete-ok. */
  deleteOkMs: number;
  /** The slowest round trip of another connection from queue.delete until delete-ok and 2 s after (ms). */
  probeMaxMs: number;
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
      return { messages, rssKiB: processRssKiB(pid), rssAnonKiB: processAnonKiB(pid), diskBytes: diskBytes(dataDir).held, s };
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
    const deleted = await deleteWatched(url, c, queue);
    const first = points[1] ?? points[0]!;
    const last = points[points.length - 1]!;
    const depth = last.messages - first.messages;
    const fillS = last.s;
    return {
      queue, size: o.size, points, rate: last.messages / fillS,
      diskPerMessage: depth > 0 ? (last.diskBytes - first.diskBytes) / depth : NaN,
      rssPerMessage: depth > 0 ? ((last.rssKiB - first.rssKiB) * 1024) / depth : NaN,
      ...deleted,
      problems,
    };
  } finally {
    await c.close().catch(() => {});
  }
}

/**
 * Deletes the queue on c while a second connection makes round trips one after another (a
 * passive declare of its own queue): ms until delete-ok, and the slowest round trip from the
 * delete until 2 s after delete-ok (a broker that sweeps in the background must stay responsive).
 */
async function deleteWatched(url: string, c: LoadClient, queue: string): Promise<{ deleteOkMs: number; probeMaxMs: number }> {
  const probe = await LoadClient.open({ url });
  try {
    const probeQueue = 'scale-deep-probe';
    const declare = (passive: boolean): Buffer =>
      encodeMethodFrame(1, 'queue.declare', { queue: probeQueue, passive, durable: false, exclusive: false, autoDelete: false, noWait: false, arguments: {} });
    await probe.rpc(declare(false), DECLARE_OK);
    let probing = true;
    let probeMaxMs = 0;
    const probes = (async () => {
      while (probing) {
        const t = performance.now();
        await probe.rpc(declare(true), DECLARE_OK);
        probeMaxMs = Math.max(probeMaxMs, performance.now() - t);
      }
    })();
    const t0 = performance.now();
    await c.rpc(encodeMethodFrame(1, 'queue.delete', { queue, ifUnused: false, ifEmpty: false, noWait: false }), DELETE_OK);
    const deleteOkMs = performance.now() - t0;
    await sleep(2000);
    probing = false;
    await probes;
    log(`    queue.delete: delete-ok after ${deleteOkMs.toFixed(0)} ms; another connection's slowest round trip meanwhile ${probeMaxMs.toFixed(0)} ms`);
    return { deleteOkMs, probeMaxMs };
  } finally {
    await probe.close().catch(() => {});
  }
}
