import { execFileSync } from 'node:child_process';
import { closeSync, openSync, rmSync, rmdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { statfsFreeSpace } from '../../src/disk-monitor.js';
import { makeTmpDir } from './tmp-dir.js';

/**
 * A small file system of its own (a tmpfs mount), so a test can fill a disk for real and free
 * it again without touching the machine's disks. Needs root (CAP_SYS_ADMIN), as CI has;
 * `mount()` returns undefined where mounting is not allowed.
 */
export class SmallDisk {
  private constructor(readonly dir: string) {}

  static mount(sizeMiB: number): SmallDisk | undefined {
    if (process.platform !== 'linux') return undefined;
    const dir = makeTmpDir('warren-small-disk-');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'ignore' });
    } catch {
      rmdirSync(dir);
      return undefined;
    }
    return new SmallDisk(dir);
  }

  private get ballast(): string {
    return join(this.dir, 'ballast');
  }

  /** Writes a ballast file until the file system is full (ENOSPC), leaving leaveBytes free if asked. */
  fill(leaveBytes = 0): void {
    const fd = openSync(this.ballast, 'a');
    try {
      const chunk = Buffer.alloc(64 * 1024, 0x55);
      for (;;) {
        const st = statfsFreeSpace(this.dir);
        if (st <= leaveBytes) break;
        const n = Math.min(chunk.length, st - leaveBytes);
        try {
          writeSync(fd, chunk, 0, n);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Removes the ballast: the space is back. */
  free(): void {
    rmSync(this.ballast, { force: true });
  }

  unmount(): void {
    try {
      execFileSync('umount', ['-l', this.dir], { stdio: 'ignore' });
      rmdirSync(this.dir);
    } catch {
      /* already gone */
    }
  }
}
