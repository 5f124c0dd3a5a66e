/**
 * A map keyed by FieldKey (a header value as a key, fieldValueKey: a safe integer or a string),
 * for the tables that hold values clients choose: the deduplication exchange's cache (up to
 * millions of keys) and a queue's deduplication and last-value keys.
 *
 * Not a Map, for two reasons:
 * - **Hash flooding.** V8 hashes a small-integer Map key without a seed (and a string with one),
 *   so a client can compute integers that all land in one bucket: 16,000 such header values
 *   made 16,000 Map insertions take 400 ms instead of 30 (each walks the chain of the ones
 *   before it), and ten times as many would hold the event loop for most of a minute. Here
 *   hashes are seeded per table (keyHash), and a key placed after a long probe run makes the
 *   table draw new seeds and place every key again (MAX_PROBE).
 * - **Speed at a million keys.** A lookup, a delete and an insert in a V8 Map of 1,000,000 keys
 *   cost about 660 ns together on this class of machine (its buckets and chained entries are far
 *   apart, each a cache miss); here about 310 ns: a lookup reads one slot's key, hash and value,
 *   which sit in three arrays at the same index, and compares the key itself only when the hashes
 *   are equal (an integer key by value, without leaving the array).
 *
 * Open addressing with linear probing, at most half full, and deletion by shifting the entries
 * after it back: no tombstones, so a cache that evicts one key for every key it takes never
 * degrades or rehashes. Iteration order is the table's, not insertion order.
 */
import { randomBytes } from 'node:crypto';
import type { FieldKey } from './field-value-key.js';
import { TWO_32 } from './wire.js';

const INITIAL_CAPACITY = 16;
/**
 * A probe longer than this when a key is placed draws new seeds and places every key again.
 * Half full, with keys spread at random, a run of 256 occupied slots has a chance of about
 * e^-49 at any slot: it takes keys chosen against the seeds.
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
 * The hash of a key under a table's secret seeds. An integer's two halves are each mixed with a
 * seed (unseeded, any two high halves have low halves that collide); a string's chars go
 * through Jenkins' one-at-a-time hash from a seed (V8's seeded string hash for years).
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

export class FieldKeyMap<V> {
  private mask = INITIAL_CAPACITY - 1;
  private seedLo = 0;
  private seedHi = 0;
  /** Keys by slot; undefined marks an empty slot. */
  private keyAt: Array<FieldKey | undefined> = emptySlots(INITIAL_CAPACITY);
  private hashes = new Int32Array(INITIAL_CAPACITY);
  private values: Array<V | undefined> = emptySlots(INITIAL_CAPACITY);
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
    const { keyAt, hashes, mask } = this;
    let longest = 0;
    for (let i = 0; i <= mask; i++) if (keyAt[i] !== undefined) longest = Math.max(longest, ((i - hashes[i]!) & mask) + 1);
    return longest;
  }

  get(key: FieldKey): V | undefined {
    const i = this.find(key, this.hash(key, this.seedLo, this.seedHi));
    return i < 0 ? undefined : this.values[i];
  }

  has(key: FieldKey): boolean {
    return this.find(key, this.hash(key, this.seedLo, this.seedHi)) >= 0;
  }

  set(key: FieldKey, value: V): this {
    const h = this.hash(key, this.seedLo, this.seedHi);
    const found = this.find(key, h);
    if (found >= 0) {
      this.values[found] = value;
      return this;
    }
    this.count++;
    if (this.count * 2 > this.mask + 1) {
      // Growing keeps the seeds: h holds.
      this.relayout(2 * (this.mask + 1));
      this.place(key, h, value);
    } else if (this.place(key, h, value) > MAX_PROBE) {
      this.reseed();
      this.relayout(this.mask + 1);
    }
    return this;
  }

  /** Deletes key; false when it was absent. */
  delete(key: FieldKey): boolean {
    let i = this.find(key, this.hash(key, this.seedLo, this.seedHi));
    if (i < 0) return false;
    const { keyAt, hashes, values, mask } = this;
    // Every entry after i up to the next empty slot whose probe passed over i moves back into it.
    for (let j = (i + 1) & mask; keyAt[j] !== undefined; j = (j + 1) & mask) {
      if (((j - hashes[j]!) & mask) >= ((j - i) & mask)) {
        keyAt[i] = keyAt[j];
        hashes[i] = hashes[j]!;
        values[i] = values[j];
        i = j;
      }
    }
    keyAt[i] = undefined;
    values[i] = undefined;
    this.count--;
    return true;
  }

  /** Empties the map, back to its initial size. */
  clear(): void {
    this.mask = INITIAL_CAPACITY - 1;
    this.keyAt = emptySlots(INITIAL_CAPACITY);
    this.hashes = new Int32Array(INITIAL_CAPACITY);
    this.values = emptySlots(INITIAL_CAPACITY);
    this.count = 0;
  }

  /** The keys, in the table's order. */
  *keys(): IterableIterator<FieldKey> {
    const keyAt = this.keyAt;
    for (let i = 0; i < keyAt.length; i++) {
      const k = keyAt[i];
      if (k !== undefined) yield k;
    }
  }

  /** The slot holding key (whose hash is h), or -1. */
  private find(key: FieldKey, h: number): number {
    const { keyAt, hashes, mask } = this;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const k = keyAt[i];
      if (k === undefined) return -1;
      if (hashes[i] === h && k === key) return i;
    }
  }

  /** Puts an absent key in the first empty slot of its probe sequence; returns the slots probed. */
  private place(key: FieldKey, h: number, value: V | undefined): number {
    const { keyAt, mask } = this;
    let i = h & mask;
    let probed = 1;
    while (keyAt[i] !== undefined) {
      i = (i + 1) & mask;
      probed++;
    }
    keyAt[i] = key;
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
    const { keyAt, values } = this;
    this.mask = capacity - 1;
    this.keyAt = emptySlots(capacity);
    this.hashes = new Int32Array(capacity);
    this.values = emptySlots(capacity);
    for (let i = 0; i < keyAt.length; i++) {
      const k = keyAt[i];
      if (k !== undefined) this.place(k, this.hash(k, this.seedLo, this.seedHi), values[i]);
    }
  }
}

/** An array of n empty slots, filled (not holey: V8 reads a filled array's elements directly). */
function emptySlots<T>(n: number): Array<T | undefined> {
  return new Array<T | undefined>(n).fill(undefined);
}
