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
