import { expect } from 'chai';
import { DirectExchange } from '../../src/exchange/direct-exchange.js';
import { I, S, routed } from './amqplib-values.js';

const make = () => new DirectExchange().createRouter<string>({});

// AMQP 0-9-1 §3.1.3.1 (direct exchange); RabbitMQ tutorial-four;
// rabbit_exchange_type_direct:route/2 → rabbit_router:match_routing_key/2.
describe('direct exchange', () => {
  it('is named "direct" and accepts any declare arguments and bindings (validate/1, validate_binding/2 return ok)', () => {
    const t = new DirectExchange();
    expect(t.name).to.equal('direct');
    expect(() => t.validateDeclareArgs({ anything: S('x') })).not.to.throw();
    expect(() => t.validateBinding('', { 'x-match': S('bogus') })).not.to.throw();
  });

  it('routes to destinations bound with exactly the routing key', () => {
    const r = make();
    r.bind('q1', 'orange', {});
    r.bind('q2', 'black', {});
    r.bind('q2', 'green', {});
    expect(routed(r, { routingKey: 'orange' })).to.deep.equal(['q1']);
    expect(routed(r, { routingKey: 'green' })).to.deep.equal(['q2']);
    expect(routed(r, { routingKey: 'Orange' })).to.deep.equal([]);
    expect(routed(r, { routingKey: 'orange.x' })).to.deep.equal([]);
  });

  it('supports multiple bindings with the same key (tutorial-four "multiple bindings")', () => {
    const r = make();
    r.bind('q1', 'black', {});
    r.bind('q2', 'black', {});
    expect(routed(r, { routingKey: 'black' })).to.deep.equal(['q1', 'q2']);
  });

  it('matches the empty key only with the empty binding key (and wildcards mean nothing)', () => {
    const r = make();
    r.bind('empty', '', {});
    r.bind('hash', '#', {});
    r.bind('star', '*', {});
    expect(routed(r, { routingKey: '' })).to.deep.equal(['empty']);
    expect(routed(r, { routingKey: '#' })).to.deep.equal(['hash']);
    expect(routed(r, { routingKey: 'anything' })).to.deep.equal([]);
  });

  it('bind is idempotent for the same (destination, key, args) and returns false the second time', () => {
    const r = make();
    expect(r.bind('q', 'k', { a: I(1) })).to.equal(true);
    expect(r.bind('q', 'k', { a: I(1) })).to.equal(false);
    expect(r.bindingCount).to.equal(1);
  });

  it('treats the same key with different arguments as another binding; routes once; stays until both are gone', () => {
    const r = make();
    r.bind('q', 'k', {});
    expect(r.bind('q', 'k', { a: I(1) })).to.equal(true);
    expect(r.bindingCount).to.equal(2);
    expect(routed(r, { routingKey: 'k' })).to.deep.equal(['q']);
    expect(r.unbind('q', 'k', {})).to.equal(true);
    expect(routed(r, { routingKey: 'k' })).to.deep.equal(['q']);
    expect(r.unbind('q', 'k', { a: I(1) })).to.equal(true);
    expect(routed(r, { routingKey: 'k' })).to.deep.equal([]);
    expect(r.bindingCount).to.equal(0);
  });

  it('unbind returns false when there is no such binding (wrong key, args or destination)', () => {
    const r = make();
    r.bind('q', 'k', { a: I(1) });
    expect(r.unbind('q', 'k', {})).to.equal(false);
    expect(r.unbind('q', 'j', { a: I(1) })).to.equal(false);
    expect(r.unbind('p', 'k', { a: I(1) })).to.equal(false);
    expect(r.bindingCount).to.equal(1);
  });

  it('removeDestination drops every binding of that destination only', () => {
    const r = make();
    r.bind('q', 'a', {});
    r.bind('q', 'b', {});
    r.bind('q', 'b', { x: S('y') });
    r.bind('p', 'a', {});
    r.removeDestination('q');
    expect(r.bindingCount).to.equal(1);
    expect(routed(r, { routingKey: 'a' })).to.deep.equal(['p']);
    expect(routed(r, { routingKey: 'b' })).to.deep.equal([]);
    r.removeDestination('nobody');
  });

  it('routes CC/BCC routing keys too, each destination once (sender-selected distribution)', () => {
    const r = make();
    r.bind('q1', 'a', {});
    r.bind('q2', 'b', {});
    r.bind('q3', 'c', {});
    expect(routed(r, { routingKey: 'a', ccRoutingKeys: ['b', 'a', 'zzz'] })).to.deep.equal(['q1', 'q2']);
  });

  it('works with exchange objects as destinations (exchange-to-exchange bindings, e2e doc page)', () => {
    const r = new DirectExchange().createRouter<{ name: string }>({});
    const x = { name: 'downstream' };
    r.bind(x, 'k', {});
    const out = new Set<{ name: string }>();
    r.route({ routingKey: 'k', headers: undefined }, out);
    expect([...out]).to.deep.equal([x]);
  });

  it('adds to the caller\'s set without removing what is already there', () => {
    const r = make();
    r.bind('q', 'k', {});
    const out = new Set(['earlier']);
    r.route({ routingKey: 'k', headers: undefined }, out);
    expect([...out].sort()).to.deep.equal(['earlier', 'q']);
  });
});
