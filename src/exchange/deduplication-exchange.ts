/**
 * `x-message-deduplication`, compatible with the rabbitmq-message-deduplication plugin
 * (noxdafox, 0.6.x for RabbitMQ 3.10; rabbit_message_deduplication_exchange.ex): routes like
 * fanout, but a message whose `x-deduplication-header` value is in the exchange's cache is not
 * routed. Arguments: `x-cache-size` (required, integer > 0, or a string of one), `x-cache-ttl`
 * (optional, integer > 0 ms, or a string of one), `x-cache-persistence` (`memory`, the
 * default, or `disk`: the vhost mirrors the cache into the store). A message's own
 * `x-cache-ttl` header (an integer, ms) overrides the exchange's TTL for its entry.
 *
 * Where Warren decides what the plugin leaves open (README, "Duplicates and ordering"): a
 * duplicate sets RoutingInput.duplicates instead of routing nowhere, so the vhost neither uses
 * the alternate exchange nor returns it to a mandatory publisher (the plugin's route returns
 * [], so its duplicates are unroutable), and it is confirmed. An exchange with no bindings
 * routes nowhere and caches nothing.
 */
import { preconditionFailed } from '../errors.js';
import { fieldInteger, ownField, type FieldTable, type FieldValue } from '../frame/field-table.js';
import { fieldValueKey } from '../frame/field-value-key.js';
import { FanoutRouter } from './fanout-exchange.js';
import { DedupCache } from './dedup-cache.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';

export const DEDUPLICATION_HEADER = 'x-deduplication-header';
const CACHE_TTL_HEADER = 'x-cache-ttl';

// The plugin's texts, byte for byte: its Elixir source continues these strings with a
// backslash-newline, which keeps the next line's indentation inside the text.
const SIZE_UNPARSABLE = "Missing or invalid argument,                       'x-cache-size' must be an integer greater than 0";
const SIZE_INVALID = "Missing or invalid argument,           'x-cache-size' must be an integer greater than 0";
const TTL_UNPARSABLE = "Invalid argument,                       'x-cache-ttl' must be an integer greater than 0";
const TTL_INVALID = "Invalid argument,              'x-cache-ttl' must be an integer greater than 0";
const PERSISTENCE_INVALID = "Invalid argument,              'x-cache-persistence' must be either 'disk' or 'memory'";

export type CachePersistence = 'memory' | 'disk';

export interface DedupOptions {
  size: number;
  ttl: number | undefined;
  persistence: CachePersistence;
}

/**
 * An integer argument as the plugin reads it: an integer type > 0, or a longstr of a decimal
 * integer (the plugin's Integer.parse accepts "12abc" and "0" at declare and then fails to
 * create the cache; Warren refuses both with the unparsable text). Throws the texts given.
 */
function positiveInteger(v: FieldValue, unparsable: string, invalid: string): number {
  if (v.type === 'S') {
    const s = v.value.toString('utf8');
    const n = /^[+-]?\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isSafeInteger(n) || n <= 0) throw preconditionFailed(unparsable);
    return n;
  }
  const n = fieldInteger(v);
  if (n === undefined || n <= 0) throw preconditionFailed(invalid);
  return n;
}

/** Validates exchange.declare's arguments as the plugin's validate/1 does, in its order. */
export function parseDedupOptions(args: FieldTable): DedupOptions {
  const sizeArg = ownField(args, 'x-cache-size');
  if (sizeArg === undefined) throw preconditionFailed(SIZE_INVALID);
  const size = positiveInteger(sizeArg, SIZE_UNPARSABLE, SIZE_INVALID);
  const ttlArg = ownField(args, 'x-cache-ttl');
  const ttl = ttlArg === undefined ? undefined : positiveInteger(ttlArg, TTL_UNPARSABLE, TTL_INVALID);
  const p = ownField(args, 'x-cache-persistence');
  let persistence: CachePersistence = 'memory';
  if (p !== undefined) {
    const s = p.type === 'S' ? p.value.toString('utf8') : undefined;
    if (s !== 'disk' && s !== 'memory') throw preconditionFailed(PERSISTENCE_INVALID);
    persistence = s;
  }
  return { size, ttl, persistence };
}

/** A message's x-cache-ttl header in ms when it is an integer >= 0, else undefined (the exchange's TTL applies). */
function headerTtl(headers: FieldTable | undefined): number | undefined {
  const n = fieldInteger(ownField(headers, CACHE_TTL_HEADER));
  return n !== undefined && n >= 0 ? n : undefined;
}

export class DeduplicationExchange implements ExchangeType {
  readonly name = 'x-message-deduplication';

  /** now: the wall clock (ms since epoch) cache expiry is measured on: the broker's Clock.now. */
  constructor(private readonly now: () => number = Date.now) {}

  validateDeclareArgs(args: FieldTable): void {
    parseDedupOptions(args);
  }

  validateBinding(_bindingKey: string, _args: FieldTable): void {}

  createRouter<D>(exchangeArgs: FieldTable): Router<D> {
    return new DeduplicationRouter<D>(parseDedupOptions(exchangeArgs), this.now);
  }
}

export class DeduplicationRouter<D> extends FanoutRouter<D> {
  readonly cache: DedupCache;
  readonly persistence: CachePersistence;

  constructor(options: DedupOptions, private readonly now: () => number) {
    super();
    this.cache = new DedupCache(options.size, options.ttl);
    this.persistence = options.persistence;
  }

  /** Not every message: a duplicate goes nowhere. */
  override everyMessage(): undefined {
    return undefined;
  }

  override route(msg: RoutingInput, out: Set<D>): void {
    if (this.destinations.size === 0) return;
    const value = ownField(msg.headers, DEDUPLICATION_HEADER);
    if (value !== undefined && !this.cache.insert(fieldValueKey(value), this.now(), headerTtl(msg.headers))) {
      msg.duplicates = (msg.duplicates ?? 0) + 1;
      return;
    }
    super.route(msg, out);
  }
}
