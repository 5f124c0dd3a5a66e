import { expect } from 'chai';
import { HttpError } from '../../src/management/http.js';
import { HttpWaits } from '../../src/management/routes/warren-toolkit.js';

/** The waits POST /api/warren/waits keeps for their GET: bounded in number, each read once. */
describe('management API: the unread waits of /api/warren/waits are bounded', () => {
  it('refuses a wait beyond the limit until one is read; an outcome is read once', async () => {
    const waits = new HttpWaits(2);
    let release!: (v: unknown) => void;
    const a = waits.start(new Promise((resolve) => (release = resolve)));
    const b = waits.start(Promise.reject(new Error('still waiting for something')));
    let refused: unknown;
    const third = Promise.resolve('never read');
    try {
      waits.start(third);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.instanceOf(HttpError);
    expect((refused as HttpError).reason).to.equal('too many waits not yet read (2): GET /api/warren/waits/{id} reads one');
    expect(await waits.take(b)).to.deep.equal({ status: 408, body: { error: 'timeout', reason: 'still waiting for something' } });
    expect(waits.take(b)).to.equal(undefined);
    expect(waits.size).to.equal(1);
    const c = waits.start(Promise.resolve({ ready: 1 }));
    release({ ready: 2 });
    expect(await waits.take(a)).to.deep.equal({ status: 200, body: { ready: 2 } });
    expect(await waits.take(c)).to.deep.equal({ status: 200, body: { ready: 1 } });
    expect(waits.size).to.equal(0);
  });
});
