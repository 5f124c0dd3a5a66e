/**
 * Space kept allocated past the end of LMDB's data file, so that a disk filling up fails a
 * commit here, before LMDB writes anything, instead of inside LMDB.
 *
 * Why: LMDB (lmdb-js 3.5.6, the newest) survives a write that fails at commit, but not one that
 * fails while a commit spills dirty pages (mdb_page_spill, which mdb_freelist_save can reach):
 * that error path corrupts the heap and the process aborts ("mdb_page_spill error 28", then
 * glibc's "corrupted size vs. prev_size"). The file keeps its last commit, so nothing confirmed
 * is lost, but a full disk must not take the broker down.
 *
 * How: the blocks from the start of the file to `bytes` past its end are allocated with
 * fallocate(1) --keep-size: the file's size does not change, and LMDB's later writes land in
 * blocks that exist, so they cannot fail for space (filling any hole LMDB left in the file too).
 * Node has no fallocate, so a small shell loop runs it, one process for the store's life: a
 * renewal costs a line on a pipe, not a fork of the broker. Every commit is admitted first
 * (CommitEngine.write) with a high estimate of what it may add to the file (growth()); what is
 * left of the reserve is measured (fstat: the blocks allocated less the file's size, less what
 * commits in flight may still take) only once the running estimate says it is below half,
 * and renewed then. A commit the reserve cannot cover goes to LMDB only if the file system has
 * room for it anyway (statfs); otherwise it fails as ENOSPC does, before LMDB sees it, and the
 * store's usual path takes over (confirms nacked, publishers blocked, CommitEngine.retry once
 * the disk has room, which renews the reserve first).
 *
 * Where fallocate is missing or not supported (not Linux, a file system without it), there is
 * no reserve and commits go to LMDB as before; that is logged once.
 */

import { spawn, type ChildProcessByStdio } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { statfsFreeSpace } from '../../disk-monitor.js';

const MiB = 1 << 20;
/** What the reserve is renewed to (past the file's end) by default (LmdbStoreOptions.reserveBytes). */
export const RESERVE_BYTES = 64 * MiB;
/** Pages a commit touches besides its records' bytes (branch pages of each database, the free list, meta). */
const PAGES_PER_COMMIT = 64 * 1024;
/** Left over, at least, after an admitted commit's estimate. */
const MARGIN = 1 * MiB;
/** The smallest renewal tried when a larger one finds no room. */
const SMALLEST_RENEWAL = 4 * MiB;

/** After a renewal found no room, commits do not ask for another for this long. */
const RENEW_AFTER_FULL_MS = 1000;

/** What one fallocate run found. */
type Allocated = 'ok' | 'full' | 'unsupported';

/** The reply lines of the helper: fallocate's own message, then "= <exit status>". */
const HELPER_SCRIPT = 'while read -r len; do fallocate --keep-size --offset 0 --length "$len" -- "$0" 2>&1; echo "= $?"; done';

export class SpaceReserve {
  /** 'starting' until the first renewal answered; 'off' where fallocate cannot be used. */
  private state: 'starting' | 'on' | 'off' = 'starting';
  /** Estimated bytes of the reserve left; measured again when it drops below half of `bytes`. */
  private left = 0;
  /** Growth estimates of commits admitted and not finished (their pages may not be in the file yet). */
  private inFlight = 0;
  private helper: ChildProcessByStdio<Writable, Readable, null> | undefined;
  private replies: Array<(allocated: Allocated) => void> = [];
  private output = '';
  /** fallocate's message lines before the status line. */
  private message = '';
  /** When a renewal last found no room (renewals from commits wait a second after that). */
  private fullAt = -Infinity;
  private renewal: Promise<void> | undefined;
  private closed = false;
  private readonly dir: string;

  constructor(
    readonly file: string,
    readonly bytes: number,
    private readonly log: (msg: string) => void,
  ) {
    this.dir = path.dirname(file);
  }

  /** At most what a commit whose records take `recordBytes` adds to the file (an overestimate). */
  static growth(recordBytes: number): number {
    return 2 * recordBytes + PAGES_PER_COMMIT;
  }

  /** Whether the reserve is in place (false before the first renewal answered, and where it cannot be made). */
  get active(): boolean {
    return this.state === 'on';
  }

  /**
   * May a commit that adds at most `growth` bytes to the file go to LMDB? If so it counts as in
   * flight until released(growth). Renews the reserve in the background when it runs low.
   */
  admit(growth: number): boolean {
    if (this.state === 'on') {
      this.left -= growth;
      if (this.left < this.bytes / 2) {
        this.left = this.measure() - growth;
        if (this.left < this.bytes / 2) void this.renew(growth);
        if (this.left < MARGIN && !this.roomOnDisk(growth)) {
          this.left += growth;
          return false;
        }
      }
    }
    this.inFlight += growth;
    return true;
  }

  /** A commit admitted with `growth` finished (committed or failed). */
  released(growth: number): void {
    this.inFlight -= growth;
  }

  /** Less than half the reserve is left (measured): a retry renews it first. */
  get low(): boolean {
    return this.state === 'on' && this.measure() < this.bytes / 2;
  }

  /** Would admit(growth) say yes now (measured, not estimated)? */
  covers(growth: number): boolean {
    if (this.state !== 'on') return true;
    this.left = this.measure();
    return this.left - growth >= MARGIN || this.roomOnDisk(growth);
  }

  /**
   * Renews the reserve to `bytes` past the file's end (more if `growth` asks): resolves when
   * fallocate answered, whatever it found. One renewal at a time; a call during one waits for it.
   * After one found no room, the next waits a second unless `now` (CommitEngine.retry).
   */
  renew(growth = 0, now = false): Promise<void> {
    if (this.renewal) return this.renewal;
    if (this.closed || this.state === 'off') return Promise.resolve();
    if (!now && performance.now() - this.fullAt < RENEW_AFTER_FULL_MS) return Promise.resolve();
    const renewal = this.allocateDown(Math.max(this.bytes, 2 * growth)).finally(() => {
      this.renewal = undefined;
    });
    this.renewal = renewal;
    return renewal;
  }

  /** Stops the helper; the space already reserved stays with the file. */
  close(): void {
    this.closed = true;
    this.helper?.stdin.end();
    this.helper = undefined;
    for (const reply of this.replies.splice(0)) reply('unsupported');
  }

  /** Tries `past` bytes past the end, then smaller amounts while the disk has no room for more. */
  private async allocateDown(past: number): Promise<void> {
    for (let n = past; ; n = Math.floor(n / 4)) {
      let size: number;
      try {
        size = fs.statSync(this.file).size;
      } catch {
        return; // not created yet: LMDB creates it on open, so the store is closing
      }
      const allocated = await this.allocate(size + n);
      if (this.closed || allocated === 'unsupported') return;
      if (allocated === 'full') this.fullAt = performance.now();
      if (allocated === 'ok' || n / 4 < SMALLEST_RENEWAL) break;
    }
    this.left = this.measure();
    if (this.state === 'starting') {
      // Reserved, or the disk is full already: either way commits are admitted against it now.
      this.state = 'on';
      this.log(`store data file ${this.file}: ${(Math.max(0, this.left) / MiB).toFixed(1)} MiB reserved past its end`);
    }
  }

  /** Bytes allocated to the file past what it holds, less what commits in flight may still take. */
  private measure(): number {
    try {
      const st = fs.statSync(this.file);
      return st.blocks * 512 - st.size - this.inFlight;
    } catch {
      return 0;
    }
  }

  /** The file system has room for `growth` without the reserve (a commit larger than the reserve). */
  private roomOnDisk(growth: number): boolean {
    try {
      return statfsFreeSpace(this.dir) - growth >= this.bytes;
    } catch {
      return false;
    }
  }

  /** Runs fallocate on [0, length) of the file, keeping its size. */
  private allocate(length: number): Promise<Allocated> {
    const helper = this.helper ?? this.startHelper();
    if (!helper) return Promise.resolve('unsupported');
    // Its answer keeps the process alive; an idle helper does not (see startHelper).
    (helper.stdout as Readable & { ref?: () => void }).ref?.();
    return new Promise((resolve) => {
      this.replies.push((allocated) => {
        if (this.replies.length === 0) (helper.stdout as Readable & { unref?: () => void }).unref?.();
        resolve(allocated);
      });
      helper.stdin.write(`${length}\n`);
    });
  }

  private startHelper(): ChildProcessByStdio<Writable, Readable, null> | undefined {
    if (process.platform !== 'linux') {
      this.giveUp('fallocate is Linux only');
      return undefined;
    }
    const helper = spawn('sh', ['-c', HELPER_SCRIPT, this.file], { stdio: ['pipe', 'pipe', 'ignore'] });
    this.helper = helper;
    helper.unref();
    (helper.stdin as Writable & { unref?: () => void }).unref?.();
    (helper.stdout as Readable & { unref?: () => void }).unref?.();
    helper.stdin.on('error', () => undefined); // a helper that died: 'exit' answers what waits
    helper.stdout.setEncoding('utf8');
    helper.stdout.on('data', (text: string) => this.onOutput(text));
    const gone = (why: string): void => {
      if (this.helper !== helper) return;
      this.helper = undefined;
      const waiting = this.replies.splice(0);
      if (waiting.length > 0 && !this.closed) this.giveUp(why);
      for (const reply of waiting) reply('unsupported');
    };
    helper.on('error', (err) => gone(`cannot run sh: ${err.message}`));
    helper.on('exit', (code, signal) => gone(`its helper exited (${signal ?? code})`));
    return helper;
  }

  private onOutput(text: string): void {
    this.output += text;
    for (let nl = this.output.indexOf('\n'); nl >= 0; nl = this.output.indexOf('\n')) {
      const line = this.output.slice(0, nl);
      this.output = this.output.slice(nl + 1);
      const status = /^= (\d+)$/.exec(line);
      if (status === null) {
        this.message += `${line} `;
        continue;
      }
      const message = this.message.trim();
      this.message = '';
      this.replies.shift()?.(this.classify(Number(status[1]), message));
    }
  }

  private classify(status: number, message: string): Allocated {
    if (status === 0) return 'ok';
    // No room, a file-size limit (fallocate killed by SIGXFSZ: 128 + 25) or a quota.
    if (/No space left|File too large|quota/i.test(message) || status === 153) return 'full';
    this.giveUp(status === 127 ? 'fallocate is not installed' : message || `fallocate exited with ${status}`);
    return 'unsupported';
  }

  private giveUp(why: string): void {
    if (this.state === 'off') return;
    this.state = 'off';
    this.log(
      `store data file ${this.file}: no space can be reserved past its end (${why}); ` +
        'a disk that fills up may then fail a commit inside LMDB, which can abort the process',
    );
    this.helper?.stdin.end();
    this.helper = undefined;
  }
}
