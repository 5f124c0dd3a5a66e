import { expect } from 'chai';
import { ConnectionLimits, FD_RESERVE, procFdProbe, type FdProbe } from '../src/connection-limits.js';

/** A process whose descriptors the test sets: `others` besides one per admitted connection. */
function fakeFds(limit: number | undefined, others: number): FdProbe & { others: number; counts: number; exhausted: boolean; limits: ConnectionLimits | undefined } {
  const probe = {
    others,
    counts: 0,
    exhausted: false,
    limits: undefined as ConnectionLimits | undefined,
    limit: () => limit,
    open() {
      probe.counts++;
      if (probe.exhausted) return Infinity;
      // the accepted socket + readdir's own descriptor
      return probe.others + (probe.limits?.open ?? 0) + 1 + 1;
    },
  };
  return probe;
}

describe('ConnectionLimits', () => {
  it('connectionMax bounds connections open at once; a release makes room', () => {
    const l = new ConnectionLimits({ connectionMax: 2, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fakeFds(undefined, 0));
    expect(l.admit('10.0.0.1')).to.equal(undefined);
    expect(l.admit('10.0.0.2')).to.equal(undefined);
    expect(l.admit('10.0.0.3')).to.equal('connection_max');
    l.release('10.0.0.1');
    expect(l.admit('10.0.0.3')).to.equal(undefined);
    expect(l.open).to.equal(2);
  });

  it('connectionMaxPerIp bounds connections per client address; an IPv4-mapped address is its IPv4 address', () => {
    const l = new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 2, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fakeFds(undefined, 0));
    expect(l.admit('10.0.0.1')).to.equal(undefined);
    expect(l.admit('::ffff:10.0.0.1')).to.equal(undefined);
    expect(l.admit('10.0.0.1')).to.equal('connection_max_per_ip');
    expect(l.admit('10.0.0.2')).to.equal(undefined);
    l.release('::ffff:10.0.0.1');
    expect(l.admit('10.0.0.1')).to.equal(undefined);
  });

  it('connectionRateLimit and connectionRateLimitPerIp bound new connections per second (one-second windows)', () => {
    let now = 1000;
    const l = new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 3, connectionRateLimitPerIp: 2 }, fakeFds(undefined, 0), () => now);
    expect(l.admit('10.0.0.1')).to.equal(undefined);
    expect(l.admit('::ffff:10.0.0.1')).to.equal(undefined);
    expect(l.admit('10.0.0.1')).to.equal('connection_rate_per_ip');
    expect(l.admit('10.0.0.2')).to.equal(undefined);
    expect(l.admit('10.0.0.3')).to.equal('connection_rate');
    expect(l.open).to.equal(3); // refusals take no slot
    now += 999;
    expect(l.admit('10.0.0.3')).to.equal('connection_rate');
    now += 1;
    expect(l.admit('10.0.0.3')).to.equal(undefined);
    expect(l.admit('10.0.0.1')).to.equal(undefined);
    expect(l.admit('10.0.0.1')).to.equal(undefined);
    expect(l.admit('10.0.0.1')).to.equal('connection_rate');
  });

  it('0 means no limit', () => {
    const l = new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fakeFds(undefined, 0));
    for (let i = 0; i < 5000; i++) expect(l.admit('10.0.0.1')).to.equal(undefined);
  });

  it(`refuses sockets that would leave fewer than ${FD_RESERVE} descriptors under the soft limit (issue 10: EMFILE killed the broker)`, () => {
    const fds = fakeFds(200, 30);
    const l = new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fds);
    fds.limits = l;
    let admitted = 0;
    while (l.admit('10.0.0.1') === undefined) admitted++;
    // 30 others + the connections + the new socket may use up to 200 - FD_RESERVE.
    expect(admitted).to.equal(200 - FD_RESERVE - 30);
    expect(l.admit('10.0.0.9')).to.equal('file_descriptors');
    l.release('10.0.0.1');
    expect(l.admit('10.0.0.9')).to.equal(undefined);
  });

  it('counts /proc/self/fd only now and then while far from the limit, on every accept near it', () => {
    const fds = fakeFds(100000, 30);
    const l = new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fds);
    fds.limits = l;
    for (let i = 0; i < 1000; i++) l.admit('10.0.0.1');
    expect(fds.counts).to.be.within(3, 5);
    // Descriptors opened behind its back (a store, log files) are found at the next count.
    fds.others = 100000 - 1000 - FD_RESERVE - 10;
    for (let i = 0; i < 300; i++) l.admit('10.0.0.1');
    expect(l.open).to.be.below(1300);
    const before = fds.counts;
    l.admit('10.0.0.1');
    expect(fds.counts).to.equal(before + 1);
  });

  it('refuses when the descriptors cannot even be counted (EMFILE), admits when the platform cannot count them', () => {
    const fds = fakeFds(1000, 10);
    fds.exhausted = true;
    expect(new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, fds).admit('10.0.0.1')).to.equal('file_descriptors');
    const unknown: FdProbe = { limit: () => 1000, open: () => undefined };
    expect(new ConnectionLimits({ connectionMax: 0, connectionMaxPerIp: 0, connectionRateLimit: 0, connectionRateLimitPerIp: 0 }, unknown).admit('10.0.0.1')).to.equal(undefined);
  });

  it('reads this process\'s soft limit and open descriptors from /proc on Linux', function () {
    if (process.platform !== 'linux') this.skip();
    expect(procFdProbe.limit()).to.be.a('number').above(10);
    expect(procFdProbe.open()).to.be.a('number').above(3);
  });
});
