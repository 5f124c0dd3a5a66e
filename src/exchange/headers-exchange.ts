/**
 * The headers exchange, as RabbitMQ 3.10's rabbit_exchange_type_headers routes
 * (AMQP 0-9-1 §3.1.3.4; RabbitMQ "exchanges" doc page):
 *
 * - The binding's `x-match` argument picks the rule: `all` (the default, also for any value it
 *   does not know — parse_x_match/1 falls back to all), `any`, `all-with-x`, `any-with-x`.
 * - The `x-match` argument itself never takes part in matching. Other arguments whose name
 *   starts with "x-" are ignored too, unless the rule is one of the -with-x forms.
 * - An argument of type void ('V') matches when the message has that header, whatever its value.
 * - Any other argument matches when the message has that header with an equal value, compared
 *   with Erlang's `==` on the parsed values (see fieldValuesLooselyEqual): the type tag is not
 *   compared at the top level, so signedint 1 matches long 1 and double 1.0.
 * - `all` matches when every remaining argument matches (so a binding with none matches every
 *   message); `any` when at least one does (so a binding with none matches nothing).
 * - The routing key plays no part. A message without headers is matched as an empty table.
 *
 * validate_binding/2 rejects an x-match that is not one of the four longstrs (406, wording below).
 */
import { preconditionFailed } from '../errors.js';
import { Added, BindingSet, Removed } from './binding-set.js';
import { fieldTypeName, ownField, type FieldTable, type FieldValue } from '../frame/field-table.js';
import { formatTerm, latin1ToText } from '../erlang/format.js';
import { binary } from '../erlang/term.js';
import { fieldValueTerm } from '../frame/field-term.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';
import { fieldTablesEqual, fieldValuesLooselyEqual } from './field-table-equality.js';

type MatchKind = 'all' | 'any';

/** A binding's arguments reduced to what matching looks at. */
interface CompiledBinding {
  readonly key: string;
  readonly args: FieldTable;
  readonly kind: MatchKind;
  /** [header name, value to compare with, or undefined for a void (presence-only) argument]. */
  readonly patterns: ReadonlyArray<readonly [string, FieldValue | undefined]>;
}

const X_MATCH_VALUES = ['all', 'any', 'all-with-x', 'any-with-x'];

export class HeadersExchange implements ExchangeType {
  readonly name = 'headers';

  validateDeclareArgs(_args: FieldTable): void {}

  validateBinding(_bindingKey: string, args: FieldTable): void {
    const xMatch = ownField(args, 'x-match');
    if (xMatch === undefined) return;
    if (xMatch.type === 'S') {
      if (X_MATCH_VALUES.includes(xMatch.value.toString('latin1'))) return;
      throw preconditionFailed(
        latin1ToText(`Invalid x-match field value ${formatTerm(binary(xMatch.value))}; expected all, any, all-with-x, or any-with-x`, 'latin1'),
      );
    }
    throw preconditionFailed(
      latin1ToText(`Invalid x-match field type ${fieldTypeName(xMatch.type)} (value ${formatTerm(fieldValueTerm(xMatch))}); expected longstr`, 'latin1'),
    );
  }

  createRouter<D>(_exchangeArgs: FieldTable): Router<D> {
    return new HeadersRouter<D>();
  }
}

/** parse_x_match/1 plus the x- filtering of headers_match/5, done once at bind time. */
function compileHeadersBinding(key: string, args: FieldTable): CompiledBinding {
  const xMatch = ownField(args, 'x-match');
  const mode = xMatch?.type === 'S' ? xMatch.value.toString('latin1') : 'all';
  const kind: MatchKind = mode === 'any' || mode === 'any-with-x' ? 'any' : 'all';
  const withX = mode === 'all-with-x' || mode === 'any-with-x';
  const patterns: [string, FieldValue | undefined][] = [];
  for (const [name, value] of Object.entries(args)) {
    if (name === 'x-match') continue;
    if (!withX && name.startsWith('x-')) continue;
    patterns.push([name, value.type === 'V' ? undefined : value]);
  }
  return { key, args, kind, patterns };
}

/** headers_match/2: does a message with these headers match the binding? */
function headersMatch(binding: CompiledBinding, headers: FieldTable | undefined): boolean {
  const all = binding.kind === 'all';
  for (const [name, expected] of binding.patterns) {
    const actual = ownField(headers, name);
    const matched = actual !== undefined && (expected === undefined || fieldValuesLooselyEqual(expected, actual));
    if (all && !matched) return false;
    if (!all && matched) return true;
  }
  return all;
}

class HeadersRouter<D> implements Router<D> {
  private readonly bindings = new BindingSet<D>();
  private readonly compiled = new Map<D, CompiledBinding[]>();

  get bindingCount(): number {
    return this.bindings.size;
  }

  bind(destination: D, bindingKey: string, args: FieldTable): boolean {
    if (this.bindings.add(destination, bindingKey, args) === Added.None) return false;
    let list = this.compiled.get(destination);
    if (list === undefined) this.compiled.set(destination, (list = []));
    list.push(compileHeadersBinding(bindingKey, args));
    return true;
  }

  unbind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const removed = this.bindings.remove(destination, bindingKey, args);
    if (removed === Removed.None) return false;
    const list = this.compiled.get(destination)!; // compiled holds every binding that bindings does
    const i = list.findIndex((b) => b.key === bindingKey && fieldTablesEqual(b.args, args));
    list.splice(i, 1);
    if (list.length === 0) this.compiled.delete(destination);
    return true;
  }

  removeDestination(destination: D): void {
    this.bindings.removeDestination(destination);
    this.compiled.delete(destination);
  }

  route(msg: RoutingInput, out: Set<D>): void {
    for (const [destination, list] of this.compiled) {
      if (out.has(destination)) continue;
      for (const binding of list) {
        if (headersMatch(binding, msg.headers)) {
          out.add(destination);
          break;
        }
      }
    }
  }
}
