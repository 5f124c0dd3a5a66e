import { expect } from 'chai';
import { AmqpError, ChannelError, ConnectionError } from '../../src/errors.js';
import { ConsistentHashExchange, parseWeight, type ConsistentHashRouter } from '../../src/exchange/consistent-hash-exchange.js';
import type { FieldTable } from '../../src/frame/field-table.js';
import { I, S, fv, ft, routed } from './amqplib-values.js';
import { CHX_BY_HEADER, CHX_BY_PROPERTY, CHX_BY_ROUTING_KEY, CHX_HEADER_VALUES, CHX_ROUTING_KEYS } from './rabbitmq-3.10-recorded.js';

const X = new ConsistentHashExchange();
const make = (args: FieldTable = {}) => X.createRouter<string>(args) as ConsistentHashRouter<string>;

function thrown(fn: () => void): AmqpError {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(AmqpError);
    return e as AmqpError;
  }
  throw new Error('expected an error');
}

/** The queue number ("1" for q1, "0" for none) each routing key lands on, as one string. */
function assignments(r: ConsistentHashRouter<string>, msgs: { routingKey?: string; headers?: FieldTable; properties?: Record<string, unknown> }[]): string {
  return msgs.map((m) => (routed<string>(r, m)[0] ?? 'q0').slice(1)).join('');
}

const byKey = CHX_ROUTING_KEYS.map((routingKey) => ({ routingKey }));

// rabbitmq_consistent_hash_exchange plugin, RabbitMQ 3.10 (rabbit_exchange_type_consistent_hash.erl
// and the plugin README). Expected routing recorded from a 3.10.8 broker (rabbitmq-3.10-recorded.ts).
describe('x-consistent-hash exchange', () => {
  it('is named "x-consistent-hash"', () => {
    expect(X.name).to.equal('x-consistent-hash');
  });

  describe('binding key = weight (validate_binding/2)', () => {
    it('accepts positive integers as list_to_integer/1 reads them (sign, leading zeros)', () => {
      for (const k of ['1', '10', '007', '+3', '99999999999999999999']) expect(() => X.validateBinding(k, {}), k).not.to.throw();
      expect(parseWeight('+3')).to.equal(3n);
      expect(parseWeight('1.5')).to.equal(undefined);
    });

    // Reply texts as a RabbitMQ 3.10.8 broker sent them.
    it('rejects a non-integer with 406 "The binding key must be an integer: <<...>>"', () => {
      const cases: [string, string][] = [
        ['abc', 'PRECONDITION_FAILED - The binding key must be an integer: <<"abc">>'],
        [' 3', 'PRECONDITION_FAILED - The binding key must be an integer: <<" 3">>'],
        ['', 'PRECONDITION_FAILED - The binding key must be an integer: <<>>'],
        ['1.5', 'PRECONDITION_FAILED - The binding key must be an integer: <<"1.5">>'],
        ['é', 'PRECONDITION_FAILED - The binding key must be an integer: <<"é">>'],
      ];
      for (const [key, text] of cases) {
        const e = thrown(() => X.validateBinding(key, {}));
        expect(e).to.be.instanceOf(ChannelError);
        expect(e.replyCode).to.equal(406);
        expect(e.replyText).to.equal(text);
      }
    });

    it('rejects zero and negative weights with 406 "The binding key must be greater than 0"', () => {
      for (const key of ['0', '-3', '-0']) {
        expect(thrown(() => X.validateBinding(key, {})).replyText).to.equal('PRECONDITION_FAILED - The binding key must be greater than 0');
      }
    });
  });

  describe('exchange arguments (validate/1)', () => {
    it('accepts none, hash-header, or one of the three hash-property values', () => {
      expect(() => X.validateDeclareArgs({})).not.to.throw();
      expect(() => X.validateDeclareArgs({ 'hash-header': S('h') })).not.to.throw();
      for (const p of ['correlation_id', 'message_id', 'timestamp']) expect(() => X.validateDeclareArgs({ 'hash-property': S(p) })).not.to.throw();
      expect(() => X.validateDeclareArgs({ unrelated: I(1) })).not.to.throw();
    });

    it('rejects another property: 406 "Unsupported property: app_id"', () => {
      const e = thrown(() => X.validateDeclareArgs({ 'hash-property': S('app_id') }));
      expect(e).to.be.instanceOf(ChannelError);
      expect(e.replyText).to.equal('PRECONDITION_FAILED - Unsupported property: app_id');
      expect(thrown(() => X.validateDeclareArgs({ 'hash-property': S('propriété') })).replyText).to.equal(
        'PRECONDITION_FAILED - Unsupported property: propriété',
      );
    });

    it('rejects both: 406 "hash-header and hash-property are mutually exclusive"', () => {
      const e = thrown(() => X.validateDeclareArgs({ 'hash-property': S('message_id'), 'hash-header': S('h') }));
      expect(e.replyText).to.equal('PRECONDITION_FAILED - hash-header and hash-property are mutually exclusive');
    });

    it('a non-longstr hash-header/hash-property crashes the channel in RabbitMQ: connection.close 541 "INTERNAL_ERROR"', () => {
      const bad: FieldTable[] = [{ 'hash-header': fv(5) }, { 'hash-property': fv(true) }];
      for (const args of bad) {
        const e = thrown(() => X.validateDeclareArgs(args));
        expect(e).to.be.instanceOf(ConnectionError);
        expect(e.replyCode).to.equal(541);
        expect(e.replyText).to.equal('INTERNAL_ERROR');
      }
    });
  });

  describe('routing on the routing key (recorded from RabbitMQ 3.10.8: same buckets, same queues)', () => {
    it('weights 1, 2, 3', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '2', {});
      r.bind('q3', '3', {});
      expect(r.bucketCount).to.equal(6);
      expect(assignments(r, byKey)).to.equal(CHX_BY_ROUTING_KEY.weights123);
    });

    it('weights 10, 20, 5, 1', () => {
      const r = make();
      r.bind('q1', '10', {});
      r.bind('q2', '20', {});
      r.bind('q3', '5', {});
      r.bind('q4', '1', {});
      expect(assignments(r, byKey)).to.equal(CHX_BY_ROUTING_KEY.weights10_20_5_1);
    });

    it('after unbinding a destination its buckets go and later buckets shift down', () => {
      const r = make();
      r.bind('q1', '3', {});
      r.bind('q2', '2', {});
      r.bind('q3', '4', {});
      expect(r.unbind('q2', '2', {})).to.equal(true);
      expect(r.bucketCount).to.equal(7);
      expect(assignments(r, byKey)).to.equal(CHX_BY_ROUTING_KEY.afterUnbind);
    });

    it('a second binding of a destination already in the ring adds no buckets', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '1', {});
      expect(r.bind('q1', '5', {})).to.equal(true);
      expect(r.bindingCount).to.equal(3);
      expect(r.bucketCount).to.equal(2);
      expect(assignments(r, byKey)).to.equal(CHX_BY_ROUTING_KEY.secondBinding);
    });

    it('unbinding either binding of such a destination drops all its buckets (plugin quirk)', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '1', {});
      r.bind('q1', '5', {});
      r.unbind('q1', '5', {});
      expect(r.bindingCount).to.equal(2); // q1 is still bound with "1"...
      expect(assignments(r, byKey)).to.equal(CHX_BY_ROUTING_KEY.secondBindingUnbound); // ...but gets nothing
      expect(CHX_BY_ROUTING_KEY.secondBindingUnbound).to.match(/^2+$/);
    });
  });

  describe('hash-header and hash-property (recorded from RabbitMQ 3.10.8)', () => {
    it('hash-header hashes the header\'s {Type, Value}; messages without it share one bucket', () => {
      const r = make({ 'hash-header': S('h') });
      ['q1', 'q2', 'q3', 'q4'].forEach((q, i) => r.bind(q, String(i + 1), {}));
      const msgs = [
        ...CHX_HEADER_VALUES.map((v) => ({ routingKey: 'same', headers: ft({ h: v }) })),
        ...Array.from({ length: 100 }, (_, i) => ({ routingKey: 'same', headers: ft({ h: `val-${i}` }) })),
        { routingKey: 'same' },
        { routingKey: 'same', headers: ft({ g: 1 }) },
      ];
      expect(assignments(r, msgs)).to.equal(CHX_BY_HEADER);
    });

    for (const property of ['message_id', 'correlation_id', 'timestamp'] as const) {
      it(`hash-property ${property}`, () => {
        const r = make({ 'hash-property': S(property) });
        ['q1', 'q2', 'q3'].forEach((q, i) => r.bind(q, String(i + 1), {}));
        const msgs = [
          ...Array.from({ length: 60 }, (_, i) => ({
            routingKey: 'same',
            properties: { messageId: `mid-${i}`, correlationId: `cid-${i}`, timestamp: 1700000000 + i * 7 },
          })),
          { routingKey: 'same', properties: {} },
        ];
        expect(assignments(r, msgs)).to.equal(CHX_BY_PROPERTY[property]);
      });
    }

    it('accepts Buffer message ids and bigint timestamps as well', () => {
      const a = make({ 'hash-property': S('message_id') });
      const b = make({ 'hash-property': S('timestamp') });
      for (const r of [a, b]) ['q1', 'q2', 'q3'].forEach((q, i) => r.bind(q, String(i + 1), {}));
      expect(routed(a, { properties: { messageId: Buffer.from('mid-7') } })).to.deep.equal(routed(a, { properties: { messageId: 'mid-7' } }));
      expect(routed(b, { properties: { timestamp: 1700000049n } })).to.deep.equal(routed(b, { properties: { timestamp: 1700000049 } }));
    });
  });

  describe('ring behaviour', () => {
    it('routes nowhere without bindings, and everything to a lone destination', () => {
      const r = make();
      expect(routed(r, { routingKey: 'a' })).to.deep.equal([]);
      r.bind('only', '7', {});
      expect(routed(r, { routingKey: 'a' })).to.deep.equal(['only']);
      expect(routed(r, { routingKey: 'b' })).to.deep.equal(['only']);
    });

    it('sends the same routing key to the same destination every time', () => {
      const r = make();
      ['q1', 'q2', 'q3'].forEach((q) => r.bind(q, '10', {}));
      for (let i = 0; i < 50; i++) expect(routed(r, { routingKey: `k${i}` })).to.deep.equal(routed(r, { routingKey: `k${i}` }));
    });

    it('spreads keys in proportion to the weights', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '3', {});
      const counts: Record<string, number> = { q1: 0, q2: 0 };
      for (let i = 0; i < 4000; i++) counts[routed<string>(r, { routingKey: `message-${i}` })[0]!]! += 1;
      expect(counts.q1! / 4000).to.be.within(0.2, 0.3);
      expect(counts.q2! / 4000).to.be.within(0.7, 0.8);
    });

    it('hashes only the first routing key, never the CC/BCC ones', () => {
      const r = make();
      ['q1', 'q2', 'q3', 'q4'].forEach((q) => r.bind(q, '5', {}));
      for (let i = 0; i < 20; i++) {
        expect(routed(r, { routingKey: `k${i}`, ccRoutingKeys: ['x', 'y', `z${i}`] })).to.deep.equal(routed(r, { routingKey: `k${i}` }));
      }
    });

    it('identity is (destination, key, args); unbind of a missing binding changes nothing', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '1', {});
      expect(r.bind('q1', '1', {})).to.equal(false);
      expect(r.bind('q1', '1', { a: I(1) })).to.equal(true); // a new binding, no new buckets
      expect(r.bindingCount).to.equal(3);
      expect(r.bucketCount).to.equal(2);
      expect(r.unbind('q1', '2', {})).to.equal(false);
      expect(r.unbind('q3', '1', {})).to.equal(false);
      expect(r.bucketCount).to.equal(2);
    });

    it('removeDestination drops its bindings and buckets; rebinding appends it at the end of the ring', () => {
      const r = make();
      r.bind('q1', '1', {});
      r.bind('q2', '2', {});
      r.bind('q3', '3', {});
      r.removeDestination('q1');
      expect(r.bindingCount).to.equal(2);
      expect(r.bucketCount).to.equal(5);
      r.bind('q1', '1', {});
      expect(r.bucketCount).to.equal(6);
      // Same ring as binding q2 "2", q3 "3", q1 "1" from scratch.
      const fresh = make();
      fresh.bind('q2', '2', {});
      fresh.bind('q3', '3', {});
      fresh.bind('q1', '1', {});
      expect(assignments(r, byKey)).to.equal(assignments(fresh, byKey));
    });
  });
});
