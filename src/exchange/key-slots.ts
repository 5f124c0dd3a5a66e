/**
 * A hash table from a FieldKey (a header value as a key: a safe integer or a string) to a small
 * non-negative integer: the index of the deduplication cache (DedupCache), which keeps up to
 * millions of keys. Open addressing with linear probing in typed arrays, at most half full, and
 * deletion by shifting the entries after it back (no tombstones, so a cache that evicts one key
 * for every key it takes never degrades or rehashes).
 *
 * Why not a Map: a lookup, a delete and an insert in a V8 Map of 1,000,000 keys cost about
 * 550 ns together on this class of machine (its buckets and chained entries are far apart, each
 * a cache miss), and a Map that grows rehashes every entry. Here a lookup reads one slot's
 * key, hash and value, which sit in three arrays at the same index; the key itself is compared
 * only when the hashes are equal (an integer key is compared by value, without leaving the
 * array).
 */
import type { FieldKey } from '../frame/field-value-key.js';

const INITIAL_CAPACITY = 1024;
const TWO_32 = 4294967296;

/** A 32-bit hash of a key (murmur3's finalizer over an integer's two halves, FNV-1a over a string's chars). */
export function keyHash(key: FieldKey): number {
  let h: number;
  if (typeof key === 'number') {
    const hi = Math.floor(key / TWO_32) | 0;
    h = (key >>> 0) ^ Math.imul(hi, 0x85ebca6b);
  } else {
    h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  }
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

export class KeySlots {
  private mask = INITIAL_CAPACITY - 1;
  /** Keys by slot; undefined marks an empty slot. */
  private keys: Array<FieldKey | undefined> = new Array<FieldKey | undefined>(INITIAL_CAPACITY).fill(undefined);
  private hashes = new Int32Array(INITIAL_CAPACITY);
  private values = new Int32Array(INITIAL_CAPACITY);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The table's slots (tests: it grows at half full). */
  get capacity(): number {
    return this.mask + 1;
  }

  /** key's value, or -1 when key is absent. */
  get(key: FieldKey): number {
    const i = this.find(key, keyHash(key));
    return i < 0 ? -1 : this.values[i]!;
  }

  /** Sets key's value (0 ≤ value < 2^31), adding key when absent. */
  set(key: FieldKey, value: number): void {
    const h = keyHash(key);
    const found = this.find(key, h);
    if (found >= 0) {
      this.values[found] = value;
      return;
    }
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    this.place(key, h, value);
    this.count++;
  }

  /** Deletes key; false when it was absent. */
  delete(key: FieldKey): boolean {
    let i = this.find(key, keyHash(key));
    if (i < 0) return false;
    const { keys, hashes, values, mask } = this;
    // Every entry after i up to the next empty slot whose probe passed over i moves back into it.
    for (let j = (i + 1) & mask; keys[j] !== undefined; j = (j + 1) & mask) {
      if (((j - hashes[j]!) & mask) >= ((j - i) & mask)) {
        keys[i] = keys[j];
        hashes[i] = hashes[j]!;
        values[i] = values[j]!;
        i = j;
      }
    }
    keys[i] = undefined;
    this.count--;
    return true;
  }

  /** The slot holding key (whose hash is h), or -1. */
  private find(key: FieldKey, h: number): number {
    const { keys, hashes, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const k = keys[i];
      if (k === undefined) return -1;
      if (hashes[i] === h && k === key) return i;
    }
  }

  /** Puts an absent key in the first empty slot of its probe sequence. */
  private place(key: FieldKey, h: number, value: number): void {
    const { keys, mask } = this;
    let i = h & mask;
    while (keys[i] !== undefined) i = (i + 1) & mask;
    keys[i] = key;
    this.hashes[i] = h;
    this.values[i] = value;
  }

  private grow(): void {
    const { keys, hashes, values } = this;
    const capacity = keys.length * 2;
    this.mask = capacity - 1;
    this.keys = new Array<FieldKey | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== undefined) this.place(k, hashes[i]!, values[i]!);
    }
  }
}
