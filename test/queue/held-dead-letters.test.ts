import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { deadLetterMessage } from '../../src/queue/dead-letter.js';
import { DEAD_LETTER_PREFETCH, DEAD_LETTER_RETRY_MS, HeldDeadLetters, type OutDeadLetter } from '../../src/queue/held-dead-letters.js';
import { openMemoryStore } from '../../src/store/memory-store.js';
import type { MessageStore } from '../../src/store/message-store.js';
import { message, range } from './harness.js';

/**
 * HeldDeadLetters on its own, with a forward the test decides: what rabbit_fifo_dlx and its
 * worker do with a quorum queue's at-least-once dead-letters (the broker-level behaviour is in
 * test/integration/dead-letter-at-least-once.test.ts).
 */
describe('HeldDeadLetters', () => {
  const KEY = '/\u0000src\u0000dlx';
  let clock: FakeClock;
  let store: MessageStore;
  /** The bodies forwarded, in order, and whether the "targets" take them now. */
  let forwarded: string[];
  let taking: boolean;
  const forward = (out: OutDeadLetter): boolean => {
    forwarded.push(out.message.body.toString());
    if (taking) return true;
    out.lastPublishedAt = clock.now();
    return false;
  };
  const held = () => new HeldDeadLetters(KEY, { store, clock, forward, retryMs: DEAD_LETTER_RETRY_MS });
  const dead = (body: string) => deadLetterMessage(message(store, body), 'rejected', 'src', 'dlx', undefined, clock.now(), store.nextMessageId()).message;

  beforeEach(() => {
    clock = new FakeClock();
    store = openMemoryStore().messages;
    forwarded = [];
    taking = false;
  });

  it('forwards at once and writes nothing when the targets take it', () => {
    const h = held();
    taking = true;
    h.hold(dead('a'), 'rejected');
    expect([forwarded, h.count, store.countEntries(KEY).messages]).to.deep.equal([['a'], 0, 0]);
  });

  it(`keeps ${DEAD_LETTER_PREFETCH} out at once, the rest waiting in the store in order, and takes the next out as one is taken`, () => {
    const h = held();
    const n = DEAD_LETTER_PREFETCH + 8;
    for (const body of range(n)) h.hold(dead(body), 'rejected');
    expect(forwarded).to.deep.equal(range(DEAD_LETTER_PREFETCH));
    expect([h.count, h.bytes, store.countEntries(KEY).messages]).to.deep.equal([n, range(n).join('').length, n]);
    // The timer forwards again those refused that long ago; taken now, the rest follow in order.
    forwarded = [];
    taking = true;
    clock.advance(DEAD_LETTER_RETRY_MS);
    expect(forwarded).to.deep.equal(range(n));
    expect([h.count, h.bytes, store.countEntries(KEY).messages]).to.deep.equal([0, 0, 0]);
  });

  it('on a retry forwards only what is due: never published, or published a whole retry period ago', () => {
    const h = held();
    h.hold(dead('early'), 'rejected');
    clock.advance(DEAD_LETTER_RETRY_MS / 2);
    h.hold(dead('late'), 'rejected');
    forwarded = [];
    h.retry();
    expect(forwarded).to.deep.equal([]);
    clock.advance(DEAD_LETTER_RETRY_MS / 2);
    expect(forwarded).to.deep.equal(['early']);
  });

  it('recovers what the store holds, in order, a page at a time, and forwards it on start', () => {
    const n = 5000;
    const before = held();
    for (const body of range(n)) before.hold(dead(body), 'rejected');
    const after = held();
    after.recover();
    expect([after.count, after.bytes]).to.deep.equal([n, range(n).join('').length]);
    forwarded = [];
    taking = true;
    after.start();
    expect(forwarded).to.deep.equal(range(n));
    expect(store.countEntries(KEY).messages).to.equal(0);
    // Numbering goes on above what was recovered.
    taking = false;
    after.hold(dead('next'), 'rejected');
    expect(store.readEntries(KEY, 0, 10).map((e) => e.seq)).to.deep.equal([n]);
  });

  it('drops everything it holds, and its timer', () => {
    const h = held();
    for (const body of range(3)) h.hold(dead(body), 'rejected');
    expect(h.drop()).to.equal(3);
    expect([h.count, h.bytes, store.countEntries(KEY).messages]).to.deep.equal([0, 0, 0]);
    forwarded = [];
    clock.advance(DEAD_LETTER_RETRY_MS);
    expect(forwarded).to.deep.equal([]);
  });
});
