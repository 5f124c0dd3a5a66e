import { existsSync, writeFileSync } from 'node:fs';
import { BrokerProcess } from '../support/broker-process.js';

/**
 * The broker under test, in a child process the fault schedule can SIGKILL and restart on the
 * same port, freeze (SIGSTOP/SIGCONT) and, when libfaketime is installed, run with a wall clock
 * that can be stepped while it runs (the monotonic clock is left alone, as an NTP step does).
 */
export class ChaosBroker {
  private process: BrokerProcess | undefined;
  private port = 0;
  /** Log lines of every broker incarnation (JSON, as the broker writes them to a pipe). */
  readonly lines: string[] = [];

  constructor(
    private readonly dataDir: string,
    private readonly args: string[],
    /** The file libfaketime reads its offset from, when the clock can be stepped. */
    private readonly faketime: { lib: string; file: string } | undefined,
  ) {
    if (faketime) writeFileSync(faketime.file, '+0');
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.process !== undefined;
  }

  async start(): Promise<void> {
    const env = this.faketime
      ? {
          LD_PRELOAD: this.faketime.lib,
          FAKETIME_TIMESTAMP_FILE: this.faketime.file,
          FAKETIME_CACHE_DURATION: '1',
          FAKETIME_DONT_FAKE_MONOTONIC: '1',
        }
      : {};
    for (let attempt = 1; ; attempt++) {
      try {
        this.process = await BrokerProcess.start(this.dataDir, { port: this.port, env, args: this.args, onLine: (l) => this.lines.push(l) });
        this.port = this.process.port;
        return;
      } catch (err) {
        // The old incarnation's port may take a moment to be free again.
        if (attempt >= 20) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }

  async kill(): Promise<void> {
    const p = this.process;
    this.process = undefined;
    if (p && p.child.exitCode === null && p.child.signalCode === null) await p.kill();
  }

  freeze(): void {
    this.process?.signal('SIGSTOP');
  }

  thaw(): void {
    this.process?.signal('SIGCONT');
  }

  /** Steps the broker's wall clock to `offsetSeconds` from real time (libfaketime rereads within 1 s). */
  stepClock(offsetSeconds: number): void {
    if (!this.faketime) throw new Error('libfaketime is not available');
    writeFileSync(this.faketime.file, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}`);
  }

  async stop(): Promise<void> {
    const p = this.process;
    this.process = undefined;
    if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
    p.signal('SIGCONT');
    await p.stop();
  }
}

/** Debian's libfaketime (package faketime), if installed; the thread-safe build first (node has threads). */
export function findLibfaketime(): string | undefined {
  const dirs = ['/usr/lib/x86_64-linux-gnu/faketime', '/usr/lib/aarch64-linux-gnu/faketime', '/usr/lib/faketime', '/usr/local/lib/faketime'];
  for (const dir of dirs) {
    for (const name of ['libfaketimeMT.so.1', 'libfaketime.so.1']) {
      if (existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
    }
  }
  return undefined;
}
