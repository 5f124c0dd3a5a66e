import { expect } from 'chai';
import fc from 'fast-check';
import { ConnectionError, ReplyCode } from '../../src/errors.js';
import { fuzzMethod } from './decoder-targets.js';
import { Executor, minimize, type Finding } from './engine.js';
import type { Target } from './targets.js';

/** The oracles themselves must be able to fail: each is shown a target that breaks it. */
describe('fuzz oracles', () => {
  const target = (run: Target['run'], kind: Target['kind'] = 'decoder'): Target => ({
    name: 'self-test',
    kind,
    hangMs: 200,
    run,
    arbitrary: fc.constant(Buffer.alloc(0)),
    maxLength: 64,
  });
  const exec = (t: Target, input: Buffer, memory = false) => new Executor(t, undefined, 0, () => undefined).exec(input, memory);

  it('passes documented errors and reports anything else thrown as a crash', async () => {
    const ok = target(() => {
      throw new ConnectionError(ReplyCode.FRAME_ERROR, 'x');
    });
    // The decoder targets catch documented errors themselves; a target that lets one escape fails.
    expect((await exec(ok, Buffer.alloc(1)))?.kind).to.equal('crash');
    const failure = await exec(target(() => void Buffer.alloc(1).readUInt32BE(0)), Buffer.alloc(1));
    expect(failure?.kind).to.equal('crash');
    expect(failure?.message).to.contain('RangeError');
  });

  it('reports an input that takes longer than the bound as a hang', async () => {
    const slow = target(() => {
      const end = Date.now() + 300;
      while (Date.now() < end);
    });
    expect((await exec(slow, Buffer.alloc(1)))?.kind).to.equal('hang');
  });

  it('reports memory kept beyond the bound per input byte', async () => {
    let kept: unknown;
    const hoard = target((input, atPeak) => {
      kept = Array.from({ length: 200_000 }, (_, i) => ({ i, input }));
      atPeak?.();
    }, 'connection');
    expect((await exec(hoard, Buffer.alloc(8), true))?.kind).to.equal('memory');
    kept = undefined;
    const modest = target((input, atPeak) => {
      kept = Buffer.from(input);
      atPeak?.();
    }, 'connection');
    expect(await exec(modest, Buffer.alloc(1000), true)).to.equal(undefined);
    void kept;
  });

  it('reports Buffers a decoder allocates beyond the bound, even when dropped', async () => {
    const greedy = target((input) => void Buffer.alloc(8 * 1024 * 1024 + input.length));
    expect((await exec(greedy, Buffer.alloc(4)))?.kind).to.equal('memory');
  });

  it('takes a reply text the encoder cuts (invalid UTF-8 in basic.return) for no round-trip failure', () => {
    // Found by the method target (seed 31337): 200 octets 0xff become 600 octets of U+FFFD.
    const payload = Buffer.concat([Buffer.from([0, 60, 0, 50, 0, 200, 200]), Buffer.alloc(200, 0xff), Buffer.from([0, 0])]);
    expect(() => fuzzMethod(payload)).to.not.throw();
  });

  it('minimizes a failing input to the bytes that matter and records each problem once', async () => {
    const picky = target((input) => {
      if (input.includes(Buffer.from('AMQP'))) throw new TypeError('saw AMQP');
    });
    const found: Finding[] = [];
    const ex = new Executor(picky, undefined, 0, (f) => found.push(f));
    const input = Buffer.from('xxxxxxxxAMQPyyyyyyyyyyyyy');
    const failure = (await ex.exec(input))!;
    expect(await ex.record(input, failure, 'test', 1)).to.equal(true);
    expect(await ex.record(Buffer.from('zAMQPz'), failure, 'test', 1)).to.equal(false);
    expect(found.map((f) => Buffer.from(f.input, 'hex').toString())).to.deep.equal(['AMQP']);
    expect(await minimize(Buffer.from('AMQPAMQP'), 'never', ex, 10)).to.deep.equal(Buffer.from('AMQPAMQP'));
  });
});
