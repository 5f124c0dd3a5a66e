/** Deterministic randomness for the frame fuzz tests. */

export type Rng = () => number;

/** mulberry32: a small seeded PRNG returning [0, 1). */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const int = (r: Rng, n: number): number => Math.floor(r() * n);

/** A random truncation, byte flip, insertion or deletion of `buf` (a copy). */
export function mutate(buf: Buffer, r: Rng): Buffer {
  const b = Buffer.from(buf);
  switch (int(r, 4)) {
    case 0:
      return b.subarray(0, int(r, b.length));
    case 1: {
      const n = 1 + int(r, 3);
      for (let i = 0; i < n; i++) b[int(r, b.length)] = int(r, 256);
      return b;
    }
    case 2: {
      const at = int(r, b.length + 1);
      return Buffer.concat([b.subarray(0, at), Buffer.from([int(r, 256)]), b.subarray(at)]);
    }
    default: {
      const at = int(r, b.length);
      return Buffer.concat([b.subarray(0, at), b.subarray(at + 1)]);
    }
  }
}
