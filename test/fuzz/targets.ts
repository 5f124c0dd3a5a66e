/**
 * The fuzz targets by name: what runs an input, how long it may take, and the generator that
 * makes structured inputs (the property mode's inputs and the coverage-guided mode's seeds).
 */
import type fc from 'fast-check';
import {
  connectionScript, contentHeaderPayload, damaged, fieldTable, frameStream, methodPayload, protocolHeader, rawConnectionScript,
} from './arbitraries.js';
import { fuzzConnection } from './connection-harness.js';
import { fuzzContentHeader, fuzzFieldTable, fuzzFrameReader, fuzzMethod, fuzzProtocolHeader } from './decoder-targets.js';
import { encodeTable } from '../../src/frame/field-table.js';
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
  decoder('field-table', fuzzFieldTable, damaged(fieldTable.map((t) => Buffer.concat([Buffer.from([0]), encodeTable(t)])))),
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

export function targetNamed(name: string): Target {
  const t = TARGETS.find((x) => x.name === name);
  if (!t) throw new Error(`unknown fuzz target '${name}' (known: ${TARGETS.map((x) => x.name).join(', ')})`);
  return t;
}
