import { expect } from 'chai';
import { check, History, messageBody, parseBody, type Delivery } from './checker.js';
import { runChaos } from './harness.js';

/**
 * Issue "Faults": nothing confirmed is lost, duplicates are marked redelivered and per-consumer
 * order holds while the broker is killed, frozen, has its clock stepped and its disk filled.
 * `npm run chaos -- --cycles 100` is the long run; here each fault runs once.
 */
describe('chaos (one node: SIGKILL, SIGSTOP, clock steps, full disk)', function () {
  this.timeout(180_000);

  it('loses nothing confirmed, marks every duplicate redelivered and keeps per-consumer order through one of each fault', async () => {
    const lines: string[] = [];
    const report = await runChaos({ cycles: 4, seed: 1, schedule: ['kill', 'pause', 'clock', 'disk'], log: (l) => lines.push(l) });
    // Say clearly which faults this machine could not inject (no libfaketime, no tmpfs).
    for (const s of report.skipped) console.log(`      chaos: skipped ${s}`);
    const summary = `${lines.join('\n')}\n${JSON.stringify(report.stats)}`;
    expect(report.violations, summary).to.deep.equal([]);
    expect(report.stats.confirmed, summary).to.be.greaterThan(100);
    expect(report.drained, 'messages left queued at the end are found after a crash').to.be.greaterThan(0);
    expect(report.stats.deadLettered, 'rejected messages come out of the dead-letter queue').to.be.greaterThan(0);
    expect(report.disconnects.kill + report.disconnects.pause, 'kill and pause drop the clients, which reconnect').to.be.greaterThan(0);
  });

  describe('checker', () => {
    const d = (consumer: string, publisher: number, seq: number, redelivered = false): Delivery => ({ consumer, publisher, seq, redelivered, queue: 'q', intact: true });
    function history(published: number[], confirmed: Array<[number, number]>, deliveries: Delivery[]): History {
      const h = new History();
      published.forEach((n, i) => h.publish(i + 1, n));
      for (const [p, s] of confirmed) h.confirm(p, s);
      for (const x of deliveries) h.deliver(x);
      return h;
    }

    it('accepts a history with redelivered duplicates, out-of-order redeliveries and unconfirmed losses', () => {
      const h = history([3, 2], [[1, 1], [1, 2], [2, 1]], [
        d('c1#1', 1, 1), d('c1#1', 1, 2), d('c1#1', 2, 1),
        d('c2#1', 1, 1, true), // consumer c1 died before its ack: redelivered
        d('drain', 1, 3), // published, confirm lost, delivered anyway
      ]);
      expect(check(h).violations).to.deep.equal([]);
      expect(check(h).stats).to.include({ confirmed: 3, deliveries: 5, distinctDelivered: 4, duplicates: 1, redeliveries: 1 });
    });

    it('finds a confirmed message that was never delivered', () => {
      const h = history([2], [[1, 1], [1, 2]], [d('c#1', 1, 1)]);
      expect(check(h).violations).to.deep.equal(['lost: confirmed message 1.2 was never delivered nor found queued at the end']);
    });

    it('finds a duplicate delivered with redelivered=false', () => {
      const h = history([1], [[1, 1]], [d('c#1', 1, 1), d('c#2', 1, 1)]);
      expect(check(h).violations).to.deep.equal(['duplicate without redelivered: message 1.1 delivered again (delivery 2) to c#2 with redelivered=false']);
    });

    it('finds a first delivery that overtakes a later seq of the same publisher on one consumer', () => {
      const h = history([2], [], [d('c#1', 1, 2), d('c#1', 1, 1)]);
      expect(check(h).violations).to.deep.equal(["order: c#1 got publisher 1's seq 1 (not redelivered) after seq 2"]);
    });

    it('finds phantom and corrupt deliveries', () => {
      const h = history([1], [], [d('c#1', 1, 5), { ...d('c#2', 1, 1), intact: false }]);
      expect(check(h).violations).to.deep.equal([
        'phantom: message 1.5 delivered to c#1 was never published',
        'corrupt: message 1.1 delivered to c#2 with a body that is not the one published',
      ]);
    });

    it('reads (publisher, seq) back from a body and notices a changed byte', () => {
      const body = messageBody(3, 1234, 200);
      expect(parseBody(body)).to.deep.equal({ publisher: 3, seq: 1234, intact: true });
      body[150] = 0;
      expect(parseBody(body)).to.deep.equal({ publisher: 3, seq: 1234, intact: false });
      expect(parseBody(Buffer.from('hello'))).to.equal(undefined);
    });
  });
});
