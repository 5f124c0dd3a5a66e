/** Small statistics helpers for benchmark figures. */

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = v.length >> 1;
  return v.length % 2 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2;
}

/** The p-th percentile (0..100) of sorted values, nearest-rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

/** Formats a figure with a sensible number of significant digits and thousands separators. */
export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  let s: string;
  if (abs >= 1000) s = Math.round(value).toLocaleString('en-US');
  else if (abs >= 100) s = value.toFixed(0);
  else if (abs >= 10) s = value.toFixed(1);
  else s = value.toFixed(2);
  return unit ? `${s} ${unit}` : s;
}
