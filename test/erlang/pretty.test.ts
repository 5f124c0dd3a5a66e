import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { formatParts, printTerm } from '../../src/erlang/pretty.js';
import { atom, binary, int, tuple } from '../../src/erlang/term.js';
import { jsonTerm } from '../../src/policy/json-term.js';
import type { JsonValue } from '../../src/policy/policy.js';

interface Case {
  type: number;
  payload: string;
  kind: 'end' | 'unknown' | 'large' | 'unexpected';
  n: number;
  expected: string;
}

const maps = JSON.parse(readFileSync(new URL('./fixtures/maps.json', import.meta.url), 'utf8')) as {
  cases: Array<{ prefix: string; value: JsonValue; expected: string }>;
};

const fixture = JSON.parse(readFileSync(new URL('./fixtures/frame-errors.json', import.meta.url), 'utf8')) as {
  cases: Case[];
};

describe('pretty (~p breaking long terms): io_lib:format as RabbitMQ 3.10 words frame errors', () => {
  it(`matches OTP 25's output for ${fixture.cases.length} frame-error texts (fixture made with erl)`, () => {
    for (const c of fixture.cases) {
      let b = Buffer.from(c.payload, 'hex');
      const str = b.length <= 16 ? 'all' : 'first 16';
      if (b.length > 16) b = b.subarray(0, 16);
      const head = `type ${c.type}, ${str} octets = `;
      let got: string;
      if (c.kind === 'end') got = formatParts([head, { p: binary(b) }, ': ', { p: tuple(atom('invalid_frame_end_marker'), int(c.n)) }]);
      else if (c.kind === 'unknown') got = formatParts([head, { p: binary(b) }, ': ', { p: atom('unknown_frame') }]);
      else if (c.kind === 'large') {
        got = formatParts([`type ${c.type}, all octets = `, { p: binary(Buffer.alloc(0)) }, ': ', { p: tuple(atom('frame_too_large'), int(c.n * 1000), int(c.n * 7)) }]);
      } else got = formatParts([head, { p: binary(b) }]);
      expect(got, JSON.stringify(c)).to.equal(c.expected);
    }
  });

  it('prints printable binaries as strings with escapes, others as byte lists (~p, latin1)', () => {
    expect(printTerm(binary('abc'), 0)).to.equal('<<"abc">>');
    expect(printTerm(binary('a\n"\\'), 0)).to.equal('<<"a\\n\\"\\\\">>');
    expect(printTerm(binary(Buffer.from([97, 0])), 0)).to.equal('<<97,0>>');
    expect(printTerm(binary(''), 0)).to.equal('<<>>');
  });

  it(`breaks maps as OTP 25 does, for ${maps.cases.length} JSON values after prefixes of 0, 44 and 60 columns (fixture made with erl)`, () => {
    for (const c of maps.cases) expect(formatParts([c.prefix, { p: jsonTerm(c.value) }]), JSON.stringify(c.value)).to.equal(c.expected);
  });
});
