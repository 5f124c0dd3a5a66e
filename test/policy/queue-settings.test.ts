import { expect } from 'chai';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { effectiveDefinition } from '../../src/policy/effective-definition.js';
import type { PolicyKind, PolicyMatch } from '../../src/policy/policy.js';
import { effectiveAlternateExchange, effectiveQueueSettings } from '../../src/policy/queue-settings.js';
import { validatePolicy } from '../../src/policy/validation.js';
import { parseQueueArguments } from '../../src/queue/queue-arguments.js';

/**
 * How a queue's arguments and the policies that apply combine (rabbit_amqqueue_process:
 * process_args_policy for classic queues, rabbit_quorum_queue:ra_machine_config for quorum
 * ones) and how an operator policy merges (rabbit_policy:merge_operator_definitions).
 */
const policy = (definition: Record<string, unknown>, kind: PolicyKind = 'policy', name = 'p') =>
  validatePolicy(kind, '/', name, { pattern: '.*', definition });
const match = (p: Record<string, unknown> | undefined, op?: Record<string, unknown>): PolicyMatch => ({
  policy: p && policy(p),
  operatorPolicy: op && policy(op, 'operator-policy', 'op'),
});
const settings = (args: FieldTable, m: PolicyMatch) => effectiveQueueSettings(parseQueueArguments(args, "queue 'q' in vhost '/'"), args, m);

describe('policy resolution against queue arguments', () => {
  it('classic: the argument wins for dead-letter-exchange, dead-letter-routing-key and overflow', () => {
    const args = { 'x-dead-letter-exchange': F.str('arg-dlx'), 'x-dead-letter-routing-key': F.str('arg-rk'), 'x-overflow': F.str('reject-publish') };
    const s = settings(args, match({ 'dead-letter-exchange': 'pol', 'dead-letter-routing-key': 'pol-rk', overflow: 'drop-head' }));
    expect([s.deadLetterExchange, s.deadLetterRoutingKey, s.overflow]).to.deep.equal(['arg-dlx', 'arg-rk', 'reject-publish']);
    const p = settings({}, match({ 'dead-letter-exchange': 'pol', 'dead-letter-routing-key': 'pol-rk', overflow: 'reject-publish-dlx' }));
    expect([p.deadLetterExchange, p.deadLetterRoutingKey, p.overflow]).to.deep.equal(['pol', 'pol-rk', 'reject-publish-dlx']);
  });

  it('classic: the lower value wins for expires, message-ttl, max-length and max-length-bytes', () => {
    const args = { 'x-expires': F.int32(1000), 'x-message-ttl': F.int32(50), 'x-max-length': F.int32(10), 'x-max-length-bytes': F.int32(500) };
    const s = settings(args, match({ expires: 5000, 'message-ttl': 10, 'max-length': 20, 'max-length-bytes': 100 }));
    expect([s.expires, s.messageTtl, s.maxLength, s.maxLengthBytes]).to.deep.equal([1000, 10, 10, 100]);
  });

  it('quorum: the policy wins for overflow and expires; reject-publish-dlx falls back to drop-head; delivery-limit is the lower', () => {
    const args = { 'x-queue-type': F.str('quorum'), 'x-overflow': F.str('reject-publish'), 'x-expires': F.int32(10), 'x-delivery-limit': F.int32(5), 'x-dead-letter-exchange': F.str('arg') };
    const s = settings(args, match({ overflow: 'drop-head', expires: 1000, 'delivery-limit': 9, 'dead-letter-exchange': 'pol' }));
    expect([s.overflow, s.expires, s.deliveryLimit, s.deadLetterExchange]).to.deep.equal(['drop-head', 1000, 5, 'arg']);
    expect(settings({ 'x-queue-type': F.str('quorum') }, match({ overflow: 'reject-publish-dlx' })).overflow).to.equal('drop-head');
  });

  it('quorum: the dead-letter strategy argument wins over the policy\'s', () => {
    const quorum = { 'x-queue-type': F.str('quorum') };
    expect(settings(quorum, match({ 'dead-letter-strategy': 'at-least-once' })).deadLetterStrategy).to.equal('at-least-once');
    expect(settings({ ...quorum, 'x-dead-letter-strategy': F.str('at-most-once') }, match({ 'dead-letter-strategy': 'at-least-once' })).deadLetterStrategy)
      .to.equal('at-most-once');
  });

  it('no policy: the declared settings; removing the policy restores them', () => {
    const args = { 'x-max-length': F.int32(3) };
    expect(settings(args, { policy: undefined, operatorPolicy: undefined })).to.deep.equal(parseQueueArguments(args, 'q'));
  });

  it('an exchange\'s alternate-exchange argument wins over the policy\'s', () => {
    const m = match({ 'alternate-exchange': 'pol-ae' });
    expect(effectiveAlternateExchange({ 'alternate-exchange': F.str('arg-ae') }, m)).to.equal('arg-ae');
    expect(effectiveAlternateExchange({}, m)).to.equal('pol-ae');
    expect(effectiveAlternateExchange({}, match(undefined))).to.equal(undefined);
  });
});

describe('operator policies (rabbit_policy:merge_operator_definitions)', () => {
  it('merge by the lower value on the numeric keys, key order, and either alone', () => {
    expect(effectiveDefinition(match({ 'max-length': 10, 'dead-letter-exchange': 'd', 'message-ttl': 100 }, { 'max-length': 2, 'message-ttl': 500, expires: 9 })))
      .to.deep.equal({ 'dead-letter-exchange': 'd', expires: 9, 'max-length': 2, 'message-ttl': 100 });
    expect(effectiveDefinition(match(undefined, { 'max-length': 2 }))).to.deep.equal({ 'max-length': 2 });
    expect(effectiveDefinition(match({ 'queue-mode': 'lazy' }))).to.deep.equal({ 'queue-mode': 'lazy' });
    expect(effectiveDefinition(match(undefined))).to.equal(undefined);
    expect(settings({}, match({ 'max-length': 10 }, { 'max-length': 2 })).maxLength).to.equal(2);
  });
});
