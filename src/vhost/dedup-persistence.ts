import { createHash } from 'node:crypto';
import type { Clock } from '../clock.js';
import type { DedupCache } from '../exchange/dedup-cache.js';
import { DeduplicationRouter } from '../exchange/deduplication-exchange.js';
import { fieldKeyFromText, fieldKeyText, type FieldKey } from '../frame/field-value-key.js';
import { stateKeyFits } from '../store/metadata-codec.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { Exchange } from './exchange.js';

/**
 * `x-cache-persistence: disk` of a durable x-message-deduplication exchange: its cache is
 * mirrored into the store (MetadataStore state space `dedup\0vhost\0exchange`), in the same group
 * commit as the messages of the same turn, and read back when the exchange is recovered — the
 * plugin keeps such a cache in a Mnesia disc_copies table. Each record: key = the cache key's
 * text (fieldKeyText) as UTF-8 (or 0x00 · SHA-256 of it when too long for a store key); value = expiresAt f64 ·
 * insertion number f64 · the cache key (so eviction order and long keys survive a restart).
 * A memory cache, or the cache of a transient exchange, is not stored.
 */
export function dedupSpace(vhost: string, exchange: string): string {
  return `dedup\u0000${vhost}\u0000${exchange}`;
}

/** Whether x is a durable deduplication exchange with a disk cache. */
export function hasDiskCache(x: Exchange): x is Exchange & { router: DeduplicationRouter<unknown> } {
  return x.durable && x.router instanceof DeduplicationRouter && x.router.persistence === 'disk';
}

function recordKey(space: string, key: FieldKey): Buffer {
  const raw = Buffer.from(fieldKeyText(key), 'utf8');
  if (stateKeyFits(space, raw) && raw[0] !== 0) return raw;
  return Buffer.concat([Buffer.from([0]), createHash('sha256').update(raw).digest()]);
}

/**
 * Loads x's stored cache (recovery: oldest first, expired entries dropped from the store too),
 * then mirrors every insert and eviction into the store.
 */
export function persistDedupCache(x: Exchange & { router: DeduplicationRouter<unknown> }, metadata: MetadataStore, clock: Clock): void {
  const space = dedupSpace(x.vhost, x.name);
  const cache: DedupCache = x.router.cache;
  const now = clock.now();
  const stored = metadata.loadState(space).map(([k, v]) => ({
    storeKey: k, expiresAt: v.readDoubleBE(0), n: v.readDoubleBE(8), key: fieldKeyFromText(v.subarray(16).toString('utf8')),
  }));
  stored.sort((a, b) => a.n - b.n);
  let next = stored.length > 0 ? stored[stored.length - 1]!.n + 1 : 0;
  const kept = new Set<FieldKey>();
  for (const r of stored) if (cache.restore(r.key, r.expiresAt, now)) kept.add(r.key);
  // Expired entries, and any the size bound pushed out (a smaller x-cache-size cannot happen:
  // arguments are fixed at declare), leave the store now.
  for (const r of stored) if (!kept.has(r.key) || !cache.has(r.key, now)) metadata.deleteState(space, r.storeKey);
  cache.listener = {
    inserted(key, expiresAt) {
      const text = fieldKeyText(key);
      const value = Buffer.alloc(16 + Buffer.byteLength(text, 'utf8'));
      value.writeDoubleBE(expiresAt, 0);
      value.writeDoubleBE(next++, 8);
      value.write(text, 16, 'utf8');
      metadata.putState(space, recordKey(space, key), value);
    },
    deleted(key) {
      metadata.deleteState(space, recordKey(space, key));
    },
  };
}
