import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { rng as seededRng } from '../frame/helpers.js';
import { SmallDisk } from '../support/small-disk.js';
import { makeTmpDir, removeDir } from '../support/tmp-dir.js';
import { check, History, type CheckResult } from './checker.js';
import { ChaosBroker, findLibfaketime } from './faults.js';
import { Consumer, drain, drainDeadLetters, Publisher, type WorkerEvents, type WorkloadOptions } from './workload.js';

/**
 * One node, Jepsen-style: a workload of confirming publishers and acking consumers (and a quorum
 * queue whose every message is rejected and dead-lettered at least once into a queue of two
 * that refuses the rest, so that dead-letters are held, forwarded again every second and
 * recovered after crashes) runs while a fault schedule SIGKILLs and restarts the broker,
 * freezes it past the heartbeat timeout, steps its wall clock by an hour (libfaketime) and
 * fills its disk (a tmpfs of its own). Clients
 * reconnect after every fault. At the end the broker is crashed once more, restarted, and every
 * queue is drained, the dead-letter queue until nothing more is forwarded; checker.ts then
 * judges the whole history.
 */

export type FaultKind = 'kill' | 'pause' | 'clock' | 'disk';
export const FAULT_KINDS: FaultKind[] = ['kill', 'pause', 'clock', 'disk'];

export interface ChaosOptions {
  cycles: number;
  seed: number;
  /** Faults in this order, cycling; default: drawn at random (seeded) from FAULT_KINDS. */
  schedule?: FaultKind[];
  log: (line: string) => void;
  workload?: Partial<Omit<WorkloadOptions, 'url'>>;
}

export interface ChaosReport extends CheckResult {
  /** Faults that could not run here, and why (libfaketime missing, no tmpfs without root). */
  skipped: string[];
  faults: Record<FaultKind, number>;
  /** Connections lost during each kind of fault (kill and pause must drop them; clock and disk must not). */
  disconnects: Record<FaultKind, number>;
  drained: number;
}

const DISK_LIMIT = 16_000_000;
/** The broker's deadLetterRetryMs in the run. */
const DEAD_LETTER_RETRY_MS = 1000;
const DISK_SIZE_MIB = 96;
/** A fault must let the workload go on within this long after it ends. */
const RECOVERY_TIMEOUT_MS = 45_000;

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const { log } = opts;
  const rng = seededRng(opts.seed);
  const skipped: string[] = [];
  const lib = findLibfaketime();
  if (!lib) skipped.push('clock: libfaketime is not installed (Debian package faketime); wall-clock steps were not tried');
  const disk = SmallDisk.mount(DISK_SIZE_MIB);
  if (!disk) skipped.push('disk: cannot mount a tmpfs here (needs root); the disk was not filled');
  const scratch = makeTmpDir('warren-chaos-');
  const dataDir = disk ? join(disk.dir, 'data') : join(scratch, 'data');
  // Held dead-letters are forwarded again every second, not every 3 minutes.
  const config = join(scratch, 'config.json');
  writeFileSync(config, JSON.stringify({ deadLetterRetryMs: DEAD_LETTER_RETRY_MS }));
  const broker = new ChaosBroker(dataDir, ['--disk-free-limit', String(DISK_LIMIT), '--config', config], lib ? { lib, file: join(scratch, 'faketime') } : undefined);
  const available = FAULT_KINDS.filter((k) => (k !== 'clock' || lib) && (k !== 'disk' || disk));

  const history = new History();
  const faults = { kill: 0, pause: 0, clock: 0, disk: 0 };
  const disconnects = { kill: 0, pause: 0, clock: 0, disk: 0 };
  const violations: string[] = [];
  let current: FaultKind | undefined;
  let blockedNow = new Set<string>();
  const waiters: Array<() => void> = [];
  const changed = () => waiters.splice(0).forEach((w) => w());
  const events: WorkerEvents = {
    connected: () => changed(),
    disconnected: (worker, reason) => {
      if (current) disconnects[current]++;
      log(`  ${worker} disconnected${current ? ` during ${current}` : ''}: ${reason}`);
      blockedNow.delete(worker);
      changed();
    },
    blocked: (worker) => {
      blockedNow.add(worker);
      changed();
    },
    unblocked: (worker) => {
      blockedNow.delete(worker);
      changed();
    },
  };
  /** Waits (bounded) until pred holds; pred is checked on every worker event and every 100 ms. */
  const until = async (pred: () => boolean, ms: number): Promise<boolean> => {
    const deadline = performance.now() + ms;
    while (!pred()) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 100));
        waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  };

  let publishers: Publisher[] = [];
  let consumers: Consumer[] = [];
  try {
    await broker.start();
    const w: WorkloadOptions = {
      url: broker.url,
      // A quorum queue whose publisher sends transient messages: it must keep them all. Another
      // dead-letters everything at least once into a small queue that refuses what is over.
      queues: ['chaos-0', 'chaos-1', 'chaos-qq', 'chaos-alo'],
      quorum: ['chaos-qq', 'chaos-alo'],
      deadLetters: { source: 'chaos-alo', target: 'chaos-alo-dead', targetMaxLength: 2 },
      publishers: 4,
      consumersPerQueue: 2,
      heartbeat: 1,
      window: 32,
      rate: 150,
      prefetch: 16,
      bodySize: 200,
      ...opts.workload,
    };
    publishers = Array.from({ length: w.publishers }, (_, i) => new Publisher(i + 1, w.queues[i % w.queues.length]!, w, history, events));
    const dl = w.deadLetters;
    const consumed = dl ? [...w.queues.filter((q) => q !== dl.source), dl.target] : w.queues;
    consumers = consumed.flatMap((q, qi) =>
      Array.from({ length: w.consumersPerQueue }, (_, ci) => new Consumer(`consumer-${qi}.${ci}`, q, w, history, events)));
    if (dl) consumers.push(new Consumer('rejecter', dl.source, w, history, events, true));
    const workers = [...publishers, ...consumers];
    for (const worker of workers) worker.start();
    const allConnected = () => workers.every((x) => x.connected);
    if (!(await until(allConnected, 30_000))) throw new Error('the workload did not connect');

    for (let cycle = 1; cycle <= opts.cycles; cycle++) {
      const kind = opts.schedule ? opts.schedule[(cycle - 1) % opts.schedule.length]! : available[Math.floor(rng() * available.length)]!;
      if (!available.includes(kind)) continue;
      const started = performance.now();
      const before = publishers.map((p) => p.confirms);
      current = kind;
      faults[kind]++;
      let detail: string;
      switch (kind) {
        case 'kill': {
          await broker.kill();
          await sleep(100 + rng() * 400);
          await broker.start();
          detail = 'SIGKILL, restart';
          break;
        }
        case 'pause': {
          broker.freeze();
          // Frozen past the heartbeat: every client gives up on its connection.
          const noticed = await until(() => workers.every((x) => !x.connected), 20_000);
          await sleep(rng() * 500);
          broker.thaw();
          detail = `SIGSTOP until ${noticed ? 'every client noticed' : '20 s passed'}, SIGCONT`;
          break;
        }
        case 'clock': {
          const step = rng() < 0.5 ? 3600 : -3600;
          broker.stepClock(step);
          // Several heartbeat checks run on the stepped clock (libfaketime rereads within 1 s).
          await sleep(3000);
          broker.stepClock(0);
          await sleep(1500);
          detail = `wall clock ${step > 0 ? '+' : '−'}1 h for 3 s, then back`;
          break;
        }
        case 'disk': {
          // Below disk_free_limit (the alarm blocks first), to the last byte (commits fail too),
          // or to the last byte and then a crash while the store cannot write.
          const variant = (['alarm', 'full', 'full, then SIGKILL'] as const)[Math.floor(rng() * 3)]!;
          blockedNow = new Set();
          disk!.fill(variant === 'alarm' ? DISK_LIMIT / 2 : 0);
          const wasBlocked = await until(() => blockedNow.size > 0, 20_000);
          if (!wasBlocked) violations.push(`liveness: cycle ${cycle}: the disk was filled but no connection was blocked`);
          await sleep(500 + rng() * 1000);
          if (variant === 'full, then SIGKILL') {
            current = 'kill'; // connections lost now are the crash's, not the alarm's
            await broker.kill();
            disk!.free();
            await broker.start();
          } else disk!.free();
          // rabbit_disk_monitor checks every 10 s while the alarm is on.
          const cleared = await until(() => blockedNow.size === 0, 30_000);
          if (!cleared) violations.push(`liveness: cycle ${cycle}: space returned but ${[...blockedNow].join(', ')} stayed blocked`);
          detail = `filled (${variant}), ${wasBlocked ? 'blocked' : 'NOT blocked'}, freed, ${cleared ? 'unblocked' : 'NOT unblocked'}`;
          break;
        }
      }
      current = undefined;
      // Clients reconnect and publishing goes on: every publisher gets new confirms.
      const progressed = await until(() => allConnected() && publishers.every((p, i) => p.confirms >= before[i]! + 10), RECOVERY_TIMEOUT_MS);
      if (!progressed) violations.push(`liveness: cycle ${cycle} (${kind}): publishers made no progress within ${RECOVERY_TIMEOUT_MS / 1000} s`);
      log(`cycle ${cycle}/${opts.cycles}: ${kind}: ${detail}; ${progressed ? 'recovered' : 'NO PROGRESS'} in ${((performance.now() - started) / 1000).toFixed(1)} s; ${history.confirmed.size} confirmed, ${history.deliveries.length} delivered`);
    }

    // Consumers stop first, so messages are left queued; they must survive a crash too.
    for (const c of consumers) await c.stop();
    const queuedFrom = publishers.map((p) => p.confirms);
    await until(() => publishers.every((p, i) => p.confirms >= queuedFrom[i]! + 20), RECOVERY_TIMEOUT_MS);
    for (const p of publishers) await p.stop();
    await broker.kill();
    await broker.start();
    let drained = await drain(broker.url, dl ? [...w.queues, dl.target] : w.queues, history, dl?.target);
    // What the source still holds comes out as it is forwarded again.
    if (dl) drained += await drainDeadLetters(broker.url, dl.target, history, 3 * DEAD_LETTER_RETRY_MS);
    log(`drained ${drained} message(s) after a final crash and restart`);
    const result = check(history);
    for (const kind of ['clock', 'disk'] as const) {
      if (disconnects[kind] > 0) violations.push(`liveness: ${disconnects[kind]} connection(s) lost during ${kind} faults (heartbeats must survive clock steps and alarms)`);
    }
    return { ...result, violations: [...result.violations, ...violations], skipped, faults, disconnects, drained };
  } finally {
    await Promise.all([...publishers, ...consumers].map((x) => x.stop().catch(() => undefined)));
    await broker.stop().catch(() => undefined);
    disk?.unmount();
    removeDir(scratch);
  }
}
