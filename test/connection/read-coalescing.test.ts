import { expect } from 'chai';
import { ReadCoalescing, SMALL_READ, type ReadPace } from '../../src/connection/read-coalescing.js';

/** A ReadCoalescing on a clock the test moves, whose naps are recorded and whose scheduled nap runs when the test says. */
function coalescing(micros = 50) {
  let now = 1000;
  const naps: number[] = [];
  const scheduled: Array<() => void> = [];
  const rc = new ReadCoalescing(micros, () => now, (ms) => naps.push(ms), (fn) => scheduled.push(fn));
  return {
    rc,
    naps,
    scheduled,
    /** Moves the clock by us microseconds. */
    pass(us: number): void {
      now += us / 1000;
    },
    /** Runs what was scheduled (the turn's setImmediate callbacks). */
    runTurn(): void {
      for (const fn of scheduled.splice(0)) fn();
    },
  };
}

function pace(): ReadPace {
  return { lastReadAt: -Infinity, writtenAtLastRead: -1 };
}

describe('ReadCoalescing (naps while a client streams small writes)', () => {
  it('naps once the turn is over when a connection that sent nothing reads small chunks less than two naps apart', () => {
    const t = coalescing(50);
    const conn = pace();
    t.rc.afterRead(conn, 300, 0); // the first read: nothing to compare with
    expect(t.scheduled).to.have.length(0);
    t.pass(80);
    t.rc.afterRead(conn, 300, 0);
    expect(t.scheduled, 'scheduled for the end of the turn, not taken during the read').to.have.length(1);
    expect(t.naps).to.deep.equal([]);
    t.runTurn();
    expect(t.naps).to.deep.equal([0.05]);
    expect(t.rc.naps).to.equal(1);
    t.pass(99);
    t.rc.afterRead(conn, 300, 0);
    t.runTurn();
    expect(t.naps).to.deep.equal([0.05, 0.05]);
  });

  it('does not nap for a connection that sent something since its previous read (a client that may be waiting for it)', () => {
    const t = coalescing(50);
    const conn = pace();
    t.rc.afterRead(conn, 300, 100);
    t.pass(10);
    t.rc.afterRead(conn, 300, 180); // a reply, a confirm or deliveries went out meanwhile
    t.pass(10);
    t.rc.afterRead(conn, 300, 260);
    expect(t.scheduled).to.have.length(0);
    t.pass(10);
    t.rc.afterRead(conn, 300, 260); // nothing sent since the previous read: it streams
    expect(t.scheduled).to.have.length(1);
  });

  it('does not nap after a large read or when reads come two naps apart or more', () => {
    const t = coalescing(50);
    const conn = pace();
    t.rc.afterRead(conn, 300, 0);
    t.pass(10);
    t.rc.afterRead(conn, SMALL_READ, 0);
    t.pass(100);
    t.rc.afterRead(conn, 300, 0);
    t.pass(250);
    t.rc.afterRead(conn, 300, 0);
    expect(t.scheduled).to.have.length(0);
    t.pass(99);
    t.rc.afterRead(conn, SMALL_READ - 1, 0);
    expect(t.scheduled).to.have.length(1);
  });

  it('has one nap pending at a time, however many connections stream in the turn', () => {
    const t = coalescing(50);
    const conns = [pace(), pace(), pace()];
    for (const c of conns) t.rc.afterRead(c, 300, 0);
    t.pass(20);
    for (const c of conns) t.rc.afterRead(c, 300, 0);
    expect(t.scheduled).to.have.length(1);
    t.runTurn();
    t.pass(20);
    for (const c of conns) t.rc.afterRead(c, 300, 0);
    t.runTurn();
    expect(t.naps).to.deep.equal([0.05, 0.05]);
  });

  it('sleeps the thread for the nap with its default sleep', () => {
    const scheduled: Array<() => void> = [];
    const rc = new ReadCoalescing(20_000, () => performance.now(), undefined, (fn) => scheduled.push(fn));
    const conn = pace();
    rc.afterRead(conn, 10, 0);
    rc.afterRead(conn, 10, 0);
    const t0 = performance.now();
    scheduled[0]!();
    // Atomics.wait returns after its timeout, never before: 20 ms of nothing (a lower bound only).
    expect(performance.now() - t0).to.be.at.least(19);
  });
});
