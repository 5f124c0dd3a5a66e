import { expect } from 'chai';
import { DirectExchange } from '../../src/exchange/direct-exchange.js';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { BindingTable, type Binding } from '../../src/vhost/binding-table.js';
import { Exchange } from '../../src/vhost/exchange.js';

const exchange = (name: string): Exchange => new Exchange('/', new DirectExchange(), { name, durable: false, autoDelete: false, internal: false, arguments: {} });
const binding = (source: Exchange, destination: Exchange, routingKey: string, args: FieldTable = {}): Binding =>
  ({ source, destination, routingKey, args });

describe('BindingTable', () => {
  it('gives every (routing key, arguments) pair its own identity, NULs and prefixes included (issue 10)', () => {
    const t = new BindingTable();
    const x = exchange('x');
    const d = exchange('d');
    // Keys that are prefixes of one another, keys with NULs, and arguments after the same key.
    const b1 = binding(x, d, 'a\u0000b');
    const b2 = binding(x, d, 'a', { b: F.str('c') });
    const b3 = binding(x, d, 'a\u0000');
    const b4 = binding(x, d, 'a');
    for (const b of [b1, b2, b3, b4]) expect(t.add(b)).to.equal(true);
    expect(t.from(x)).to.have.members([b1, b2, b3, b4]);
    expect(t.get(x, d, 'a\u0000b', {})).to.equal(b1);
    expect(t.get(x, d, 'a', { b: F.str('c') })).to.equal(b2);
    expect(t.get(x, d, 'a\u0000', {})).to.equal(b3);
    expect(t.get(x, d, 'a', {})).to.equal(b4);
    expect(t.delete(b4)).to.equal(true);
    expect(t.to(d)).to.have.members([b1, b2, b3]);
  });

  it('tells apart destinations that share a name but are different objects', () => {
    const t = new BindingTable();
    const x = exchange('x');
    const old = exchange('d');
    const redeclared = exchange('d');
    expect(t.add(binding(x, old, 'k'))).to.equal(true);
    expect(t.add(binding(x, redeclared, 'k'))).to.equal(true);
    expect(t.to(redeclared).map((b) => b.destination)).to.deep.equal([redeclared]);
  });

  it('refuses a duplicate, and indexes by source and destination until the last binding goes', () => {
    const t = new BindingTable();
    const x = exchange('x');
    const d = exchange('d');
    const b = binding(x, d, 'k', { a: F.int32(1) });
    expect(t.add(b)).to.equal(true);
    expect(t.add(binding(x, d, 'k', { a: F.int32(1) }))).to.equal(false);
    expect([t.hasSource(x), t.hasSource(d), t.hasExchangeDestinations]).to.deep.equal([true, false, true]);
    // A binding with the same fields that is not the recorded object is not deleted.
    expect(t.delete(binding(x, d, 'k', { a: F.int32(1) }))).to.equal(false);
    expect(t.delete(b)).to.equal(true);
    expect(t.delete(b)).to.equal(false);
    expect([t.hasSource(x), t.hasExchangeDestinations, t.from(x), t.to(d)]).to.deep.equal([false, false, [], []]);
  });
});
