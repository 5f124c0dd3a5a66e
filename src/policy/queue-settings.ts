import { fieldInteger, fieldString, ownField, type FieldTable } from '../frame/field-table.js';
import { NO_ARGUMENT_SETTINGS, type Overflow, type QueueSettings } from '../queue/queue-arguments.js';
import { policyValue } from './effective-definition.js';
import { NO_POLICY, type JsonValue, type PolicyMatch } from './policy.js';
import { parseMaxAge } from '../stream/stream-arguments.js';

/** A policy's max-age (validated when the policy was set) in ms. */
function maxAgeMs(text: string): number | undefined {
  try {
    return parseMaxAge(text);
  } catch {
    return undefined;
  }
}

/**
 * A queue's settings in force: its declared x-arguments resolved against the policies that
 * apply, key by key, as RabbitMQ 3.10 resolves them.
 *
 * Classic queues (rabbit_amqqueue_process:process_args_policy): the argument wins for
 * dead-letter-exchange, dead-letter-routing-key and overflow (res_arg); the lower value wins for
 * expires, message-ttl, max-length and max-length-bytes (res_min).
 *
 * Quorum queues (rabbit_quorum_queue:ra_machine_config): the lower value for max-length(-bytes),
 * delivery-limit and message-ttl; the policy wins for overflow and expires; the argument wins for
 * the dead-letter exchange, routing key and strategy. A quorum queue has no reject-publish-dlx: it falls
 * back to drop-head.
 */
export function effectiveQueueSettings(declared: QueueSettings, args: FieldTable, match: PolicyMatch): QueueSettings {
  // A classic queue without arguments or policy: what it declares is in force (the same shared object).
  if (declared === NO_ARGUMENT_SETTINGS && match === NO_POLICY) return declared;
  const quorum = declared.queueType === 'quorum';
  const num = (key: string): number | undefined => {
    const v = policyValue(match, key);
    return typeof v === 'number' ? v : undefined;
  };
  const str = (key: string): string | undefined => {
    const v: JsonValue | undefined = policyValue(match, key);
    return typeof v === 'string' ? v : undefined;
  };
  const argInt = (key: string): number | undefined => fieldInteger(ownField(args, key));
  const argStr = (key: string): string | undefined => fieldString(ownField(args, key));
  const min = (policy: number | undefined, arg: number | undefined) =>
    policy === undefined ? arg : arg === undefined ? policy : Math.min(policy, arg);
  const argWins = <T>(policy: T | undefined, arg: T | undefined) => (arg !== undefined ? arg : policy);
  const policyWins = <T>(policy: T | undefined, arg: T | undefined) => (policy !== undefined ? policy : arg);

  if (declared.queueType === 'stream') {
    // rabbit_stream_queue:policy_precedence: the policy's value wins for each retention key.
    const age = str('max-age');
    const ageMs = age === undefined ? undefined : maxAgeMs(age);
    return {
      ...declared,
      maxLengthBytes: policyWins(num('max-length-bytes'), declared.maxLengthBytes),
      maxAge: policyWins(ageMs, declared.maxAge),
      streamMaxSegmentSizeBytes: policyWins(num('stream-max-segment-size-bytes'), declared.streamMaxSegmentSizeBytes),
    };
  }
  let overflow = (quorum ? policyWins : argWins)(str('overflow'), argStr('x-overflow')) as Overflow | undefined;
  if (quorum && overflow === 'reject-publish-dlx') overflow = 'drop-head';
  const effective: QueueSettings = {
    ...declared,
    expires: (quorum ? policyWins : min)(num('expires'), argInt('x-expires')),
    messageTtl: min(num('message-ttl'), argInt('x-message-ttl')),
    deadLetterExchange: argWins(str('dead-letter-exchange'), argStr('x-dead-letter-exchange')),
    deadLetterRoutingKey: argWins(str('dead-letter-routing-key'), argStr('x-dead-letter-routing-key')),
    maxLength: min(num('max-length'), argInt('x-max-length')),
    maxLengthBytes: min(num('max-length-bytes'), argInt('x-max-length-bytes')),
    overflow: overflow ?? 'drop-head',
    deliveryLimit: quorum ? min(num('delivery-limit'), argInt('x-delivery-limit')) : declared.deliveryLimit,
  };
  // rabbit_quorum_queue:dead_letter_handler: the argument wins (both were checked to be one of the two values).
  if (quorum) effective.deadLetterStrategy = argWins(str('dead-letter-strategy') as QueueSettings['deadLetterStrategy'], declared.deadLetterStrategy);
  return effective;
}

/**
 * An exchange's alternate exchange in force: its alternate-exchange argument, else the policy's
 * (rabbit_policy:get_arg/3).
 */
export function effectiveAlternateExchange(args: FieldTable, match: PolicyMatch): string | undefined {
  const arg = ownField(args, 'alternate-exchange');
  if (arg !== undefined) return fieldString(arg);
  const v = policyValue(match, 'alternate-exchange');
  return typeof v === 'string' ? v : undefined;
}
