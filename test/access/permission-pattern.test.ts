import { expect } from 'chai';
import { InvalidPatternError, PermissionPattern } from '../../src/access/permission-pattern.js';

/**
 * Permission patterns as rabbit_auth_backend_internal matches them: re:run(Name, Regexp), a
 * search (checked on RabbitMQ 3.10.8: configure 'fg' lets a user declare exchange 'cfgx'),
 * '' meaning '^$', and bytes rather than characters (no unicode option).
 */
describe('access: permission patterns', () => {
  it('searches the name: a pattern matches anywhere unless anchored', () => {
    expect(new PermissionPattern('fg').test('cfgx')).to.equal(true);
    expect(new PermissionPattern('fg').test('ab')).to.equal(false);
    expect(new PermissionPattern('^fg$').test('cfgx')).to.equal(false);
    expect(new PermissionPattern('^fg$').test('fg')).to.equal(true);
    expect(new PermissionPattern('.*').test('')).to.equal(true);
    expect(new PermissionPattern('^(cfg|both)').test('both-q')).to.equal(true);
  });

  it('takes an empty pattern as ^$: it grants nothing but the empty name', () => {
    const p = new PermissionPattern('');
    expect(p.test('anything')).to.equal(false);
    expect(p.test('amq.default')).to.equal(false);
    expect(p.test('')).to.equal(true);
  });

  it('matches UTF-8 bytes, as Erlang re without the unicode option does', () => {
    expect(new PermissionPattern('^.$').test('é')).to.equal(false);
    expect(new PermissionPattern('^..$').test('é')).to.equal(true);
    expect(new PermissionPattern('^é-').test('é-queue')).to.equal(true);
    expect(new PermissionPattern('^é-').test('e-queue')).to.equal(false);
  });

  it("reads PCRE as Erlang's re does (shared with policy patterns: src/erlang/re.ts)", () => {
    expect(new PermissionPattern('(?i)^CFG').test('cfg-x')).to.equal(true);
    expect(new PermissionPattern('^q$').test('q\n')).to.equal(true); // $ also before a final newline
    expect(new PermissionPattern('^\\w+$').test('é')).to.equal(false); // \w is ASCII
  });

  it('refuses a pattern that does not compile', () => {
    expect(() => new PermissionPattern('(')).to.throw(InvalidPatternError, /invalid regular expression '\(': missing \) at offset 1/);
  });
});
