import { expect } from 'chai';
import { LoginThrottle } from '../src/login-throttle.js';

describe('LoginThrottle (failed-login back-off per address)', () => {
  it('refuses an address for 1 s after N failures, doubling with each further failure up to 60 s', () => {
    let now = 0;
    const t = new LoginThrottle(3, () => now);
    expect(t.failed('10.0.0.1')).to.equal(undefined);
    expect(t.failed('10.0.0.1')).to.equal(undefined);
    expect(t.refusedFor('10.0.0.1')).to.equal(0);
    expect(t.failed('10.0.0.1')).to.equal(1000);
    expect(t.refusedFor('10.0.0.1')).to.equal(1000);
    expect(t.refusedFor('10.0.0.2')).to.equal(0); // per address
    now += 1000;
    expect(t.refusedFor('10.0.0.1')).to.equal(0);
    const backoffs: Array<number | undefined> = [];
    for (let i = 0; i < 8; i++) {
      const b = t.failed('10.0.0.1');
      backoffs.push(b);
      now += b ?? 0; // the next guess as soon as the back-off allows
    }
    expect(backoffs).to.deep.equal([2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
  });

  it('forgets an address a minute after its last failure, and one that logs in', () => {
    let now = 0;
    const t = new LoginThrottle(2, () => now);
    t.failed('a');
    now += 61_000;
    expect(t.failed('a')).to.equal(undefined); // a new window
    expect(t.failed('a')).to.equal(1000);
    now += 1000;
    t.succeeded('a');
    expect(t.failed('a')).to.equal(undefined);
  });

  it('does nothing with a limit of 0', () => {
    const t = new LoginThrottle(0, () => 0);
    for (let i = 0; i < 100; i++) expect(t.failed('a')).to.equal(undefined);
    expect(t.refusedFor('a')).to.equal(0);
  });
});
