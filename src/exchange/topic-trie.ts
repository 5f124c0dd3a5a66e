/**
 * A trie of topic binding keys, matching routing keys exactly as RabbitMQ 3.10's
 * rabbit_exchange_type_topic does (trie_match/4, split_topic_key/1):
 *
 * - Keys are split on '.' into words; the empty key is ZERO words, while every other key has
 *   (number of dots + 1) words, empty ones included: "." is ["", ""], "a." is ["a", ""],
 *   "a..b" is ["a", "", "b"]. Words are compared byte for byte.
 * - In a binding key, a word that is exactly "*" matches one word (any, the empty word too);
 *   a word that is exactly "#" matches zero or more words. "a#", "*a" etc. are literal words.
 *   A routing key may contain "*" or "#" words: they only ever match literally or by wildcard.
 * - So "#" matches every key (the empty one too), "" matches only the empty key, "*" matches
 *   any one-word key including "" but not "" (zero words) nor "." (two words).
 *
 * Matching walks the trie with an explicit stack over states (node, word index). RabbitMQ's
 * recursion explores every way a "#" can swallow words, which is exponential for keys like
 * "#.#.#.#"; here each "#" node records, per match, the lowest word index from which it has
 * already been expanded, so every (node, index) state is visited at most once: the cost is
 * bounded by (trie nodes reachable) × (words + 1), independent of how many bindings exist
 * elsewhere in the trie, and no recursion depth limit applies to long keys.
 */

class TopicNode<D> {
  /** Children by literal word ("*" and "#" have their own slots). */
  children: Map<string, TopicNode<D>> | null = null;
  star: TopicNode<D> | null = null;
  hash: TopicNode<D> | null = null;
  /** Destinations whose binding key ends at this node. */
  destinations: Set<D> | null = null;
  /** The match that last expanded this "#" node, and the lowest word index expanded in it. */
  epoch = 0;
  expandedFrom = 0;

  constructor(
    readonly parent: TopicNode<D> | null,
    readonly word: string,
  ) {}

  child(word: string): TopicNode<D> | undefined {
    if (word === '*') return this.star ?? undefined;
    if (word === '#') return this.hash ?? undefined;
    return this.children?.get(word);
  }

  isEmpty(): boolean {
    return this.destinations === null && this.star === null && this.hash === null && this.children === null;
  }
}

/** RabbitMQ's split_topic_key/1: "" is no words; otherwise split on every '.'. */
export function splitTopicKey(key: string): string[] {
  return key === '' ? [] : key.split('.');
}

export class TopicTrie<D> {
  private readonly root = new TopicNode<D>(null, '');
  private epoch = 0;
  private pairs = 0;
  private nodes = 1;

  /** Number of (binding key, destination) pairs held. */
  get size(): number {
    return this.pairs;
  }

  /** Number of trie nodes, the root included (for tests of pruning). */
  get nodeCount(): number {
    return this.nodes;
  }

  /** Adds (bindingKey, destination); false if it was already there. */
  add(bindingKey: string, destination: D): boolean {
    let node = this.root;
    for (const word of splitTopicKey(bindingKey)) {
      let next = node.child(word);
      if (next === undefined) {
        next = new TopicNode<D>(node, word);
        this.nodes++;
        if (word === '*') node.star = next;
        else if (word === '#') node.hash = next;
        else (node.children ??= new Map()).set(word, next);
      }
      node = next;
    }
    const set = (node.destinations ??= new Set());
    if (set.has(destination)) return false;
    set.add(destination);
    this.pairs++;
    return true;
  }

  /** Removes (bindingKey, destination) and prunes nodes left empty; false if it was not there. */
  remove(bindingKey: string, destination: D): boolean {
    let node: TopicNode<D> | undefined = this.root;
    for (const word of splitTopicKey(bindingKey)) {
      node = node.child(word);
      if (node === undefined) return false;
    }
    if (node.destinations === null || !node.destinations.delete(destination)) return false;
    this.pairs--;
    if (node.destinations.size === 0) node.destinations = null;
    this.prune(node);
    return true;
  }

  /** Adds to out every destination whose binding key matches routingKey. */
  match(routingKey: string, out: Set<D>): void {
    const words = splitTopicKey(routingKey);
    const n = words.length;
    const epoch = ++this.epoch;
    const stackNodes: TopicNode<D>[] = [this.root];
    const stackIndex: number[] = [0];
    // The two stacks are pushed and popped in pairs: (node, index of the next word, 0..n).
    while (stackNodes.length > 0) {
      const node = stackNodes.pop()!;
      const i = stackIndex.pop()!;
      // A "#" child may swallow words i..n-1 (any number of them, none included).
      const hash = node.hash;
      if (hash !== null) {
        if (hash.epoch !== epoch) {
          hash.epoch = epoch;
          hash.expandedFrom = n + 1;
        }
        for (let j = i; j < hash.expandedFrom; j++) {
          stackNodes.push(hash);
          stackIndex.push(j);
        }
        if (i < hash.expandedFrom) hash.expandedFrom = i;
      }
      if (i === n) {
        if (node.destinations !== null) for (const d of node.destinations) out.add(d);
        continue;
      }
      const literal = node.children?.get(words[i]!); // i < n here
      if (literal !== undefined) {
        stackNodes.push(literal);
        stackIndex.push(i + 1);
      }
      if (node.star !== null) {
        stackNodes.push(node.star);
        stackIndex.push(i + 1);
      }
    }
  }

  /** Drops node and its ancestors while they hold nothing (RabbitMQ's remove_path_if_empty). */
  private prune(node: TopicNode<D>): void {
    let current: TopicNode<D> = node;
    while (current.parent !== null && current.isEmpty()) {
      const parent: TopicNode<D> = current.parent;
      if (current.word === '*') parent.star = null;
      else if (current.word === '#') parent.hash = null;
      else {
        const siblings = parent.children!; // a literal word's node is in its parent's children
        siblings.delete(current.word);
        if (siblings.size === 0) parent.children = null;
      }
      this.nodes--;
      current = parent;
    }
  }
}
