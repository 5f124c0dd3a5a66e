import { expect } from 'chai';
import { compilePcre } from '../../src/erlang/re.js';

/**
 * Policy patterns as RabbitMQ 3.10.8 compiles and matches them: re:compile errors with PCRE's
 * message and byte offset (each observed as a 400 from PUT /api/policies on the reference), and
 * re:run on the name's bytes, unanchored unless the pattern anchors.
 */
describe('policy patterns (Erlang re, PCRE 8 on bytes)', () => {
  const errors: Array<[string, string, number]> = [
    ['(', 'missing )', 1], [')', 'unmatched parentheses', 0], ['a)', 'unmatched parentheses', 1],
    ['[', 'missing terminating ] for character class', 1], ['[a', 'missing terminating ] for character class', 2],
    ['[]', 'missing terminating ] for character class', 2], ['[^]', 'missing terminating ] for character class', 3],
    ['*', 'nothing to repeat', 0], ['a**', 'nothing to repeat', 2], ['+a', 'nothing to repeat', 0], ['?', 'nothing to repeat', 0],
    ['^*', 'nothing to repeat', 1], ['a{2}{3}', 'nothing to repeat', 6],
    ['a{2,1}', 'numbers out of order in {} quantifier', 5], ['x{99999}', 'number too big in {} quantifier', 7],
    ['[z-a]', 'range out of order in character class', 3], ['[a-\\d]', 'invalid range in character class', 4],
    ['(?<n', 'syntax error in subpattern name (missing terminator)', 4], ['(?P<', 'syntax error in subpattern name (missing terminator)', 4],
    ['(?<>a)', 'unrecognized character after (?<', 3], ['(?P=)', 'subpattern name expected', 4], ['\\k<>', 'subpattern name expected', 3],
    ['[[:foo:]]', 'unknown POSIX class name', 3], ['(?z)', 'unrecognized character after (? or (?-', 2], ['(?', 'unrecognized character after (? or (?-', 2],
    ['(?i', 'unrecognized character after (? or (?-', 3], ['(?i:a', 'missing )', 5], ['a(?#c', 'missing ) after comment', 5],
    ['é(', 'missing )', 3], ['日(', 'missing )', 4], ['(*FOO)', '(*VERB) not recognized or malformed', 5],
    ['\\', '\\ at end of pattern', 1], ['a\\', '\\ at end of pattern', 2], ['\\c', '\\c at end of pattern', 2],
    ['\\cé', '\\c must be followed by an ASCII character', 2],
    ['\\k', '\\k is not followed by a braced, angle-bracketed, or quoted name', 1], ['\\g', 'a numbered reference must not be zero', 1],
    ['\\1', 'reference to non-existent subpattern', 2], ['(a)\\2', 'reference to non-existent subpattern', 5],
    ['(?P=x)', 'reference to non-existent subpattern', 5], ['(?&x)', 'reference to non-existent subpattern', 4], ['(?1)', 'reference to non-existent subpattern', 3],
    ['\\x{zz}', 'non-hex character in \\x{} (closing brace missing?)', 3], ['\\x{100}', 'character value in \\x{} or \\o{} is too large', 6],
    ['\\o{', 'non-octal character in \\o{} (closing brace missing?)', 3],
    ['\\N{x}', 'PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', 1], ['\\u0041', 'PCRE does not support \\L, \\l, \\N{name}, \\U, or \\u', 1],
    ['\\p{Zz}', 'unknown property name after \\P or \\p', 5],
    // Recorded from 3.10.8 by a differential probe (policies, permissions and topic permissions alike).
    ['(?<n>a)(?<n>b)', 'two named subpatterns have the same name', 11], ['[[.a.]]', 'POSIX collating elements are not supported', 1],
    ['[[=a=]]', 'POSIX collating elements are not supported', 1], ['\\400', 'octal value is greater than \\377 in 8-bit non-UTF-8 mode', 3],
    ['(?<1a>x)', 'group name must start with a non-digit', 3],
  ];
  for (const [pattern, message, offset] of errors) {
    it(`refuses ${JSON.stringify(pattern)}: {"${message}",${offset}}`, () => {
      expect(compilePcre(pattern)).to.deep.equal({ ok: false, error: { message, offset } });
    });
  }

  const accepted = ['', '\\\\', 'a{1', 'a{,3}', '(?i)abc', '\\ca', '\\p{L}', '\\Q(', '[\\d-z]', '\\8', '(?<=a|bc)', '[]a]', '[a-]', '\\Ka', '(?|a)',
    'a++', 'a{3}+', '(?>a)', '[\\W-a]', '\\E', '(*UTF8)a', '(*CR)a', '(?C)a', '(?C12)a', '(?J)(?<n>a)|(?<n>b)'];
  for (const pattern of accepted) {
    it(`accepts ${JSON.stringify(pattern)}`, () => expect(compilePcre(pattern).ok).to.equal(true));
  }

  const matches = (pattern: string, name: string) => {
    const c = compilePcre(pattern);
    if (!c.ok) throw new Error(c.error.message);
    return c.regex.matches(name);
  };
  it('matches anywhere in the name unless anchored', () => {
    expect(matches('ttl', 'a.ttl.b')).to.equal(true);
    expect(matches('^ttl\\.', 'ttl.jobs')).to.equal(true);
    expect(matches('^ttl\\.', 'x.ttl.jobs')).to.equal(false);
    expect(matches('jobs$', 'ttl.jobs')).to.equal(true);
    expect(matches('.*', '')).to.equal(true);
  });
  it('$ also matches before a final newline; . is any byte but a newline', () => {
    expect(matches('^a$', 'a\n')).to.equal(true);
    expect(matches('^a.$', 'a\n')).to.equal(false);
    expect(matches('^a.$', 'a\r')).to.equal(true);
  });
  it('works on UTF-8 bytes: é is two bytes to . and to a class', () => {
    expect(matches('^.$', 'é')).to.equal(false);
    expect(matches('^..$', 'é')).to.equal(true);
    expect(matches('^[é]{2}$', 'é')).to.equal(true);
    expect(matches('^é$', 'é')).to.equal(true);
  });
  it('\\s is ASCII white space only; (?i) at the start is caseless for ASCII letters', () => {
    expect(matches('^\\s$', '\u00a0')).to.equal(false);
    expect(matches('^\\s$', '\u000b')).to.equal(true);
    expect(matches('(?i)^ABC$', 'abc')).to.equal(true);
    expect(matches('^[[:upper:]]+$', 'ABC')).to.equal(true);
  });
  it('back references, named groups and alternation', () => {
    expect(matches('^(a)\\1$', 'aa')).to.equal(true);
    expect(matches('^(?<n>a)\\k<n>$', 'aa')).to.equal(true);
    expect(matches('^(orders|jobs)\\.', 'jobs.x')).to.equal(true);
  });
});
