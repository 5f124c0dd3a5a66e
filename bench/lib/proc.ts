/**
 * Reading a process's CPU time and memory from /proc (Linux only).
 *
 * CPU: fields 14 (utime) and 15 (stime) of /proc/PID/stat, in clock ticks (USER_HZ, 100 on
 * Linux), covering every thread of the process (GC, libuv pool, LMDB, Erlang schedulers).
 * Memory: VmRSS of /proc/PID/status, in KiB.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: the unit of utime/stime. It is 100 on every Linux ABI Node runs on. */
export const CLOCK_TICKS_PER_SECOND = 100;

/** utime + stime of a process in milliseconds, or NaN when it cannot be read. */
export function processCpuMs(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
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

/** VmRSS of a process in KiB, or NaN when it cannot be read. */
export function processRssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
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
