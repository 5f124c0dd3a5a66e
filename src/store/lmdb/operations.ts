/**
 * The puts and removes of one batch, in order, as the commit engine (commit.ts) builds them
 * before it issues them in one conditional LMDB block. The keys and values of the per-message
 * records (entries, messages, refcounts) are written into slabs, one per batch unless the batch
 * is large (SLAB_MAX bytes each; a bigger record gets one of its own), so a batch of a thousand
 * enqueues allocates one buffer instead of thousands, and issuing them allocates nothing:
 *
 * - a key is copied into LMDB's instruction buffer during put/remove (lmdb-js `writeKey`), so a
 *   key in a slab is handed over in a scratch buffer of its length;
 * - a value is passed to LMDB's write thread by address and length, so it must stay untouched
 *   until the commit (the slabs live as long as this object, which the engine keeps until the
 *   batch committed, or for retry()); a slab value is passed as the slab itself with `start`
 *   and `end` set (lmdb-js takes a value's bytes from [start, end) of its buffer when `start`
 *   is set: the buffer-reuse protocol of its encoders), so no view object per value.
 */

import { quiet, type Bin } from './databases.js';

/** Bytes per slab; a batch that needs more gets further slabs. */
const SLAB_MAX = 1 << 20;
/** Keys in slabs are at most this long (entry keys 12 B, message keys 8 B). */
const MAX_SLAB_KEY = 16;

/** A slab as lmdb-js reads a value out of it: bytes [start, end) of its (own) ArrayBuffer. */
type Slab = Buffer & { start?: number; end?: number };

/** Scratch keys, by length: a slab key is copied into one and handed to put/remove, which copy it. */
const scratchKeys: Buffer[] = [];
for (let n = 0; n <= MAX_SLAB_KEY; n++) scratchKeys.push(Buffer.alloc(n));

/** Per operation in `nums`: key offset (-1 = a key of its own), key length, value offset (-1 = none), value length. */
const FIELDS = 4;

export class Operations {
  private readonly targets: Bin[] = [];
  /** The key's own buffer or the slab holding it. */
  private readonly keyBufs: Buffer[] = [];
  /** The value's own buffer, the slab holding it, or null for a remove. */
  private readonly valBufs: Array<Buffer | null> = [];
  private nums: Int32Array;
  private count = 0;
  /** Bytes of the keys and values added (what the batch adds to the file, before LMDB's pages). */
  bytes = 0;
  /** The slab being filled, and where its free space starts. */
  slab: Buffer = EMPTY;
  private pos = 0;
  /** Bytes the caller expects to reserve still (sizes the next slab). */
  private expected: number;

  /**
   * `expected`: about how many slab bytes the batch will reserve, `operations`: about how many
   * operations it will add (a wrong guess only costs a slab or a larger array).
   */
  constructor(expected: number, operations: number) {
    this.expected = expected;
    this.nums = new Int32Array(Math.max(16, operations) * FIELDS);
  }

  get length(): number {
    return this.count;
  }

  /**
   * Reserves n bytes in the current slab (a new one if they do not fit) and returns their
   * offset in `this.slab`, which the caller then fills.
   */
  reserve(n: number): number {
    if (this.pos + n > this.slab.length) {
      // Own ArrayBuffer (offset 0): lmdb-js takes a slab value's address as its ArrayBuffer's plus start.
      this.slab = Buffer.allocUnsafeSlow(Math.max(n, Math.min(SLAB_MAX, this.expected)));
      this.pos = 0;
    }
    const at = this.pos;
    this.pos += n;
    this.expected -= n;
    return at;
  }

  /** A put whose key (keyLen bytes at keyAt) and value (valueLen bytes at valueAt) are in the current slab. */
  putInSlab(db: Bin, keyAt: number, keyLen: number, valueAt: number, valueLen: number): void {
    this.push(db, this.slab, keyAt, keyLen, this.slab, valueAt, valueLen);
  }

  /** A remove whose key is in the current slab. */
  removeInSlab(db: Bin, keyAt: number, keyLen: number): void {
    this.push(db, this.slab, keyAt, keyLen, null, -1, 0);
  }

  /** A put (value) or remove (null) of buffers of their own. */
  add(db: Bin, key: Buffer, value: Buffer | null): void {
    this.push(db, key, -1, key.length, value, -1, 0);
  }

  /** Issues every operation, in order (inside the caller's write block). */
  issue(): void {
    const nums = this.nums;
    let handled: unknown;
    for (let i = 0, f = 0; i < this.count; i++, f += FIELDS) {
      const db = this.targets[i]!;
      const keyAt = nums[f]!;
      let key = this.keyBufs[i]!;
      if (keyAt >= 0) {
        const src = key;
        const n = nums[f + 1]!;
        key = scratchKeys[n]!;
        for (let j = 0; j < n; j++) key[j] = src[keyAt + j]!;
      }
      const value = this.valBufs[i] as Buffer | null;
      let written: unknown;
      if (value === null) written = db.remove(key);
      else {
        const valueAt = nums[f + 2]!;
        if (valueAt >= 0) {
          (value as Slab).start = valueAt;
          (value as Slab).end = valueAt + nums[f + 3]!;
        }
        written = db.put(key, value);
      }
      // Inside a block every write returns the same promise (the block's outcome is handled
      // once, by the caller); mark each distinct one handled once, not a handler per write.
      if (written !== handled) {
        quiet(written);
        handled = written;
      }
    }
  }

  private push(db: Bin, keyBuf: Buffer, keyAt: number, keyLen: number, valBuf: Buffer | null, valueAt: number, valueLen: number): void {
    if (keyAt >= 0 && keyLen > MAX_SLAB_KEY) throw new RangeError(`slab key of ${keyLen} bytes`);
    let f = this.count * FIELDS;
    if (f + FIELDS > this.nums.length) {
      const grown = new Int32Array(this.nums.length * 2);
      grown.set(this.nums);
      this.nums = grown;
    }
    const nums = this.nums;
    nums[f++] = keyAt;
    nums[f++] = keyLen;
    nums[f++] = valueAt;
    nums[f] = valueLen;
    this.bytes += keyLen + (valBuf === null ? 0 : valueAt >= 0 ? valueLen : valBuf.length);
    this.targets.push(db);
    this.keyBufs.push(keyBuf);
    this.valBufs.push(valBuf);
    this.count++;
  }
}

const EMPTY = Buffer.alloc(0);
