import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { atom, formatParts, printTerm, tuple, writeTerm } from '../../src/frame/erlang-format.js';
import {
  badFrameEndError,
  cannotDecodeError,
  frameTooLargeError,
  unexpectedFrameError,
  unknownFrameError,
} from '../../src/frame/frame-errors.js';

interface Case {
  type: number;
  payload: string;
  kind: 'end' | 'unknown' | 'large' | 'unexpected';
  n: number;
  expected: string;
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/erlang-format.json', import.meta.url), 'utf8')) as {
  cases: Case[];
};

describe('erlang-format: io_lib:format as RabbitMQ 3.10 words frame errors', () => {
  it(`matches OTP 25's output for ${fixture.cases.length} frame-error texts (fixture made with erl)`, () => {
    for (const c of fixture.cases) {
      let b = Buffer.from(c.payload, 'hex');
      const str = b.length <= 16 ? 'all' : 'first 16';
      if (b.length > 16) b = b.subarray(0, 16);
      const head = `type ${c.type}, ${str} octets = `;
      let got: string;
      if (c.kind === 'end') got = formatParts([head, { p: b }, ': ', { p: tuple(atom('invalid_frame_end_marker'), c.n) }]);
      else if (c.kind === 'unknown') got = formatParts([head, { p: b }, ': ', { p: atom('unknown_frame') }]);
      else if (c.kind === 'large') {
        got = formatParts([`type ${c.type}, all octets = `, { p: Buffer.alloc(0) }, ': ', { p: tuple(atom('frame_too_large'), c.n * 1000, c.n * 7) }]);
      } else got = formatParts([head, { p: b }]);
      expect(got, JSON.stringify(c)).to.equal(c.expected);
    }
  });

  it('prints printable binaries as strings with escapes, others as byte lists (~p, latin1)', () => {
    expect(printTerm(Buffer.from('abc'), 0)).to.equal('<<"abc">>');
    expect(printTerm(Buffer.from('a\n"\\'), 0)).to.equal('<<"a\\n\\"\\\\">>');
    expect(printTerm(Buffer.from([97, 0]), 0)).to.equal('<<97,0>>');
    expect(printTerm(Buffer.alloc(0), 0)).to.equal('<<>>');
    expect(writeTerm(Buffer.from('abc'))).to.equal('<<97,98,99>>');
  });

  // The texts below are verbatim what RabbitMQ 3.10.8 sent in connection.close to a raw client.
  it('words the frame errors seen from a real RabbitMQ 3.10.8', () => {
    const method = Buffer.from([0, 60, 0, 10, 0, 0, 0, 0, 0, 10, 0]);
    expect(badFrameEndError(1, method, 0).replyText).to.equal(
      'FRAME_ERROR - type 1, all octets = <<0,60,0,10,0,0,0,0,0,10,0>>: {invalid_frame_end_marker,\n' + ' '.repeat(52) + '0}',
    );
    const long = Buffer.concat([method, Buffer.from('hello world this is long')]);
    expect(badFrameEndError(1, long, 0x41).replyText).to.equal(
      'FRAME_ERROR - type 1, first 16 octets = <<0,60,0,10,0,0,0,0,0,10,0,104,101,108,108,111>>: {invalid_frame_end_marker,\n' +
        ' '.repeat(77) + '65}',
    );
    expect(frameTooLargeError(1, 200000, 131072).replyText).to.equal(
      'FRAME_ERROR - type 1, all octets = <<>>: {frame_too_large,200000,131064}',
    );
    expect(unknownFrameError(5, Buffer.from('abc')).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<"abc">>: unknown_frame');
    expect(unknownFrameError(5, Buffer.from([1, 2, 3])).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<1,2,3>>: unknown_frame');
    expect(unknownFrameError(8, Buffer.from([1])).replyText).to.equal('FRAME_ERROR - type 8, all octets = <<1>>: unknown_frame');
    expect(unknownFrameError(5, Buffer.from([0xc3, 0xa9])).replyText).to.equal('FRAME_ERROR - type 5, all octets = <<"é">>: unknown_frame');
    expect(unexpectedFrameError(8, Buffer.alloc(0)).replyText).to.equal('UNEXPECTED_FRAME - type 8, all octets = <<>>');
    const ack = cannotDecodeError(Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 7]), 60, 80);
    expect(ack.replyText).to.equal('FRAME_ERROR - cannot decode <<0,0,0,0,0,0,0,0,0,7>>');
    expect([ack.classId, ack.methodId]).to.deep.equal([60, 80]);
  });
});
