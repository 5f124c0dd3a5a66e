/**
 * The fuzz targets by name: what runs an input, how long it may take, and the generator that
 * makes structured inputs (the property mode's inputs and the coverage-guided mode's seeds).
 */
import fc from 'fast-check';
import {
  connectionScript, contentHeaderPayload, damaged, encodedTable, frameStream, methodPayload, protocolHeader, rawConnectionScript,
} from './arbitraries.js';
import { fuzzConnection } from './connection-harness.js';
import { fuzzContentHeader, fuzzFieldTable, fuzzFrameReader, fuzzMethod, fuzzProtocolHeader } from './decoder-targets.js';
import { HANG_MS } from './oracles.js';

export interface Target {
  name: string;
  kind: 'decoder' | 'connection';
  /** Wall-clock bound for one input (the no-hang oracle). */
  hangMs: number;
  /** Runs one input; throws OracleFailure on a crash or broken invariant. `atPeak` is called
   * while the input's effects are still held (for the memory oracle). */
  run(input: Buffer, atPeak?: () => void): void | Promise<void>;
  arbitrary: fc.Arbitrary<Buffer>;
  /** Largest input the coverage-guided mode makes. */
  maxLength: number;
}

const decoder = (name: string, fn: (b: Buffer) => unknown, arbitrary: fc.Arbitrary<Buffer>, maxLength = 4096): Target => ({
  name,
  kind: 'decoder',
  hangMs: HANG_MS.decoder,
  run: (input, atPeak) => {
    const held = fn(input);
    atPeak?.();
    return void held;
  },
  arbitrary,
  maxLength,
});

export const TARGETS: readonly Target[] = [
  decoder('protocol-header', fuzzProtocolHeader, protocolHeader, 16),
  decoder('field-table', fuzzFieldTable, damaged(encodedTable)),
  decoder('method', fuzzMethod, damaged(methodPayload)),
  decoder('content-header', fuzzContentHeader, damaged(contentHeaderPayload)),
  decoder('frame-reader', fuzzFrameReader, damaged(frameStream, 256), 16384),
  {
    name: 'connection',
    kind: 'connection',
    hangMs: HANG_MS.connection,
    run: (input, atPeak) => fuzzConnection(input, true, atPeak),
    arbitrary: connectionScript,
    maxLength: 16384,
  },
  {
    name: 'connection-raw',
    kind: 'connection',
    hangMs: HANG_MS.connection,
    run: (input, atPeak) => fuzzConnection(input, false, atPeak),
    arbitrary: rawConnectionScript,
    maxLength: 4096,
  },
];

/**
 * Targets that break the runner's own oracles on purpose (fuzz.test.ts shows that the watchdog
 * and the heap limit work); never part of a campaign unless named.
 */
export const SELF_TESTS: readonly Target[] = [
  {
    name: 'self-test-endless',
    kind: 'decoder',
    hangMs: 100,
    run: (input) => {
      while (input.length > 0) input[0] = input[0]!;
    },
    arbitrary: fc.constant(Buffer.from('loop')),
    maxLength: 8,
  },
  {
    name: 'self-test-hoard',
    kind: 'decoder',
    hangMs: 60000,
    run: () => {
      const hoard: number[][] = [];
      for (;;) hoard.push(new Array<number>(1024).fill(1));
    },
    arbitrary: fc.constant(Buffer.from('hoard')),
    maxLength: 8,
  },
];

export function targetNamed(name: string): Target {
  const t = TARGETS.find((x) => x.name === name) ?? SELF_TESTS.find((x) => x.name === name);
  if (!t) throw new Error(`unknown fuzz target '${name}' (known: ${TARGETS.map((x) => x.name).join(', ')})`);
  return t;
}
