import { createHash } from 'node:crypto';
import { FieldKeyMap } from '../frame/field-key-map.js';
import { ownField, type FieldTable } from '../frame/field-table.js';
import { fieldKeyFromText, fieldKeyText, fieldNumber, fieldValueKey, type FieldKey } from '../frame/field-value-key.js';
import { stateKeyFits } from '../store/metadata-codec.js';
import type { MetadataStore } from '../store/metadata-store.js';
import type { Message } from './message.js';
import type { LastValueSettings } from './queue-arguments.js';
import type { QueuedMessage } from './queued-message.js';

/** The header the message-deduplication plugin deduplicates on. */
export const DEDUPLICATION_HEADER = 'x-deduplication-header';

/** What the store part of MetadataStore a last-value queue keeps its newest versions in. */
export type VersionStore = Pick<MetadataStore, 'putState' | 'deleteState' | 'loadState' | 'deleteStateSpace'>;

/** What a queue does with an offered message (KeyedMessages.offer). */
export type KeyedOffer =
  /** Not enqueued: a duplicate (x-message-deduplication) or a stale version (x-last-value-version). */
  | { kind: 'drop' }
  /** Enqueued in place of a ready message with the same key. */
  | { kind: 'replace'; entry: QueuedMessage; dedupKey: FieldKey | undefined; key: FieldKey; version: number | undefined }
  /** Enqueued at the tail as usual. */
  | { kind: 'add'; dedupKey: FieldKey | undefined; key: FieldKey | undefined; version: number | undefined };

/**
 * The queue-level message filters that key on a header, for one queue; a queue without
 * x-message-deduplication or x-last-value-key has none (Queue.keyed is undefined, and its
 * enqueue and removal paths pay one undefined check).
 *
 * Deduplication (the plugin's `x-message-deduplication: true`): a message whose
 * x-deduplication-header value is held by a message in the queue — ready or delivered and not
 * yet acknowledged — is not enqueued; the value is released when that message leaves the queue
 * (ack, no-ack delivery, reject, expiry, drop, purge, replacement), never on requeue.
 *
 * Last value (x-last-value-key, Warren's own): a message with the key header replaces the ready
 * message with the same key value that was never delivered, in its place; with
 * x-last-value-version, a message whose version (a number) is not greater than the newest
 * version accepted for its key is not enqueued. A message without the key header, or (with a
 * version header configured) without a numeric version, is not version-checked. The newest
 * versions of a durable queue are kept in the store (state space `lvq\0vhost\0queue`), written
 * with the message that set them, so a restart does not let an old version in again.
 *
 * The keys are header values clients choose: they are held in FieldKeyMaps (seeded hashes), not
 * Maps, whose unseeded small-integer hashes a client could make collide.
 */
export class KeyedMessages {
  /**
   * Deduplication values held by the ready messages, and by the delivered, unacknowledged ones,
   * and how many hold each: a value is held while either counts it. Kept apart so that a purge
   * forgets the ready ones at once, without reading a ready message back from the store.
   */
  private readonly heldReady: FieldKeyMap<number> | undefined;
  private readonly heldUnacked: FieldKeyMap<number> | undefined;
  /** Last value: key → the ready, never-delivered message that a new one with the key replaces. */
  private readonly readyByKey: FieldKeyMap<QueuedMessage> | undefined;
  /** Last value: the reverse of readyByKey. */
  private readonly keyOf: Map<QueuedMessage, FieldKey> | undefined;
  /** Last value with versions: key → the newest accepted version. */
  private readonly versions: FieldKeyMap<number> | undefined;

  constructor(
    deduplication: boolean,
    private readonly lastValue: LastValueSettings | undefined,
    /** Where the newest versions persist (durable queues), and the queue's space in it. */
    private readonly persist: { store: VersionStore; space: string } | undefined,
  ) {
    this.heldReady = deduplication ? new FieldKeyMap() : undefined;
    this.heldUnacked = deduplication ? new FieldKeyMap() : undefined;
    if (lastValue) {
      this.readyByKey = new FieldKeyMap();
      this.keyOf = new Map();
      if (lastValue.versionHeader !== undefined) {
        this.versions = new FieldKeyMap();
        if (persist) {
          for (const [, value] of persist.store.loadState(persist.space)) {
            this.versions.set(fieldKeyFromText(value.subarray(8).toString('utf8')), value.readDoubleBE(0));
          }
        }
      }
    }
  }

  /** Decides what becomes of msg; changes nothing (see added, replaced). */
  offer(msg: Message): KeyedOffer {
    const headers: FieldTable | undefined = msg.properties.headers;
    let dedupKey: FieldKey | undefined;
    if (this.heldReady !== undefined) {
      dedupKey = dedupKeyOf(msg);
      if (dedupKey !== undefined && (this.heldReady.has(dedupKey) || this.heldUnacked!.has(dedupKey))) return { kind: 'drop' };
    }
    const lv = this.lastValue;
    if (lv === undefined) return { kind: 'add', dedupKey, key: undefined, version: undefined };
    const keyValue = ownField(headers, lv.keyHeader);
    if (keyValue === undefined) return { kind: 'add', dedupKey, key: undefined, version: undefined };
    const key = fieldValueKey(keyValue);
    let version: number | undefined;
    if (lv.versionHeader !== undefined) {
      version = fieldNumber(ownField(headers, lv.versionHeader));
      if (version !== undefined && !Number.isNaN(version)) {
        const newest = this.versions!.get(key);
        if (newest !== undefined && !(version > newest)) return { kind: 'drop' };
      } else {
        version = undefined;
      }
    }
    const entry = this.readyByKey!.get(key);
    if (entry !== undefined) return { kind: 'replace', entry, dedupKey, key, version };
    return { kind: 'add', dedupKey, key, version };
  }

  /** A message offered as 'add' is now queued as entry. */
  added(entry: QueuedMessage, offer: KeyedOffer & { kind: 'add' }): void {
    if (offer.dedupKey !== undefined) hold(this.heldReady!, offer.dedupKey);
    if (offer.key !== undefined) {
      this.readyByKey!.set(offer.key, entry);
      this.keyOf!.set(entry, offer.key);
      if (offer.version !== undefined) this.accept(offer.key, offer.version);
    }
  }

  /** entry now holds the message offered as 'replace'; old is the message it replaced. */
  replaced(old: Message, offer: KeyedOffer & { kind: 'replace' }): void {
    if (this.heldReady !== undefined) {
      release(this.heldReady, dedupKeyOf(old));
      if (offer.dedupKey !== undefined) hold(this.heldReady, offer.dedupKey);
    }
    if (offer.version !== undefined) this.accept(offer.key, offer.version);
  }

  /** entry left the ready list for a delivery that needs an ack: it can no longer be replaced. */
  delivered(entry: QueuedMessage): void {
    this.unindex(entry);
    if (this.heldReady !== undefined) move(dedupKeyOf(entry.msg), this.heldReady, this.heldUnacked!);
  }

  /** A delivered entry is ready again (requeued): its value is held as a ready one's. */
  returned(entry: QueuedMessage): void {
    if (this.heldReady !== undefined) move(dedupKeyOf(entry.msg), this.heldUnacked!, this.heldReady);
  }

  /**
   * entry left the queue for good: `unacked` when it was delivered and not yet acknowledged
   * (acked, rejected), otherwise from the ready list (settled by a no-ack delivery, expired,
   * dropped, dead-lettered over a limit).
   */
  gone(entry: QueuedMessage, unacked = false): void {
    this.unindex(entry);
    if (this.heldReady !== undefined) release(unacked ? this.heldUnacked! : this.heldReady, dedupKeyOf(entry.msg));
  }

  /** Every ready message left the queue at once (queue.purge): only the unacknowledged ones hold values now. */
  purged(): void {
    this.readyByKey?.clear();
    this.keyOf?.clear();
    this.heldReady?.clear();
  }

  /** A recovered ready entry (restart): it holds its values again; versions come from the store. */
  recovered(entry: QueuedMessage): void {
    const headers = entry.msg.properties.headers;
    if (this.heldReady !== undefined) {
      const key = dedupKeyOf(entry.msg);
      if (key !== undefined) hold(this.heldReady, key);
    }
    if (this.lastValue === undefined) return;
    const kv = ownField(headers, this.lastValue.keyHeader);
    if (kv === undefined) return;
    const key = fieldValueKey(kv);
    // Several ready messages with one key (requeued ones, say): the last is the one to replace.
    const previous = this.readyByKey!.get(key);
    if (previous !== undefined) this.keyOf!.delete(previous);
    this.readyByKey!.set(key, entry);
    this.keyOf!.set(entry, key);
  }

  /** The queue is deleted: everything goes, its stored versions too. */
  destroy(): void {
    this.heldReady?.clear();
    this.heldUnacked?.clear();
    this.readyByKey?.clear();
    this.keyOf?.clear();
    this.versions?.clear();
    if (this.persist && this.versions) this.persist.store.deleteStateSpace(this.persist.space);
  }

  /** How many deduplication values are held now (tests, management). */
  get heldCount(): number {
    if (this.heldReady === undefined) return 0;
    let n = this.heldUnacked!.size;
    for (const key of this.heldReady.keys()) if (!this.heldUnacked!.has(key)) n++;
    return n;
  }

  /** The newest accepted version of a key value (tests). */
  newestVersion(key: FieldKey): number | undefined {
    return this.versions?.get(key);
  }

  private unindex(entry: QueuedMessage): void {
    const keyOf = this.keyOf;
    if (keyOf === undefined) return;
    const key = keyOf.get(entry);
    if (key === undefined) return;
    keyOf.delete(entry);
    if (this.readyByKey!.get(key) === entry) this.readyByKey!.delete(key);
  }

  private accept(key: FieldKey, version: number): void {
    this.versions!.set(key, version);
    if (!this.persist) return;
    const { store, space } = this.persist;
    const text = fieldKeyText(key);
    const value = Buffer.alloc(8 + Buffer.byteLength(text, 'utf8'));
    value.writeDoubleBE(version, 0);
    value.write(text, 8, 'utf8');
    store.putState(space, versionRecordKey(space, text), value);
  }
}

/** A version record's store key: the key's text as UTF-8, or 0x00 · its SHA-256 when too long. */
function versionRecordKey(space: string, key: string): Buffer {
  const raw = Buffer.from(key, 'utf8');
  if (stateKeyFits(space, raw) && raw[0] !== 0) return raw;
  return Buffer.concat([Buffer.from([0]), createHash('sha256').update(raw).digest()]);
}

/** The state space of a durable last-value queue's versions. */
export function lastValueSpace(vhost: string, queue: string): string {
  return `lvq\u0000${vhost}\u0000${queue}`;
}

/** msg's deduplication value, undefined when it has none. */
function dedupKeyOf(msg: Message): FieldKey | undefined {
  const v = ownField(msg.properties.headers, DEDUPLICATION_HEADER);
  return v === undefined ? undefined : fieldValueKey(v);
}

/** One more message holds key in counts. */
function hold(counts: FieldKeyMap<number>, key: FieldKey): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** One message fewer holds key (if any) in counts. */
function release(counts: FieldKeyMap<number>, key: FieldKey | undefined): void {
  if (key === undefined) return;
  const n = counts.get(key);
  if (n === undefined) return;
  if (n <= 1) counts.delete(key);
  else counts.set(key, n - 1);
}

/** A message holding key (if any) goes from one count to the other. */
function move(key: FieldKey | undefined, from: FieldKeyMap<number>, to: FieldKeyMap<number>): void {
  if (key === undefined) return;
  release(from, key);
  hold(to, key);
}
