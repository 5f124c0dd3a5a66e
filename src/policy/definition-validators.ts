import { atom, list, type ErlTerm } from '../erlang/term.js';
import { jsonTerm } from './json-term.js';
import type { JsonValue, PolicyKind } from './policy.js';

/**
 * The policy keys RabbitMQ 3.10 accepts and how it validates each value, module by module, as
 * its policy validators are registered (rabbit_policies, rabbit_mirror_queue_misc,
 * rabbit_queue_location_validator; the federation plugin's keys are accepted too, as a broker
 * with rabbitmq_federation enabled accepts them).
 */

/** One line of a validation error: text and Erlang terms printed with ~p. */
export type ErrorParts = Array<string | { p: ErlTerm }>;

/** RabbitMQ's validator crashed on this value: its HTTP API answers 500 with an empty body. */
export class ValidatorCrash extends Error {}

type Scope = Array<[string, JsonValue]>;
type ModuleValidator = (scope: Scope) => ErrorParts | undefined;

interface ValidatorModule {
  keys: readonly string[];
  validate: ModuleValidator;
}

const p = (v: JsonValue): { p: ErlTerm } => ({ p: jsonTerm(v) });
const isInt = (v: JsonValue): v is number => typeof v === 'number' && Number.isInteger(v);

// ---- rabbit_policies ------------------------------------------------------------------------

/** rabbit_policies:validate_policy0/2: undefined when valid, else its error. */
function validatePoliciesKey(key: string, v: JsonValue): ErrorParts | undefined {
  const oneOf = (values: readonly JsonValue[], what: string): ErrorParts | undefined =>
    values.includes(v) ? undefined : [p(v), ` is not a valid ${what}`];
  const intAtLeast = (min: number, what: string, max = Infinity): ErrorParts | undefined =>
    isInt(v) && v >= min && v <= max ? undefined : [p(v), ` is not a valid ${what}`];
  const binary = (what: string): ErrorParts | undefined => (typeof v === 'string' ? undefined : [p(v), ` is not a valid ${what}`]);
  switch (key) {
    case 'alternate-exchange': return binary('alternate exchange name');
    case 'dead-letter-exchange': return binary('dead letter exchange name');
    case 'dead-letter-routing-key': return binary('dead letter routing key');
    case 'dead-letter-strategy': return oneOf(['at-most-once', 'at-least-once'], 'dead letter strategy');
    case 'message-ttl': return intAtLeast(0, 'message TTL');
    case 'expires': return intAtLeast(1, 'queue expiry');
    case 'max-length': return intAtLeast(0, 'maximum length');
    case 'max-length-bytes': return intAtLeast(0, 'maximum length in bytes');
    case 'max-in-memory-length': return intAtLeast(0, 'maximum memory in bytes');
    case 'max-in-memory-bytes': return intAtLeast(0, 'maximum memory in bytes');
    case 'queue-mode': return oneOf(['default', 'lazy'], 'queue-mode value');
    case 'queue-version': return oneOf([1, 2], 'queue-version value');
    case 'overflow': return oneOf(['drop-head', 'reject-publish', 'reject-publish-dlx'], 'overflow value');
    case 'delivery-limit': return intAtLeast(0, 'delivery limit');
    case 'max-age': return checkMaxAge(v) ? undefined : [p(v), ' is not a valid max age'];
    case 'queue-leader-locator': return oneOf(['client-local', 'balanced', 'random', 'least-leaders'], 'queue leader locator value');
    case 'initial-cluster-size': return intAtLeast(0, 'cluster size');
    case 'stream-max-segment-size-bytes': return intAtLeast(0, 'segment size', 3_000_000_000);
    default: return undefined;
  }
}

/**
 * rabbit_amqqueue:check_max_age/1: digits and a unit (Y, M, D, h, m, s), more than 0. It runs a
 * regex on the value and list_to_integer on the digits, so a non-string or a value without
 * leading digits crashes the validator.
 */
function checkMaxAge(v: JsonValue): boolean {
  if (typeof v !== 'string') throw new ValidatorCrash('max-age is not a string');
  const m = /^([0-9]*)([\s\S]*)$/.exec(v)!;
  if (m[1] === '') throw new ValidatorCrash('max-age has no number');
  return Number(m[1]) > 0 && ['Y', 'M', 'D', 'h', 'm', 's'].includes(m[2]!);
}

const POLICIES_KEYS = [
  'alternate-exchange', 'dead-letter-exchange', 'dead-letter-routing-key', 'dead-letter-strategy', 'message-ttl', 'expires',
  'max-length', 'max-length-bytes', 'max-in-memory-length', 'max-in-memory-bytes', 'queue-mode', 'queue-version', 'overflow',
  'delivery-limit', 'max-age', 'stream-max-segment-size-bytes', 'queue-leader-locator', 'initial-cluster-size',
] as const;

/** The keys an operator policy may set (rabbit_policies' operator_policy_validator entries). */
export const OPERATOR_POLICY_KEYS = [
  'expires', 'message-ttl', 'max-length', 'max-length-bytes', 'max-in-memory-length', 'max-in-memory-bytes', 'delivery-limit',
] as const;

/** rabbit_policies:validate_policy/1: the first invalid key (in the definition's order) wins. */
const rabbitPolicies = (keys: readonly string[]): ValidatorModule => ({
  keys,
  validate: (scope) => {
    for (const [k, v] of scope) {
      const err = validatePoliciesKey(k, v);
      if (err) return err;
    }
    return undefined;
  },
});

// ---- rabbit_mirror_queue_misc ---------------------------------------------------------------

const NONE = Symbol('none');
type Maybe = JsonValue | typeof NONE;
const pm = (v: Maybe): { p: ErlTerm } => (v === NONE ? { p: atom('none') } : p(v));

const mirrorQueueMisc: ValidatorModule = {
  keys: ['ha-mode', 'ha-params', 'ha-sync-mode', 'ha-sync-batch-size', 'ha-promote-on-shutdown', 'ha-promote-on-failure'],
  validate: (scope) => {
    const get = (k: string): Maybe => {
      const e = scope.find(([key]) => key === k);
      return e ? e[1] : NONE;
    };
    const mode = get('ha-mode');
    const params = get('ha-params');
    const syncMode = get('ha-sync-mode');
    const batch = get('ha-sync-batch-size');
    const pos = get('ha-promote-on-shutdown');
    const pof = get('ha-promote-on-failure');
    if (mode === NONE) {
      if ([params, syncMode, batch, pos, pof].every((v) => v === NONE)) return undefined;
      return ['ha-mode must be specified to specify ha-params, ha-sync-mode or ha-promote-on-shutdown'];
    }
    // rabbit_mirror_queue_misc:module/1 has no clause for a mode that is not a binary.
    if (typeof mode !== 'string') throw new ValidatorCrash('ha-mode is not a string');
    if (mode !== 'all' && mode !== 'exactly' && mode !== 'nodes') return [p(mode), ' is not a valid ha-mode value'];
    if (mode === 'all' && params !== NONE) return ['ha-mode="all" does not take parameters'];
    if (mode === 'exactly' && !(params !== NONE && isInt(params) && params > 0)) return ['ha-mode="exactly" takes an integer, ', pm(params), ' given'];
    if (mode === 'nodes') {
      if (!Array.isArray(params)) return ['ha-mode="nodes" takes a list, ', pm(params), ' given'];
      if (params.length === 0) return ['ha-mode="nodes" list must be non-empty'];
      const invalid = params.filter((n) => typeof n !== 'string');
      if (invalid.length > 0) return ['ha-mode="nodes" takes a list of strings, ', { p: list(invalid.map(jsonTerm)) }, ' was not a string'];
    }
    if (syncMode !== NONE && syncMode !== 'automatic' && syncMode !== 'manual') return ['ha-sync-mode must be "manual" or "automatic", got ', p(syncMode)];
    if (batch !== NONE && !(isInt(batch) && batch > 0)) return ['ha-sync-batch-size takes an integer greater than 0, ', p(batch), ' given'];
    if (pos !== NONE && pos !== 'always' && pos !== 'when-synced') return ['ha-promote-on-shutdown must be "always" or "when-synced", got ', p(pos)];
    if (pof !== NONE && pof !== 'always' && pof !== 'when-synced') return ['ha-promote-on-failure must be "always" or "when-synced", got ', p(pof)];
    return undefined;
  },
};

// ---- rabbit_queue_location_validator --------------------------------------------------------

const queueLocation: ValidatorModule = {
  keys: ['queue-master-locator'],
  validate: (scope) => {
    const v = scope[0]![1];
    if (v === 'client-local' || v === 'min-masters' || v === 'random') return undefined;
    // A value that rabbit_data_coercion:to_binary cannot turn into a binary sends the
    // validator into a crash (floats and maps: endless recursion; other lists: badarg).
    const coercible = typeof v === 'string' || typeof v === 'boolean' || v === null || isInt(v) ||
      (Array.isArray(v) && v.every((x) => typeof x === 'string' || (isInt(x) && x >= 0 && x <= 255)));
    if (!coercible) throw new ValidatorCrash('queue-master-locator cannot be made a binary');
    return [p(v), ' invalid queue-master-locator value'];
  },
};

// ---- rabbit_federation_parameters (with the federation plugin) ------------------------------

const federation: ValidatorModule = {
  keys: ['federation-upstream-set', 'federation-upstream-pattern', 'federation-upstream'],
  validate: (scope) => {
    if (scope.length >= 2) return ['cannot specify federation-upstream, federation-upstream-set or federation-upstream-pattern together'];
    const [k, v] = scope[0]!;
    if (typeof v !== 'string') {
      const what = { 'federation-upstream-set': 'federation upstream set name', 'federation-upstream-pattern': 'federation upstream pattern name', 'federation-upstream': 'federation upstream name' }[k]!;
      return [p(v), ` is not a valid ${what}`];
    }
    return undefined;
  },
};

/**
 * The validator modules in the order RabbitMQ 3.10.8 consults them (observed: a definition with
 * errors for several modules reports the queue-master-locator's first, then rabbit_policies',
 * then the ha-* keys'); only the first module with an error is reported.
 */
const POLICY_MODULES: readonly ValidatorModule[] = [queueLocation, rabbitPolicies(POLICIES_KEYS), mirrorQueueMisc, federation];
const OPERATOR_POLICY_MODULES: readonly ValidatorModule[] = [rabbitPolicies(OPERATOR_POLICY_KEYS)];

/** Every key a policy may set. */
export const POLICY_KEYS: readonly string[] = POLICY_MODULES.flatMap((m) => m.keys);

/**
 * rabbit_policy:validation/3 on a non-empty definition (its entries in Erlang's map order):
 * the first module's error, else the keys no module knows, else undefined.
 */
export function validateDefinitionEntries(kind: PolicyKind, entries: Scope): ErrorParts | undefined {
  const modules = kind === 'policy' ? POLICY_MODULES : OPERATOR_POLICY_MODULES;
  let left = entries;
  for (const m of modules) {
    const scope = left.filter(([k]) => m.keys.includes(k));
    if (scope.length === 0) continue;
    const err = m.validate(scope);
    if (err) return err;
    left = left.filter(([k]) => !m.keys.includes(k));
  }
  if (left.length > 0) {
    const tuples = left.map(([k, v]) => ({ kind: 'tuple' as const, items: [jsonTerm(k), jsonTerm(v)] }));
    return [{ p: list(tuples) }, ' are not recognised policy settings'];
  }
  return undefined;
}
