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
   * (a full disk); nodeArgs go to Node (--max-old-space-size=64), env is added to the
   * environment, args to the command line, and onLine sees every line the broker logs.
   */
  static start(
    dataDir: string,
    opts: { fileSizeLimitKiB?: number; port?: number; nodeArgs?: string[]; env?: NodeJS.ProcessEnv; args?: string[]; onLine?: (line: string) => void } = {},
  ): Promise<BrokerProcess> {
    const args = [...(opts.nodeArgs ?? []), '--import', 'tsx', 'src/main.ts', '--port', String(opts.port ?? 0), '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', ...(opts.args ?? [])];
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

  stop(): Promise<number | null> {
    return new Promise((resolve) => {
      this.child.once('exit', (code) => resolve(code));
      this.child.kill('SIGTERM');
    });
  }
}
