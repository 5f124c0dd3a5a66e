/**
 * The registry of exchange types by name, and the default set. Kept apart from exchange-type.ts
 * so that imports run one way: the types import exchange-type.ts, this file imports the types.
 */
import { ConsistentHashExchange } from './consistent-hash-exchange.js';
import { DeduplicationExchange } from './deduplication-exchange.js';
import { DelayedMessageExchange } from './delayed-message-exchange.js';
import { DirectExchange } from './direct-exchange.js';
import type { ExchangeType, ExchangeTypeLookup } from './exchange-type.js';
import { FanoutExchange } from './fanout-exchange.js';
import { HeadersExchange } from './headers-exchange.js';
import { TopicExchange } from './topic-exchange.js';

/** Exchange types by name. No singleton: each broker/vhost owns one (DESIGN.md, convention 3). */
export class ExchangeTypeRegistry implements ExchangeTypeLookup {
  private readonly types = new Map<string, ExchangeType>();

  /** Registers (or replaces) the type under its name. */
  register(t: ExchangeType): void {
    this.types.set(t.name, t);
  }

  get(name: string): ExchangeType | undefined {
    return this.types.get(name);
  }

  names(): string[] {
    return [...this.types.keys()];
  }
}

/**
 * A new registry holding direct, fanout, topic, headers, x-consistent-hash, x-delayed-message
 * and x-message-deduplication (whose cache expiry reads now: the broker's wall clock).
 */
export function defaultExchangeTypes(now: () => number = Date.now): ExchangeTypeRegistry {
  const registry = new ExchangeTypeRegistry();
  registry.register(new DirectExchange());
  registry.register(new FanoutExchange());
  registry.register(new TopicExchange());
  registry.register(new HeadersExchange());
  registry.register(new ConsistentHashExchange());
  registry.register(new DelayedMessageExchange(registry));
  registry.register(new DeduplicationExchange(now));
  return registry;
}
