import { expect } from 'chai';
import { compareUtf8, lowerBound } from '../src/sorted.js';

describe('sorted.ts', () => {
  it('lowerBound finds the first index not below a value', () => {
    const a = [1, 3, 3, 7];
    expect([0, 1, 2, 3, 4, 7, 8].map((v) => lowerBound(a, v))).to.deep.equal([0, 0, 1, 1, 3, 3, 4]);
    expect(lowerBound(a, 3, 2, 4)).to.equal(2);
  });

  it('compareUtf8 orders strings as their UTF-8 octets (Erlang binaries), surrogate pairs and U+E000..U+FFFF included', () => {
    // Characters from every UTF-8 length, the code units around the surrogates, and pairs.
    const alphabet = ['', 'a', 'b', '~', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', 'ऄ', '\ud7ff', '\ue000', '\uffff', '\ufffd', '😀', '𐀀', '\u{10ffff}'];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
    const strings: string[] = [...alphabet];
    for (let i = 0; i < 200; i++) {
      let s = '';
      for (let n = Math.floor(next() * 5); n > 0; n--) s += alphabet[Math.floor(next() * alphabet.length)]!;
      strings.push(s);
    }
    const sign = (n: number): number => (n < 0 ? -1 : n > 0 ? 1 : 0);
    const octets = strings.map((s) => Buffer.from(s, 'utf8'));
    const wrong: string[] = [];
    strings.forEach((a, i) => strings.forEach((b, j) => {
      if (sign(compareUtf8(a, b)) !== Buffer.compare(octets[i]!, octets[j]!)) wrong.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }));
    expect(wrong).to.deep.equal([]);
  });
});
