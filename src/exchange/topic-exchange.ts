/**
 * The topic exchange (AMQP 0-9-1 §3.1.3.3; RabbitMQ tutorial-five; rabbit_exchange_type_topic):
 * binding keys are dot-separated word patterns where "*" matches exactly one word and "#" zero or
 * more; see TopicTrie for the exact rules. Like RabbitMQ, arguments take no part in matching but
 * are part of the binding's identity. validate/1 and validate_binding/2 accept anything.
 */
import type { FieldTable } from '../frame/field-table.js';
import { Added, BindingSet, Removed } from './binding-set.js';
import type { ExchangeType, Router, RoutingInput } from './exchange-type.js';
import { TopicTrie } from './topic-trie.js';

export class TopicExchange implements ExchangeType {
  readonly name = 'topic';
  validateDeclareArgs(_args: FieldTable): void {}
  validateBinding(_bindingKey: string, _args: FieldTable): void {}
  createRouter<D>(_exchangeArgs: FieldTable): Router<D> {
    return new TopicRouter<D>();
  }
}

/** Routing keys whose matches a topic router remembers; the cache is emptied when it fills. */
const MATCH_CACHE_SIZE = 16384;

export class TopicRouter<D> implements Router<D> {
  private readonly bindings = new BindingSet<D>();
  private readonly trie = new TopicTrie<D>();
  /**
   * Routing key → matching destinations. Applications publish with a bounded set of keys, so
   * most publishes skip the trie walk; any change to the bindings empties the cache.
   */
  private readonly matches = new Map<string, D[]>();

  get bindingCount(): number {
    return this.bindings.size;
  }

  /** Trie nodes in use (root included); for tests that unbinding prunes. */
  get trieNodeCount(): number {
    return this.trie.nodeCount;
  }

  bind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const added = this.bindings.add(destination, bindingKey, args);
    if (added === Added.None) return false;
    if (added !== Added.Args) {
      this.trie.add(bindingKey, destination);
      this.matches.clear();
    }
    return true;
  }

  unbind(destination: D, bindingKey: string, args: FieldTable): boolean {
    const removed = this.bindings.remove(destination, bindingKey, args);
    if (removed === Removed.None) return false;
    if (removed !== Removed.Args) {
      this.trie.remove(bindingKey, destination);
      this.matches.clear();
    }
    return true;
  }

  removeDestination(destination: D): void {
    const keys = this.bindings.removeDestination(destination);
    if (keys !== undefined) for (const key of keys.keys()) this.trie.remove(key, destination);
    this.matches.clear();
  }

  route(msg: RoutingInput, out: Set<D>): void {
    this.matchKey(msg.routingKey, out);
    if (msg.ccRoutingKeys !== undefined) for (const key of msg.ccRoutingKeys) this.matchKey(key, out);
  }

  private matchKey(routingKey: string, out: Set<D>): void {
    let found = this.matches.get(routingKey);
    if (found === undefined) {
      const set = new Set<D>();
      this.trie.match(routingKey, set);
      found = [...set];
      if (this.matches.size >= MATCH_CACHE_SIZE) this.matches.clear();
      this.matches.set(routingKey, found);
    }
    for (const d of found) out.add(d);
  }
}
