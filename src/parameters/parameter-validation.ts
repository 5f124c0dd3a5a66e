/**
 * rabbit_parameter_validation as RabbitMQ 3.10.8 runs it on runtime parameters: proplist/3
 * (known keys, each with its validator, mandatory or optional; the rest "Unrecognised") and the
 * value validators the vhost-limits component uses. Errors are lines of text and Erlang terms
 * printed with ~p (src/erlang); policy/validation.ts's validationFailedText joins them as
 * rabbit_runtime_parameters:format_error does.
 */
import { formatString } from '../erlang/format.js';
import { list, tuple, binary, type ErlTerm } from '../erlang/term.js';
import type { ErrorParts } from '../policy/definition-validators.js';
import { jsonTerm } from '../policy/json-term.js';
import { isJsonObject, type JsonValue } from './value.js';

export type { ErrorParts };

/** One key's validator: its error, or undefined when the value is valid. */
export type Validator = (key: string, value: JsonValue) => ErrorParts | undefined;

export interface Constraint {
  key: string;
  /** The value's validator; or, with `nested`, none: the value is a proplist of its own. */
  validate?: Validator;
  /**
   * The value is itself a proplist with these constraints (a validator that calls proplist/3,
   * such as rabbit_shovel_parameters:validate_properties/2): its errors, in their own order,
   * take this constraint's place.
   */
  nested?: readonly Constraint[];
  /** A mandatory key that is absent is an error ("Key \"k\" not found in name"); default optional. */
  mandatory?: boolean;
}

/** `~s` of a binary: its UTF-8 bytes as latin1 characters (the erlang/ convention). */
export function s(text: string): string {
  return formatString(Buffer.from(text, 'utf8'));
}

const p = (v: JsonValue | undefined): { p: ErlTerm } => ({ p: jsonTerm(v) });

/** rabbit_parameter_validation:integer/2 (a float is refused; JSON.parse makes 1.0 an integer). */
export const integer: Validator = (key, v) =>
  typeof v === 'number' && Number.isInteger(v) ? undefined : [`${s(key)} should be a number, actually was `, p(v)];

/**
 * rabbit_parameter_validation:proplist(Name, Constraints, Term) on a parameter value: a JSON
 * object is the proplist of its entries (in their order), a JSON array a list of other terms;
 * anything else is "Name not a list Term". The errors come in the order RabbitMQ prints them:
 * the unrecognised entries first, then each constraint's error from the last constraint to the
 * first (its fold prepends each result).
 */
export function proplistErrors(name: string, constraints: readonly Constraint[], value: JsonValue | undefined): ErrorParts[] {
  let items: Array<{ key?: string; value: JsonValue; term: ErlTerm }>;
  if (isJsonObject(value)) items = Object.entries(value).map(([k, v]) => ({ key: k, value: v, term: tuple(binary(k), jsonTerm(v)) }));
  else if (Array.isArray(value)) items = value.map((v) => ({ value: v, term: jsonTerm(v) }));
  else return [[`${s(name)} not a list `, p(value)]];
  const results: ErrorParts[] = [];
  for (const c of constraints) {
    const i = items.findIndex((item) => item.key === c.key);
    if (i < 0) {
      if (c.mandatory) results.unshift([`Key "${s(c.key)}" not found in ${s(name)}`]);
      continue;
    }
    const v = items[i]!.value;
    items.splice(i, 1);
    if (c.nested) {
      results.unshift(...proplistErrors(c.key, c.nested, v));
      continue;
    }
    const err = c.validate?.(c.key, v);
    if (err) results.unshift(err);
  }
  if (items.length > 0) results.unshift(['Unrecognised terms ', { p: list(items.map((item) => item.term)) }, ` in ${s(name)}`]);
  return results;
}
