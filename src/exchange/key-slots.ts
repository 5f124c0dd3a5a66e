/**
 * A hash table from a FieldKey (a header value as a key: a safe integer or a string) to a small
 * non-negative integer: the index of the deduplication cache (DedupCache), which keeps up to
 * millions of keys. Open addressing with linear probing in typed arrays, at most half full, and
 * deletion by shifting the entries after it back (no tombstones, so a cache that evicts one key
 * for every key it takes never degrades or rehashes). Hashes are seeded per table, and a key
 * placed after a long probe makes the table draw new seeds (keyHash, MAX_PROBE).
 *
 * Why not a Map: a lookup, a delete and an insert in a V8 Map of 1,000,000 keys cost about
 * 550 ns together on this class of machine (its buckets and chained entries are far apart, each
 * a cache miss), and a Map that grows rehashes every entry. Here a lookup reads one slot's
 * key, hash and value, which sit in three arrays at the same index; the key itself is compared
 * only when the hashes are equal (an integer key is compared by value, without leaving the
 * array).
 */
import { randomBytes } from 'node:crypto';
import type { FieldKey } from '../frame/field-value-key.js';

const INITIAL_CAPACITY = 1024;
const TWO_32 = 4294967296;
/**
 * A probe longer than this when a key is placed draws a new seed and places every key again.
 * Half full, with keys spread at random, a run of 256 occupied slots has a chance of about
 * e^-49 at any slot: it takes keys chosen against the seed.
 */
const MAX_PROBE = 256;

/** A table's hash of a key under its two seeds (32 bits). */
export type KeyHash = (key: FieldKey, seedLo: number, seedHi: number) => number;

/** murmur3's 32-bit finalizer: every bit of h moves every bit of the result. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * The hash of a key under a table's secret seeds, as V8 seeds its own string hashes: keys are
 * header values a client chooses, and a client that could make many keys share a run of slots
 * would make every lookup walk them all (a hash flood). An integer's two halves are each mixed
 * with a seed (with no seed, any two high halves have low halves that collide); a string's
 * chars go through Jenkins' one-at-a-time hash from a seed (V8's seeded string hash for years).
 */
export const keyHash: KeyHash = (key, seedLo, seedHi) => {
  if (typeof key === 'number') return mix(mix((key >>> 0) ^ seedLo) ^ (Math.floor(key / TWO_32) | 0) ^ seedHi) | 0;
  let h = seedLo ^ seedHi;
  for (let i = 0; i < key.length; i++) {
    h = (h + key.charCodeAt(i)) | 0;
    h = (h + (h << 10)) | 0;
    h ^= h >>> 6;
  }
  h = (h + (h << 3)) | 0;
  h ^= h >>> 11;
  return (h + (h << 15)) | 0;
};

export class KeySlots {
  private mask = INITIAL_CAPACITY - 1;
  private seedLo = 0;
  private seedHi = 0;
  /** Keys by slot; undefined marks an empty slot. */
  private keys: Array<FieldKey | undefined> = new Array<FieldKey | undefined>(INITIAL_CAPACITY).fill(undefined);
  private hashes = new Int32Array(INITIAL_CAPACITY);
  private values = new Int32Array(INITIAL_CAPACITY);
  private count = 0;
  /** Seeds drawn so far (tests: a long probe draws new ones). */
  seeds = 0;

  constructor(
    /** The hash (tests give one that a seed can spoil). */
    private readonly hash: KeyHash = keyHash,
  ) {
    this.reseed();
  }

  get size(): number {
    return this.count;
  }

  /** The table's slots (tests: it grows at half full). */
  get capacity(): number {
    return this.mask + 1;
  }

  /** The most slots a lookup of a present key reads (tests: keys spread whatever a client picks). */
  get longestProbe(): number {
    const { keys, hashes, mask } = this;
    let longest = 0;
    for (let i = 0; i <= mask; i++) if (keys[i] !== undefined) longest = Math.max(longest, ((i - hashes[i]!) & mask) + 1);
    return longest;
  }

  /** key's value, or -1 when key is absent. */
  get(key: FieldKey): number {
    const i = this.find(key, this.hash(key, this.seedLo, this.seedHi));
    return i < 0 ? -1 : this.values[i]!;
  }

  /** Sets key's value (0 ≤ value < 2^31), adding key when absent. */
  set(key: FieldKey, value: number): void {
    const h = this.hash(key, this.seedLo, this.seedHi);
    const found = this.find(key, h);
    if (found >= 0) {
      this.values[found] = value;
      return;
    }
    this.count++;
    if (this.count * 2 > this.mask + 1) {
      this.relayout(2 * (this.mask + 1));
      this.place(key, this.hash(key, this.seedLo, this.seedHi), value);
    } else if (this.place(key, h, value) > MAX_PROBE) {
      this.reseed();
      this.relayout(this.mask + 1);
    }
  }

  /** Deletes key; false when it was absent. */
  delete(key: FieldKey): boolean {
    let i = this.find(key, this.hash(key, this.seedLo, this.seedHi));
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

  /** Puts an absent key in the first empty slot of its probe sequence; returns the slots probed. */
  private place(key: FieldKey, h: number, value: number): number {
    const { keys, mask } = this;
    let i = h & mask;
    let probed = 1;
    while (keys[i] !== undefined) {
      i = (i + 1) & mask;
      probed++;
    }
    keys[i] = key;
    this.hashes[i] = h;
    this.values[i] = value;
    return probed;
  }

  private reseed(): void {
    const b = randomBytes(8);
    this.seedLo = b.readInt32LE(0);
    this.seedHi = b.readInt32LE(4);
    this.seeds++;
  }

  /** Places every key again in `capacity` slots under the current seeds. */
  private relayout(capacity: number): void {
    const { keys, values } = this;
    this.mask = capacity - 1;
    this.keys = new Array<FieldKey | undefined>(capacity).fill(undefined);
    this.hashes = new Int32Array(capacity);
    this.values = new Int32Array(capacity);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k !== undefined) this.place(k, this.hash(k, this.seedLo, this.seedHi), values[i]!);
    }
  }
}
