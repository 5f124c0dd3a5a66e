/**
 * The bounded cache of a deduplication exchange (`x-message-deduplication`): keys seen, each
 * with an optional absolute expiry. At most `size` entries; when a new key comes and the cache is
 * full, the oldest inserted entry goes. An entry past its expiry counts as absent and is deleted
 * when met. A hit does not refresh the entry (the plugin's Cache.insert writes only a missing
 * key).
 *
 * Layout: a ring of slots in insertion order (the key and its expiry, 0 = never, in a
 * Float64Array) and a hash table from key to its slot (FieldKeyMap: seeded against keys chosen
 * to collide, and half a V8 Map's cost at a million keys). Eviction takes the ring's head: O(1).
 * (A Map alone would evict with `keys().next()`, which walks over every entry deleted from its
 * front since the table was last rehashed: about 100 µs per eviction in a full 1,000,000-entry
 * cache.) An entry deleted out of order (expired, then inserted again) leaves a hole in the ring
 * that eviction skips. The ring starts small and doubles as entries come, so a large
 * x-cache-size costs nothing until used.
 *
 * Expired entries are not swept on a timer: they are deleted when looked up or when eviction
 * reaches them, so the size bound holds either way. `listener` lets the vhost mirror the cache
 * into the store (`x-cache-persistence: disk`).
 */
import { FieldKeyMap } from '../frame/field-key-map.js';
import type { FieldKey } from '../frame/field-value-key.js';

export interface DedupCacheListener {
  inserted(key: FieldKey, expiresAt: number): void;
  deleted(key: FieldKey): void;
}

const INITIAL_SLOTS = 1024;

export class DedupCache {
  /** key → its slot in the ring. */
  private readonly slots = new FieldKeyMap<number>();
  /** The ring: keys (undefined: a hole) and their expiries, oldest at head. */
  private keys: Array<FieldKey | undefined>;
  private expiries: Float64Array;
  private head = 0;
  /** Slots in use from head on, holes included (≥ the number of entries). */
  private used = 0;
  /** Told of every insert and delete (persistence); absent for memory caches. */
  listener: DedupCacheListener | undefined;

  constructor(
    /** Maximum number of entries (> 0). */
    readonly size: number,
    /** Default time to live in ms; undefined = entries do not expire. */
    readonly ttl: number | undefined,
  ) {
    this.keys = new Array<FieldKey | undefined>(INITIAL_SLOTS);
    this.expiries = new Float64Array(INITIAL_SLOTS);
  }

  get count(): number {
    return this.slots.size;
  }

  /**
   * The plugin's Cache.insert: true when key was absent (or expired) and is now inserted with
   * ttl (else the cache's default ttl); false when it is present (a duplicate).
   */
  insert(key: FieldKey, now: number, ttl?: number): boolean {
    const slot = this.slots.get(key);
    if (slot !== undefined) {
      const at = this.expiries[slot]!;
      if (at === 0 || at > now) return false;
      this.remove(key, slot);
    }
    const t = ttl ?? this.ttl;
    const at = t === undefined ? 0 : now + t;
    this.append(key, at);
    this.listener?.inserted(key, at);
    return true;
  }

  /** Whether key is present and not expired (nothing is changed). */
  has(key: FieldKey, now: number): boolean {
    const slot = this.slots.get(key);
    if (slot === undefined) return false;
    const at = this.expiries[slot]!;
    return at === 0 || at > now;
  }

  /** Puts back an entry read from the store, in the order given (recovery); expired ones are skipped. */
  restore(key: FieldKey, expiresAt: number, now: number): boolean {
    if (expiresAt !== 0 && expiresAt <= now) return false;
    const slot = this.slots.get(key);
    if (slot !== undefined) this.remove(key, slot);
    this.append(key, expiresAt);
    return true;
  }

  /** Every entry, oldest first (persistence, tests). */
  *[Symbol.iterator](): IterableIterator<[FieldKey, number]> {
    const n = this.keys.length;
    for (let i = 0; i < this.used; i++) {
      const slot = (this.head + i) % n;
      const key = this.keys[slot];
      if (key !== undefined) yield [key, this.expiries[slot]!];
    }
  }

  /**
   * Adds key at the ring's tail. A full cache first evicts its oldest live entry (holes before
   * it are passed over). A full ring is compacted when at least half of it is holes (each hole is
   * then dropped once: amortized O(1)), else doubled; so it never holds more than 4 × size slots.
   */
  private append(key: FieldKey, expiresAt: number): void {
    if (this.slots.size >= this.size) this.evictOldest();
    if (this.used === this.keys.length) {
      const holes = this.used - this.slots.size;
      this.relayout(holes * 2 >= this.keys.length ? this.keys.length : this.keys.length * 2);
    }
    const slot = (this.head + this.used) % this.keys.length;
    this.keys[slot] = key;
    this.expiries[slot] = expiresAt;
    this.slots.set(key, slot);
    this.used++;
  }

  /** Deletes the oldest live entry, dropping the holes before it. */
  private evictOldest(): void {
    while (this.used > 0) {
      const slot = this.head;
      const key = this.keys[slot];
      this.head = (this.head + 1) % this.keys.length;
      this.used--;
      if (key !== undefined) {
        this.remove(key, slot);
        return;
      }
    }
  }

  /** Deletes key (at slot) and tells the listener; its slot becomes a hole. */
  private remove(key: FieldKey, slot: number): void {
    this.keys[slot] = undefined;
    this.slots.delete(key);
    this.listener?.deleted(key);
  }

  /** Lays the ring out again from slot 0 in `capacity` slots, without its holes. */
  private relayout(capacity: number): void {
    const n = this.keys.length;
    const keys = new Array<FieldKey | undefined>(capacity);
    const expiries = new Float64Array(capacity);
    let to = 0;
    for (let i = 0; i < this.used; i++) {
      const from = (this.head + i) % n;
      const key = this.keys[from];
      if (key === undefined) continue;
      keys[to] = key;
      expiries[to] = this.expiries[from]!;
      this.slots.set(key, to);
      to++;
    }
    this.keys = keys;
    this.expiries = expiries;
    this.head = 0;
    this.used = to;
  }
}
