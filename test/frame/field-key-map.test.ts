import { expect } from 'chai';
import type { FieldKey } from '../../src/frame/field-value-key.js';
import { FieldKeyMap, keyHash, type KeyHash } from '../../src/frame/field-key-map.js';
import { integersInOneV8Bucket } from '../support/colliding-keys.js';
import { rng } from './helpers.js';

/** Keys of both kinds as fieldValueKey makes them, with integers beyond 32 bits and negatives. */
function keyOf(n: number): FieldKey {
  switch (n % 4) {
    case 0: return n;
    case 1: return -n * 7919;
    case 2: return Number.MAX_SAFE_INTEGER - n;
    default: return `s${n}`;
  }
}

function expectSame(table: FieldKeyMap<number>, model: Map<FieldKey, number>, keys: FieldKey[]): void {
  expect(table.size).to.equal(model.size);
  for (const k of keys) expect(table.get(k), String(k)).to.equal(model.get(k));
  expect([...table.keys()].sort()).to.deep.equal([...model.keys()].sort());
}

describe('FieldKeyMap (tables keyed by header values clients choose)', () => {
  it('agrees with a Map over random sets, deletes and gets, through growth and probe runs that wrap', () => {
    const next = rng(7);
    const keys = Array.from({ length: 3000 }, (_, i) => keyOf(i));
    const table = new FieldKeyMap<number>();
    const model = new Map<FieldKey, number>();
    for (let step = 0; step < 200_000; step++) {
      const k = keys[Math.floor(next() * keys.length)]!;
      const op = next();
      if (op < 0.5) {
        const v = Math.floor(next() * 2 ** 31);
        table.set(k, v);
        model.set(k, v);
      } else if (op < 0.9) {
        expect(table.delete(k)).to.equal(model.delete(k));
      } else {
        expect(table.get(k)).to.equal(model.get(k));
        expect(table.has(k)).to.equal(model.has(k));
      }
      if (step % 20_000 === 0) expectSame(table, model, keys);
    }
    expectSame(table, model, keys);
  });

  it('keeps a full cache\'s evict-one-insert-one going in the same memory, every key found', () => {
    // A deduplication cache of 5,000 keys: each new key evicts the oldest.
    const size = 5000;
    const table = new FieldKeyMap<number>();
    for (let k = 0; k < size; k++) table.set(k, k % size);
    const capacity = table.capacity;
    expect(capacity).to.equal(16_384);
    for (let k = size; k < 50 * size; k++) {
      expect(table.get(k)).to.equal(undefined);
      expect(table.delete(k - size)).to.equal(true);
      table.set(k, k % size);
    }
    expect(table.capacity).to.equal(capacity);
    expect(table.size).to.equal(size);
    for (let k = 49 * size; k < 50 * size; k++) expect(table.get(k)).to.equal(k % size);
    expect(table.get(49 * size - 1)).to.equal(undefined);
  });

  it('tells keys apart that only their kind or their high bits tell apart', () => {
    const table = new FieldKeyMap<number>();
    const keys: FieldKey[] = [1, '1', 's1', 2 ** 32 + 1, -(2 ** 32) + 1, 2 ** 53 - 1, -(2 ** 53) + 1, 0, -0.5 * 0, ''];
    keys.forEach((k, i) => table.set(k, i));
    expect(table.size).to.equal(keys.length - 1); // -0 is 0, as in a Map
    keys.forEach((k, i) => expect(table.get(k), String(k)).to.equal(k === 0 ? keys.lastIndexOf(0) : i));
    expect(keyHash(2 ** 32 + 1, 5, 6)).to.not.equal(keyHash(1, 5, 6));
    expect(keyHash('ab', 5, 6)).to.not.equal(keyHash('ba', 5, 6));
  });

  it('spreads integer keys chosen to collide in a hash of their halves without a seed', () => {
    // The flood an unseeded hash of (low ^ f(high)) allows: for every high half, the low half
    // that gives the same 32 bits as key 1. 2,000 such keys (all above 2^32) would share one
    // probe run, and every lookup would walk it.
    const table = new FieldKeyMap<number>();
    const keys: number[] = [];
    for (let hi = 1; hi <= 2000; hi++) keys.push(hi * 2 ** 32 + ((1 ^ Math.imul(hi, 0x85ebca6b)) >>> 0));
    keys.forEach((k, i) => table.set(k, i));
    expect(table.size).to.equal(keys.length);
    expect(table.longestProbe).to.be.below(64);
    keys.forEach((k, i) => expect(table.get(k)).to.equal(i));
  });

  it('spreads the small integers that a V8 Map puts in one bucket (its unseeded integer hash)', () => {
    const keys = integersInOneV8Bucket(2000);
    const table = new FieldKeyMap<number>();
    keys.forEach((k, i) => table.set(k, i));
    expect(table.longestProbe).to.be.below(64);
    keys.forEach((k, i) => expect(table.get(k)).to.equal(i));
  });

  it('empties with clear() and fills again', () => {
    const table = new FieldKeyMap<string>();
    for (let k = 0; k < 100; k++) table.set(k, `v${k}`);
    table.clear();
    expect([table.size, table.capacity, table.get(5), [...table.keys()]]).to.deep.equal([0, 16, undefined, []]);
    table.set('a', 'x').set(5, 'y');
    expect([table.get('a'), table.get(5), table.size]).to.deep.equal(['x', 'y', 2]);
  });

  it('draws new seeds when keys pile up in one run, and keeps every key', () => {
    // A hash that the first seeds spoil (every key in one slot), as keys chosen against a known
    // seed would: the first long probe draws new seeds and places every key again.
    let spoiled: number | undefined;
    const hash: KeyHash = (key, lo, hi) => {
      spoiled ??= lo;
      return lo === spoiled ? 7 : keyHash(key, lo, hi);
    };
    const table = new FieldKeyMap<number>(hash);
    for (let k = 0; k < 5000; k++) table.set(`s${k}`, k);
    expect(table.seeds).to.equal(2);
    expect(table.longestProbe).to.be.below(64);
    for (let k = 0; k < 5000; k++) expect(table.get(`s${k}`)).to.equal(k);
    expect(table.delete('s0')).to.equal(true);
    expect(table.get('s1')).to.equal(1);
  });
});
