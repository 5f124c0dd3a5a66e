import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface LogEntry {
  level?: number;
  msg?: string;
  port?: number;
  [key: string]: unknown;
}

/** A broker in a child process, so the test can SIGKILL it (issue: nothing confirmed is ever lost). */
export class BrokerProcess {
  /** Every log entry the broker has written so far. */
  readonly logs: LogEntry[] = [];
  private logWaiters: Array<() => void> = [];

  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /**
   * Starts src/main.ts on a free port; fileSizeLimitKiB runs it under `ulimit -f` (a full disk),
   * openFilesLimit under `ulimit -n` (few file descriptors).
   */
  static start(dataDir: string, opts: { fileSizeLimitKiB?: number; openFilesLimit?: number } = {}): Promise<BrokerProcess> {
    const args = ['--import', 'tsx', 'src/main.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info'];
    const limits = [
      ...(opts.fileSizeLimitKiB ? [`ulimit -f ${opts.fileSizeLimitKiB}`] : []),
      ...(opts.openFilesLimit ? [`ulimit -n ${opts.openFilesLimit}`] : []),
    ];
    const child = limits.length
      ? spawn('bash', ['-c', `${limits.join(' && ')} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      let started: BrokerProcess | undefined;
      lines.on('line', (line) => {
        let entry: LogEntry;
        try {
          entry = JSON.parse(line) as LogEntry;
        } catch {
          return; // not a log line
        }
        if (!started && entry.msg?.startsWith('warren listening') && entry.port) {
          started = new BrokerProcess(child, entry.port);
          resolve(started);
        }
        if (started) {
          started.logs.push(entry);
          for (const wake of started.logWaiters.splice(0)) wake();
        }
      });
      child.once('exit', (code) => reject(new Error(`broker exited with ${code} before listening`)));
    });
  }

  /** Resolves with the first log entry (since start) that matches. */
  async waitForLog(match: (entry: LogEntry) => boolean, timeoutMs = 10000): Promise<LogEntry> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error('timed out waiting for a broker log entry');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, deadline - Date.now());
        this.logWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  get url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  kill(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }

  stop(): Promise<number | null> {
    return new Promise((resolve) => {
      this.child.once('exit', (code) => resolve(code));
      this.child.kill('SIGTERM');
    });
  }
}
