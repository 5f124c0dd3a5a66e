/**
 * The bucket choice of RabbitMQ 3.10's consistent-hash exchange
 * (rabbit_exchange_type_consistent_hash:jump_consistent_hash/2): Lamping & Veach's jump
 * consistent hash, driven by OTP's `rand` module with the exs1024 algorithm seeded with
 * {Key, Key, Key}, where Key = erlang:phash2(Value).
 *
 * exs1024 (xorshift1024*, seeded through exs64) and rand:uniform_s/1's float for it
 * (V / 2^64, the algorithm has `max` but no `bits`) are ported from OTP 25's rand.erl, so the
 * bucket numbers are RabbitMQ's. Checked against the Erlang code in
 * test/exchange/jump-consistent-hash.test.ts.
 */

const MASK64 = (1n << 64n) - 1n;
const TWO_POW_64 = 2 ** 64;

/** rand:exs64_next/1: one xorshift64* step; returns [output, new state]. */
function exs64Next(r: bigint): [bigint, bigint] {
  const r1 = r ^ (r >> 12n);
  const r2 = r1 ^ ((r1 << 25n) & MASK64);
  const r3 = r2 ^ (r2 >> 27n);
  return [(r3 * 2685821657736338717n) & MASK64, r3];
}

/** OTP's exs1024 state: the `{[uint64()], [uint64()]}` pair of lists, kept as arrays. */
export class Exs1024 {
  /** Front list, head at the END of the array (so head operations are push/pop). */
  private front: bigint[];
  /** Back list (RL), head at the end of the array. */
  private back: bigint[] = [];

  /** rand:seed_s(exs1024, {A1, A2, A3}). */
  constructor(a1: bigint, a2: bigint, a3: bigint) {
    const m21 = (1n << 21n) - 1n;
    const b1 = (((a1 & m21) + 1n) * 2097131n) & m21;
    const b2 = (((a2 & m21) + 1n) * 2097133n) & m21;
    const b3 = (((a3 & m21) + 1n) * 2097143n) & m21;
    let r = (b1 << 43n) | (b2 << 22n) | (b3 << 1n) | 1n;
    // exs1024_gen1024/3 prepends each output, so the first generated value ends up last.
    const generated: bigint[] = [];
    for (let i = 0; i < 16; i++) {
      const [x, next] = exs64Next(r);
      generated.push(x);
      r = next;
    }
    // Erlang list [X16, X15, ..., X1]; stored reversed (head last): [X1, ..., X16].
    this.front = generated;
  }

  /** rand:exs1024_next/1: the next 64-bit output. */
  next(): bigint {
    if (this.front.length === 1) {
      // {[H], RL} -> {[H | lists:reverse(RL)], []}
      const h = this.front.pop()!;
      // lists:reverse(RL) as a list whose head is RL's last element; head-last array = RL as stored reversed.
      const reversedBack = [...this.back].reverse();
      this.front = [...reversedBack, h];
      this.back = [];
    }
    // front holds 2..16 states here: 16 after a refill, one fewer per call, refilled at 1.
    const s0 = this.front.pop()!;
    const s1 = this.front.pop()!;
    const s11 = s1 ^ ((s1 << 31n) & MASK64);
    const s12 = s11 ^ (s11 >> 11n);
    const s01 = s0 ^ (s0 >> 30n);
    const ns1 = s01 ^ s12;
    this.front.push(ns1);
    this.back.push(s0);
    return (ns1 * 1181783497276652981n) & MASK64;
  }

  /** rand:uniform_s/1 for exs1024: V / (Max + 1), a float in [0, 1). */
  uniform(): number {
    return Number(this.next()) / TWO_POW_64;
  }
}

/**
 * jump_consistent_hash(Key, NumberOfBuckets) for an integer Key (a phash2 value):
 * the bucket in 0..buckets-1.
 */
export function jumpConsistentHash(key: number, buckets: number): number {
  if (buckets === 1) return 0;
  const k = BigInt(key);
  const rng = new Exs1024(k, k, k);
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    const r = rng.uniform();
    j = Math.trunc((b + 1) / r);
  }
  return b;
}
