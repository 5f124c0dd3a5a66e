import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { heapSizeFor } from '../src/memory-monitor.js';
import { makeTmpDir, removeDir } from './store/tmp-dir.js';

const MiB = 1024 * 1024;

interface Started {
  launcher: ChildProcess;
  /** The broker's "memory high watermark" log line. */
  memory: { watermark: number; heapLimit: number };
  exited: Promise<number | null>;
}

/** Runs the `warren` command from the sources (test/fixtures/launch.ts, as bin/warren.js does) until it listens. */
function launch(dataDir: string, args: string[], nodeArgs: string[] = []): Promise<Started> {
  const launcher = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'test/fixtures/launch.ts', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir, '--log-level', 'info', '--prometheus-port', 'off', '--management-port', 'off', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let memory: Started['memory'] | undefined;
    createInterface({ input: launcher.stdout! }).on('line', (line) => {
      const entry = JSON.parse(line) as { msg: string; watermark?: number; heapLimit?: number };
      if (entry.watermark !== undefined) memory = { watermark: entry.watermark, heapLimit: entry.heapLimit as number };
      if (entry.msg.startsWith('warren listening') && memory) resolve({ launcher, memory, exited });
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before listening`)));
  });
}

/** The pids of a process's children (Linux). */
function children(pid: number): number[] {
  const file = `/proc/${pid}/task/${pid}/children`;
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number) : [];
}

/** The `warren` command sizes the JS heap from the memory watermark (issue 10). */
describe('launcher (bin/warren.js)', function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(() => (dir = makeTmpDir('warren-launch-')));
  afterEach(() => removeDir(dir));

  it('starts the broker in a Node whose old space fits the watermark, and passes signals on', async () => {
    const { launcher, memory, exited } = await launch(dir, ['--memory-high-watermark-absolute', '100MB']);
    expect(memory.watermark).to.equal(100e6);
    // The heap alarm (70% of the old space) goes off at the watermark, not below it.
    expect(memory.heapLimit).to.equal(heapSizeFor(100e6) * MiB);
    if (process.platform === 'linux') expect(children(launcher.pid as number)).to.have.length(1);
    launcher.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('keeps a --max-old-space-size given by hand, and then runs the broker itself', async () => {
    const { launcher, memory, exited } = await launch(dir, [], ['--max-old-space-size=200']);
    expect(memory.heapLimit).to.equal(200 * MiB);
    if (process.platform === 'linux') expect(children(launcher.pid as number).length).to.be.below(2);
    launcher.kill('SIGTERM');
    expect(await exited).to.equal(0);
  });

  it('the broker stops when the launcher is killed', async () => {
    const { launcher } = await launch(dir, []);
    const [broker] = children(launcher.pid as number);
    if (broker === undefined) return; // no /proc: nothing to look at
    launcher.kill('SIGKILL');
    // The broker sees its channel to the launcher close, shuts down and exits: wait for that.
    await new Promise<void>((resolve) => {
      const poll = (): void => {
        if (!existsSync(`/proc/${broker}`) || /State:\s+Z/.test(readFileSync(`/proc/${broker}/status`, 'utf8'))) resolve();
        else setTimeout(poll, 20);
      };
      poll();
    });
  });
});
