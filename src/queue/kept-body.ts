/**
 * Where a kept message body lives. Bodies arrive as ranges of socket chunks; a message that is
 * kept (queued) must not pin a large chunk for a small body, so such a body is copied out once.
 * A body is held as (memory, offset, size) rather than as a Buffer of its own: a Buffer is a
 * 96-octet object per message, and for a queue of small messages that object, surviving the
 * young generation, was a third of what each message cost the garbage collector. Small bodies
 * are packed into shared slabs, as Node's Buffer pool packs small buffers.
 */

import { copyBytes } from '../frame/wire.js';

/** The memory and range of a kept body: written by keepBody. */
export interface BodyRange {
  bodyMemory: Buffer;
  bodyOffset: number;
  bodySize: number;
}

/**
 * Slab size and the bodies that share one: Node's Buffer pool's (8 KiB, for buffers under half
 * of it), so a slab held by one message pins what a pooled Buffer.allocUnsafe copy did.
 */
const SLAB_SIZE = 8192;
const SLAB_BODY_MAX = SLAB_SIZE / 2 - 1;

let slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
let slabUsed = 0;

/**
 * Sets out to buf[start, end) kept: the range itself when it is all or at least half of buf's
 * memory (zero-copy), else a copy (small ones in a shared slab, larger ones in memory of their
 * own).
 */
export function keepBody(buf: Buffer, start: number, end: number, out: BodyRange): void {
  const n = end - start;
  // Under half of buf is under half of its memory: copied, without reading buf.buffer (slow).
  if (n * 2 >= buf.length && keepsView(buf.buffer, buf.byteOffset + start, n)) {
    out.bodyMemory = buf;
    out.bodyOffset = start;
    out.bodySize = n;
    return;
  }
  if (n > SLAB_BODY_MAX) {
    const own = Buffer.allocUnsafeSlow(n);
    buf.copy(own, 0, start, end);
    out.bodyMemory = own;
    out.bodyOffset = 0;
    out.bodySize = n;
    return;
  }
  if (slabUsed + n > SLAB_SIZE) {
    slab = Buffer.allocUnsafeSlow(SLAB_SIZE);
    slabUsed = 0;
  }
  out.bodyMemory = slab;
  out.bodyOffset = slabUsed;
  slabUsed = copyBytes(buf, start, end, slab, slabUsed);
  out.bodySize = n;
}

/** buf itself when a kept buffer may be a view of its memory, else a copy in memory of its own. */
export function keptBuffer(buf: Buffer): Buffer {
  if (keepsView(buf.buffer, buf.byteOffset, buf.length)) return buf;
  const own = Buffer.allocUnsafe(buf.length);
  buf.copy(own);
  return own;
}

/** A view of length octets at offset in memory may be kept: it is all of it, or at least half. */
function keepsView(memory: ArrayBufferLike, offset: number, length: number): boolean {
  return (offset === 0 && memory.byteLength === length) || memory.byteLength <= length * 2;
}
