import { expect } from 'chai';
import { atom, binary, fieldTableTerm, fieldValueTerm, float, formatFloat, formatTerm, int, list, tuple } from '../../src/exchange/erlang-term.js';
import { fv } from './amqplib-values.js';

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

  it('turns field values into rabbit_binary_parser terms', () => {
    expect(formatTerm(fieldValueTerm(fv(null)))).to.equal('undefined');
    expect(formatTerm(fieldValueTerm(fv(true)))).to.equal('true');
    expect(formatTerm(fieldValueTerm(fv([1, 'a'])))).to.equal('[{byte,1},{longstr,<<"a">>}]');
    expect(formatTerm(fieldValueTerm(fv({ '!': 'decimal', value: { places: 2, digits: 5 } })))).to.equal('{2,5}');
    expect(formatTerm(fieldTableTerm({ k: fv({ '!': 'long', value: 5 }) }))).to.equal('[{<<"k">>,long,5}]');
  });
});
