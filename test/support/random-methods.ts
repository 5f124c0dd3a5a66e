import type { FieldSpec, MethodSpec } from '../../src/frame/codegen/spec-model.js';
import { F, type FieldTable } from '../../src/frame/field-table.js';
import { int, type Rng } from '../frame/helpers.js';

/** Spec field names in camelCase, as the generated codec names arguments. */
export const camel = (s: string): string => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function randomString(r: Rng, max: number): string {
  const alphabet = ['a', 'Z', '0', '.', '-', '_', ' ', 'é', '中', '😀'];
  let s = '';
  const n = int(r, max);
  for (let i = 0; i < n; i++) s += alphabet[int(r, alphabet.length)];
  while (Buffer.byteLength(s) > 255) s = s.slice(0, -1);
  return s;
}

export function randomValue(f: FieldSpec, r: Rng, mode: 'random' | 'min' | 'max'): unknown {
  switch (f.type) {
    case 'octet':
      return mode === 'min' ? 0 : mode === 'max' ? 255 : int(r, 256);
    case 'short':
      return mode === 'min' ? 0 : mode === 'max' ? 65535 : int(r, 65536);
    case 'long':
      return mode === 'min' ? 0 : mode === 'max' ? 4294967295 : int(r, 2 ** 32);
    case 'longlong':
    case 'timestamp':
      return mode === 'min' ? 0 : mode === 'max' ? Number.MAX_SAFE_INTEGER : int(r, 2 ** 53);
    case 'bit':
      return mode === 'min' ? false : mode === 'max' ? true : r() < 0.5;
    case 'shortstr':
      return mode === 'min' ? '' : mode === 'max' ? 'x'.repeat(255) : randomString(r, 40);
    case 'longstr':
      return mode === 'min' ? Buffer.alloc(0) : Buffer.from(randomString(r, 100));
    case 'table':
      return mode === 'min' ? {} : ({ a: F.str(randomString(r, 10)), n: F.int32(int(r, 1000)), t: F.table({ b: F.bool(true) }) } as FieldTable);
  }
}

export function sampleArgs(m: MethodSpec, r: Rng, mode: 'random' | 'min' | 'max'): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const f of m.fields) args[camel(f.name)] = randomValue(f, r, mode);
  return args;
}

