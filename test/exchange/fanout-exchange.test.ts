import { expect } from 'chai';
import { FanoutExchange } from '../../src/exchange/fanout-exchange.js';
import { I, routed } from './amqplib-values.js';

const make = () => new FanoutExchange().createRouter<string>({});

// AMQP 0-9-1 §3.1.3.2 (fanout exchange); RabbitMQ tutorial-three; rabbit_exchange_type_fanout.
describe('fanout exchange', () => {
  it('is named "fanout" and accepts any arguments', () => {
    const t = new FanoutExchange();
    expect(t.name).to.equal('fanout');
    expect(() => t.validateDeclareArgs({ a: I(1) })).not.to.throw();
    expect(() => t.validateBinding('whatever', { a: I(1) })).not.to.throw();
  });

  it('routes to every bound destination whatever the routing key and headers', () => {
    const r = make();
    r.bind('q1', '', {});
    r.bind('q2', 'ignored', {});
    expect(routed(r, { routingKey: 'anything' })).to.deep.equal(['q1', 'q2']);
    expect(routed(r, { routingKey: '' })).to.deep.equal(['q1', 'q2']);
  });

  it('routes nowhere without bindings', () => {
    expect(routed(make(), { routingKey: 'x' })).to.deep.equal([]);
  });

  it('delivers one copy to a destination bound several times, until its last binding goes', () => {
    const r = make();
    expect(r.bind('q', 'a', {})).to.equal(true);
    expect(r.bind('q', 'b', {})).to.equal(true);
    expect(r.bind('q', 'b', { x: I(1) })).to.equal(true);
    expect(r.bind('q', 'b', { x: I(1) })).to.equal(false);
    expect(r.bindingCount).to.equal(3);
    expect(routed(r, {})).to.deep.equal(['q']);
    r.unbind('q', 'a', {});
    r.unbind('q', 'b', {});
    expect(routed(r, {})).to.deep.equal(['q']);
    expect(r.unbind('q', 'b', { x: I(1) })).to.equal(true);
    expect(routed(r, {})).to.deep.equal([]);
    expect(r.unbind('q', 'b', { x: I(1) })).to.equal(false);
  });

  it('removeDestination unbinds it entirely', () => {
    const r = make();
    r.bind('q', 'a', {});
    r.bind('q', 'b', {});
    r.bind('p', 'a', {});
    r.removeDestination('q');
    expect(r.bindingCount).to.equal(1);
    expect(routed(r, {})).to.deep.equal(['p']);
  });
});
