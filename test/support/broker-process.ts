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
   * Starts src/main.ts on a free port (or opts.port); fileSizeLimitKiB runs it under `ulimit -f`
   * (a full disk), openFilesLimit under `ulimit -n` (few file descriptors); nodeArgs go to Node
   * (--max-old-space-size=64), env is added to the
   * environment, args to the command line, and onLine sees every line the broker logs.
   */
  static start(
    dataDir: string,
    opts: { fileSizeLimitKiB?: number; openFilesLimit?: number; port?: number; nodeArgs?: string[]; env?: NodeJS.ProcessEnv; args?: string[]; onLine?: (line: string) => void } = {},
  ): Promise<BrokerProcess> {
    const args = [...(opts.nodeArgs ?? []), '--import', 'tsx', 'src/main.ts', '--port', String(opts.port ?? 0), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', '--prometheus-port', 'off', '--management-port', 'off', ...(opts.args ?? [])];
    const options = { stdio: ['ignore', 'pipe', 'inherit'] as ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...opts.env } };
    const limits = [
      ...(opts.fileSizeLimitKiB ? [`ulimit -f ${opts.fileSizeLimitKiB}`] : []),
      ...(opts.openFilesLimit ? [`ulimit -n ${opts.openFilesLimit}`] : []),
    ];
    const child = limits.length
      ? spawn('bash', ['-c', `${limits.join(' && ')} && exec "$0" "$@"`, process.execPath, ...args], options)
      : spawn(process.execPath, args, options);
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      let started: BrokerProcess | undefined;
      lines.on('line', (line) => {
        opts.onLine?.(line);
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

  /** SIGSTOP (frozen: sockets stay open, nothing answers) or SIGCONT. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.child.kill(signal);
  }

  stop(): Promise<number | null> {
    return new Promise((resolve) => {
      this.child.once('exit', (code) => resolve(code));
      this.child.kill('SIGTERM');
    });
  }
}

export interface WarrenRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The broker logged "warren listening" (it was then stopped with SIGTERM). */
  listened: boolean;
}

/** Runs `warren <args>` (src/main.ts) to its end; a broker that starts listening is stopped with SIGTERM. */
export function runWarren(args: string[]): Promise<WarrenRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let listened = false;
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdout += `${line}\n`;
    if (!listened && line.includes('"warren listening')) {
      listened = true;
      child.kill('SIGTERM');
    }
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr, listened }));
  });
}
