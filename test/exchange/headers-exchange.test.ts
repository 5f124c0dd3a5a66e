import { expect } from 'chai';
import { ChannelError } from '../../src/errors.js';
import { HeadersExchange } from '../../src/exchange/headers-exchange.js';
import type { FieldTable } from '../../src/frame/field-table.js';
import { D, I, L, S, V, fv, ft, routed } from './amqplib-values.js';
import { HEADER_BINDINGS, HEADER_MATCHES, HEADER_MESSAGES } from './rabbitmq-3.10-recorded.js';

const make = () => new HeadersExchange().createRouter<string>({});

/** Does a message with `headers` match one binding with `args`? */
function matches(args: FieldTable, headers: FieldTable | undefined): boolean {
  const r = make();
  r.bind('q', '', args);
  return routed(r, { routingKey: 'ignored', headers }).length === 1;
}

function bindError(args: FieldTable): ChannelError {
  try {
    new HeadersExchange().validateBinding('', args);
  } catch (e) {
    expect(e).to.be.instanceOf(ChannelError);
    return e as ChannelError;
  }
  throw new Error('expected validateBinding to throw');
}

// AMQP 0-9-1 §3.1.3.4; RabbitMQ "exchanges" doc page (headers exchange);
// rabbit_exchange_type_headers:headers_match/5 and validate_binding/2 (3.10).
describe('headers exchange', () => {
  it('is named "headers" and accepts any declare arguments', () => {
    expect(new HeadersExchange().name).to.equal('headers');
    expect(() => new HeadersExchange().validateDeclareArgs({ a: I(1) })).not.to.throw();
  });

  it(`routes exactly as RabbitMQ 3.10.8 did: ${HEADER_BINDINGS.length} bindings × ${HEADER_MESSAGES.length} messages (recorded)`, () => {
    const r = new HeadersExchange().createRouter<number>({});
    HEADER_BINDINGS.forEach((b, i) => r.bind(i, '', ft(b)));
    const got: number[][] = HEADER_BINDINGS.map(() => []);
    HEADER_MESSAGES.forEach((h, j) => {
      for (const i of routed<number>(r, { headers: h === undefined ? undefined : ft(h) })) got[i]!.push(j);
    });
    HEADER_BINDINGS.forEach((b, i) => {
      expect(got[i], `binding ${i} ${JSON.stringify(b)}`).to.deep.equal(HEADER_MATCHES[i]);
    });
  });

  describe('x-match', () => {
    it('defaults to all: every argument must match', () => {
      expect(matches({ a: S('x'), b: S('y') }, { a: S('x'), b: S('y'), c: S('z') })).to.equal(true);
      expect(matches({ a: S('x'), b: S('y') }, { a: S('x') })).to.equal(false);
      expect(matches({ a: S('x'), b: S('y') }, { a: S('x'), b: S('n') })).to.equal(false);
    });

    it('all with no arguments matches every message, even one without headers', () => {
      expect(matches({}, undefined)).to.equal(true);
      expect(matches({ 'x-match': S('all') }, {})).to.equal(true);
    });

    it('any: one matching argument is enough; any with no arguments matches nothing', () => {
      expect(matches({ 'x-match': S('any'), a: S('x'), b: S('y') }, { b: S('y') })).to.equal(true);
      expect(matches({ 'x-match': S('any'), a: S('x'), b: S('y') }, { a: S('n'), b: S('n') })).to.equal(false);
      expect(matches({ 'x-match': S('any') }, { a: S('x') })).to.equal(false);
      expect(matches({ 'x-match': S('any'), a: S('x') }, undefined)).to.equal(false);
    });

    it('ignores other x- arguments unless the rule is all-with-x / any-with-x', () => {
      expect(matches({ 'x-foo': S('bar') }, {})).to.equal(true);
      expect(matches({ 'x-match': S('any'), 'x-foo': S('bar') }, { 'x-foo': S('bar') })).to.equal(false);
      expect(matches({ 'x-match': S('all-with-x'), 'x-foo': S('bar') }, {})).to.equal(false);
      expect(matches({ 'x-match': S('all-with-x'), 'x-foo': S('bar') }, { 'x-foo': S('bar') })).to.equal(true);
      expect(matches({ 'x-match': S('any-with-x'), 'x-foo': S('bar'), a: I(1) }, { 'x-foo': S('bar') })).to.equal(true);
      expect(matches({ 'x-match': S('any-with-x'), 'x-foo': S('bar'), a: I(1) }, { a: I(1) })).to.equal(true);
      expect(matches({ 'x-match': S('any-with-x'), 'x-foo': S('bar') }, { 'x-foo': S('baz') })).to.equal(false);
    });

    it('never compares the x-match argument itself, even with -with-x', () => {
      expect(matches({ 'x-match': S('all-with-x') }, {})).to.equal(true);
      expect(matches({ 'x-match': S('any-with-x') }, { 'x-match': S('any-with-x') })).to.equal(false);
    });

    it('treats an unknown x-match that got past validation as all (parse_x_match/1 fallback)', () => {
      expect(matches({ 'x-match': I(1), a: S('x') }, { a: S('x') })).to.equal(true);
      expect(matches({ 'x-match': S('bogus'), a: S('x'), b: S('y') }, { a: S('x') })).to.equal(false);
    });
  });

  describe('values', () => {
    it('a void argument matches on presence of the header alone', () => {
      expect(matches({ a: V }, { a: S('anything') })).to.equal(true);
      expect(matches({ a: V }, { a: V })).to.equal(true);
      expect(matches({ a: V }, { b: S('x') })).to.equal(false);
      expect(matches({ 'x-match': S('any'), a: V, b: S('y') }, { a: I(0) })).to.equal(true);
    });

    it('compares numbers by value across integer and float types (Erlang ==)', () => {
      expect(matches({ a: I(1) }, { a: L(1) })).to.equal(true);
      expect(matches({ a: L(1) }, { a: fv(1) })).to.equal(true);
      expect(matches({ a: D(1) }, { a: I(1) })).to.equal(true);
      expect(matches({ a: { type: 'T', value: 5 } }, { a: fv(5) })).to.equal(true);
      expect(matches({ a: I(1) }, { a: I(2) })).to.equal(false);
    });

    it('a float sent as 32 bits equals a double only when the value survives the rounding', () => {
      expect(matches({ a: { type: 'f', value: Math.fround(1.5) } }, { a: D(1.5) })).to.equal(true);
      expect(matches({ a: { type: 'f', value: Math.fround(1.1) } }, { a: D(1.1) })).to.equal(false);
    });

    it('compares longstr with binary (x) by bytes, and never strings with numbers or booleans', () => {
      expect(matches({ a: S('x') }, { a: { type: 'x', value: Buffer.from('x') } })).to.equal(true);
      expect(matches({ a: S('1') }, { a: I(1) })).to.equal(false);
      expect(matches({ a: fv(true) }, { a: I(1) })).to.equal(false);
      expect(matches({ a: S('x') }, { a: S('X') })).to.equal(false);
    });

    it('header names are case-sensitive', () => {
      expect(matches({ a: I(1) }, { A: I(1) })).to.equal(false);
    });

    it('nested tables and arrays compare in order and with their element types', () => {
      expect(matches({ a: fv({ p: 1, q: 2 }) }, { a: fv({ p: 1, q: 2 }) })).to.equal(true);
      expect(matches({ a: fv({ p: 1, q: 2 }) }, { a: fv({ q: 2, p: 1 }) })).to.equal(false);
      expect(matches({ a: fv([1]) }, { a: fv([{ '!': 'long', value: 1 }]) })).to.equal(false);
      expect(matches({ a: fv({}) }, { a: fv([]) })).to.equal(true);
    });
  });

  describe('binding validation (validate_binding/2 → 406 PRECONDITION_FAILED)', () => {
    it('accepts no x-match and the four known values', () => {
      const t = new HeadersExchange();
      for (const v of ['all', 'any', 'all-with-x', 'any-with-x']) expect(() => t.validateBinding('', { 'x-match': S(v) })).not.to.throw();
      expect(() => t.validateBinding('any key', { a: I(1) })).not.to.throw();
    });

    // Reply texts as a RabbitMQ 3.10.8 broker sent them (recorded through amqplib).
    it('rejects an unknown longstr value with RabbitMQ\'s wording', () => {
      const e = bindError({ 'x-match': S('some') });
      expect(e.replyCode).to.equal(406);
      expect(e.replyText).to.equal('PRECONDITION_FAILED - Invalid x-match field value <<"some">>; expected all, any, all-with-x, or any-with-x');
      expect(bindError({ 'x-match': S('ALL') }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field value <<"ALL">>; expected all, any, all-with-x, or any-with-x',
      );
    });

    it('rejects a non-longstr x-match with its type atom and value', () => {
      expect(bindError({ 'x-match': fv(1) }).replyText).to.equal('PRECONDITION_FAILED - Invalid x-match field type byte (value 1); expected longstr');
      expect(bindError({ 'x-match': fv(true) }).replyText).to.equal('PRECONDITION_FAILED - Invalid x-match field type bool (value true); expected longstr');
      expect(bindError({ 'x-match': V }).replyText).to.equal('PRECONDITION_FAILED - Invalid x-match field type void (value undefined); expected longstr');
      expect(bindError({ 'x-match': fv(Buffer.from([1, 2])) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type binary (value <<1,2>>); expected longstr',
      );
      expect(bindError({ 'x-match': fv(1.5) }).replyText).to.equal('PRECONDITION_FAILED - Invalid x-match field type double (value 1.5); expected longstr');
      expect(bindError({ 'x-match': fv({ a: 1 }) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type table (value [{<<"a">>,byte,1}]); expected longstr',
      );
      expect(bindError({ 'x-match': fv({ '!': 'float', value: 1.5 }) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type float (value 1.5); expected longstr',
      );
      expect(bindError({ 'x-match': fv({ '!': 'decimal', value: { places: 2, digits: 314 } }) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type decimal (value {2,314}); expected longstr',
      );
      expect(bindError({ 'x-match': fv(['all']) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type array (value [{longstr,<<"all">>}]); expected longstr',
      );
      expect(bindError({ 'x-match': fv({ '!': 'timestamp', value: 5 }) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type timestamp (value 5); expected longstr',
      );
      expect(bindError({ 'x-match': fv({ '!': 'long', value: 5 }) }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field type long (value 5); expected longstr',
      );
    });

    it('prints UTF-8 values so that the reply text bytes equal RabbitMQ\'s', () => {
      expect(bindError({ 'x-match': S('tout-été') }).replyText).to.equal(
        'PRECONDITION_FAILED - Invalid x-match field value <<"tout-été">>; expected all, any, all-with-x, or any-with-x',
      );
    });
  });

  describe('bindings', () => {
    it('identity is (destination, key, args): the routing key is ignored but distinguishes bindings', () => {
      const r = make();
      expect(r.bind('q', 'k1', { a: I(1) })).to.equal(true);
      expect(r.bind('q', 'k2', { a: I(1) })).to.equal(true);
      expect(r.bind('q', 'k1', { a: I(1) })).to.equal(false);
      expect(r.bind('q', 'k1', { a: L(1) })).to.equal(true);
      expect(r.bindingCount).to.equal(3);
      expect(routed(r, { routingKey: 'zzz', headers: { a: I(1) } })).to.deep.equal(['q']);
    });

    it('a destination receives one copy when several of its bindings match', () => {
      const r = make();
      r.bind('q', '', { a: I(1) });
      r.bind('q', '', { b: I(1) });
      r.bind('p', '', { b: I(1) });
      expect(routed(r, { headers: { a: I(1), b: I(1) } })).to.deep.equal(['p', 'q']);
    });

    it('unbind removes exactly the binding with those args (args compared structurally, key order ignored)', () => {
      const r = make();
      r.bind('q', '', { a: I(1), 'x-match': S('any'), b: I(2) });
      r.bind('q', '', { c: I(3) });
      expect(r.unbind('q', '', { a: I(2) })).to.equal(false);
      expect(r.unbind('q', '', { b: I(2), a: I(1), 'x-match': S('any') })).to.equal(true);
      expect(routed(r, { headers: { a: I(1) } })).to.deep.equal([]);
      expect(routed(r, { headers: { c: I(3) } })).to.deep.equal(['q']);
      expect(r.unbind('q', '', { c: I(3) })).to.equal(true);
      expect(r.bindingCount).to.equal(0);
    });

    it('removeDestination drops all its bindings', () => {
      const r = make();
      r.bind('q', '', {});
      r.bind('q', 'x', { a: I(1) });
      r.bind('p', '', {});
      r.removeDestination('q');
      expect(r.bindingCount).to.equal(1);
      expect(routed(r, { headers: { a: I(1) } })).to.deep.equal(['p']);
    });
  });
});
