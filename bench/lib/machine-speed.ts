/**
 * A probe of how fast this machine runs right now: SHA-256 over a fixed buffer for `ms`
 * milliseconds, in MB/s. A virtual machine's speed can change within minutes (its host's
 * load: on the 2-core VM of BENCHMARKS.md, `node -e 0` moved between 0.12 s and 0.20 s and this
 * probe between about 1,050 and 780 MB/s), which no CPU counter inside it shows. The bench runs
 * it before every round and says when the speed changed during a run.
 */
import { createHash } from 'node:crypto';

const BLOCK = Buffer.alloc(64 * 1024, 7);

export function machineSpeedMBps(ms = 50): number {
  const start = performance.now();
  let bytes = 0;
  let elapsed = 0;
  do {
    createHash('sha256').update(BLOCK).digest();
    bytes += BLOCK.length;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return bytes / 1e3 / elapsed;
}
