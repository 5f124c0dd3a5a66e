/**
 * The fuzzing loops, run inside a worker thread (worker.ts): executing one input under the
 * oracles, the property mode (fast-check: generate, run, shrink), the coverage-guided mode
 * (mutate corpus entries, keep those that reach new code) and a byte-level minimizer.
 */
import fc from 'fast-check';
import { getHeapStatistics } from 'node:v8';
import { int, mutate, rng, type Rng } from '../frame/helpers.js';
import type { Coverage } from './coverage.js';
import { checkMemory, memoryLimit, OracleFailure, retainedBytes } from './oracles.js';
import type { Target } from './targets.js';

/**
 * What the watchdog in the main thread sees of the worker: whether an input is running, since
 * when, and the input itself, so an input that never finishes can still be reported.
 */
export class Probe {
  static readonly MAX_INPUT = 1 << 20;
  private readonly flags: Int32Array;
  private readonly times: Float64Array;
  private readonly bytes: Uint8Array;

  constructor(readonly sab: SharedArrayBuffer = new SharedArrayBuffer(16 + Probe.MAX_INPUT)) {
    this.flags = new Int32Array(sab, 0, 2);
    this.times = new Float64Array(sab, 8, 1);
    this.bytes = new Uint8Array(sab, 16);
  }

  begin(input: Buffer): void {
    const n = Math.min(input.length, Probe.MAX_INPUT);
    this.bytes.set(input.subarray(0, n));
    this.flags[1] = n;
    this.times[0] = Date.now();
    Atomics.store(this.flags, 0, 1);
  }

  end(): void {
    Atomics.store(this.flags, 0, 0);
  }

  /** The running input and for how long it has run, or undefined when none runs. */
  running(): { input: Buffer; ms: number } | undefined {
    if (Atomics.load(this.flags, 0) !== 1) return undefined;
    return { input: Buffer.from(this.bytes.subarray(0, this.flags[1])), ms: Date.now() - this.times[0]! };
  }
}

export interface Finding {
  target: string;
  kind: OracleFailure['kind'];
  /** One line: what went wrong. */
  summary: string;
  message: string;
  /** The smallest failing input found, hex. */
  input: string;
  originalLength: number;
  mode: string;
  seed: number;
}

/** Same kind, same message and cause line (numbers aside): the same problem. */
function signature(f: OracleFailure): string {
  const lines = f.message.split('\n');
  const cause = lines.find((l) => l.includes('caused by')) ?? '';
  return `${lines[0]}|${cause}`.replace(/\d+/g, 'N');
}

function asFailure(err: unknown): OracleFailure {
  return err instanceof OracleFailure ? err : new OracleFailure('crash', 'the target threw', err);
}

export class Executor {
  execs = 0;
  private readonly findings = new Map<string, Finding>();

  private readonly born = performance.now();
  private memoryMs = 0;

  constructor(
    readonly target: Target,
    private readonly probe: Probe | undefined,
    /**
     * Check retained memory on every n-th input (it costs full GCs); 0: never; 'auto': as often
     * as keeps those checks within a tenth of the time.
     */
    private readonly memoryEvery: number | 'auto',
    private readonly report: (f: Finding) => void,
  ) {}

  private memoryDue(): boolean {
    if (this.memoryEvery === 'auto') return this.memoryMs < 0.1 * (performance.now() - this.born);
    return this.memoryEvery > 0 && this.execs % this.memoryEvery === 0;
  }

  /** Runs one input under every oracle; returns the failure, if any. */
  async exec(input: Buffer, memory = this.memoryDue()): Promise<OracleFailure | undefined> {
    const t0 = performance.now();
    try {
      return await this.execOnce(input, memory);
    } finally {
      if (memory) this.memoryMs += performance.now() - t0;
    }
  }

  private async execOnce(input: Buffer, memory: boolean): Promise<OracleFailure | undefined> {
    this.execs++;
    const t = this.target;
    let before = 0;
    let after = 0;
    if (memory) before = retainedBytes();
    const externalBefore = externalBytes();
    let peakExternal = -1;
    let measuring = 0;
    const atPeak = (): void => {
      peakExternal = externalBytes();
      const t0 = performance.now();
      if (memory) after = retainedBytes();
      measuring = performance.now() - t0;
    };
    this.probe?.begin(input);
    const started = performance.now();
    let failure: OracleFailure | undefined;
    try {
      await t.run(input, atPeak);
    } catch (err) {
      failure = asFailure(err);
    } finally {
      this.probe?.end();
    }
    if (peakExternal < 0) peakExternal = externalBytes();
    // The GCs of the memory oracle are not the input's time.
    const ms = performance.now() - started - measuring;
    if (!failure && ms > t.hangMs) failure = new OracleFailure('hang', `one input took ${ms.toFixed(0)} ms (bound ${t.hangMs} ms)`);
    if (!failure && t.kind === 'decoder') {
      // Buffers allocated while decoding are not freed before a GC: a decoder that believed a
      // length field shows up here even when it dropped the buffer again.
      const grown = peakExternal - externalBefore;
      if (grown > memoryLimit('decoder', input.length)) {
        failure = new OracleFailure('memory', `${t.name}: ${grown} bytes of Buffers allocated for ${input.length} input bytes`);
      }
    }
    if (!failure && memory) {
      try {
        checkMemory(t.kind, before, after, input.length, t.name);
      } catch (err) {
        failure = asFailure(err);
      }
    }
    return failure;
  }

  /** Records a failure once per distinct problem, minimized; returns whether it was new. */
  async record(input: Buffer, failure: OracleFailure, mode: string, seed: number): Promise<boolean> {
    const sig = signature(failure);
    if (this.findings.has(sig)) return false;
    const small = failure.kind === 'hang' ? input : await minimize(input, sig, this);
    const again = (await this.exec(small, failure.kind === 'memory')) ?? failure;
    const f: Finding = {
      target: this.target.name,
      kind: again.kind,
      summary: again.message.split('\n')[0]!,
      message: again.message,
      input: small.toString('hex'),
      originalLength: input.length,
      mode,
      seed,
    };
    this.findings.set(sig, f);
    this.report(f);
    return true;
  }

  async stillFails(input: Buffer, sig: string, memory: boolean): Promise<boolean> {
    const f = await this.exec(input, memory);
    return f !== undefined && signature(f) === sig;
  }
}

function externalBytes(): number {
  return (getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory: number }).external_memory;
}

/**
 * Delta debugging over bytes: drop ever smaller chunks while the same problem still shows,
 * then try zeroing bytes. Bounded by a number of executions.
 */
export async function minimize(input: Buffer, sig: string, ex: Executor, budget = 3000): Promise<Buffer> {
  const memory = sig.startsWith('memory');
  let best = input;
  let runs = 0;
  for (let chunk = Math.max(1, best.length >> 1); chunk >= 1 && runs < budget; chunk >>= 1) {
    let progress = true;
    while (progress && runs < budget) {
      progress = false;
      for (let at = 0; at < best.length && runs < budget; at += chunk) {
        const candidate = Buffer.concat([best.subarray(0, at), best.subarray(at + chunk)]);
        runs++;
        if (await ex.stillFails(candidate, sig, memory)) {
          best = candidate;
          progress = true;
          at -= chunk;
        }
      }
    }
  }
  return best;
}

export interface Budget {
  /** Stop after this many inputs... */
  runs?: number;
  /** ...or at this time (Date.now()), whichever comes first. */
  deadline?: number;
}

const within = (b: Budget, done: number): boolean =>
  (b.runs === undefined || done < b.runs) && (b.deadline === undefined || Date.now() < b.deadline);

/** Property mode: fast-check generates structured inputs and shrinks a failing one. */
export async function propertyMode(ex: Executor, seed: number, budget: Budget): Promise<void> {
  let round = 0;
  while (within(budget, 0)) {
    const s = seed + round++;
    const runs = budget.runs ?? 1_000_000;
    let failing: OracleFailure | undefined;
    const result = await fc.check(
      fc.asyncProperty(ex.target.arbitrary, async (input) => {
        const f = await ex.exec(input);
        if (f) {
          failing = f;
          throw f;
        }
      }),
      { seed: s, numRuns: runs, ...(budget.deadline ? { interruptAfterTimeLimit: Math.max(1, budget.deadline - Date.now()) } : {}), endOnFailure: false },
    );
    if (result.failed && result.counterexample && failing) {
      const input = result.counterexample[0] as Buffer;
      const f = (await ex.exec(input)) ?? failing;
      await ex.record(input, f, 'property', s);
    }
    if (budget.runs !== undefined || !result.failed) return;
  }
}

const INTERESTING_U32 = [0, 1, 7, 8, 255, 256, 4095, 4096, 4097, 65535, 65536, 131072, 0x7fffffff, 0x80000000, 0xfffffff7, 0xffffffff];

/** One havoc step: a random edit that knows nothing of AMQP but big-endian numbers and splicing. */
function havoc(b: Buffer, other: Buffer, r: Rng): Buffer {
  if (b.length === 0) return Buffer.from([int(r, 256)]);
  const at = int(r, b.length);
  switch (int(r, 9)) {
    case 8: {
      // Arithmetic on a big-endian octet, short or long: lengths off by a few.
      const width = [1, 2, 4][int(r, 3)]!;
      if (at + width > b.length) return mutate(b, r);
      const c = Buffer.from(b);
      const delta = (1 + int(r, 35)) * (r() < 0.5 ? -1 : 1);
      const max = 2 ** (8 * width);
      c.writeUIntBE((((c.readUIntBE(at, width) + delta) % max) + max) % max, at, width);
      return c;
    }
    case 0:
      return mutate(b, r);
    case 1: {
      const c = Buffer.from(b);
      c[at] = [0, 1, 0x7f, 0x80, 0xff, 0xce, 0x41][int(r, 7)]!;
      return c;
    }
    case 2: {
      if (at + 4 > b.length) return mutate(b, r);
      const c = Buffer.from(b);
      c.writeUInt32BE(INTERESTING_U32[int(r, INTERESTING_U32.length)]!, at);
      return c;
    }
    case 3: {
      if (at + 2 > b.length) return mutate(b, r);
      const c = Buffer.from(b);
      c.writeUInt16BE(r() < 0.5 ? int(r, 8) : int(r, 65536), at);
      return c;
    }
    case 4: {
      // Repeat a stretch (frames sent again, deeper nesting).
      const len = 1 + int(r, Math.min(256, b.length - at));
      return Buffer.concat([b.subarray(0, at + len), b.subarray(at, at + len), b.subarray(at + len)]);
    }
    case 5: {
      const len = 1 + int(r, Math.min(64, b.length - at));
      return Buffer.concat([b.subarray(0, at), b.subarray(at + len)]);
    }
    case 6: {
      // Splice: our head, the other's tail.
      const cut = int(r, other.length + 1);
      return Buffer.concat([b.subarray(0, at), other.subarray(cut)]);
    }
    default: {
      // Insert a stretch of another input.
      const from = int(r, other.length + 1);
      const len = int(r, Math.min(256, other.length - from) + 1);
      return Buffer.concat([b.subarray(0, at), other.subarray(from, from + len), b.subarray(at)]);
    }
  }
}

/**
 * Coverage-guided mode: seeds from the target's generator, then mutations of corpus entries;
 * an input that reaches a new block (or a block a new number of times) joins the corpus.
 */
export async function coverageMode(ex: Executor, cov: Coverage, seed: number, budget: Budget, onProgress?: (corpus: number, features: number) => void): Promise<{ corpus: number; features: number }> {
  cov.forget();
  const r = rng(seed);
  const corpus: Buffer[] = [];
  const seeds = fc.sample(ex.target.arbitrary, { numRuns: 32, seed });
  let done = 0;
  const tryInput = async (input: Buffer): Promise<void> => {
    done++;
    cov.reset();
    const f = await ex.exec(input);
    const fresh = cov.collect();
    if (f) await ex.record(input, f, 'coverage', seed);
    else if (fresh > 0) corpus.push(input);
  };
  for (const s of seeds) {
    if (!within(budget, done)) break;
    await tryInput(s);
  }
  if (corpus.length === 0) corpus.push(Buffer.alloc(0));
  let lastReport = Date.now();
  while (within(budget, done)) {
    const parent = corpus[int(r, corpus.length)]!;
    const other = corpus[int(r, corpus.length)]!;
    let child = parent;
    const steps = 1 + int(r, 4);
    for (let i = 0; i < steps; i++) child = havoc(child, other, r);
    if (child.length > ex.target.maxLength) child = child.subarray(0, ex.target.maxLength);
    await tryInput(child);
    if (onProgress && Date.now() - lastReport > 10000) {
      lastReport = Date.now();
      onProgress(corpus.length, cov.features);
    }
  }
  return { corpus: corpus.length, features: cov.features };
}
