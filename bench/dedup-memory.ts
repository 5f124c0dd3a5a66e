/**
 * The heap one entry of an x-message-deduplication cache costs: fills a DedupCache (the class
 * the exchange uses) with N keys shaped as the broker makes them (fieldValueKey: an integer
 * header, as in the dedup-1m scenario, is its number; a string header a string), with a TTL as
 * most users set one, and prints the memory growth per entry, measured between full collections:
 * the JS heap and the typed arrays' memory outside it (the cache's tables are typed arrays).
 * Run with --expose-gc:
 *
 *   node --expose-gc --import tsx bench/dedup-memory.ts [N]
 *
 * Prints one JSON line: {"entries":N,"bytesPerEntry":B,"stringKeyBytesPerEntry":S}.
 */
import { DedupCache } from '../src/exchange/dedup-cache.js';
import { F } from '../src/frame/field-table.js';
import { fieldValueKey, type FieldKey } from '../src/frame/field-value-key.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) {
  process.stderr.write('run with node --expose-gc\n');
  process.exit(2);
}

function heapAfterGc(): number {
  gc!();
  gc!();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

function measure(n: number, key: (i: number) => FieldKey): number {
  const before = heapAfterGc();
  const cache = new DedupCache(n, 60_000);
  const now = Date.now();
  for (let i = 0; i < n; i++) cache.insert(key(i), now);
  const after = heapAfterGc();
  if (cache.count !== n) throw new Error(`cache holds ${cache.count} of ${n}`);
  return (after - before) / n;
}

const n = Number(process.argv[2] ?? 1_000_000);
const bytesPerEntry = measure(n, (i) => fieldValueKey(F.int64(1_000_000 + i)));
// A 36-character string header (a UUID, the common case).
const stringKeyBytesPerEntry = measure(n, (i) => fieldValueKey(F.str(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)));
process.stdout.write(`${JSON.stringify({ entries: n, bytesPerEntry: Math.round(bytesPerEntry), stringKeyBytesPerEntry: Math.round(stringKeyBytesPerEntry) })}\n`);
