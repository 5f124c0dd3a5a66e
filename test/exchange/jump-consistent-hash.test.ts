import { expect } from 'chai';
import { Exs1024, jumpConsistentHash } from '../../src/exchange/jump-consistent-hash.js';

// rabbit_exchange_type_consistent_hash:jump_consistent_hash/2 (3.10) over OTP's rand exs1024.
// Expected buckets printed by the plugin's algorithm run on OTP 25 (rand:seed_s(exs1024,
// {K,K,K}), rand:uniform_s/1, trunc((B + 1) / R)).
const VECTORS: [number, number, number][] = [
  [0, 2, 0], [0, 3, 0], [0, 10, 4], [0, 100, 47], [0, 1000, 807], [0, 100000, 64444],
  [1, 2, 0], [1, 3, 2], [1, 10, 3], [1, 100, 29], [1, 1000, 856], [1, 100000, 856],
  [98228475, 2, 1], [98228475, 3, 1], [98228475, 10, 5], [98228475, 100, 88], [98228475, 1000, 543], [98228475, 100000, 90791],
  [134217727, 2, 0], [134217727, 3, 2], [134217727, 10, 6], [134217727, 100, 74], [134217727, 1000, 220], [134217727, 100000, 46231],
];

describe('jumpConsistentHash (plugin jump_consistent_hash/2)', () => {
  for (const [key, n, bucket] of VECTORS) {
    it(`key ${key}, ${n} buckets → ${bucket}`, () => {
      expect(jumpConsistentHash(key, n)).to.equal(bucket);
    });
  }

  it('one bucket is always bucket 0 (the plugin short-circuits)', () => {
    expect(jumpConsistentHash(12345, 1)).to.equal(0);
  });

  it('is consistent: growing from n to n+1 buckets moves a key only to the new bucket', () => {
    for (let key = 0; key < 500; key++) {
      let prev = jumpConsistentHash(key, 2);
      for (let n = 3; n <= 40; n++) {
        const next = jumpConsistentHash(key, n);
        expect(next === prev || next === n - 1, `key ${key} n ${n}`).to.equal(true);
        prev = next;
      }
    }
  });

  it('exs1024 keeps producing values past its 16-word state (exercises the list rotation)', () => {
    const rng = new Exs1024(7n, 7n, 7n);
    const seen = new Set<bigint>();
    for (let i = 0; i < 100; i++) {
      const v = rng.next();
      expect(v >= 0n && v < 2n ** 64n).to.equal(true);
      seen.add(v);
    }
    expect(seen.size).to.equal(100);
  });
});
