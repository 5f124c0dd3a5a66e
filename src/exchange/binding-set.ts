/**
 * The bindings of one exchange, by RabbitMQ's identity: (destination, binding key, arguments).
 * The same key with different arguments is a different binding (rabbit_binding keys its routes on
 * the whole #binding{} record, arguments sorted at the top level).
 *
 * Routers keep their own index for matching; this class tells them when the first binding of a
 * (destination, key) pair appears and when the last one goes, which is all that direct, fanout
 * and topic routing depend on.
 */
import type { FieldTable } from '../frame/field-table.js';
import { fieldTablesEqual } from './field-table-equality.js';

/** What bind() changed. */
export const Added = {
  /** The binding already existed: nothing changed. */
  None: 0,
  /** A new binding, but (destination, key) already had one with other arguments. */
  Args: 1,
  /** The first binding of (destination, key); the destination had other keys. */
  Key: 2,
  /** The first binding of the destination at all. */
  Destination: 3,
} as const;
export type Added = (typeof Added)[keyof typeof Added];

/** What unbind() changed. */
export const Removed = {
  /** There was no such binding. */
  None: 0,
  /** Removed, and (destination, key) still has a binding with other arguments. */
  Args: 1,
  /** Removed the last binding of (destination, key); the destination has other keys. */
  Key: 2,
  /** Removed the destination's last binding. */
  Destination: 3,
} as const;
export type Removed = (typeof Removed)[keyof typeof Removed];

export class BindingSet<D> {
  private readonly byDestination = new Map<D, Map<string, FieldTable[]>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(destination: D, key: string, args: FieldTable): Added {
    let keys = this.byDestination.get(destination);
    let result: Added = Added.Args;
    if (keys === undefined) {
      keys = new Map();
      this.byDestination.set(destination, keys);
      result = Added.Destination;
    }
    let argsList = keys.get(key);
    if (argsList === undefined) {
      argsList = [];
      keys.set(key, argsList);
      if (result !== Added.Destination) result = Added.Key;
    } else if (argsList.some((a) => fieldTablesEqual(a, args))) {
      return Added.None;
    }
    argsList.push(args);
    this.count++;
    return result;
  }

  remove(destination: D, key: string, args: FieldTable): Removed {
    const keys = this.byDestination.get(destination);
    const argsList = keys?.get(key);
    if (keys === undefined || argsList === undefined) return Removed.None;
    const i = argsList.findIndex((a) => fieldTablesEqual(a, args));
    if (i < 0) return Removed.None;
    argsList.splice(i, 1);
    this.count--;
    if (argsList.length > 0) return Removed.Args;
    keys.delete(key);
    if (keys.size > 0) return Removed.Key;
    this.byDestination.delete(destination);
    return Removed.Destination;
  }

  has(destination: D): boolean {
    return this.byDestination.has(destination);
  }

  /** Forgets every binding of destination and returns what it had (undefined when none). */
  removeDestination(destination: D): ReadonlyMap<string, readonly FieldTable[]> | undefined {
    const keys = this.byDestination.get(destination);
    if (keys === undefined) return undefined;
    this.byDestination.delete(destination);
    for (const argsList of keys.values()) this.count -= argsList.length;
    return keys;
  }
}
