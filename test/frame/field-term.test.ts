import { expect } from 'chai';
import { formatTerm } from '../../src/erlang/format.js';
import { phash2 } from '../../src/erlang/phash2.js';
import { F } from '../../src/frame/field-table.js';
import { fieldTableTerm, fieldValueTerm, typedFieldValueTerm } from '../../src/frame/field-term.js';

// Expected terms as rabbit_binary_parser:parse_table/1 of RabbitMQ 3.10 builds them, printed and
// hashed by OTP 25.
describe('field values as Erlang terms (rabbit_binary_parser)', () => {
  it('turns field values into rabbit_binary_parser terms', () => {
    expect(formatTerm(fieldValueTerm(F.void()))).to.equal('undefined');
    expect(formatTerm(fieldValueTerm(F.bool(true)))).to.equal('true');
    expect(formatTerm(fieldValueTerm(F.array([F.int8(1), F.str('a')])))).to.equal('[{byte,1},{longstr,<<"a">>}]');
    expect(formatTerm(fieldValueTerm(F.decimal(2, 5)))).to.equal('{2,5}');
    expect(formatTerm(fieldTableTerm({ k: F.int64(5) }))).to.equal('[{<<"k">>,long,5}]');
  });

  it('hashes field values as rabbit_binary_parser represents them ({table, [...]}, {array, [...]})', () => {
    expect(phash2(typedFieldValueTerm(F.table({ a: F.int32(1), b: F.str('x') })))).to.equal(70774333);
    expect(phash2(typedFieldValueTerm(F.array([F.int32(1), F.void(), F.bool(false)])))).to.equal(98452823);
    expect(phash2(fieldValueTerm(F.str('abc')))).to.equal(98228475);
  });
});
