/**
 * The fanout exchange: a message goes to every bound destination, whatever the routing key
 * (AMQP 0-9-1 §3.1.3.2; rabbit_exchange_type_fanout routes to every binding of the exchange,
 * rabbit_router:match_routing_key(X, ['_'])). Bindings are still (destination, key, args)
 * triples: a destination bound twice receives one copy and stays bound until both are gone.
 */
import type { FieldTable } from '../frame/field-table.js';
import { Added, BindingSet, Removed } from './binding-set.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';

export class FanoutExchange implements ExchangeType {
  readonly name = 'fanout';
  validateDeclareArgs(_args: FieldTable): void {}
  validateBinding(_bindingKey: string, _args: FieldTable): void {}
  createRouter<D>(_exchangeArgs: FieldTable): Router<D> {
    return new FanoutRouter<D>();
  }
}

/** Fanout's bindings and routing; the deduplication exchange routes as this one does. */
export class FanoutRouter<D> implements Router<D> {
  private readonly bindings = new BindingSet<D>();
  protected readonly destinations = new Set<D>();

  get bindingCount(): number {
    return this.bindings.size;
  }

  bind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const added = this.bindings.add(destination, bindingKey, args);
    if (added === Added.Destination) this.destinations.add(destination);
    return added !== Added.None;
  }

  unbind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const removed = this.bindings.remove(destination, bindingKey, args);
    if (removed === Removed.Destination) this.destinations.delete(destination);
    return removed !== Removed.None;
  }

  removeDestination(destination: D): void {
    this.bindings.removeDestination(destination);
    this.destinations.delete(destination);
  }

  route(_msg: RoutingInput, out: Set<D>): void {
    for (const d of this.destinations) out.add(d);
  }

  everyMessage(): ReadonlySet<D> | undefined {
    return this.destinations;
  }
}
