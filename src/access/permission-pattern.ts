/**
 * A permission regular expression matched the way RabbitMQ matches it
 * (rabbit_auth_backend_internal:check_resource_access / check_topic_access):
 *
 * - `re:run(Name, Regexp)`: a search, not a full match. `q` matches `myqueue`; anchor with
 *   `^...$` to mean one name (RabbitMQ's docs say the same).
 * - An empty pattern means `^$`: it matches only the empty string, so it grants nothing.
 * - Erlang's `re` without the `unicode` option works on bytes: the name and the pattern are
 *   both taken as their UTF-8 bytes, so `.` matches one byte of `é`, as in RabbitMQ.
 *
 * Patterns are compiled once, with JavaScript's RegExp engine, which reads the PCRE syntax
 * people write in permissions (`.*`, `^app\.`, `^(a|b)-.*$`, classes, quantifiers) the same
 * way; a pattern JavaScript cannot compile is refused when the permission is set.
 */
export class PermissionPattern {
  private readonly regexp: RegExp;

  constructor(readonly source: string) {
    this.regexp = compile(source);
  }

  test(name: string): boolean {
    return this.regexp.test(asBytes(name));
  }
}

/** Thrown for a pattern that cannot be compiled (RabbitMQ: {invalid_regexp, ...}). */
export class InvalidPatternError extends Error {
  override readonly name = 'InvalidPatternError';
}

function compile(source: string): RegExp {
  try {
    // No g/y flag: test() keeps no state between calls.
    return new RegExp(source === '' ? '^$' : asBytes(source));
  } catch (err) {
    throw new InvalidPatternError(`invalid regular expression '${source}': ${(err as Error).message}`);
  }
}

/** s as a string of its UTF-8 bytes (one char per byte); ASCII strings are returned as they are. */
function asBytes(s: string): string {
  return Buffer.byteLength(s, 'utf8') === s.length ? s : Buffer.from(s, 'utf8').toString('latin1');
}

/** Throws InvalidPatternError unless source compiles. */
export function checkPattern(source: string): void {
  compile(source);
}
