import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { u64, wholeAsSmi } from '../src/frame/wire.js';
import { objectArray } from '../src/object-array.js';

/**
 * Representations V8 compiles the publish path against. A small integer read from octets as a
 * heap number, a field that starts as an integer and later holds a fraction, an object whose
 * keys are added in a different order per connection, an array that starts as one of small
 * integers: each changes a shape the compiled code checks, and that code is thrown away and
 * compiled again, mid-run (a stream's first replay and each new publisher connection did, the
 * eighteenth session's traces in BENCHMARKS.md: 150–450 ms of compiler threads a fill).
 */
describe('V8 shapes of the publish path', () => {
  it('u64 and wholeAsSmi give the numbers they read, small or not', () => {
    expect(u64(0, 42)).to.equal(42);
    expect(u64(1, 2)).to.equal(2 ** 32 + 2);
    expect(u64(0, 0xffffffff)).to.equal(0xffffffff);
    expect(wholeAsSmi(42)).to.equal(42);
    expect(wholeAsSmi(1.5)).to.equal(1.5);
    expect(wholeAsSmi(2 ** 40)).to.equal(2 ** 40);
    expect(wholeAsSmi(-3)).to.equal(-3);
    expect(Object.is(wholeAsSmi(-0), 0)).to.equal(true);
    expect(wholeAsSmi(Number.NaN)).to.be.NaN;
    const a = objectArray<{ n: number }>();
    a.push({ n: 1 });
    expect(a).to.deep.equal([{ n: 1 }]);
  });

  it('keeps small integers small, arrays of objects, and one shape per clock and per authorizer (V8 intrinsics)', async () => {
    const fixture = fileURLToPath(new URL('./fixtures/shapes.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', fixture]);
    expect(JSON.parse(stdout)).to.deep.equal({
      wireU64: true,
      storeU64: true,
      wholeAsSmi: true,
      entryMsgId: true,
      entryExpiresAt: true,
      // The control: what objectArray avoids.
      emptyLiteralIsSmiKind: true,
      objectArray: true,
      clocks: true,
      authorizers: true,
    });
  });
});
