/**
 * The `shovel` runtime parameter component as rabbit_shovel_parameters (RabbitMQ 3.10.8)
 * validates it — errors in the order RabbitMQ prints them: the source checks, the destination
 * checks, then rabbit_parameter_validation:proplist over every known key — and the definition
 * a worker runs, with RabbitMQ's defaults (ack-mode on-confirm, src-prefetch-count 1000,
 * src-delete-after never, reconnect-delay 5 s).
 */
import { binary, list, type ErlTerm } from '../erlang/term.js';
import { ParameterInternalError, ParameterValidationError } from '../parameters/errors.js';
import type { ActingUser } from '../parameters/runtime-parameters.js';
import { proplistErrors, s, type Constraint, type ErrorParts, type Validator } from '../parameters/parameter-validation.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../parameters/value.js';
import { jsonTerm } from '../policy/json-term.js';
import { isUriError, parseAmqpUri } from './amqp-uri.js';

export const SHOVEL_COMPONENT = 'shovel';

export type AckMode = 'on-confirm' | 'on-publish' | 'no-ack';
export type DeleteAfter = 'never' | 'queue-length' | number;

/** One shovel as its worker runs it (rabbit_shovel_parameters:parse/3, AMQP 0-9-1 at both ends). */
export interface ShovelDefinition {
  vhost: string;
  name: string;
  srcUris: string[];
  srcQueue: string | undefined;
  srcExchange: string | undefined;
  /** Default "" (RabbitMQ binds the exchange source's queue with an empty key). */
  srcExchangeKey: string;
  srcPrefetchCount: number;
  srcDeleteAfter: DeleteAfter;
  destUris: string[];
  destQueue: string | undefined;
  destExchange: string | undefined;
  destExchangeKey: string | undefined;
  ackMode: AckMode;
  addForwardHeaders: boolean;
  addTimestampHeader: boolean;
  /** Seconds. */
  reconnectDelay: number;
  /** Basic properties set on every message published (`dest-publish-properties`), by P_basic field name. */
  publishProperties: Readonly<Record<string, string | number>>;
}

const p = (v: JsonValue): { p: ErlTerm } => ({ p: jsonTerm(v) });
const number: Validator = (k, v) => (typeof v === 'number' ? undefined : [`${s(k)} should be a number, actually was `, p(v)]);
const bin: Validator = (k, v) => (typeof v === 'string' ? undefined : [`${s(k)} should be binary, actually was `, p(v)]);
const bool: Validator = (k, v) => (typeof v === 'boolean' ? undefined : [`${s(k)} should be boolean, actually was `, p(v)]);
const queueName: Validator = (k, v) => {
  if (typeof v !== 'string') return [`${s(k)} should be binary, actually was `, p(v)];
  const len = Buffer.byteLength(v);
  return len <= 255 ? undefined : [`${s(k)} should be less than 255 bytes, actually was ${len}`];
};
const oneOf = (options: string[]): Validator => (k, v) => {
  if (typeof v !== 'string') return [`${s(k)} should be binary, actually was `, p(v)];
  return options.includes(v) ? undefined : [`${s(k)} should be one of `, { p: list(options.map((o) => binary(o))) }, ', actually was ', p(v)];
};
const deleteAfter: Validator = (k, v) =>
  v === 'never' || v === 'queue-length' || (typeof v === 'number' && Number.isInteger(v) && v >= 0)
    ? undefined
    : [`${s(k)} should be a number greater than or equal to 0, "never" or "queue-length", actually was `, p(v)];
/**
 * rabbit_shovel_util:validate_uri/3: each URI parses, and a direct one (`amqp://` without a host:
 * the broker itself, with every permission) names a vhost that exists and that the user who sets
 * the shovel may open; without a user (definitions imports, recovery) it is not checked.
 */
const uriOf = (user: ActingUser | undefined): Validator => (k, v) => {
  const one = (u: JsonValue): ErrorParts | undefined => {
    if (typeof u !== 'string') return [`${s(k)} should be binary, actually was `, p(u)];
    const parsed = parseAmqpUri(u);
    if (isUriError(parsed)) return [`"${s(u)}" not a valid URI: `, { p: parsed.term }];
    if (user && parsed.host === undefined && !user.mayAccessVhost(parsed.vhost)) return [`user "${s(user.name)}" may not connect to vhost "${s(parsed.vhost)}"`];
    return undefined;
  };
  if (typeof v === 'string') return one(v);
  if (!Array.isArray(v)) return [`${s(k)} should be list, actually was `, p(v)];
  for (const u of v) {
    const e = one(u);
    if (e) return e;
  }
  return undefined;
};
/** Queue and consumer arguments: a table (the keys RabbitMQ knows are not checked here). */
const table: Validator = (k, v) => (isJsonObject(v) ? undefined : [`${s(k)} not a list `, p(v)]);
/**
 * rabbit_shovel_parameters:validate_properties/2: the basic properties a shovel sets on what it
 * publishes (`dest-publish-properties`), by their P_basic field names.
 */
const PUBLISH_PROPERTIES: readonly Constraint[] = [
  { key: 'content_type', validate: bin },
  { key: 'content_encoding', validate: bin },
  { key: 'delivery_mode', validate: number },
  { key: 'priority', validate: number },
  { key: 'correlation_id', validate: bin },
  { key: 'reply_to', validate: bin },
  { key: 'expiration', validate: bin },
  { key: 'message_id', validate: bin },
  { key: 'timestamp', validate: number },
  { key: 'type', validate: bin },
  { key: 'user_id', validate: bin },
  { key: 'app_id', validate: bin },
  { key: 'cluster_id', validate: bin },
];

/** shovel_validation() ++ amqp091_src_validation(User) ++ amqp091_dest_validation(User), in that order. */
const constraints = (user: ActingUser | undefined): readonly Constraint[] => {
  const uri = uriOf(user);
  return [
    { key: 'reconnect-delay', validate: number },
    { key: 'ack-mode', validate: oneOf(['no-ack', 'on-publish', 'on-confirm']) },
    { key: 'src-protocol', validate: oneOf(['amqp10', 'amqp091']) },
    { key: 'dest-protocol', validate: oneOf(['amqp10', 'amqp091']) },
    { key: 'src-uri', validate: uri, mandatory: true },
    { key: 'src-exchange', validate: bin },
    { key: 'src-exchange-key', validate: bin },
    { key: 'src-queue', validate: bin },
    { key: 'src-queue-args', validate: table },
    { key: 'src-consumer-args', validate: table },
    { key: 'prefetch-count', validate: number },
    { key: 'src-prefetch-count', validate: number },
    { key: 'delete-after', validate: deleteAfter },
    { key: 'src-delete-after', validate: deleteAfter },
    { key: 'dest-uri', validate: uri, mandatory: true },
    { key: 'dest-exchange', validate: bin },
    { key: 'dest-exchange-key', validate: bin },
    { key: 'dest-queue', validate: queueName },
    { key: 'dest-queue-args', validate: table },
    { key: 'add-forward-headers', validate: bool },
    { key: 'add-timestamp-header', validate: bool },
    { key: 'dest-add-forward-headers', validate: bool },
    { key: 'dest-add-timestamp-header', validate: bool },
    { key: 'publish-properties', nested: PUBLISH_PROPERTIES },
    { key: 'dest-publish-properties', nested: PUBLISH_PROPERTIES },
  ];
};

/**
 * rabbit_shovel_parameters:validate/5. A value that is not an object, or a src-protocol or
 * dest-protocol that is neither amqp091 nor amqp10, crashes RabbitMQ's validator (500):
 * ParameterInternalError. AMQP 1.0 shovels are refused (Warren speaks AMQP 0-9-1 only).
 */
export function validateShovel(name: string, value0: JsonValue | undefined, user?: ActingUser): ErrorParts[] {
  // A top-level {} is kept as [] (src/parameters/value.ts): the empty proplist.
  const value = Array.isArray(value0) && value0.length === 0 ? {} : value0;
  if (!isJsonObject(value)) throw new ParameterInternalError('a shovel definition must be an object');
  for (const k of ['src-protocol', 'dest-protocol']) {
    const proto = value[k];
    if (proto === undefined || proto === 'amqp091') continue;
    if (proto === 'amqp10') throw new ParameterValidationError(`${k} amqp10: Warren's shovels speak AMQP 0-9-1 only`, true);
    throw new ParameterInternalError(`${k} ${JSON.stringify(proto)} crashes RabbitMQ's validator`);
  }
  const errors: ErrorParts[] = [];
  const has = (k: string) => value[k] !== undefined;
  if (!has('src-exchange') && !has('src-queue')) errors.push(["Must specify 'src-exchange' or 'src-queue'"]);
  else if (has('src-exchange') && has('src-queue')) errors.push(["Cannot specify 'src-exchange' and 'src-queue'"]);
  const da = value['src-delete-after'] ?? value['delete-after'];
  if (typeof da === 'number' && Number.isInteger(da) && value['ack-mode'] === 'no-ack') errors.push(["Cannot specify 'no-ack' and numerical 'delete-after'"]);
  if (has('dest-exchange') && has('dest-queue')) errors.push(["Cannot specify 'dest-exchange' and 'dest-queue'"]);
  return [...errors, ...proplistErrors(name, constraints(user), value)];
}

const uris = (v: JsonValue | undefined): string[] => (typeof v === 'string' ? [v] : Array.isArray(v) ? (v as string[]) : []);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** rabbit_shovel_parameters:parse/3 on a value that validated. */
export function shovelDefinition(vhost: string, name: string, value: JsonValue): ShovelDefinition {
  const v = value as JsonObject;
  const bool = (k: string, legacy: string): boolean => (v[k] ?? v[legacy] ?? false) === true;
  const publishProperties = v['dest-publish-properties'] ?? v['publish-properties'];
  return {
    vhost,
    name,
    srcUris: uris(v['src-uri']),
    srcQueue: str(v['src-queue']),
    srcExchange: str(v['src-exchange']),
    srcExchangeKey: str(v['src-exchange-key']) ?? '',
    srcPrefetchCount: (v['src-prefetch-count'] ?? v['prefetch-count'] ?? 1000) as number,
    srcDeleteAfter: (v['src-delete-after'] ?? v['delete-after'] ?? 'never') as DeleteAfter,
    destUris: uris(v['dest-uri']),
    destQueue: str(v['dest-queue']),
    destExchange: str(v['dest-exchange']),
    destExchangeKey: str(v['dest-exchange-key']),
    ackMode: (v['ack-mode'] ?? 'on-confirm') as AckMode,
    addForwardHeaders: bool('dest-add-forward-headers', 'add-forward-headers'),
    addTimestampHeader: bool('dest-add-timestamp-header', 'add-timestamp-header'),
    reconnectDelay: (v['reconnect-delay'] ?? 5) as number,
    publishProperties: isJsonObject(publishProperties) ? (publishProperties as Record<string, string | number>) : {},
  };
}
