import { expect } from 'chai';
import { formatFloat, formatString, formatTerm, latin1ToText, writeTerm } from '../../src/erlang/format.js';
import { atom, binary, float, int, list, tuple } from '../../src/erlang/term.js';

// io_lib:format("~p", ...) as RabbitMQ uses it in reply texts; expected strings printed by OTP 25.
describe('formatTerm (io_lib ~p)', () => {
  it('prints printable binaries as <<"...">> with escapes, others as bytes', () => {
    expect(formatTerm(binary('foo'))).to.equal('<<"foo">>');
    expect(formatTerm(binary('a"b\\c\nd'))).to.equal('<<"a\\"b\\\\c\\nd">>');
    expect(formatTerm(binary(Buffer.from([1, 2, 3])))).to.equal('<<1,2,3>>');
    expect(formatTerm(binary(''))).to.equal('<<>>');
    expect(formatTerm(binary(Buffer.from([127])))).to.equal('<<127>>');
    expect(formatTerm(binary(Buffer.from('\x1b\v\b\f\t\r', 'latin1')))).to.equal('<<"\\e\\v\\b\\f\\t\\r">>');
  });

  it('prints atoms bare or quoted, integers, tuples and lists', () => {
    expect(formatTerm(atom('undefined'))).to.equal('undefined');
    expect(formatTerm(atom('x-y'))).to.equal("'x-y'");
    expect(formatTerm(atom('Abc'))).to.equal("'Abc'");
    expect(formatTerm(tuple(atom('decimal'), tuple(int(2), int(100))))).to.equal('{decimal,{2,100}}');
    expect(formatTerm(list([tuple(binary('a'), atom('signedint'), int(1))]))).to.equal('[{<<"a">>,signedint,1}]');
  });

  it('prints floats like float_to_list(F, [short])', () => {
    const cases: [number, string][] = [
      [1, '1.0'], [0.1, '0.1'], [1e20, '1.0e20'], [123456789, '123456789.0'], [1e-5, '1.0e-5'], [1.5e15, '1.5e15'],
      [0.0001, '0.0001'], [0.001, '0.001'], [12345.678, '12345.678'], [-2.5, '-2.5'], [3e-10, '3.0e-10'], [100, '100.0'],
      [1000, '1.0e3'], [1e10, '1.0e10'], [9007199254740992, '9.007199254740992e15'], [9007199254740991, '9007199254740991.0'],
      [4503599627370496, '4503599627370496.0'], [12345678901234567, '1.2345678901234568e16'], [0.00012, '1.2e-4'], [1.25e14, '1.25e14'],
      [0, '0.0'],
    ];
    for (const [f, s] of cases) expect(formatFloat(f), String(f)).to.equal(s);
    expect(formatTerm(float(1.5))).to.equal('1.5');
  });

  it('~w writes binaries as bytes, the rest as ~p does', () => {
    expect(writeTerm(binary('abc'))).to.equal('<<97,98,99>>');
    expect(writeTerm(tuple(atom('a'), list([int(1), float(0.5)]), binary('')))).to.equal('{a,[1,0.5],<<>>}');
  });

  it('~s of a binary gives its bytes as latin1 characters', () => {
    expect(formatString(Buffer.from('é'))).to.equal('\u00c3\u00a9');
    expect(formatString('plain')).to.equal('plain');
  });
});

describe('latin1ToText (Erlang char list → reply-text string)', () => {
  it('gives the string whose UTF-8 is the same bytes when they are valid UTF-8', () => {
    expect(latin1ToText('abc')).to.equal('abc');
    expect(latin1ToText(formatTerm(binary('é')))).to.equal('<<"é">>');
    expect(latin1ToText(formatTerm(binary('é')), 'latin1')).to.equal('<<"é">>');
  });

  it("stands in for invalid UTF-8 with U+FFFD ('replace') or the latin1 characters ('latin1')", () => {
    const text = formatTerm(binary(Buffer.from([0xe9]))); // <<"é">> in latin1: the lone byte E9
    expect(latin1ToText(text)).to.equal('<<"\ufffd">>');
    expect(latin1ToText(text, 'latin1')).to.equal('<<"\u00e9">>');
  });
});
