/**
 * Sleeps the thread, event loop and all, for `ms` milliseconds (fractions too): Atomics.wait on
 * a cell nothing notifies, so no CPU is used and no timer is set. For the short naps that let
 * input gather (read coalescing, a held group commit), never for anything longer.
 */
export function nap(ms: number): void {
  Atomics.wait(napCell, 0, 0, ms);
}

const napCell = new Int32Array(new SharedArrayBuffer(4));
