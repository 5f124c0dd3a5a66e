import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A broker in a child process, so the test can SIGKILL it (issue: nothing confirmed is ever lost). */
export class BrokerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /**
   * Starts src/main.ts on a free port (or opts.port); fileSizeLimitKiB runs it under `ulimit -f`
   * (a full disk); env is added to the environment, args to the command line, and onLine sees
   * every line the broker logs.
   */
  static start(
    dataDir: string,
    opts: { fileSizeLimitKiB?: number; port?: number; env?: NodeJS.ProcessEnv; args?: string[]; onLine?: (line: string) => void } = {},
  ): Promise<BrokerProcess> {
    const args = ['--import', 'tsx', 'src/main.ts', '--port', String(opts.port ?? 0), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', ...(opts.args ?? [])];
    const options = { stdio: ['ignore', 'pipe', 'inherit'] as ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...opts.env } };
    const child = opts.fileSizeLimitKiB
      ? spawn('bash', ['-c', `ulimit -f ${opts.fileSizeLimitKiB} && exec "$0" "$@"`, process.execPath, ...args], options)
      : spawn(process.execPath, args, options);
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        opts.onLine?.(line);
        try {
          const entry = JSON.parse(line) as { port?: number; msg?: string };
          if (entry.msg?.startsWith('warren listening') && entry.port) resolve(new BrokerProcess(child, entry.port));
        } catch {
          /* not a log line */
        }
      });
      child.once('exit', (code) => reject(new Error(`broker exited with ${code} before listening`)));
    });
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
