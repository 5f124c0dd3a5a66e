import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { PolicyInternalError, PolicyValidationError, validatePolicyBody } from '../../src/policy/validation.js';
import type { PolicyKind } from '../../src/policy/policy.js';

/**
 * Every policy key with valid and invalid values, the ha-* and queue-master-locator rules, the
 * order of errors from several validators, Erlang term printing (maps, binaries that are not
 * latin1 text, line breaks at 80 columns), top-level fields and missing keys: each case's status
 * and reason were recorded from RabbitMQ 3.10.8's management API (fixtures/validation-3.10.8.json,
 * PUT /api/policies/%2F/… and /api/operator-policies/%2F/…).
 */
interface Recorded {
  kind: PolicyKind;
  body: Record<string, unknown>;
  status: number;
  reason?: string;
}

const fixture = JSON.parse(readFileSync(new URL('./fixtures/validation-3.10.8.json', import.meta.url), 'utf8')) as { cases: Recorded[] };

function outcome(c: Recorded): { status: number; reason?: string } {
  try {
    validatePolicyBody(c.kind, '/', 'p', c.body);
    return { status: 201 };
  } catch (e) {
    if (e instanceof PolicyValidationError) return { status: 400, reason: e.httpReason };
    if (e instanceof PolicyInternalError) return { status: 500 };
    throw e;
  }
}

describe('policy validation (recorded from RabbitMQ 3.10.8)', () => {
  it(`has the ${fixture.cases.length} recorded cases`, () => {
    expect(fixture.cases.length).to.be.greaterThan(200);
  });
  for (const c of fixture.cases) {
    it(`${c.kind} ${JSON.stringify(c.body)} → ${c.status}`, () => {
      const expected: { status: number; reason?: string } = { status: c.status };
      if (c.reason !== undefined) expected.reason = c.reason;
      expect(outcome(c)).to.deep.equal(expected);
    });
  }

  it('reason is the plain text (as rabbitmqctl prints it); httpReason escapes <, > and & for /api/policies only', () => {
    try {
      validatePolicyBody('policy', '/', 'p', { pattern: 'x', definition: { 'message-ttl': 'a&b' } });
      expect.fail('expected a validation error');
    } catch (e) {
      expect((e as PolicyValidationError).reason).to.equal('Validation failed\n\n<<"a&b">> is not a valid message TTL\n');
      expect((e as PolicyValidationError).httpReason).to.equal('Validation failed\n\n&lt;&lt;"a&amp;b"&gt;&gt; is not a valid message TTL\n');
    }
  });
});
