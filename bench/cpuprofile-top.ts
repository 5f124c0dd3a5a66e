/**
 * Prints the functions with the most self time in a V8 .cpuprofile (node --cpu-prof), with
 * file:line, and optionally the top files.
 *
 *   npx tsx bench/cpuprofile-top.ts PROFILE.cpuprofile [--top 25] [--files] [--src-only]
 *
 * Self time is summed over all nodes of the call tree with the same function, file, line and
 * column. Lines are 1-based (V8 stores 0-based). Paths under the repository are shown relative.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface TopEntry {
  name: string;
  location: string;
  selfMs: number;
  percent: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const maps = new Map<string, SourceMap | null>();

/** The source map of a compiled file (dist/x.js → dist/x.js.map), or null. */
function sourceMapOf(path: string): SourceMap | null {
  let m = maps.get(path);
  if (m === undefined) {
    m = null;
    try {
      if (existsSync(`${path}.map`)) m = new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8')));
    } catch {
      m = null;
    }
    maps.set(path, m);
  }
  return m;
}

/** file:line of a call frame, mapped back to src/*.ts through dist's source maps. */
function locate(cf: CallFrame): string {
  if (!cf.url) return '(native)';
  if (!cf.url.startsWith('file://')) return cf.lineNumber >= 0 ? `${cf.url}:${cf.lineNumber + 1}` : cf.url;
  const path = fileURLToPath(cf.url);
  const sm = cf.lineNumber >= 0 ? sourceMapOf(path) : null;
  if (sm) {
    const e = sm.findEntry(cf.lineNumber, Math.max(0, cf.columnNumber)) as { originalSource?: string; originalLine?: number };
    if (e.originalSource && e.originalLine !== undefined) {
      const src = e.originalSource.startsWith('file://') ? fileURLToPath(e.originalSource) : resolve(dirname(path), e.originalSource);
      return `${relative(ROOT, src)}:${e.originalLine + 1}`;
    }
  }
  const rel = path.startsWith(ROOT) ? relative(ROOT, path) : path;
  return cf.lineNumber >= 0 ? `${rel}:${cf.lineNumber + 1}` : rel;
}

/** Self time per function, most first; also per file. */
export function summarise(profile: Profile): { total: number; functions: TopEntry[]; files: TopEntry[] } {
  const byId = new Map<number, ProfileNode>();
  for (const n of profile.nodes) byId.set(n.id, n);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, TopEntry>();
  const files = new Map<string, TopEntry>();
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    const cf = node.callFrame;
    const name = cf.functionName || (cf.url ? '(anonymous)' : '(program)');
    const location = locate(cf);
    const key = `${name}\u0000${location}\u0000${cf.columnNumber}`;
    const e = fn.get(key) ?? { name, location, selfMs: 0, percent: 0 };
    e.selfMs += us / 1000;
    fn.set(key, e);
    const file = location.replace(/:\d+$/, '');
    const f = files.get(file) ?? { name: file, location: file, selfMs: 0, percent: 0 };
    f.selfMs += us / 1000;
    files.set(file, f);
  }
  const finish = (m: Map<string, TopEntry>) => [...m.values()]
    .map((e) => ({ ...e, percent: total ? (e.selfMs * 100000) / total : 0 }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return { total: total / 1000, functions: finish(fn), files: finish(files) };
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string' }, files: { type: 'boolean' }, 'src-only': { type: 'boolean' } },
  });
  if (positionals.length === 0) {
    process.stderr.write('usage: tsx bench/cpuprofile-top.ts FILE.cpuprofile [--top 25] [--files] [--src-only]\n');
    process.exit(2);
  }
  const top = Number(values.top ?? 25);
  for (const file of positionals) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const s = summarise(profile);
    const idle = s.functions.filter((f) => f.name === '(idle)').reduce((a, f) => a + f.selfMs, 0);
    process.stdout.write(`\n${file}: ${(s.total / 1000).toFixed(1)} s sampled, ${(idle / 1000).toFixed(1)} s idle\n`);
    const rows = s.functions.filter((f) => !values['src-only'] || f.location.startsWith('src/')).slice(0, top);
    process.stdout.write(`${'self ms'.padStart(9)} ${'%'.padStart(6)}  function  (file:line)\n`);
    for (const f of rows) process.stdout.write(`${f.selfMs.toFixed(0).padStart(9)} ${f.percent.toFixed(1).padStart(6)}  ${f.name}  (${f.location})\n`);
    if (values.files) {
      process.stdout.write(`\nby file:\n`);
      for (const f of s.files.slice(0, top)) process.stdout.write(`${f.selfMs.toFixed(0).padStart(9)} ${f.percent.toFixed(1).padStart(6)}  ${f.name}\n`);
    }
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
