import { expect } from 'chai';
import { fieldTablesEqual, fieldValuesIdentical, fieldValuesLooselyEqual } from '../../src/exchange/field-table-equality.js';
import type { FieldValue } from '../../src/frame/field-table.js';
import { D, I, L, S, V, fv } from './amqplib-values.js';

const F = (o: Record<string, FieldValue>): FieldValue => ({ type: 'F', value: o });
const A = (...items: FieldValue[]): FieldValue => ({ type: 'A', value: items });

// Binding identity: rabbit_binding:binding_action/3 sorts the top-level args
// (rabbit_misc:sort_field_table) and the route is found by exact term match.
describe('fieldTablesEqual (binding identity, rabbit_binding)', () => {
  it('ignores top-level key order', () => {
    expect(fieldTablesEqual({ a: I(1), b: S('x') }, { b: S('x'), a: I(1) })).to.equal(true);
  });

  it('requires the same type tag: signedint 1 is not long 1', () => {
    expect(fieldTablesEqual({ a: I(1) }, { a: L(1) })).to.equal(false);
  });

  it('requires the same keys and values', () => {
    expect(fieldTablesEqual({}, {})).to.equal(true);
    expect(fieldTablesEqual({ a: I(1) }, {})).to.equal(false);
    expect(fieldTablesEqual({ a: I(1) }, { b: I(1) })).to.equal(false);
    expect(fieldTablesEqual({ a: S('x') }, { a: S('y') })).to.equal(false);
    expect(fieldTablesEqual({ a: S('x') }, { a: { type: 'x', value: Buffer.from('x') } })).to.equal(false);
  });

  it('compares nested tables in order (they are not sorted)', () => {
    expect(fieldTablesEqual({ t: F({ p: I(1), q: I(2) }) }, { t: F({ p: I(1), q: I(2) }) })).to.equal(true);
    expect(fieldTablesEqual({ t: F({ p: I(1), q: I(2) }) }, { t: F({ q: I(2), p: I(1) }) })).to.equal(false);
  });

  it('compares arrays element by element, types included', () => {
    expect(fieldValuesIdentical(A(I(1), S('a')), A(I(1), S('a')))).to.equal(true);
    expect(fieldValuesIdentical(A(I(1)), A(L(1)))).to.equal(false);
    expect(fieldValuesIdentical(A(I(1)), A(I(1), I(1)))).to.equal(false);
  });

  it('compares decimals, booleans, voids, longs and timestamps by value', () => {
    expect(fieldValuesIdentical(fv({ '!': 'decimal', value: { places: 2, digits: 5 } }), fv({ '!': 'decimal', value: { places: 2, digits: 5 } }))).to.equal(true);
    expect(fieldValuesIdentical(fv({ '!': 'decimal', value: { places: 2, digits: 5 } }), fv({ '!': 'decimal', value: { places: 1, digits: 5 } }))).to.equal(false);
    expect(fieldValuesIdentical(fv(true), fv(true))).to.equal(true);
    expect(fieldValuesIdentical(fv(true), fv(false))).to.equal(false);
    expect(fieldValuesIdentical(V, V)).to.equal(true);
    expect(fieldValuesIdentical(L(2n ** 62n), L(2n ** 62n))).to.equal(true);
    expect(fieldValuesIdentical({ type: 'T', value: 5 }, { type: 'T', value: 6 })).to.equal(false);
  });
});

// rabbit_exchange_type_headers:headers_match/5 compares values with Erlang `==` on what
// rabbit_binary_parser:parse_table/1 produced (the type atom is not compared at the top level).
describe('fieldValuesLooselyEqual (Erlang ==, rabbit_exchange_type_headers)', () => {
  it('compares integers and floats numerically across types', () => {
    expect(fieldValuesLooselyEqual(I(1), L(1))).to.equal(true);
    expect(fieldValuesLooselyEqual(I(1), D(1))).to.equal(true);
    expect(fieldValuesLooselyEqual(fv(1), { type: 'T', value: 1 })).to.equal(true);
    expect(fieldValuesLooselyEqual(L(2n ** 60n), D(2 ** 60))).to.equal(true);
    expect(fieldValuesLooselyEqual(I(1), I(2))).to.equal(false);
    expect(fieldValuesLooselyEqual(D(1.1), { type: 'f', value: Math.fround(1.1) })).to.equal(false);
    expect(fieldValuesLooselyEqual(D(1.5), { type: 'f', value: Math.fround(1.5) })).to.equal(true);
  });

  it('compares longstr and binary as the same kind of term (both Erlang binaries)', () => {
    expect(fieldValuesLooselyEqual(S('x'), { type: 'x', value: Buffer.from('x') })).to.equal(true);
    expect(fieldValuesLooselyEqual(S('x'), S('X'))).to.equal(false);
  });

  it('never equates a number with a string, or a boolean with a number', () => {
    expect(fieldValuesLooselyEqual(S('1'), I(1))).to.equal(false);
    expect(fieldValuesLooselyEqual(fv(true), I(1))).to.equal(false);
    expect(fieldValuesLooselyEqual(V, fv(false))).to.equal(false);
  });

  it('equates an empty table with an empty array (both are [] in Erlang), nothing else across them', () => {
    expect(fieldValuesLooselyEqual(F({}), A())).to.equal(true);
    expect(fieldValuesLooselyEqual(A(), F({}))).to.equal(true);
    expect(fieldValuesLooselyEqual(F({ a: I(1) }), A(I(1)))).to.equal(false);
  });

  it('compares nested values with their type atoms: {signedint,1} /= {long,1}', () => {
    expect(fieldValuesLooselyEqual(A(I(1)), A(I(1)))).to.equal(true);
    expect(fieldValuesLooselyEqual(A(I(1)), A(L(1)))).to.equal(false);
    expect(fieldValuesLooselyEqual(F({ a: S('x') }), F({ a: { type: 'x', value: Buffer.from('x') } }))).to.equal(false);
    expect(fieldValuesLooselyEqual(F({ p: I(1), q: I(2) }), F({ q: I(2), p: I(1) }))).to.equal(false);
  });
});
