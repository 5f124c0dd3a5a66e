import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A broker in a child process, so the test can SIGKILL it (issue: nothing confirmed is ever lost). */
export class BrokerProcess {
  private constructor(
    readonly child: ChildProcess,
    readonly port: number,
  ) {}

  /** Starts src/main.ts on a free port; fileSizeLimitKiB runs it under `ulimit -f` (a full disk). */
  static start(dataDir: string, opts: { fileSizeLimitKiB?: number } = {}): Promise<BrokerProcess> {
    const args = ['--import', 'tsx', 'src/main.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info'];
    const child = opts.fileSizeLimitKiB
      ? spawn('bash', ['-c', `ulimit -f ${opts.fileSizeLimitKiB} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    return new Promise((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
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
