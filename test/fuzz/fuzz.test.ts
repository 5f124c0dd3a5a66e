import { expect } from 'chai';
import { runCampaign, type TargetStats } from './campaign.js';
import type { Finding } from './engine.js';
import { TARGETS } from './targets.js';

/**
 * The short, deterministic version of `npm run fuzz` (README.md): every target, a fixed seed
 * and a fixed number of inputs, half from fast-check's generators (shrunk on failure), half
 * coverage-guided mutations, under all oracles (documented errors only, time bound, memory per
 * input byte). It builds on test/integration/fuzz.test.ts, which throws random methods at a
 * real broker over TCP from many peers.
 */
describe('fuzzing (short deterministic run; `npm run fuzz` runs long)', () => {
  const SEED = 20261123;
  const RUNS = 160;
  let result: { findings: Finding[]; stats: TargetStats[] };

  before(async function () {
    this.timeout(180000);
    result = await runCampaign({ targets: TARGETS.map((t) => t.name), seed: SEED, mode: 'both', runs: RUNS, memoryEvery: 40 });
  });

  it('the watchdog reports an input that never finishes, with its bytes', async function () {
    this.timeout(60000);
    const { findings } = await runCampaign({ targets: ['self-test-endless'], seed: 1, mode: 'property', runs: 1, memoryEvery: 0 });
    expect(findings.map((f) => [f.kind, Buffer.from(f.input, 'hex').toString()])).to.deep.equal([['hang', 'loop']]);
  });

  it('the heap limit turns a blowup into a memory finding, with the input', async function () {
    this.timeout(60000);
    const { findings } = await runCampaign({ targets: ['self-test-hoard'], seed: 1, mode: 'property', runs: 1, memoryEvery: 0, heapMb: 64 });
    expect(findings.map((f) => [f.kind, Buffer.from(f.input, 'hex').toString()])).to.deep.equal([['memory', 'hoard']]);
  });

  for (const t of TARGETS) {
    it(`${t.name}: ${RUNS} inputs, seed ${SEED}, no crash, hang or memory blowup`, () => {
      const stats = result.stats.find((s) => s.target === t.name);
      const found = result.findings.filter((f) => f.target === t.name);
      expect(found.map((f) => `${f.message}\n  input (hex): ${f.input}`)).to.deep.equal([]);
      expect(stats, 'the target ran to the end').to.not.equal(undefined);
      expect(stats!.execs).to.be.at.least(RUNS);
      expect(stats!.features, 'coverage feedback works').to.be.greaterThan(0);
    });
  }
});
