/** The first difference between two normalised traces, worded for one output line. */
import { oneLine, type Json } from './json.js';

function firstDiff(a: Json | undefined, b: Json | undefined, path: string): { path: string; expected: Json | undefined; got: Json | undefined } | null {
  if (JSON.stringify(a) === JSON.stringify(b)) return null;
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) {
        const d = firstDiff(a[i], b[i], `${path}[${i}]`);
        if (d) return d;
      }
    } else {
      const ao = a as { [k: string]: Json };
      const bo = b as { [k: string]: Json };
      // Different shapes (e.g. {ok} against a close): show both whole.
      if (Object.keys(ao).sort().join() !== Object.keys(bo).sort().join()) return { path, expected: a, got: b };
      const keys = Object.keys(ao).sort();
      for (const k of keys) {
        const d = firstDiff(ao[k], bo[k], `${path}.${k}`);
        if (d) return d;
      }
    }
  }
  return { path, expected: a, got: b };
}

/** null when equal, else "step N (label) at path: expected X, got Y". */
export function describeDiff(expected: Json, got: Json): string | null {
  const e = Array.isArray(expected) ? expected : [expected];
  const g = Array.isArray(got) ? got : [got];
  for (let i = 0; i < Math.max(e.length, g.length); i++) {
    const d = firstDiff(e[i], g[i], '');
    if (!d) continue;
    const entry = (e[i] ?? g[i]) as { [k: string]: Json } | undefined;
    const label = entry && typeof entry === 'object' ? Object.keys(entry)[0] : '?';
    const where = d.path.replace(/^\.[^.[]+/, '') || '';
    if (e[i] === undefined) return `step ${i + 1} (${label}): unexpected ${oneLine(g[i], 200)}`;
    if (g[i] === undefined) return `step ${i + 1} (${label}): missing, expected ${oneLine(e[i], 200)}`;
    return `step ${i + 1} (${label})${where ? ` at ${where}` : ''}: expected ${oneLine(d.expected, 200)}, got ${oneLine(d.got, 200)}`;
  }
  return null;
}
