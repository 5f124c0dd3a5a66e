import { expect } from 'chai';
import { DedupCache } from '../../src/exchange/dedup-cache.js';
import { fieldKeyFromText, fieldKeyText, fieldValueKey } from '../../src/frame/field-value-key.js';
import { F } from '../../src/frame/field-table.js';

// The plugin's Cache (cache.ex): insert writes only a missing (or expired) key; a full cache
// makes room first. Warren evicts the oldest insert where Mnesia evicts "the first" key.
describe('DedupCache', () => {
  it('inserts a key once; a hit does not refresh it', () => {
    const c = new DedupCache(10, 100);
    expect(c.insert('a', 0)).to.equal(true);
    expect(c.insert('a', 50)).to.equal(false);
    expect(c.insert('a', 99)).to.equal(false);
    expect(c.insert('a', 100)).to.equal(true);
    expect(c.count).to.equal(1);
  });

  it('a TTL given with the insert overrides the default; no TTL at all never expires', () => {
    const c = new DedupCache(10, 100);
    c.insert('short', 0, 10);
    c.insert('long', 0, 1000);
    expect(c.has('short', 10)).to.equal(false);
    expect(c.has('long', 999)).to.equal(true);
    const forever = new DedupCache(10, undefined);
    forever.insert('k', 0);
    expect(forever.has('k', Number.MAX_SAFE_INTEGER)).to.equal(true);
  });

  it('keeps at most size entries, evicting the oldest insert; a re-insert after expiry is new', () => {
    const c = new DedupCache(2, 100);
    c.insert('a', 0);
    c.insert('b', 1);
    c.insert('c', 2);
    expect([...c].map(([k]) => k)).to.deep.equal(['b', 'c']);
    // b expires and comes back: it is now the newest, so c goes first.
    expect(c.insert('b', 101)).to.equal(true);
    c.insert('d', 102);
    expect([...c].map(([k]) => k)).to.deep.equal(['b', 'd']);
  });

  it('evicts only when full: an expired entry inserted again leaves no room taken', () => {
    const c = new DedupCache(3, 10);
    c.insert('a', 0, 1000);
    c.insert('b', 0);
    c.insert('c', 0, 1000);
    // b expired; inserted again it is the newest, and the cache holds 3 entries, not 4.
    expect(c.insert('b', 20)).to.equal(true);
    expect([...c].map(([k]) => k)).to.deep.equal(['a', 'c', 'b']);
    c.insert('d', 21); // full: a, the oldest, goes
    expect([...c].map(([k]) => k)).to.deep.equal(['c', 'b', 'd']);
  });

  it('behaves as a list in insertion order would, through growth, holes and compaction (random model check)', () => {
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (const size of [1, 3, 50, 3000]) {
      const c = new DedupCache(size, 100);
      let model: Array<[string, number]> = [];
      for (let step = 0, now = 0; step < 20000; step++, now += random(3)) {
        const key = `k${random(size * 2)}`;
        const ttl = random(4) === 0 ? random(300) : undefined;
        const at = model.find(([k]) => k === key);
        let expected = true;
        if (at && (at[1] === 0 || at[1] > now)) expected = false;
        else {
          if (at) model = model.filter(([k]) => k !== key);
          if (model.length >= size) model.shift();
          model.push([key, now + (ttl ?? 100)]);
        }
        expect(c.insert(key, now, ttl)).to.equal(expected, `step ${step}`);
        if (step % 97 === 0) expect([...c]).to.deep.equal(model, `step ${step}`);
      }
      expect(c.count).to.equal(model.length);
    }
  });

  it('tells its listener of every insert and eviction (persistence)', () => {
    const c = new DedupCache(1, undefined);
    const log: string[] = [];
    c.listener = { inserted: (k, at) => log.push(`+${k}@${at}`), deleted: (k) => log.push(`-${k}`) };
    c.insert('a', 5);
    c.insert('a', 6);
    c.insert('b', 7);
    expect(log).to.deep.equal(['+a@0', '-a', '+b@0']);
  });

  it('restore puts back unexpired entries in the order given, within the size', () => {
    const c = new DedupCache(2, 100);
    expect(c.restore('old', 50, 60)).to.equal(false);
    c.restore('a', 0, 60);
    c.restore('b', 200, 60);
    c.restore('c', 300, 60);
    expect([...c]).to.deep.equal([['b', 200], ['c', 300]]);
  });
});

describe('fieldValueKey (an Erlang term as a cache key)', () => {
  it('every integer type is one integer; floats, strings and byte arrays are their own kinds', () => {
    expect(fieldValueKey(F.int8(7))).to.equal(fieldValueKey(F.int64(7n)));
    expect(fieldValueKey(F.uint32(7))).to.equal(fieldValueKey(F.int16(7)));
    expect(fieldValueKey(F.double(7))).to.not.equal(fieldValueKey(F.int32(7)));
    expect(fieldValueKey(F.str('7'))).to.not.equal(fieldValueKey(F.int32(7)));
    // A longstr and a byte array are both binaries in Erlang.
    expect(fieldValueKey(F.str('ab'))).to.equal(fieldValueKey(F.bytes('ab')));
    expect(fieldValueKey(F.bool(true))).to.not.equal(fieldValueKey(F.str('true')));
    expect(fieldValueKey(F.array([F.str('a'), F.int8(1)]))).to.not.equal(fieldValueKey(F.array([F.int8(1), F.str('a')])));
    // Integers are their numbers (no allocation for small ones); beyond 2^53 a string.
    expect(fieldValueKey(F.int32(-5))).to.equal(-5);
    expect(fieldValueKey(F.int64(2n ** 60n))).to.equal('i1152921504606846976');
  });

  it('fieldKeyText and fieldKeyFromText round-trip every kind (the store keeps keys as text)', () => {
    for (const v of [F.int8(7), F.int64(-(2n ** 40n)), F.int64(2n ** 60n), F.str('i7'), F.str('7'), F.double(7), F.bool(false), F.str(''), F.array([F.int8(1)])]) {
      const key = fieldValueKey(v);
      expect(fieldKeyFromText(fieldKeyText(key))).to.equal(key);
    }
  });
});
