import { encodeTable, newTable, type FieldTable } from '../frame/field-table.js';
import { compareUtf8 } from '../sorted.js';
import { isExchange, type Destination, type Exchange } from './exchange.js';

/**
 * A binding's arguments as RabbitMQ keeps them (rabbit_binding sorts them: rabbit_misc:
 * sort_field_table): keys in bytewise order, so the same arguments in another order name the
 * same binding, to bind, unbind and list. t itself when already in order (empty, most often).
 */
export function canonicalArgs(t: FieldTable): FieldTable {
  const keys = Object.keys(t);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = compareUtf8(keys[i - 1]!, keys[i]!) < 0;
  if (sorted) return t;
  const out = newTable();
  for (const k of keys.sort(compareUtf8)) out[k] = t[k]!;
  return out;
}

export interface Binding {
  source: Exchange;
  destination: Destination;
  routingKey: string;
  args: FieldTable;
}

/**
 * The bindings of one vhost, found by source and by destination. Only bookkeeping: routers,
 * the metadata store and RabbitMQ's rules stay with VHost.
 *
 * A binding is (source, destination, routing key, arguments). Source and destination are the
 * objects themselves and the routing key is length-prefixed in front of the encoded arguments,
 * so no choice of names or keys (NUL bytes included) makes two bindings share an identity.
 */
export class BindingTable {
  /** source → destination → bindingKey(routing key, arguments) → binding */
  private readonly bySource = new Map<Exchange, Map<Destination, Map<string, Binding>>>();
  private readonly byDestination = new Map<Destination, Set<Binding>>();
  private exchangeDestinations = 0;

  /** The binding with exactly these fields, if any. */
  get(source: Exchange, destination: Destination, routingKey: string, args: FieldTable): Binding | undefined {
    return this.bySource.get(source)?.get(destination)?.get(bindingKey(routingKey, args));
  }

  /** Records b; returns false (and records nothing) when an identical binding exists. */
  add(b: Binding): boolean {
    let dests = this.bySource.get(b.source);
    if (!dests) this.bySource.set(b.source, (dests = new Map()));
    let keys = dests.get(b.destination);
    if (!keys) dests.set(b.destination, (keys = new Map()));
    const key = bindingKey(b.routingKey, b.args);
    if (keys.has(key)) return false;
    keys.set(key, b);
    let set = this.byDestination.get(b.destination);
    if (!set) this.byDestination.set(b.destination, (set = new Set()));
    set.add(b);
    if (isExchange(b.destination)) this.exchangeDestinations++;
    return true;
  }

  /** Forgets b (a binding returned by get, add's argument or a listing); false when not recorded. */
  delete(b: Binding): boolean {
    const dests = this.bySource.get(b.source);
    const keys = dests?.get(b.destination);
    const key = bindingKey(b.routingKey, b.args);
    if (!dests || !keys || keys.get(key) !== b) return false;
    keys.delete(key);
    if (keys.size === 0) dests.delete(b.destination);
    if (dests.size === 0) this.bySource.delete(b.source);
    const set = this.byDestination.get(b.destination)!; // indexed by destination as by source
    set.delete(b);
    if (set.size === 0) this.byDestination.delete(b.destination);
    if (isExchange(b.destination)) this.exchangeDestinations--;
    return true;
  }

  /** Bindings whose source is x (a copy: safe to delete from while iterating). */
  from(x: Exchange): Binding[] {
    const out: Binding[] = [];
    for (const keys of this.bySource.get(x)?.values() ?? []) out.push(...keys.values());
    return out;
  }

  /** Every binding, by source (a copy). */
  all(): Binding[] {
    const out: Binding[] = [];
    for (const dests of this.bySource.values()) for (const keys of dests.values()) out.push(...keys.values());
    return out;
  }

  /** Bindings whose destination is d (a copy). */
  to(d: Destination): Binding[] {
    return [...(this.byDestination.get(d) ?? [])];
  }

  /** True while x is the source of some binding (exchange.delete if-unused, auto-delete). */
  hasSource(x: Exchange): boolean {
    return this.bySource.has(x);
  }

  /** True while some binding leads to an exchange; without one, routing takes a short cut. */
  get hasExchangeDestinations(): boolean {
    return this.exchangeDestinations > 0;
  }
}

/** Routing key and arguments as one map key: the key's length first, so no two pairs meet. */
function bindingKey(routingKey: string, args: FieldTable): string {
  return `${routingKey.length}:${routingKey}${encodeTable(args).toString('latin1')}`;
}
