/**
 * The exchange-type seam (DESIGN.md, convention 6): what an exchange type is. Every type
 * registers by name in the registry (exchange-type-registry.ts), and the vhost layer looks it up
 * there. Routing is pure — no I/O, no broker state.
 *
 * A Router holds the bindings of ONE exchange. Binding identity is RabbitMQ's: the triple
 * (destination, binding key, arguments), arguments compared structurally (see fieldTablesEqual).
 * D is whatever the vhost layer binds to — a queue object or an exchange object.
 */
import type { FieldTable } from '../frame/field-table.js';

export interface RoutingInput {
  /** The routing key of basic.publish. */
  routingKey: string;
  /**
   * CC then BCC routing keys (RabbitMQ's "sender-selected distribution"), if any. RabbitMQ hands
   * the exchange type ALL routing keys at once (#basic_message.routing_keys = [Key | CC ++ BCC]):
   * direct and topic route every key, fanout/headers ignore keys, and x-consistent-hash hashes
   * only the first. Pass them here rather than calling route() once per key.
   */
  ccRoutingKeys?: readonly string[];
  headers: FieldTable | undefined;
  /**
   * Basic properties, for x-consistent-hash's `hash-property`: reads `correlationId`,
   * `messageId` (string or Buffer) and `timestamp` (number or bigint, seconds).
   */
  properties?: Record<string, unknown>;
  /**
   * Set by a deduplicating router (x-message-deduplication) that held the message back as a
   * duplicate: how many exchanges did so. The vhost then neither tries the alternate exchange
   * nor counts the message as unroutable (no basic.return).
   */
  duplicates?: number;
}

export interface Router<D> {
  /** Adds a binding; idempotent for the same (destination, bindingKey, args). Returns false if it already existed. */
  bind(destination: D, bindingKey: string, args: FieldTable): boolean;
  /** Removes a binding; returns false when there was none. */
  unbind(destination: D, bindingKey: string, args: FieldTable): boolean;
  /** Removes every binding to destination. */
  removeDestination(destination: D): void;
  /** Adds every matching destination to out (a Set, so a destination is added once). */
  route(msg: RoutingInput, out: Set<D>): void;
  /**
   * The destinations route() adds whatever the message, when they do not depend on it
   * (fanout): the router's own set, read-only, for the caller to use at once rather than copy.
   */
  everyMessage?(): ReadonlySet<D> | undefined;
  /**
   * The destinations route() adds for a message with this routing key and no CC or BCC keys,
   * when they depend on nothing else (direct): the router's own set, read-only, for the caller
   * to use at once rather than copy; undefined when none.
   */
  forRoutingKey?(routingKey: string): ReadonlySet<D> | undefined;
  /** Number of bindings (distinct (destination, key, args) triples). */
  readonly bindingCount: number;
}

export interface ExchangeType {
  /** The type name used in exchange.declare: 'direct', 'topic', ... */
  readonly name: string;
  /** Validates exchange.declare arguments; throws ChannelError 406 etc. as RabbitMQ would. */
  validateDeclareArgs(args: FieldTable): void;
  /**
   * Validates queue.bind / exchange.bind args and key for this type (e.g. consistent-hash weight
   * must be a number; headers x-match value). Throws like RabbitMQ. Not called on unbind
   * (RabbitMQ validates only in rabbit_binding:add).
   */
  validateBinding(bindingKey: string, args: FieldTable): void;
  /** A router for one exchange declared with these (already validated) arguments. */
  createRouter<D>(exchangeArgs: FieldTable): Router<D>;
}

/** Finding a type by name: what the vhost layer and x-delayed-message need of the registry. */
export interface ExchangeTypeLookup {
  get(name: string): ExchangeType | undefined;
}
