import { compilePcre, type CompiledPattern } from '../erlang/re.js';

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
 * The PCRE dialect and its byte semantics are src/erlang/re.ts's (shared with policy patterns);
 * a pattern PCRE refuses is refused when the permission is set, with PCRE's message.
 */
export class PermissionPattern {
  private readonly compiled: CompiledPattern;

  constructor(readonly source: string) {
    const c = compilePcre(source === '' ? '^$' : source);
    if (!c.ok) throw new InvalidPatternError(source, c.error.message, c.error.offset);
    this.compiled = c.regex;
  }

  test(name: string): boolean {
    return this.compiled.matches(name);
  }
}

/** Thrown for a pattern PCRE cannot compile (RabbitMQ: {invalid_regexp, Pattern, {Message, Offset}}). */
export class InvalidPatternError extends Error {
  override readonly name = 'InvalidPatternError';
  constructor(
    readonly pattern: string,
    readonly pcreMessage: string,
    readonly offset: number,
  ) {
    super(`invalid regular expression '${pattern}': ${pcreMessage} at offset ${offset}`);
  }
}

/** Throws InvalidPatternError unless source compiles. */
export function checkPattern(source: string): void {
  new PermissionPattern(source);
}
