import { expect } from 'chai';
import { Added, BindingSet, Removed } from '../../src/exchange/binding-set.js';
import { I, L, S } from './amqplib-values.js';

// Binding identity is (destination, key, arguments): rabbit_binding keys rabbit_route on the whole
// #binding{source, key, destination, args} record.
describe('BindingSet', () => {
  it('reports what each add changed', () => {
    const s = new BindingSet<string>();
    expect(s.add('q', 'k', {})).to.equal(Added.Destination);
    expect(s.add('q', 'k', {})).to.equal(Added.None);
    expect(s.add('q', 'k', { a: I(1) })).to.equal(Added.Args);
    expect(s.add('q', 'k', { a: L(1) })).to.equal(Added.Args);
    expect(s.add('q', 'k2', {})).to.equal(Added.Key);
    expect(s.size).to.equal(4);
  });

  it('reports what each remove changed', () => {
    const s = new BindingSet<string>();
    s.add('q', 'k', {});
    s.add('q', 'k', { a: S('x') });
    s.add('q', 'k2', {});
    expect(s.remove('q', 'k', { a: S('y') })).to.equal(Removed.None);
    expect(s.remove('other', 'k', {})).to.equal(Removed.None);
    expect(s.remove('q', 'k', { a: S('x') })).to.equal(Removed.Args);
    expect(s.remove('q', 'k', {})).to.equal(Removed.Key);
    expect(s.remove('q', 'k2', {})).to.equal(Removed.Destination);
    expect(s.size).to.equal(0);
    expect(s.has('q')).to.equal(false);
  });

  it('removeDestination returns and forgets every binding of the destination', () => {
    const s = new BindingSet<string>();
    s.add('q', 'a', {});
    s.add('q', 'a', { x: I(1) });
    s.add('q', 'b', {});
    s.add('r', 'a', {});
    const gone = s.removeDestination('q')!;
    expect([...gone.keys()].sort()).to.deep.equal(['a', 'b']);
    expect(s.size).to.equal(1);
    expect(s.removeDestination('q')).to.equal(undefined);
  });
});
