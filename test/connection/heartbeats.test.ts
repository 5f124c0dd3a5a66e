import { expect } from 'chai';
import { FakeClock } from '../../src/clock.js';
import { HeartbeatEntry, Heartbeats, type HeartbeatPeer } from '../../src/connection/heartbeats.js';

/** A peer that records when it was checked and re-schedules itself, as a connection does. */
class Peer implements HeartbeatPeer {
  readonly checks: number[] = [];
  readonly entry = new HeartbeatEntry(this);
  again = true;
  constructor(private readonly hb: Heartbeats, private readonly clock: FakeClock, readonly intervalMs: number) {}
  start(): this {
    this.hb.schedule(this.entry, this.intervalMs);
    return this;
  }
  heartbeatCheck(): void {
    this.checks.push(this.clock.monotonic());
    if (this.again) this.hb.schedule(this.entry, this.intervalMs);
  }
}

describe('Heartbeats (one timer per interval for every connection)', () => {
  it('checks each peer one interval after it joined and every interval after, as a timer of its own would', async () => {
    const clock = new FakeClock();
    const hb = new Heartbeats(clock);
    const a = new Peer(hb, clock, 5000).start();
    await clock.advance(1200);
    const b = new Peer(hb, clock, 5000).start();
    await clock.advance(700);
    const c = new Peer(hb, clock, 2000).start();
    await clock.advance(15_000 - 1900);
    expect(a.checks).to.deep.equal([5000, 10_000, 15_000]);
    expect(b.checks).to.deep.equal([6200, 11_200]);
    expect(c.checks).to.deep.equal([3900, 5900, 7900, 9900, 11_900, 13_900]);
  });

  it('holds one timer per interval, whatever the number of peers', async () => {
    const clock = new FakeClock();
    const hb = new Heartbeats(clock);
    const peers = Array.from({ length: 1000 }, (_, i) => new Peer(hb, clock, i % 2 ? 5000 : 30_000).start());
    expect(clock.pending).to.equal(2);
    expect(hb.size).to.equal(1000);
    await clock.advance(30_000);
    expect(clock.pending).to.equal(2);
    expect(peers[1]!.checks).to.have.length(6);
    expect(peers[0]!.checks).to.deep.equal([30_000]);
  });

  it('a cancelled peer is not checked again, nor held; an empty lane leaves no timer behind', async () => {
    const clock = new FakeClock();
    const hb = new Heartbeats(clock);
    const a = new Peer(hb, clock, 5000).start();
    const b = new Peer(hb, clock, 5000).start();
    await clock.advance(5000);
    hb.cancel(a.entry);
    hb.cancel(a.entry);
    expect(hb.size).to.equal(1);
    await clock.advance(5000);
    expect(a.checks).to.deep.equal([5000]);
    expect(b.checks).to.deep.equal([5000, 10_000]);
    b.again = false;
    await clock.advance(5000);
    expect(hb.size).to.equal(0);
    expect(clock.pending).to.equal(0);
    // A peer that stopped re-scheduling may join again later.
    b.again = true;
    b.start();
    await clock.advance(5000);
    expect(b.checks).to.deep.equal([5000, 10_000, 15_000, 20_000]);
  });

  it('a check that throws does not stop the checks of the other peers', async () => {
    const clock = new FakeClock();
    const hb = new Heartbeats(clock);
    const bad = new Peer(hb, clock, 5000);
    bad.heartbeatCheck = () => { throw new Error('boom'); };
    bad.start();
    const good = new Peer(hb, clock, 5000).start();
    expect(() => clock.advance(5000)).to.throw('boom');
    await clock.advance(5000);
    expect(good.checks).to.deep.equal([5000, 10_000]);
  });
});
