import { expect } from 'chai';
import { TopicTrie, splitTopicKey } from '../../src/exchange/topic-trie.js';

function matches(trie: TopicTrie<string>, key: string): string[] {
  const out = new Set<string>();
  trie.match(key, out);
  return [...out].sort();
}

/** Does binding key `pattern` match routing key `key`? (one binding, to destination 'x'). */
function m(pattern: string, key: string): boolean {
  const t = new TopicTrie<string>();
  t.add(pattern, 'x');
  return matches(t, key).length === 1;
}

// rabbit_exchange_type_topic:split_topic_key/1 (RabbitMQ 3.10).
describe('splitTopicKey (split_topic_key/1)', () => {
  it('splits the empty key into zero words', () => {
    expect(splitTopicKey('')).to.deep.equal([]);
  });
  it('keeps empty words: leading, trailing and doubled dots', () => {
    expect(splitTopicKey('.')).to.deep.equal(['', '']);
    expect(splitTopicKey('a.')).to.deep.equal(['a', '']);
    expect(splitTopicKey('.a')).to.deep.equal(['', 'a']);
    expect(splitTopicKey('a..b')).to.deep.equal(['a', '', 'b']);
    expect(splitTopicKey('...')).to.deep.equal(['', '', '', '']);
  });
  it('splits on dots only', () => {
    expect(splitTopicKey('quick.orange.rabbit')).to.deep.equal(['quick', 'orange', 'rabbit']);
    expect(splitTopicKey('a#.*b')).to.deep.equal(['a#', '*b']);
  });
});

// tutorial-five (topics) examples, and rabbit_exchange_type_topic:trie_match/4 for the edges.
describe('TopicTrie matching', () => {
  it('tutorial-five: *.orange.* / *.*.rabbit / lazy.#', () => {
    const t = new TopicTrie<string>();
    t.add('*.orange.*', 'Q1');
    t.add('*.*.rabbit', 'Q2');
    t.add('lazy.#', 'Q2');
    expect(matches(t, 'quick.orange.rabbit')).to.deep.equal(['Q1', 'Q2']);
    expect(matches(t, 'lazy.orange.elephant')).to.deep.equal(['Q1', 'Q2']);
    expect(matches(t, 'quick.orange.fox')).to.deep.equal(['Q1']);
    expect(matches(t, 'lazy.brown.fox')).to.deep.equal(['Q2']);
    expect(matches(t, 'lazy.pink.rabbit')).to.deep.equal(['Q2']);
    expect(matches(t, 'quick.brown.fox')).to.deep.equal([]);
    expect(matches(t, 'orange')).to.deep.equal([]);
    expect(matches(t, 'quick.orange.new.rabbit')).to.deep.equal([]);
    expect(matches(t, 'lazy.orange.new.rabbit')).to.deep.equal(['Q2']);
  });

  it('"#" alone matches every key, the empty one included', () => {
    for (const k of ['', '.', 'a', 'a.b.c', '..', '#', '*']) expect(m('#', k), k).to.equal(true);
  });

  it('"#.#" (and longer runs of #) match the same as "#"', () => {
    for (const k of ['', '.', 'a', 'a.b.c']) {
      expect(m('#.#', k), k).to.equal(true);
      expect(m('#.#.#.#', k), k).to.equal(true);
    }
  });

  it('the empty binding key matches only the empty routing key', () => {
    expect(m('', '')).to.equal(true);
    expect(m('', '.')).to.equal(false);
    expect(m('', 'a')).to.equal(false);
  });

  it('"*" matches exactly one word, the empty word too, but not the empty key (zero words)', () => {
    expect(m('*', 'a')).to.equal(true);
    expect(m('*', '')).to.equal(false);
    expect(m('*', '.')).to.equal(false);
    expect(m('*', 'a.b')).to.equal(false);
    expect(m('*.*', '.')).to.equal(true);
    expect(m('a.*', 'a.')).to.equal(true);
    expect(m('*.a', '.a')).to.equal(true);
    expect(m('a.*.b', 'a..b')).to.equal(true);
  });

  it('"a.#.b" lets # swallow zero or more words between a and b', () => {
    expect(m('a.#.b', 'a.b')).to.equal(true);
    expect(m('a.#.b', 'a.x.b')).to.equal(true);
    expect(m('a.#.b', 'a.x.y.b')).to.equal(true);
    expect(m('a.#.b', 'a..b')).to.equal(true);
    expect(m('a.#.b', 'a.b.b')).to.equal(true);
    expect(m('a.#.b', 'a.b.c')).to.equal(false);
    expect(m('a.#.b', 'b')).to.equal(false);
  });

  it('"#.a.#" matches any key with a word "a" somewhere', () => {
    expect(m('#.a.#', 'a')).to.equal(true);
    expect(m('#.a.#', 'x.a')).to.equal(true);
    expect(m('#.a.#', 'a.x')).to.equal(true);
    expect(m('#.a.#', 'x.a.y')).to.equal(true);
    expect(m('#.a.#', 'x.y')).to.equal(false);
    expect(m('#.a.#', 'xa.ax')).to.equal(false);
  });

  it('"a.#" matches "a" itself (# swallows nothing) and "a." (one empty word)', () => {
    expect(m('a.#', 'a')).to.equal(true);
    expect(m('a.#', 'a.')).to.equal(true);
    expect(m('a.#', 'ab')).to.equal(false);
    expect(m('#.a', 'a')).to.equal(true);
  });

  it('empty words are words: "a..b", ".", "a." match only patterns with empty words or wildcards there', () => {
    expect(m('a..b', 'a..b')).to.equal(true);
    expect(m('a..b', 'a.b')).to.equal(false);
    expect(m('.', '.')).to.equal(true);
    expect(m('.', '')).to.equal(false);
    expect(m('..', '..')).to.equal(true);
    expect(m('a.', 'a.')).to.equal(true);
    expect(m('a.', 'a')).to.equal(false);
    expect(m('#.', 'a.')).to.equal(true);
    expect(m('#.', '')).to.equal(false);
    expect(m('.#', '')).to.equal(false);
    expect(m('.#', '.')).to.equal(true);
  });

  it('only whole words "*" and "#" are wildcards: "a#" and "*a" are literal words', () => {
    expect(m('a#', 'a#')).to.equal(true);
    expect(m('a#', 'ab')).to.equal(false);
    expect(m('*a', '*a')).to.equal(true);
    expect(m('*a', 'ba')).to.equal(false);
  });

  it('routing keys containing "*" or "#" words match them literally or by wildcard, never as wildcards', () => {
    expect(m('*', '*')).to.equal(true);
    expect(m('#', '#')).to.equal(true);
    expect(m('a', '*')).to.equal(false);
    expect(m('a.b', 'a.#')).to.equal(false);
    expect(m('a.#', 'a.#')).to.equal(true);
  });

  it('is case-sensitive and byte-exact', () => {
    expect(m('a', 'A')).to.equal(false);
    expect(m('ключ.*', 'ключ.x')).to.equal(true);
  });

  it('"*.#.*" needs at least two words; "#.*" at least one', () => {
    expect(m('*.#.*', 'a')).to.equal(false);
    expect(m('*.#.*', 'a.b')).to.equal(true);
    expect(m('*.#.*', 'a.b.c.d')).to.equal(true);
    expect(m('#.*', '')).to.equal(false);
    expect(m('#.*', 'a')).to.equal(true);
  });

  it('adds each destination once even when several patterns (or one pattern several ways) match', () => {
    const t = new TopicTrie<string>();
    t.add('#.#.#', 'q');
    t.add('a.#', 'q');
    t.add('#', 'p');
    expect(matches(t, 'a.a.a.a')).to.deep.equal(['p', 'q']);
  });
});

describe('TopicTrie bookkeeping', () => {
  it('add returns false for a (key, destination) already present; remove false when absent', () => {
    const t = new TopicTrie<string>();
    expect(t.add('a.b', 'q')).to.equal(true);
    expect(t.add('a.b', 'q')).to.equal(false);
    expect(t.size).to.equal(1);
    expect(t.remove('a.b', 'p')).to.equal(false);
    expect(t.remove('a.c', 'q')).to.equal(false);
    expect(t.remove('a.b.c', 'q')).to.equal(false);
    expect(t.remove('a', 'q')).to.equal(false);
    expect(t.remove('a.b', 'q')).to.equal(true);
    expect(t.size).to.equal(0);
  });

  it('prunes nodes left empty by remove, and only those (remove_path_if_empty)', () => {
    const t = new TopicTrie<string>();
    t.add('a.b.c', 'q');
    t.add('a.*.#', 'q');
    t.add('a', 'p');
    expect(t.nodeCount).to.equal(1 + 5); // root, a, b, c, *, #
    t.remove('a.b.c', 'q');
    expect(t.nodeCount).to.equal(1 + 3);
    t.remove('a.*.#', 'q');
    expect(t.nodeCount).to.equal(1 + 1); // "a" still holds p
    expect(matches(t, 'a')).to.deep.equal(['p']);
    t.remove('a', 'p');
    expect(t.nodeCount).to.equal(1);
    expect(matches(t, 'a')).to.deep.equal([]);
  });

  it('keeps a node whose binding was removed while it still has children', () => {
    const t = new TopicTrie<string>();
    t.add('a', 'q');
    t.add('a.b', 'q');
    t.remove('a', 'q');
    expect(t.nodeCount).to.equal(3);
    expect(matches(t, 'a.b')).to.deep.equal(['q']);
    expect(matches(t, 'a')).to.deep.equal([]);
  });
});

describe('TopicTrie cost', () => {
  it('matches "#.#.#.#.#.#.#.#" against a 200-word key without exponential blow-up', () => {
    const t = new TopicTrie<string>();
    t.add('#.#.#.#.#.#.#.#', 'q');
    t.add('#.x.#.x.#.x.#.y', 'r');
    const key = Array.from({ length: 200 }, () => 'x').join('.');
    expect(matches(t, key)).to.deep.equal(['q']);
    expect(matches(t, `${key}.y`)).to.deep.equal(['q', 'r']);
  });

  it('handles a routing key of 100,000 words (no recursion-depth limit)', () => {
    const t = new TopicTrie<string>();
    t.add('#.end', 'q');
    t.add('*.#', 'p');
    const key = `${'w.'.repeat(100_000)}end`;
    expect(matches(t, key)).to.deep.equal(['p', 'q']);
  });

  it('routes correctly with 10,000 bindings (scale test, not timed)', () => {
    const t = new TopicTrie<number>();
    // Bindings i = 0..9999: "region{i%10}.service{i%100}.instance{i}" plus wildcard families.
    for (let i = 0; i < 10_000; i++) {
      const family = i % 4;
      const key =
        family === 0
          ? `r${i % 10}.s${i % 100}.i${i}`
          : family === 1
            ? `r${i % 10}.*.i${i}`
            : family === 2
              ? `r${i % 10}.s${i % 100}.#`
              : `#.i${i}`;
      t.add(key, i);
    }
    expect(t.size).to.equal(10_000);
    for (const j of [0, 1, 2, 3, 4242, 9999, 5555, 1234]) {
      const key = `r${j % 10}.s${j % 100}.i${j}`;
      const out = new Set<number>();
      t.match(key, out);
      const expected: number[] = [];
      for (let i = 0; i < 10_000; i++) {
        const family = i % 4;
        const hit =
          family === 0
            ? i === j
            : family === 1
              ? i === j
              : family === 2
                ? i % 10 === j % 10 && i % 100 === j % 100
                : i === j;
        if (hit) expected.push(i);
      }
      expect([...out].sort((a, b) => a - b), key).to.deep.equal(expected);
    }
    // And unbinding everything leaves only the root.
    for (let i = 0; i < 10_000; i++) {
      const family = i % 4;
      const key =
        family === 0
          ? `r${i % 10}.s${i % 100}.i${i}`
          : family === 1
            ? `r${i % 10}.*.i${i}`
            : family === 2
              ? `r${i % 10}.s${i % 100}.#`
              : `#.i${i}`;
      expect(t.remove(key, i)).to.equal(true);
    }
    expect(t.size).to.equal(0);
    expect(t.nodeCount).to.equal(1);
  });
});
