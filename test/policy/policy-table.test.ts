import { expect } from 'chai';
import { openMemoryStore } from '../../src/store/memory-store.js';
import { PolicyTable } from '../../src/policy/policy-table.js';
import { validatePolicy } from '../../src/policy/validation.js';
import type { ApplyTo, PolicyKind } from '../../src/policy/policy.js';

/** Which policy applies (rabbit_policy:match/2, rabbit_queue_type:is_policy_applicable/2). */
describe('PolicyTable', () => {
  const make = () => new PolicyTable('/', openMemoryStore().metadata);
  const p = (name: string, pattern: string, definition: Record<string, unknown>, priority = 0, applyTo: ApplyTo = 'all', kind: PolicyKind = 'policy') =>
    validatePolicy(kind, '/', name, { pattern, definition, priority, applyTo });
  const classic = { kind: 'queue', queueType: 'classic' } as const;
  const quorum = { kind: 'queue', queueType: 'quorum' } as const;
  const exchange = { kind: 'exchange' } as const;

  it('the highest priority among matching policies; apply-to restricts the kind of target', () => {
    const t = make();
    t.set(p('low', '^a', { 'max-length': 1 }, 1));
    t.set(p('high', '^a', { 'max-length': 2 }, 10, 'queues'));
    t.set(p('x-only', '.*', { 'alternate-exchange': 'ae' }, 100, 'exchanges'));
    expect(t.match(classic, 'abc').policy?.name).to.equal('high');
    expect(t.match(exchange, 'abc').policy?.name).to.equal('x-only');
    expect(t.match(classic, 'zzz').policy).to.equal(undefined);
  });

  it('a policy with a key the queue type does not support does not apply to it (the next one does)', () => {
    const t = make();
    t.set(p('dl', '.*', { 'delivery-limit': 2 }, 5));
    t.set(p('ha', '.*', { 'ha-mode': 'all' }, 4));
    t.set(p('plain', '.*', { 'max-length': 9 }, 1));
    expect(t.match(classic, 'q').policy?.name).to.equal('ha');
    expect(t.match(quorum, 'q').policy?.name).to.equal('dl');
    expect(t.match(exchange, 'q').policy?.name).to.equal('dl');
  });

  it('equal priorities: the first by name (RabbitMQ: its table order)', () => {
    const t = make();
    t.set(p('beta', '.*', { 'max-length': 1 }, 3));
    t.set(p('alpha', '.*', { 'max-length': 2 }, 3));
    expect(t.match(classic, 'q').policy?.name).to.equal('alpha');
  });

  it('set reports a change only when the policy differs; persists and clears through the store', () => {
    const store = openMemoryStore();
    const t = new PolicyTable('/', store.metadata);
    expect(t.set(p('a', '.*', { 'max-length': 1 }))).to.equal(true);
    expect(t.set(p('a', '.*', { 'max-length': 1 }))).to.equal(false);
    expect(t.set(p('a', '.*', { 'max-length': 2 }))).to.equal(true);
    t.set(p('op', '.*', { 'max-length': 5 }, 0, 'queues', 'operator-policy'));
    expect(store.metadata.loadDefinitions()).to.deep.equal([
      { kind: 'policy', key: '/\u0000a', value: { vhost: '/', name: 'a', pattern: '.*', 'apply-to': 'all', definition: { 'max-length': 2 }, priority: 0 } },
      { kind: 'operator-policy', key: '/\u0000op', value: { vhost: '/', name: 'op', pattern: '.*', 'apply-to': 'queues', definition: { 'max-length': 5 }, priority: 0 } },
    ]);
    expect(t.clear('policy', 'a')).to.equal(true);
    expect(t.clear('policy', 'a')).to.equal(false);
    t.clearAll();
    expect(store.metadata.loadDefinitions()).to.deep.equal([]);
  });
});
