import { expect } from 'chai';
import type { ExchangeType } from '../../src/exchange/exchange-type.js';
import { ExchangeTypeRegistry, defaultExchangeTypes } from '../../src/exchange/exchange-type-registry.js';

// DESIGN.md convention 6 (exchange types register in a table keyed by type name) and
// convention 3 (no singletons). Type names as RabbitMQ registers them (rabbit_registry boot steps
// of rabbit_exchange_type_{direct,fanout,topic,headers} and rabbit_exchange_type_consistent_hash).
describe('ExchangeTypeRegistry', () => {
  it('defaultExchangeTypes() holds direct, fanout, topic, headers, x-consistent-hash, x-delayed-message and x-message-deduplication', () => {
    const r = defaultExchangeTypes();
    expect(r.names().sort()).to.deep.equal(['direct', 'fanout', 'headers', 'topic', 'x-consistent-hash', 'x-delayed-message', 'x-message-deduplication']);
    for (const name of r.names()) expect(r.get(name)!.name).to.equal(name);
  });

  it('returns undefined for an unknown type (the vhost layer answers 503 COMMAND_INVALID)', () => {
    expect(defaultExchangeTypes().get('x-unknown')).to.equal(undefined);
  });

  it('makes a new registry on every call: registering in one does not leak into another', () => {
    const a = defaultExchangeTypes();
    const b = defaultExchangeTypes();
    const custom: ExchangeType = {
      name: 'x-custom',
      validateDeclareArgs() {},
      validateBinding() {},
      createRouter: () => {
        throw new Error('unused');
      },
    };
    a.register(custom);
    expect(a.get('x-custom')).to.equal(custom);
    expect(b.get('x-custom')).to.equal(undefined);
  });

  it('register() replaces a type of the same name', () => {
    const r = new ExchangeTypeRegistry();
    const one = { ...defaultExchangeTypes().get('direct')! } as ExchangeType;
    const two = defaultExchangeTypes().get('direct')!;
    r.register(one);
    r.register(two);
    expect(r.get('direct')).to.equal(two);
    expect(r.names()).to.deep.equal(['direct']);
  });

  it('every type creates independent routers (one per exchange)', () => {
    const direct = defaultExchangeTypes().get('direct')!;
    const a = direct.createRouter<string>({});
    const b = direct.createRouter<string>({});
    a.bind('q', 'k', {});
    expect(a.bindingCount).to.equal(1);
    expect(b.bindingCount).to.equal(0);
  });
});
