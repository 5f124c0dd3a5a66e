/**
 * The direct exchange: a message goes to every destination bound with a key equal to its routing
 * key (AMQP 0-9-1 §3.1.3.1; rabbit_exchange_type_direct → rabbit_router:match_routing_key/2).
 * Arguments take no part in matching, but they are part of the binding's identity, so the key
 * keeps routing to a destination while any of its (key, args) bindings remain.
 * RabbitMQ's validate/1 and validate_binding/2 for direct accept anything.
 */
import type { FieldTable } from '../frame/field-table.js';
import { Added, BindingSet, Removed } from './binding-set.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';

export class DirectExchange implements ExchangeType {
  readonly name = 'direct';
  validateDeclareArgs(_args: FieldTable): void {}
  validateBinding(_bindingKey: string, _args: FieldTable): void {}
  createRouter<D>(_exchangeArgs: FieldTable): Router<D> {
    return new DirectRouter<D>();
  }
}

class DirectRouter<D> implements Router<D> {
  private readonly bindings = new BindingSet<D>();
  private readonly byKey = new Map<string, Set<D>>();

  get bindingCount(): number {
    return this.bindings.size;
  }

  bind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const added = this.bindings.add(destination, bindingKey, args);
    if (added === Added.None) return false;
    if (added !== Added.Args) {
      let set = this.byKey.get(bindingKey);
      if (set === undefined) this.byKey.set(bindingKey, (set = new Set()));
      set.add(destination);
    }
    return true;
  }

  unbind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const removed = this.bindings.remove(destination, bindingKey, args);
    if (removed === Removed.None) return false;
    if (removed !== Removed.Args) this.dropKey(destination, bindingKey);
    return true;
  }

  removeDestination(destination: D): void {
    const keys = this.bindings.removeDestination(destination);
    if (keys !== undefined) for (const key of keys.keys()) this.dropKey(destination, key);
  }

  route(msg: RoutingInput, out: Set<D>): void {
    this.routeKey(msg.routingKey, out);
    if (msg.ccRoutingKeys !== undefined) for (const key of msg.ccRoutingKeys) this.routeKey(key, out);
  }

  forRoutingKey(routingKey: string): ReadonlySet<D> | undefined {
    return this.byKey.get(routingKey);
  }

  private routeKey(key: string, out: Set<D>): void {
    const set = this.byKey.get(key);
    if (set !== undefined) for (const d of set) out.add(d);
  }

  private dropKey(destination: D, key: string): void {
    const set = this.byKey.get(key);
    if (set === undefined) return;
    set.delete(destination);
    if (set.size === 0) this.byKey.delete(key);
  }
}
