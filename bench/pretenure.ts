/**
 * Micro-benchmark: does V8 (Node 20, V8 11.3) pretenure — allocate straight into old space —
 * the two objects of a queued message (Message, QueuedMessage) when they are made from object
 * literals rather than with `new` of a class? Kept as the record of a negative result (see below).
 *
 *   SLAB=fresh node --max-semi-space-size=64 [--trace-pretenuring-statistics] --import tsx \
 *     bench/pretenure.ts VARIANT MODE [N=3000000] [GARBAGE=4]
 *
 * VARIANT: class (`new` of classes shaped like src/queue/{message,queued-message}.ts as tsc
 * emits them), literal (plain object literals in factory functions), proto (the QueuedMessage
 * literal with `__proto__:` a prototype holding its accessors), proto2 (both literals with
 * `__proto__`), ctorret (classes whose constructors return such a literal: `new` kept).
 * MODE: fill (N messages made and kept: lg-publish's queue that nobody consumes), churn (each
 * dropped 1024 messages later: lg-e2e), fillchurn (fill, drop the lot, then churn: a queue that
 * filled once, then consumers keep up). GARBAGE: short-lived objects per message besides (a
 * publish's frames and method objects). SLAB=fresh: a new 8 KiB body slab every 512 messages,
 * as kept-body.ts does. Prints wall and CPU time (CPU includes V8's parallel scavenger threads)
 * and GC time and counts by kind. One variant per process: allocation-site feedback is per
 * process.
 *
 * What it showed (2 shared cores, N = 3M, GARBAGE = 4, ns per message):
 * - `new C()` has no allocation site: --trace-pretenuring-statistics lists no site for it, and
 *   each object is copied by two scavenges. A literal's site goes undecided → maybe tenure →
 *   tenure after two or three scavenges (found/created ≈ 1.0), then allocates in old space.
 * - fill: class 753–890 wall / 639–898 CPU (minor GC 0.9–1.6 s); literal 405–772 wall / 455–600
 *   CPU (minor GC 0.2–0.3 s, major GC up); proto 582–800 wall / 591–701 CPU; proto2 691–708
 *   wall / 667–794 CPU; ctorret 653–803 wall. `__proto__:` in a literal costs a runtime
 *   set-prototype per object (~75–100 ns), as much as pretenuring saves.
 * - churn: class 82–103 CPU, literal 89–107 (same), proto 175, ctorret 257–274.
 * - fillchurn: class 96–114 CPU, literal 158–178: a tenured site stays tenured (an old-space
 *   object makes no memento, so the site gets no more feedback), so messages that now die young
 *   are allocated in old space; the heap grew to ~900 MB of dead messages before a mark-compact.
 * In the broker (same literals in queue.ts/publisher.ts, measured with bench/publish-burst.ts and
 * lg-publish / lg-e2e, broker µs/msg): GC fell from ~24–29 % to ~9–10 % of the busy samples in
 * lg-publish, but the allocating functions got that much dearer: seven paired publish-burst runs
 * gave median ratios (literals / classes) 0.88–0.92 with the literal build second in each round,
 * 1.01–1.13 with it first, about −2 % overall, within the noise; lg-e2e came out equal or slower
 * (quiet: medians 1.97 / 1.71 against 1.74 / 1.89; busy: 2.18–2.83 against 1.92–2.72; its
 * 50,000-message backlog tenures the sites too). So the classes stay.
 */
import { PerformanceObserver, constants } from 'node:perf_hooks';

const [variant = 'class', mode = 'fill', nArg = '3000000', garbageArg = '4'] = process.argv.slice(2);
const N = Number(nArg);
const GARBAGE = Number(garbageArg);
const FRESH_SLAB = process.env['SLAB'] === 'fresh';

const header = Buffer.from('0123456789abcdef0123');
let slab = Buffer.allocUnsafeSlow(8192);

// ---- class: as tsc emits src/queue/{message,queued-message}.ts for ES2022 -------------------
class CMessage {
  bits: number;
  extra: object | undefined;
  bodyMemory: Buffer;
  bodyOffset: number;
  bodySize: number;
  constructor(readonly id: number, readonly exchange: string, readonly routingKey: string, readonly header: Buffer,
    bodyMemory: Buffer, bodyOffset: number, bodySize: number) {
    this.bits = 0;
    this.extra = undefined;
    this.bodyMemory = bodyMemory;
    this.bodyOffset = bodyOffset;
    this.bodySize = bodySize;
  }
}
class CQueued {
  bits: number;
  constructor(public seq: number, public msg: unknown, public expiresAt: number, persisted: boolean) {
    this.bits = persisted ? 2 : 0;
  }
}

// ---- literal: the same fields from object literals in factory functions ---------------------
function lMessage(id: number, exchange: string, routingKey: string, header: Buffer, bodyMemory: Buffer, bodyOffset: number, bodySize: number) {
  return { id, exchange, routingKey, header, bits: 0, extra: undefined as object | undefined, bodyMemory, bodyOffset, bodySize };
}
function lQueued(seq: number, msg: unknown, expiresAt: number, persisted: boolean) {
  return { seq, msg, expiresAt, bits: persisted ? 2 : 0 };
}

// ---- proto, proto2: literals that keep a prototype (accessors, methods) -----------------------
const queuedProto = { get persisted(): boolean { return true; } };
const messageProto = { get size(): number { return 0; } };
function pQueued(seq: number, msg: unknown, expiresAt: number, persisted: boolean) {
  return { __proto__: queuedProto, seq, msg, expiresAt, bits: persisted ? 2 : 0 };
}
function pMessage(id: number, exchange: string, routingKey: string, header: Buffer, bodyMemory: Buffer, bodyOffset: number, bodySize: number) {
  return { __proto__: messageProto, id, exchange, routingKey, header, bits: 0, extra: undefined as object | undefined, bodyMemory, bodyOffset, bodySize };
}

// ---- ctorret: classes whose constructor returns a literal (callers keep `new`) ---------------
class RQueued {
  declare seq: number;
  declare msg: unknown;
  declare expiresAt: number;
  declare bits: number;
  constructor(seq: number, msg: unknown, expiresAt: number, persisted: boolean) {
    return { __proto__: RQueued.prototype, seq, msg, expiresAt, bits: persisted ? 2 : 0 } as unknown as RQueued;
  }
}
class RMessage {
  declare id: number;
  constructor(id: number, exchange: string, routingKey: string, header: Buffer, bodyMemory: Buffer, bodyOffset: number, bodySize: number) {
    return { __proto__: RMessage.prototype, id, exchange, routingKey, header, bits: 0, extra: undefined, bodyMemory, bodyOffset, bodySize } as unknown as RMessage;
  }
}

let sink = 0;
function garbage(i: number): void {
  for (let g = 0; g < GARBAGE; g++) {
    const o = { a: i, b: g, c: 'x' };
    sink += o.a + o.b;
  }
}

function make(i: number): unknown {
  const off = i & 4095;
  switch (variant) {
    case 'class': return new CQueued(i, new CMessage(i, 'ex', 'rk', header, slab, off, 16), 0, false);
    case 'literal': return lQueued(i, lMessage(i, 'ex', 'rk', header, slab, off, 16), 0, false);
    case 'proto': return pQueued(i, lMessage(i, 'ex', 'rk', header, slab, off, 16), 0, false);
    case 'proto2': return pQueued(i, pMessage(i, 'ex', 'rk', header, slab, off, 16), 0, false);
    case 'ctorret': return new RQueued(i, new RMessage(i, 'ex', 'rk', header, slab, off, 16), 0, false);
    default: throw new Error(`unknown variant ${variant}`);
  }
}

const gcTime = new Map<number, { n: number; ms: number }>();
const obs = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as unknown as { detail: { kind: number } }).detail.kind;
    const t = gcTime.get(kind) ?? { n: 0, ms: 0 };
    t.n++;
    t.ms += e.duration;
    gcTime.set(kind, t);
  }
});
obs.observe({ entryTypes: ['gc'] });

/** Makes N messages, kept (fill) or dropped 1024 later (churn); wall and CPU ms. */
function run(fill: boolean): { wall: number; cpu: number } {
  const keep: unknown[] = fill ? [] : new Array(1024).fill(undefined);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    garbage(i);
    if (FRESH_SLAB && (i & 511) === 0) slab = Buffer.allocUnsafeSlow(8192);
    const q = make(i);
    if (fill) keep.push(q);
    else keep[i & 1023] = q;
  }
  sink += keep.length;
  const c = process.cpuUsage(cpu0);
  return { wall: performance.now() - t0, cpu: (c.user + c.system) / 1000 };
}

function report(t: { wall: number; cpu: number }): void {
  // GC entries arrive asynchronously: read them a little later.
  setTimeout(() => {
    obs.disconnect();
    const names: Record<number, string> = {
      [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
      [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
    };
    const gc = [...gcTime].map(([k, g]) => `${names[k] ?? k} ${g.n}x ${g.ms.toFixed(0)} ms`).join(', ');
    const ns = (ms: number): string => (ms * 1e6 / N).toFixed(0);
    console.log(`${variant} ${mode} N=${N} garbage=${GARBAGE}${FRESH_SLAB ? ' fresh slabs' : ''}: ` +
      `${t.wall.toFixed(0)} ms, ${ns(t.wall)} ns/msg wall, ${ns(t.cpu)} ns/msg CPU; gc: ${gc} (${sink % 2})`);
  }, 400);
}

if (mode === 'fillchurn') {
  run(true);
  // The kept messages are garbage now; measure the churn that follows (GC counted from here).
  setTimeout(() => {
    gcTime.clear();
    report(run(false));
  }, 100);
} else if (mode === 'fill' || mode === 'churn') {
  report(run(mode === 'fill'));
} else {
  throw new Error(`unknown mode ${mode}`);
}
