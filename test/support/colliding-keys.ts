/**
 * Small integers that a V8 Map puts in one bucket: V8 hashes a small-integer key with
 * ComputeUnseededHash (Thomas Wang's integer hash, no seed), so integers whose hashes share their
 * low 13 bits share a bucket of any Map of up to 16,384 entries, and each insertion walks the
 * chain of the ones before it. What a client that wants to flood a table of header values sends.
 */
function v8IntegerHash(k: number): number {
  let h = k >>> 0;
  h = (~h + (h << 15)) >>> 0;
  h = (h ^ (h >>> 12)) >>> 0;
  h = (h + (h << 2)) >>> 0;
  h = (h ^ (h >>> 4)) >>> 0;
  h = Math.imul(h, 2057) >>> 0;
  return ((h ^ (h >>> 16)) >>> 0) & 0x3fffffff;
}

/** count integers > 1 whose V8 hash has key 1's low 13 bits. */
export function integersInOneV8Bucket(count: number): number[] {
  const bucket = v8IntegerHash(1) & 0x1fff;
  const keys: number[] = [];
  for (let k = 2; keys.length < count; k++) if ((v8IntegerHash(k) & 0x1fff) === bucket) keys.push(k);
  return keys;
}
