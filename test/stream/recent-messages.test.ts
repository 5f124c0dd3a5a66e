/** The ring of recently read stream messages: lookup by offset, bounded by count and by bytes. */
import { expect } from 'chai';
import { Message } from '../../src/queue/message.js';
import { encodeContentHeaderPayload } from '../../src/frame/generated/properties.js';
import { RecentMessages } from '../../src/stream/recent-messages.js';

const msg = (size: number): Message => new Message(0, '', 'q', encodeContentHeaderPayload(60, size, {}), Buffer.alloc(size));

describe('RecentMessages', () => {
  it('finds what it holds by offset; a newer offset in the same slot replaces the older', () => {
    const r = new RecentMessages(4, 10_000);
    const a = msg(1);
    r.set(2, a, 3);
    expect(r.get(2)).to.equal(a);
    expect(r.chunkEnd(2)).to.equal(3);
    expect(r.get(6)).to.equal(undefined);
    const b = msg(2);
    r.set(6, b, 9);
    expect(r.get(2)).to.equal(undefined);
    expect(r.get(6)).to.equal(b);
    expect(r.chunkEnd(6)).to.equal(9);
    expect(r.heldBytes).to.equal(b.size + b.header.length + 160);
  });

  it('holds at most its count and its bytes, emptying slots in ring order', () => {
    const one = msg(10);
    const each = one.size + one.header.length + 160;
    const r = new RecentMessages(8, 2.5 * each);
    for (let o = 0; o < 100; o++) r.set(o, msg(10), o);
    expect(r.heldBytes).to.be.at.most(2.5 * each);
    const held = Array.from({ length: 100 }, (_, o) => o).filter((o) => r.get(o) !== undefined);
    expect(held.length).to.be.within(1, 2);
    expect(held.every((o) => o >= 98)).to.equal(true);
    r.clear();
    expect(r.heldBytes).to.equal(0);
    expect(r.get(99)).to.equal(undefined);
  });
});
