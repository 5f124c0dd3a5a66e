/**
 * Coverage feedback from V8's own block coverage (the inspector's Profiler.takePreciseCoverage),
 * so no instrumentation step is needed. After each input, each block range V8 reports for
 * Warren's source (src/) is a feature, with its run count bucketed as AFL buckets edge counts
 * (0, 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+). V8 leaves out a block that ran as often as the
 * code around it, so a branch taken shows mostly as the branch not taken (count 0): zero counts
 * are features too. An input that shows a feature never seen before joins the corpus.
 */
import { Session } from 'node:inspector';

interface CoverageRange {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface ScriptCoverage {
  scriptId: string;
  url: string;
  functions: Array<{ ranges: CoverageRange[] }>;
}

function bucket(n: number): number {
  if (n <= 3) return n;
  if (n < 8) return 4;
  if (n < 16) return 5;
  if (n < 32) return 6;
  if (n < 128) return 7;
  return 8;
}

export class Coverage {
  private readonly session = new Session();
  /** Every feature seen so far. */
  private readonly seen = new Set<string>();

  constructor(private readonly include: (url: string) => boolean = (url) => url.includes('/src/') && !url.includes('/node_modules/')) {
    this.session.connect();
    this.post('Profiler.enable');
    // callCount + detailed: block-level counts, reset by each take.
    this.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
  }

  /** Same-thread inspector sessions answer synchronously. */
  private post(method: string, params: object = {}): unknown {
    let result: unknown;
    let error: Error | null = null;
    this.session.post(method, params, (err, res) => {
      error = err;
      result = res;
    });
    if (error) throw error;
    return result;
  }

  /** Forgets counts gathered so far (e.g. by setup code). */
  reset(): void {
    this.post('Profiler.takePreciseCoverage');
  }

  /** Takes the counts since the last call; returns how many features are new (and records them). */
  collect(): number {
    const { result } = this.post('Profiler.takePreciseCoverage') as { result: ScriptCoverage[] };
    let fresh = 0;
    for (const script of result) {
      if (!this.include(script.url)) continue;
      for (const fn of script.functions) {
        for (const r of fn.ranges) {
          const key = `${script.scriptId}:${r.startOffset}:${r.endOffset}:${bucket(r.count)}`;
          if (!this.seen.has(key)) {
            this.seen.add(key);
            fresh++;
          }
        }
      }
    }
    return fresh;
  }

  /** Starts a new feature set (for the next target). */
  forget(): void {
    this.seen.clear();
    this.reset();
  }

  get features(): number {
    return this.seen.size;
  }

  close(): void {
    this.post('Profiler.stopPreciseCoverage');
    this.session.disconnect();
  }
}
