/**
 * The first index in sorted[lo, hi) whose value is not below `value` (hi when there is none):
 * a binary search of an ascending array of numbers.
 */
export function lowerBound(sorted: ArrayLike<number>, value: number, lo = 0, hi = sorted.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Erlang's order of binaries for strings: bytewise on their UTF-8, without encoding them. UTF-16
 * code units order as code points except that a surrogate (half of a code point above U+FFFF)
 * is below U+E000..U+FFFF, where the code point it stands for is above them.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const sx = x >= 0xd800 && x <= 0xdfff;
    const sy = y >= 0xd800 && y <= 0xdfff;
    if (sx === sy) return x < y ? -1 : 1;
    return sx ? 1 : -1;
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
}
