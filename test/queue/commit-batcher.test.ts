import { expect } from 'chai';
import { CommitBatcher } from '../../src/queue/commit-batcher.js';
import type { MessageStore } from '../../src/store/message-store.js';

/** A store whose sync() is all the batcher uses. */
function storeWith(sync: () => Promise<void>): MessageStore {
  return { sync } as unknown as MessageStore;
}

/** Resolves once every callback of the batch has run (after the store's sync settles). */
function settled(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

describe('CommitBatcher', () => {
  it('runs every callback of a turn after one sync()', async () => {
    let syncs = 0;
    const b = new CommitBatcher(storeWith(async () => void syncs++), (err) => { throw err; });
    const ran: Array<Error | undefined> = [];
    for (let i = 0; i < 3; i++) b.whenDurable((err) => ran.push(err));
    await settled();
    expect(syncs).to.equal(1);
    expect(ran).to.deep.equal([undefined, undefined, undefined]);
  });

  it('a callback that throws is reported, and the rest of the batch still runs (issue 10: nothing escapes to the event loop)', async () => {
    const reported: unknown[] = [];
    const b = new CommitBatcher(storeWith(async () => {}), (err) => reported.push(err));
    const ran: number[] = [];
    b.whenDurable(() => ran.push(1));
    b.whenDurable(() => {
      throw new Error('confirm bookkeeping broke');
    });
    b.whenDurable(() => ran.push(3));
    await settled();
    expect(ran).to.deep.equal([1, 3]);
    expect(reported.map((e) => (e as Error).message)).to.deep.equal(['confirm bookkeeping broke']);
  });

  it('a sync() that throws instead of rejecting fails the batch like a rejection', async () => {
    const b = new CommitBatcher(storeWith(() => {
      throw new Error('store closed');
    }), (err) => { throw err; });
    const errors: Array<string | undefined> = [];
    b.whenDurable((err) => errors.push(err?.message));
    b.whenDurable((err) => errors.push(err?.message));
    await settled();
    expect(errors).to.deep.equal(['store closed', 'store closed']);
  });
});
