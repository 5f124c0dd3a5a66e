/** Stream arguments and offsets as RabbitMQ 3.10 parses them (rabbit_amqqueue:check_max_age, rabbit_stream_queue:parse_offset_arg). */
import { expect } from 'chai';
import { AmqpError } from '../../src/errors.js';
import { F } from '../../src/frame/field-table.js';
import { parseMaxAge, parseStreamArguments, parseStreamConsumeArguments } from '../../src/stream/stream-arguments.js';

const RS = "queue 'q' in vhost '/'";
const failure = (fn: () => unknown): { code: number; text: string } => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AmqpError) return { code: e.replyCode, text: e.replyText };
    throw e;
  }
  throw new Error('expected a refusal');
};

describe('stream arguments (src/stream/stream-arguments.ts)', () => {
  it('x-max-age: digits and one unit of Y M D h m s; 0 and other units are invalid; no digits crashes (541)', () => {
    expect(['1s', '2m', '3h', '4D', '5M', '6Y', '007s'].map(parseMaxAge)).to.deep.equal([1000, 120_000, 10_800_000, 345_600_000, 12_960_000_000, 189_216_000_000, 7000]);
    expect(['0s', '10', '10ms', '1.5h', '1h ', '1d', '1H'].map(parseMaxAge)).to.deep.equal(Array(7).fill(undefined));
    for (const bad of ['', 'h', '-1h', ' 1h', 'abc']) expect(failure(() => parseMaxAge(bad))).to.deep.equal({ code: 541, text: 'INTERNAL_ERROR' });
  });

  it('checks the stream type\'s own arguments first, then refuses other types\' keys in table order', () => {
    expect(parseStreamArguments({ 'x-max-age': F.str('1h'), 'x-max-length-bytes': F.int32(10), 'x-stream-max-segment-size-bytes': F.int32(5) }, RS))
      .to.deep.equal({ maxLengthBytes: 10, maxAge: 3_600_000, maxSegmentSizeBytes: 5 });
    // The bad x-max-age is found before the unsupported x-message-ttl that precedes it in the table.
    expect(failure(() => parseStreamArguments({ 'x-message-ttl': F.int32(1), 'x-max-age': F.str('0s') }, RS)).text)
      .to.equal(`PRECONDITION_FAILED - invalid arg 'x-max-age' for ${RS}: invalid_max_age`);
    expect(failure(() => parseStreamArguments({ 'x-overflow': F.str('x'), 'x-expires': F.int32(1) }, RS)).text)
      .to.equal(`PRECONDITION_FAILED - invalid arg 'x-overflow' for ${RS} of queue type rabbit_stream_queue`);
    expect(failure(() => parseStreamArguments({ 'x-max-age': F.int32(5) }, RS)).text)
      .to.equal(`PRECONDITION_FAILED - invalid arg 'x-max-age' for ${RS}: {unacceptable_type,signedint}`);
  });

  it('x-stream-offset: first, last, next (the default), numbers, timestamps in seconds, intervals before now', () => {
    const now = 1_700_000_000_000;
    const spec = (v?: ReturnType<typeof F.str>) => parseStreamConsumeArguments(v === undefined ? {} : { 'x-stream-offset': v }, RS, now);
    expect(spec()).to.deep.equal({ kind: 'next' });
    expect(spec(F.str('first'))).to.deep.equal({ kind: 'first' });
    expect(spec(F.str('last'))).to.deep.equal({ kind: 'last' });
    expect(spec(F.int64(-3))).to.deep.equal({ kind: 'offset', offset: -3 });
    expect(spec(F.timestamp(1_600_000_000))).to.deep.equal({ kind: 'timestamp', ms: 1_600_000_000_000 });
    expect(spec(F.str('10m'))).to.deep.equal({ kind: 'timestamp', ms: now - 600_000 });
    expect(spec(F.bool(true))).to.deep.equal({ kind: 'unreadable' });
    expect(failure(() => spec(F.str('10'))).text)
      .to.equal(`PRECONDITION_FAILED - invalid arg 'x-stream-offset' for ${RS}: {invalid_stream_offset_arg,{longstr,<<"10">>}}`);
    expect(failure(() => spec(F.str('bogus')))).to.deep.equal({ code: 541, text: 'INTERNAL_ERROR' });
  });
});
