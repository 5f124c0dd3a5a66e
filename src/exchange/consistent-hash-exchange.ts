/**
 * The x-consistent-hash exchange of RabbitMQ 3.10's rabbitmq_consistent_hash_exchange plugin
 * (rabbit_exchange_type_consistent_hash.erl; plugin README).
 *
 * Binding key = weight: a positive integer in decimal (Erlang list_to_integer/1: optional sign,
 * digits only). Each bound destination owns `weight` consecutive buckets of a ring numbered
 * 0..N-1 in binding order; removing a destination's buckets shifts the later ones down. A message
 * goes to the owner of bucket jump_consistent_hash(phash2(Value), N), where Value is
 *
 * - the routing key (a binary) by default — the first routing key only, never CC/BCC ones;
 * - with the exchange argument `hash-header` = H: the header's {TypeAtom, Value} tuple as
 *   rabbit_misc:table_lookup/2 returns it, or the atom `undefined` when absent (so messages
 *   without the header all go to one bucket rather than being dropped);
 * - with `hash-property` = correlation_id | message_id | timestamp: that property as a binary
 *   (the timestamp in decimal), or `undefined` when absent.
 *
 * phash2, exs1024 and the jump hash are ported exactly (src/erlang/phash2.ts,
 * jump-consistent-hash.ts), so with the same bindings made in the same order a message lands in
 * the same queue as on RabbitMQ.
 *
 * Quirks of the plugin mirrored on purpose (its ring is keyed by destination only):
 * - a second binding of a destination already in the ring (another weight, or other arguments)
 *   is a real binding but adds no buckets;
 * - removing ANY binding of a destination removes all its buckets, even if another binding of it
 *   remains (it stays bound but receives nothing until re-bound).
 */
import { ownField, type FieldTable } from '../frame/field-table.js';
import { internalError, preconditionFailed } from '../errors.js';
import { Added, BindingSet, Removed } from './binding-set.js';
import { formatString, formatTerm, latin1ToText } from '../erlang/format.js';
import { phash2 } from '../erlang/phash2.js';
import { atom, binary, type ErlTerm } from '../erlang/term.js';
import { typedFieldValueTerm } from '../frame/field-term.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';
import { jumpConsistentHash } from './jump-consistent-hash.js';

const PROPERTIES = ['correlation_id', 'message_id', 'timestamp'] as const;
type HashProperty = (typeof PROPERTIES)[number];

type HashOn = { readonly on: 'routing-key' } | { readonly on: 'header'; readonly name: string } | { readonly on: 'property'; readonly name: HashProperty };

/**
 * hash_args/1: `hash-header` / `hash-property` must be longstrs. The plugin pattern-matches
 * {longstr, V} with no other clause, so another type crashes the channel process, and RabbitMQ
 * 3.10 closes the whole connection with 541 and the bare reply text "INTERNAL_ERROR" (observed on
 * a real 3.10.8 broker). That is what this throws.
 */
function hashArgs(args: FieldTable): { header: Buffer | undefined; property: Buffer | undefined } {
  const read = (name: string): Buffer | undefined => {
    const v = ownField(args, name);
    if (v === undefined) return undefined;
    if (v.type !== 'S') {
      throw internalError('');
    }
    return v.value;
  };
  return { header: read('hash-header'), property: read('hash-property') };
}

/** Parses a binding key as list_to_integer/1 would; undefined when it would raise badarg. */
export function parseWeight(bindingKey: string): bigint | undefined {
  return /^[+-]?[0-9]+$/.test(bindingKey) ? BigInt(bindingKey) : undefined;
}

export class ConsistentHashExchange implements ExchangeType {
  readonly name = 'x-consistent-hash';

  /** validate/1. */
  validateDeclareArgs(args: FieldTable): void {
    const { header, property } = hashArgs(args);
    if (header !== undefined && property !== undefined) {
      throw preconditionFailed('hash-header and hash-property are mutually exclusive');
    }
    if (property !== undefined && !(PROPERTIES as readonly string[]).includes(property.toString('utf8'))) {
      throw preconditionFailed(latin1ToText(`Unsupported property: ${formatString(property)}`, 'latin1'));
    }
  }

  /** validate_binding/2: the key must be an integer ≥ 1. */
  validateBinding(bindingKey: string, _args: FieldTable): void {
    const weight = parseWeight(bindingKey);
    if (weight === undefined) {
      throw preconditionFailed(latin1ToText(`The binding key must be an integer: ${formatTerm(binary(bindingKey))}`, 'latin1'));
    }
    if (weight < 1n) throw preconditionFailed('The binding key must be greater than 0');
  }

  createRouter<D>(exchangeArgs: FieldTable): Router<D> {
    const { header, property } = hashArgs(exchangeArgs);
    const hashOn: HashOn =
      header !== undefined
        ? { on: 'header', name: header.toString('utf8') }
        : property !== undefined
          ? { on: 'property', name: property.toString('utf8') as HashProperty }
          : { on: 'routing-key' };
    return new ConsistentHashRouter<D>(hashOn);
  }
}

interface RingEntry<D> {
  readonly destination: D;
  readonly weight: number;
}

export class ConsistentHashRouter<D> implements Router<D> {
  private readonly bindings = new BindingSet<D>();
  /** The ring in bucket order: entry i owns buckets starts[i] .. starts[i] + weight - 1. */
  private readonly ring: RingEntry<D>[] = [];
  private starts: number[] = [];
  private buckets = 0;

  constructor(private readonly hashOn: HashOn) {}

  get bindingCount(): number {
    return this.bindings.size;
  }

  /** Total buckets in the ring (the plugin's maps:size(bucket_map)). */
  get bucketCount(): number {
    return this.buckets;
  }

  bind(destination: D, bindingKey: string, args: FieldTable): boolean {
    if (this.bindings.add(destination, bindingKey, args) === Added.None) return false;
    // add_binding/3: not added to the ring when the destination already has buckets.
    if (!this.ring.some((e) => e.destination === destination)) {
      const weight = parseWeight(bindingKey);
      // Keys are validated before binding; an unvalidated bad key adds no buckets.
      if (weight !== undefined && weight >= 1n) {
        this.ring.push({ destination, weight: Number(weight) });
        this.reindex();
      }
    }
    return true;
  }

  unbind(destination: D, bindingKey: string, args: FieldTable): boolean {
    if (this.bindings.remove(destination, bindingKey, args) === Removed.None) return false;
    this.dropFromRing(destination); // remove_binding/1 drops every bucket of the destination
    return true;
  }

  removeDestination(destination: D): void {
    if (this.bindings.removeDestination(destination) !== undefined) this.dropFromRing(destination);
  }

  route(msg: RoutingInput, out: Set<D>): void {
    if (this.buckets === 0) return;
    const bucket = this.buckets === 1 ? 0 : jumpConsistentHash(phash2(this.valueToHash(msg)), this.buckets);
    out.add(this.ownerOf(bucket));
  }

  /** value_to_hash/2. */
  private valueToHash(msg: RoutingInput): ErlTerm {
    const on = this.hashOn;
    if (on.on === 'routing-key') return binary(msg.routingKey);
    if (on.on === 'header') {
      const v = ownField(msg.headers, on.name);
      return v === undefined ? atom('undefined') : typedFieldValueTerm(v);
    }
    const props = msg.properties;
    if (on.name === 'timestamp') {
      const ts = props?.['timestamp'];
      if (typeof ts === 'bigint' || (typeof ts === 'number' && Number.isInteger(ts))) return binary(BigInt(ts).toString());
      return atom('undefined');
    }
    const v = props?.[on.name === 'correlation_id' ? 'correlationId' : 'messageId'];
    if (typeof v === 'string') return binary(v);
    if (v instanceof Uint8Array) return binary(v);
    return atom('undefined');
  }

  /** Only with buckets > 0: the ring is not empty, and starts has one entry per ring entry. */
  private ownerOf(bucket: number): D {
    // Binary search for the last entry whose start <= bucket.
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= bucket) lo = mid;
      else hi = mid - 1;
    }
    return this.ring[lo]!.destination;
  }

  private dropFromRing(destination: D): void {
    const i = this.ring.findIndex((e) => e.destination === destination);
    if (i < 0) return;
    this.ring.splice(i, 1);
    this.reindex();
  }

  private reindex(): void {
    const starts: number[] = [];
    let total = 0;
    for (const e of this.ring) {
      starts.push(total);
      total += e.weight;
    }
    this.starts = starts;
    this.buckets = total;
  }
}
