import { expect } from 'chai';
import { decodeMethod } from '../../src/frame/generated/methods.js';
import { PublisherConfirms, type DurableCommits } from '../../src/connection/publisher-confirms.js';

/** A CommitBatcher stand-in: the test decides when (and whether) each batch commits. */
class FakeCommits implements DurableCommits {
  generation = 0;
  readonly waiting: Array<(err?: Error) => void> = [];

  whenDurable(done: (err?: Error) => void): void {
    this.waiting.push(done);
  }

  /** The store takes the batch: later whenDurable calls belong to the next one. */
  nextBatch(): void {
    this.generation++;
  }

  commit(err?: Error): void {
    for (const done of this.waiting.splice(0)) done(err);
  }

  /** Only the oldest batch waiting commits (the later ones are still being written). */
  commitOldest(): void {
    this.waiting.shift()?.();
  }
}

/** The confirm frames written, as 'ack 3' / 'ack* 5' (multiple) / 'nack 2'. */
class Frames {
  readonly sent: string[] = [];

  write(frame: Buffer): void {
    expect(frame.readUInt16BE(1), 'channel').to.equal(7);
    const m = decodeMethod(frame.subarray(7, frame.length - 1));
    if (m.name === 'basic.ack') this.sent.push(`ack${m.args.multiple ? '*' : ''} ${m.args.deliveryTag}`);
    else if (m.name === 'basic.nack') {
      expect(m.args).to.include({ multiple: false, requeue: true });
      this.sent.push(`nack ${m.args.deliveryTag}`);
    } else throw new Error(`unexpected ${m.name}`);
  }

  take(): string[] {
    return this.sent.splice(0);
  }
}

/** Confirms are flushed in a microtask: this lets it run. */
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('PublisherConfirms: seq numbers, disk waits, batched acks and nacks in seq order', () => {
  let commits: FakeCommits;
  let frames: Frames;
  let confirms: PublisherConfirms;
  beforeEach(() => {
    commits = new FakeCommits();
    frames = new Frames();
    confirms = new PublisherConfirms(7, commits, frames);
  });

  it('numbers publishes from 1', () => {
    expect([confirms.next(), confirms.next(), confirms.next()]).to.deep.equal([1, 2, 3]);
  });

  it('acks the transient messages of one tick with one multiple ack, a single one alone', async () => {
    for (let i = 0; i < 3; i++) confirms.confirmWhenSafe(confirms.next(), false);
    expect(frames.sent, 'nothing before the flush').to.deep.equal([]);
    await tick();
    expect(frames.take()).to.deep.equal(['ack* 3']);
    confirms.confirmWhenSafe(confirms.next(), false);
    await tick();
    expect(frames.take()).to.deep.equal(['ack 4']);
  });

  it('waits for the commit that holds a persistent message, registering once per batch', async () => {
    confirms.confirmWhenSafe(confirms.next(), true);
    confirms.confirmWhenSafe(confirms.next(), true);
    expect(commits.waiting).to.have.length(1);
    commits.nextBatch();
    confirms.confirmWhenSafe(confirms.next(), true);
    expect(commits.waiting).to.have.length(2);
    await tick();
    expect(frames.take()).to.deep.equal([]);
    commits.commit();
    await tick();
    expect(frames.take()).to.deep.equal(['ack* 3']);
  });

  it('acks a later transient message alone while an earlier one waits for the disk, never covering it', async () => {
    confirms.confirmWhenSafe(confirms.next(), true); // 1 waits for the disk
    confirms.confirmWhenSafe(confirms.next(), false);
    confirms.confirmWhenSafe(confirms.next(), false);
    await tick();
    // A multiple ack of 3 would also confirm 1, which is not on disk yet.
    expect(frames.take()).to.deep.equal(['ack 2', 'ack 3']);
    commits.commit();
    await tick();
    expect(frames.take()).to.deep.equal(['ack 1']);
  });

  it('sends nacks in seq order between runs of acks', async () => {
    confirms.confirmWhenSafe(confirms.next(), false); // 1
    confirms.confirmWhenSafe(confirms.next(), false); // 2
    const three = confirms.next();
    confirms.confirmWhenSafe(confirms.next(), false); // 4
    confirms.confirmWhenSafe(confirms.next(), false); // 5
    confirms.nack(three);
    confirms.confirmWhenSafe(confirms.next(), false); // 6
    await tick();
    expect(frames.take()).to.deep.equal(['ack* 2', 'nack 3', 'ack* 6']);
  });

  it('puts confirms that became ready out of order in seq order before batching them', async () => {
    confirms.confirmWhenSafe(confirms.next(), true); // 1 waits for the disk
    confirms.confirmWhenSafe(confirms.next(), false); // 2 is ready first
    commits.commit(); // 1 becomes ready in the same tick
    await tick();
    expect(frames.take()).to.deep.equal(['ack* 2']);
  });

  it('lets a later commit confirm the messages of earlier batches (store commits are ordered)', async () => {
    confirms.confirmWhenSafe(confirms.next(), true); // 1, batch 0
    commits.nextBatch();
    confirms.confirmWhenSafe(confirms.next(), true); // 2, batch 1
    const [first, second] = commits.waiting;
    second!();
    await tick();
    expect(frames.take()).to.deep.equal(['ack* 2']);
    first!();
    await tick();
    expect(frames.take()).to.deep.equal([]);
  });

  it('nacks every message of a failed commit', async () => {
    confirms.confirmWhenSafe(confirms.next(), true);
    confirms.confirmWhenSafe(confirms.next(), true);
    confirms.confirmWhenSafe(confirms.next(), false);
    commits.commit(new Error('disk full'));
    await tick();
    expect(frames.take()).to.deep.equal(['nack 1', 'nack 2', 'ack 3']);
  });

  it('drops the seqs it confirmed although a publisher never lets every confirm arrive (a steady stream: no unbounded growth)', async () => {
    // Each commit finds the next batch's publishes already waiting, as a publisher that keeps
    // a window full makes it: the waiting list is never empty.
    let published = 0;
    const batchOf50 = (): void => {
      for (let i = 0; i < 50; i++, published++) confirms.confirmWhenSafe(confirms.next(), true);
      commits.nextBatch();
    };
    batchOf50();
    for (let round = 0; round < 2000; round++) {
      batchOf50();
      commits.commitOldest();
    }
    await tick();
    expect(confirms.unconfirmed, 'the last batch waits').to.equal(50);
    const acked = frames.take();
    expect(acked.at(-1)).to.equal(`ack* ${published - 50}`);
    expect(confirms.retainedSeqs, 'seqs held: the waiting ones, not every one published').to.be.at.most(2 * 50 + 1024);
  });

  it('sends nothing once stopped (the channel closed)', async () => {
    confirms.confirmWhenSafe(confirms.next(), true);
    confirms.confirmWhenSafe(confirms.next(), false);
    confirms.stop();
    commits.commit();
    await tick();
    expect(frames.sent).to.deep.equal([]);
  });
});
