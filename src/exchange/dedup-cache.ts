/**
 * The bounded cache of a deduplication exchange (`x-message-deduplication`): keys seen, each
 * with an optional absolute expiry. At most `size` entries; when a new key comes and the cache is
 * full, the oldest inserted entry goes (a JS Map iterates in insertion order, so that is its
 * first key: O(1)). An entry past its expiry counts as absent and is deleted when met. A hit
 * does not refresh the entry (the plugin's Cache.insert writes only a missing key).
 *
 * Memory: one Map slot per entry (the key string and a number). Expired entries are not swept
 * on a timer: they are deleted when looked up or when eviction reaches them, so the size bound
 * holds either way. `onInsert` / `onDelete` let the vhost mirror the cache into the store
 * (`x-cache-persistence: disk`).
 */
export interface DedupCacheListener {
  inserted(key: string, expiresAt: number): void;
  deleted(key: string): void;
}

export class DedupCache {
  /** key → absolute expiry (ms since epoch), 0 = never. */
  private readonly entries = new Map<string, number>();
  /** Told of every insert and delete (persistence); absent for memory caches. */
  listener: DedupCacheListener | undefined;

  constructor(
    /** Maximum number of entries (> 0). */
    readonly size: number,
    /** Default time to live in ms; undefined = entries do not expire. */
    readonly ttl: number | undefined,
  ) {}

  get count(): number {
    return this.entries.size;
  }

  /**
   * The plugin's Cache.insert: true when key was absent (or expired) and is now inserted with
   * ttl (else the cache's default ttl); false when it is present (a duplicate).
   */
  insert(key: string, now: number, ttl?: number): boolean {
    const expiresAt = this.entries.get(key);
    if (expiresAt !== undefined) {
      if (expiresAt === 0 || expiresAt > now) return false;
      this.delete(key);
    }
    if (this.entries.size >= this.size) this.evictOldest();
    const t = ttl ?? this.ttl;
    const at = t === undefined ? 0 : now + t;
    this.entries.set(key, at);
    this.listener?.inserted(key, at);
    return true;
  }

  /** Whether key is present and not expired (nothing is changed). */
  has(key: string, now: number): boolean {
    const at = this.entries.get(key);
    return at !== undefined && (at === 0 || at > now);
  }

  /** Puts back an entry read from the store, in the order given (recovery); expired ones are skipped. */
  restore(key: string, expiresAt: number, now: number): boolean {
    if (expiresAt !== 0 && expiresAt <= now) return false;
    if (this.entries.size >= this.size) this.evictOldest();
    this.entries.set(key, expiresAt);
    return true;
  }

  private delete(key: string): void {
    this.entries.delete(key);
    this.listener?.deleted(key);
  }

  private evictOldest(): void {
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.delete(oldest.value);
  }

  /** Every entry, oldest first (persistence, tests). */
  *[Symbol.iterator](): IterableIterator<[string, number]> {
    yield* this.entries;
  }
}
