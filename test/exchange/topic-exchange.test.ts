import { expect } from 'chai';
import { TopicExchange, type TopicRouter } from '../../src/exchange/topic-exchange.js';
import { I, S, routed } from './amqplib-values.js';
import { TOPIC_KEYS, TOPIC_MATCHES, TOPIC_PATTERNS } from './rabbitmq-3.10-recorded.js';

const make = () => new TopicExchange().createRouter<string>({}) as TopicRouter<string>;

// AMQP 0-9-1 §3.1.3.3; RabbitMQ tutorial-five; rabbit_exchange_type_topic (3.10).
describe('topic exchange', () => {
  it('is named "topic" and accepts any arguments (validate/1, validate_binding/2 return ok)', () => {
    const t = new TopicExchange();
    expect(t.name).to.equal('topic');
    expect(() => t.validateDeclareArgs({ a: I(1) })).not.to.throw();
    expect(() => t.validateBinding('a..#.*', { a: I(1) })).not.to.throw();
  });

  it(`routes exactly as RabbitMQ 3.10.8 did: ${TOPIC_PATTERNS.length} binding keys × ${TOPIC_KEYS.length} routing keys (recorded)`, () => {
    const r = make();
    for (const p of TOPIC_PATTERNS) r.bind(p, p, {});
    const got = new Map<string, string[]>(TOPIC_PATTERNS.map((p) => [p, []]));
    for (const k of TOPIC_KEYS) for (const p of routed<string>(r, { routingKey: k })) got.get(p)!.push(k);
    for (const p of TOPIC_PATTERNS) {
      expect([...got.get(p)!].sort(), `binding key ${JSON.stringify(p)}`).to.deep.equal(TOPIC_MATCHES[p]);
    }
  });

  it('remembers matches per routing key and forgets them whenever the bindings change', () => {
    const r = make();
    r.bind('q1', 'a.*', {});
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['q1']);
    r.bind('q2', '#.b', {});
    expect(routed(r, { routingKey: 'a.b' }).sort()).to.deep.equal(['q1', 'q2']);
    r.unbind('q1', 'a.*', {});
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['q2']);
    r.removeDestination('q2');
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal([]);
    // More distinct keys than the cache holds still route correctly.
    r.bind('q3', 'k.*', {});
    for (let i = 0; i < 20000; i++) expect(routed(r, { routingKey: `k.${i}` })).to.deep.equal(['q3']);
  });

  it('binding identity includes the arguments; routing ignores them', () => {
    const r = make();
    expect(r.bind('q', 'a.*', {})).to.equal(true);
    expect(r.bind('q', 'a.*', { x: S('1') })).to.equal(true);
    expect(r.bind('q', 'a.*', { x: S('1') })).to.equal(false);
    expect(r.bindingCount).to.equal(2);
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['q']);
    r.unbind('q', 'a.*', {});
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['q']);
    r.unbind('q', 'a.*', { x: S('1') });
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal([]);
    expect(r.trieNodeCount).to.equal(1);
  });

  it('unbind returns false for a binding that does not exist', () => {
    const r = make();
    r.bind('q', 'a.#', {});
    expect(r.unbind('q', 'a.*', {})).to.equal(false);
    expect(r.unbind('p', 'a.#', {})).to.equal(false);
    expect(r.unbind('q', 'a.#', { x: I(1) })).to.equal(false);
  });

  it('removeDestination removes every pattern of that destination and prunes the trie', () => {
    const r = make();
    r.bind('q', 'a.#', {});
    r.bind('q', '*.b', {});
    r.bind('q', '*.b', { k: I(1) });
    r.bind('p', 'a.b', {});
    r.removeDestination('q');
    expect(r.bindingCount).to.equal(1);
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['p']);
    expect(routed(r, { routingKey: 'x.b' })).to.deep.equal([]);
    expect(r.trieNodeCount).to.equal(3);
  });

  it('routes CC/BCC keys as well, one copy per destination (sender-selected distribution)', () => {
    const r = make();
    r.bind('q1', 'a.*', {});
    r.bind('q2', 'b.#', {});
    expect(routed(r, { routingKey: 'a.x', ccRoutingKeys: ['b', 'a.y'] })).to.deep.equal(['q1', 'q2']);
  });

  it('a destination matched by several patterns is added once', () => {
    const r = make();
    r.bind('q', '#', {});
    r.bind('q', 'a.*', {});
    r.bind('q', '*.b', {});
    expect(routed(r, { routingKey: 'a.b' })).to.deep.equal(['q']);
  });
});
