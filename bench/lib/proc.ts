/**
 * Reading a process's CPU time and memory from /proc (Linux only).
 *
 * CPU: fields 14 (utime) and 15 (stime) of /proc/PID/stat, in clock ticks (USER_HZ, 100 on
 * Linux), covering every thread of the process (GC, libuv pool, LMDB, Erlang schedulers).
 * Memory: VmRSS of /proc/PID/status, in KiB; RssAnon, its anonymous part (heap, stacks, malloc:
 * not the file-backed pages of an mmap such as LMDB's, which the kernel can drop at will).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime. It is 100 on every Linux ABI Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process in milliseconds, or NaN when it cannot be read. */
export function processCpuMs(pid: number): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** utime + stime of each thread of a process in milliseconds, by thread id (the main thread's is the pid). */
export function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    const ms = statCpuMs(`/proc/${pid}/task/${tid}/stat`);
    if (!Number.isNaN(ms)) out.set(Number(tid), ms);
  }
  return out;
}

/** utime + stime of a stat file (a process's or a thread's) in milliseconds, or NaN when it cannot be read. */
function statCpuMs(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, 'latin1');
  } catch {
    return NaN;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state), so field N is rest[N - 3].
  const utime = Number(rest[14 - 3]);
  const stime = Number(rest[15 - 3]);
  return ((utime + stime) * 1000) / CLOCK_TICKS_PER_SECOND;
}

/** A `kB` field of /proc/PID/status in KiB, or NaN when it cannot be read. */
function statusKiB(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** VmRSS of a process in KiB, or NaN when it cannot be read. */
export function processRssKiB(pid: number): number {
  return statusKiB(pid, 'VmRSS');
}

/**
 * RssAnon of a process in KiB (resident anonymous memory: what the process itself holds, without
 * file-backed mappings such as LMDB's data file), or NaN when it cannot be read.
 */
export function processAnonKiB(pid: number): number {
  return statusKiB(pid, 'RssAnon');
}

/** True when a process with that pid exists. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Busy CPU time of the whole machine (all cores) in ms, from the first line of /proc/stat. */
export function systemBusyMs(): number {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0] as string;
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal
    const busy = (f[0] ?? 0) + (f[1] ?? 0) + (f[2] ?? 0) + (f[5] ?? 0) + (f[6] ?? 0) + (f[7] ?? 0);
    return (busy * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/**
 * Waits (at most maxMs) until the machine has been nearly idle for a while: busy below
 * `threshold` % of one core over a 300 ms window. Returns the last busy % seen.
 */
export async function awaitQuiet(maxMs: number, threshold = 15): Promise<number> {
  const deadline = Date.now() + maxMs;
  let busy = NaN;
  for (;;) {
    const a = systemBusyMs();
    const t0 = Date.now();
    await new Promise((r) => setTimeout(r, 300));
    busy = ((systemBusyMs() - a) * 100) / (Date.now() - t0);
    if (!(busy >= threshold) || Date.now() >= deadline) return busy;
  }
}
