/**
 * Importing definitions in rabbit_definitions:apply_defs/3's order: users → vhosts → limits →
 * permissions → topic permissions → exchanges → global parameters → policies → parameters →
 * queues → bindings. Import only adds and updates: nothing is deleted. Objects that exist are
 * left as they are (a queue imported with other properties is not redeclared), `amq.*` queues
 * and exchanges and the default exchange are skipped, and the first failure stops the import
 * with RabbitMQ's reason (what was applied before it stays).
 */

import { escapeHtmlTags } from '../../erlang/format.js';
import { AmqpError, commandInvalid } from '../../errors.js';
import {
  DefinitionsError,
  type BindingDefinition,
  type Definitions,
  type ExchangeDefinition,
  type ParameterDefinition,
  type PermissionDefinition,
  type PolicyDefinition,
  type QueueDefinition,
  type TopicPermissionDefinition,
  type UserDefinition,
  type VhostDefinition,
} from './format.js';

/** What an import does to the broker: the broker's public operations, one per kind of definition. */
export interface DefinitionsTarget {
  hasVhost(name: string): boolean;
  hasUser(name: string): boolean;
  hasQueue(vhost: string, name: string): boolean;
  hasExchange(vhost: string, name: string): boolean;
  /**
   * rabbit_auth_backend_internal:put_user/3: creates or updates a user from a plain password, a
   * hash, or neither (no password login); throws DefinitionsError (`tags_not_present`, ...).
   */
  putUser(user: UserDefinition, version: string | undefined): void;
  /** Creates the vhost, or updates its metadata if it exists. */
  putVhost(vhost: VhostDefinition): void;
  setPermission(p: PermissionDefinition): void;
  setTopicPermission(p: TopicPermissionDefinition): void;
  setGlobalParameter(name: string, value: unknown): void;
  /** Throws Error with RabbitMQ's validation text ("Validation failed\n\n..."). */
  setPolicy(vhost: string, p: PolicyDefinition): void;
  /**
   * Runtime parameters: operator_policy, vhost-limits (the value is checked before the vhost);
   * throws DefinitionsError with RabbitMQ's import reason.
   */
  setParameter(vhost: string, p: ParameterDefinition): void;
  /** rabbit_definitions:validate_limits: throws when the new queues would exceed a vhost's max-queues. */
  checkQueueLimits(newQueues: ReadonlyMap<string, number>): void;
  /** Declares an exchange as a durable declare would; an existing one is left as it is. */
  declareExchange(vhost: string, e: ExchangeDefinition): void;
  /** Declares a queue; an existing one is left as it is. */
  declareQueue(vhost: string, q: QueueDefinition): void;
  /** Adds a binding; a missing source or destination makes it a no-op, as in RabbitMQ. */
  bind(vhost: string, b: BindingDefinition): void;
  /** Warnings (skipped objects) go to the broker's log. */
  warn(message: string): void;
}

/** Imports a whole definitions document (POST /api/definitions, --definitions at boot). */
export function importDefinitions(target: DefinitionsTarget, defs: Definitions): void {
  const version = defs.rabbitmq_version ?? defs.rabbit_version;
  for (const u of list<UserDefinition>(defs, 'users')) target.putUser(u, version);
  for (const v of list<VhostDefinition>(defs, 'vhosts')) {
    if (typeof v.name !== 'string') throw new DefinitionsError('vhost without a name');
    target.putVhost(v);
  }
  target.checkQueueLimits(newQueues(target, list<QueueDefinition>(defs, 'queues'), undefined));
  for (const p of list<PermissionDefinition>(defs, 'permissions')) {
    // set_permissions compiles each pattern (binary_to_list) before it looks for the user.
    if (!allStrings(p.configure, p.write, p.read)) throw DefinitionsError.erlang('badarg');
    requireUser(target, p.user);
    requireVhost(target, p.vhost);
    apply(() => target.setPermission(p));
  }
  for (const p of list<TopicPermissionDefinition>(defs, 'topic_permissions')) {
    if (!allStrings(p.write, p.read)) throw DefinitionsError.erlang('badarg'); // re:compile
    requireUser(target, p.user);
    requireVhost(target, p.vhost);
    apply(() => target.setTopicPermission({ ...p, exchange: p.exchange ?? UNDEFINED }));
  }
  for (const e of list<ExchangeDefinition>(defs, 'exchanges')) importExchange(target, e.vhost, e);
  for (const g of list<{ name: string; value: unknown }>(defs, 'global_parameters')) target.setGlobalParameter(g.name ?? UNDEFINED, g.value ?? UNDEFINED);
  for (const p of list<PolicyDefinition>(defs, 'policies')) importPolicy(target, p.vhost, p);
  for (const p of list<ParameterDefinition>(defs, 'parameters')) importParameter(target, p.vhost, p);
  for (const q of list<QueueDefinition>(defs, 'queues')) importQueue(target, q.vhost, q);
  for (const b of list<BindingDefinition>(defs, 'bindings')) importBinding(target, b.vhost, b);
}

/**
 * Imports a per-vhost document (POST /api/definitions/{vhost}): exchanges, parameters,
 * policies, queues and bindings, all into `vhost` whatever their own `vhost` says.
 */
export function importVhostDefinitions(target: DefinitionsTarget, vhost: string, defs: Definitions): void {
  if (!target.hasVhost(vhost)) throw new DefinitionsError('vhost_not_found', 404);
  target.checkQueueLimits(newQueues(target, list<QueueDefinition>(defs, 'queues'), vhost));
  for (const e of list<ExchangeDefinition>(defs, 'exchanges')) importExchange(target, vhost, e);
  for (const p of list<ParameterDefinition>(defs, 'parameters')) importParameter(target, vhost, p);
  for (const p of list<PolicyDefinition>(defs, 'policies')) importPolicy(target, vhost, p);
  for (const q of list<QueueDefinition>(defs, 'queues')) importQueue(target, vhost, q);
  for (const b of list<BindingDefinition>(defs, 'bindings')) importBinding(target, vhost, b);
}

/**
 * rabbit_definitions:add_exchange_int. An exchange that exists is left as it is, whatever the
 * entry says; a new one needs a known type (check_type: a missing one is "invalid exchange type
 * 'undefined'") and a boolean durable (RabbitMQ crashes without one: 500). auto_delete and
 * internal are true only when they are JSON true (RabbitMQ stores other values as they are,
 * which then count as false).
 */
function importExchange(target: DefinitionsTarget, vhost: string, e: ExchangeDefinition): void {
  if (e.name === '') return target.warn('Not importing the default exchange');
  // RabbitMQ makes an exchange of whatever else the name is (one HTTP cannot delete); not here.
  if (typeof e.name !== 'string') throw DefinitionsError.erlang('function_clause');
  if (e.name.startsWith('amq.')) {
    return target.warn(`Skipping import of an exchange whose name begins with 'amq.', name: ${e.name}`);
  }
  requireVhost(target, vhost);
  if (target.hasExchange(vhost, e.name)) return;
  if (e.type === undefined) {
    throw new DefinitionsError(amqpErrorReason(commandInvalid("invalid exchange type 'undefined'")));
  }
  if (typeof e.type !== 'string') throw DefinitionsError.erlang('badarg');
  const args = tableArgument(e.arguments);
  if (typeof e.durable !== 'boolean') throw DefinitionsError.crashed(`exchange '${e.name}' in vhost '${vhost}': durable is not a boolean`);
  apply(() => target.declareExchange(vhost, { ...e, auto_delete: e.auto_delete === true, internal: e.internal === true, arguments: args }));
}

/**
 * rabbit_definitions:add_queue_int: the name must be a string (rabbit_misc:r), and a new queue's
 * durable and auto_delete booleans (rabbit_amqqueue:declare's guards); a queue that exists is
 * left as it is.
 */
function importQueue(target: DefinitionsTarget, vhost: string, q: QueueDefinition): void {
  if (typeof q.name !== 'string') throw DefinitionsError.erlang('function_clause');
  if (q.name.startsWith('amq.')) {
    return target.warn(`Skipping import of a queue whose name begins with 'amq.', name: ${q.name}`);
  }
  requireVhost(target, vhost);
  if (target.hasQueue(vhost, q.name)) return;
  const args = tableArgument(q.arguments);
  if (typeof q.durable !== 'boolean' || typeof q.auto_delete !== 'boolean') throw DefinitionsError.erlang('function_clause');
  apply(() => target.declareQueue(vhost, { ...q, arguments: args }));
}

/**
 * rabbit_definitions:add_binding_int: destination_type must be "queue" or "exchange"
 * (rabbit_misc:r). RabbitMQ ignores what rabbit_binding:add returns: a binding whose vhost,
 * source or destination is missing is skipped without a word.
 */
function importBinding(target: DefinitionsTarget, vhost: string, b: BindingDefinition): void {
  if (b.destination_type !== 'queue' && b.destination_type !== 'exchange') throw DefinitionsError.erlang('function_clause');
  const args = tableArgument(b.arguments);
  if (!target.hasVhost(vhost)) return;
  apply(() => target.bind(vhost, { ...b, arguments: args }));
}

/**
 * rabbit_definitions:args/1: arguments absent, or an empty list (what a JSON encoder of an
 * empty PHP array writes), are no arguments; an object is a table; anything else has no clause
 * in rabbit_misc:to_amqp_table.
 */
function tableArgument(value: unknown): Record<string, unknown> {
  if (value === undefined || (Array.isArray(value) && value.length === 0)) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw DefinitionsError.erlang('function_clause');
  return value as Record<string, unknown>;
}

function importPolicy(target: DefinitionsTarget, vhost: string, p: PolicyDefinition): void {
  if (p.name === undefined) throw new DefinitionsError(`policy in virtual host '${vhost}' has undefined name`);
  requireVhost(target, vhost);
  validation(() => target.setPolicy(vhost, p), ` (${vhost}/${p.name})`);
}

function importParameter(target: DefinitionsTarget, vhost: string, p: ParameterDefinition): void {
  target.setParameter(vhost, { ...p, component: p.component ?? UNDEFINED, name: p.name ?? UNDEFINED });
}

/** How many queues each vhost would gain (queues that exist already are not redeclared). */
function newQueues(target: DefinitionsTarget, queues: QueueDefinition[], vhost: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const q of queues) {
    const v = vhost ?? q.vhost;
    if (typeof q.name === 'string' && !q.name.startsWith('amq.') && !target.hasQueue(v, q.name)) out.set(v, (out.get(v) ?? 0) + 1);
  }
  return out;
}

/**
 * What RabbitMQ's import reads for a key an entry lacks (maps:get(Key, Entry, undefined)): the
 * atom undefined, which it prints, and stores where it takes any term (a topic permission's
 * exchange, a global parameter), as "undefined".
 */
const UNDEFINED = 'undefined';

function requireVhost(target: DefinitionsTarget, vhost: unknown): void {
  if (typeof vhost !== 'string' || !target.hasVhost(vhost)) throw new DefinitionsError(['no_such_vhost', vhost ?? UNDEFINED]);
}

function requireUser(target: DefinitionsTarget, user: unknown): void {
  if (typeof user !== 'string' || !target.hasUser(user)) throw new DefinitionsError(['no_such_user', user ?? UNDEFINED]);
}

function allStrings(...values: unknown[]): boolean {
  return values.every((v) => typeof v === 'string');
}

/** A category's entries; a category that is not a list is refused rather than half-read. */
function list<T>(defs: Definitions, key: keyof Definitions): T[] {
  const value: unknown = defs[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new DefinitionsError(`${key} must be a list`);
  return (value as unknown[]).filter((v) => typeof v === 'object' && v !== null) as T[];
}

/**
 * Runs a declare or bind: an AMQP error becomes the reason RabbitMQ gives, its Erlang
 * #amqp_error{} record as JSON: `["amqp_error","precondition_failed",<text as char codes>,"none"]`.
 */
function apply(fn: () => void): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof AmqpError) throw new DefinitionsError(amqpErrorReason(err));
    throw err;
  }
}

export function amqpErrorReason(err: AmqpError): unknown[] {
  const sep = err.replyText.indexOf(' - ');
  const name = sep < 0 ? 'internal_error' : err.replyText.slice(0, sep).toLowerCase();
  const explanation = sep < 0 ? err.replyText : err.replyText.slice(sep + 3);
  return ['amqp_error', name, [...explanation].map((c) => c.codePointAt(0)!), 'none'];
}

/** Runs a policy or parameter change whose validation failure is a text: the reason says where. */
function validation(fn: () => void, where: string): void {
  try {
    fn();
  } catch (err) {
    if (err instanceof DefinitionsError) throw err;
    if (err instanceof AmqpError) throw new DefinitionsError(amqpErrorReason(err));
    throw new DefinitionsError(escapeHtmlTags(`${(err as Error).message}${where}`));
  }
}

