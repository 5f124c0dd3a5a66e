import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { GUEST_HASH, runStep, type RecordedStep } from '../fixtures/management/access-conversation.js';
import { parseShape, shapeDifferences, useManagedBroker } from '../support/management.js';

const recorded = JSON.parse(readFileSync(new URL('../fixtures/management/access-conversation.json', import.meta.url), 'utf8')) as RecordedStep[];

/**
 * What differs between two nodes by nature: salted password hashes (a fresh salt each time:
 * only hashes given in requests are compared) and the node name.
 */
function normalize(text: string): string {
  return text
    .replace(/"password_hash":"([^"]+)"/g, (_m, hash: string) => `"password_hash":"${hash === GUEST_HASH ? hash : '<salted>'}"`)
    .replace(/"cluster_state":\{"[^"]+":/g, '"cluster_state":{"<node>":');
}

const describeStep = (s: RecordedStep) => `${s.method} ${s.path}${s.body === undefined ? '' : ` ${typeof s.body === 'string' ? s.body : JSON.stringify(s.body)}`}${s.user ? ` as ${s.user[0]}` : ''}`;

/**
 * The users, permissions, topic permissions and vhost endpoints answer a whole conversation as
 * RabbitMQ 3.10.8 answered it (test/fixtures/management/access-conversation.ts recorded it from
 * the reference): every status, the headers clients read (content-type, allow,
 * www-authenticate, cache-control), and every body byte for byte (JSON key order included),
 * errors too: RabbitMQ's reasons, tuples printed as arrays, Erlang strings as arrays of codes,
 * the 500s its handlers crash into on values of the wrong type.
 */
describe('management API: users, permissions and vhosts answer as RabbitMQ 3.10.8 did (recorded conversation)', () => {
  const b = useManagedBroker();

  recorded.forEach((step, i) => {
    it(`${i + 1}. ${describeStep(step)} → ${step.status}`, async () => {
      const got = await runStep(b.base, step);
      expect(got.status, got.text).to.equal(step.status);
      expect(got.headers).to.deep.equal(step.headers);
      const compare = step.compare ?? 'exact';
      if (compare === 'exact') {
        expect(normalize(got.text)).to.equal(normalize(step.text));
      } else if (compare === 'unordered') {
        const sorted = (text: string) => (JSON.parse(normalize(text)) as unknown[]).map((x) => JSON.stringify(x)).sort();
        expect(sorted(got.text)).to.deep.equal(sorted(step.text));
      } else {
        const pick = (text: string) => Object.fromEntries(compare.keys.map((k) => [k, (JSON.parse(text) as Record<string, unknown>)[k]]));
        expect(pick(got.text)).to.deep.equal(pick(step.text));
        expect(shapeDifferences(parseShape(step.text), parseShape(got.text), { openMaps: ['cluster_state'] })).to.deep.equal([]);
      }
    });
  });
});
