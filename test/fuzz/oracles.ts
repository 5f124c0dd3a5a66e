/**
 * The fuzzers' oracles: what counts as a crash, a hang and a memory blowup (README.md explains
 * the numbers).
 */
import { runInNewContext } from 'node:vm';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { AmqpError, ConnectionError, ReplyCode } from '../../src/errors.js';
import { encodeMethodFrame } from '../../src/frame/generated/methods.js';

/** An oracle saw something it must not: a crash, a hang or a memory blowup. */
export class OracleFailure extends Error {
  override readonly name = 'OracleFailure';
  constructor(
    readonly kind: 'crash' | 'hang' | 'memory' | 'invariant',
    message: string,
    override readonly cause?: unknown,
  ) {
    super(`${kind}: ${message}${cause instanceof Error ? `\n  caused by ${cause.stack ?? cause.message}` : ''}`);
  }
}

/**
 * The decoders' only documented errors are ConnectionErrors (FatalFrameError and AbruptClose are
 * ConnectionErrors too): anything else thrown (TypeError, RangeError, a ChannelError...) is a crash.
 * A documented error must also be sendable: the connection turns it into connection.close, so
 * encoding that must not fail.
 */
export function expectDocumentedError(err: unknown, where: string): ConnectionError {
  if (!(err instanceof ConnectionError)) throw new OracleFailure('crash', `${where} threw an undocumented error`, err);
  try {
    encodeMethodFrame(0, 'connection.close', { replyCode: err.replyCode, replyText: err.replyText, classId: err.classId, methodId: err.methodId });
  } catch (e) {
    throw new OracleFailure('crash', `${where}: its error cannot be sent as connection.close`, e);
  }
  return err;
}

/** Runs fn; returns its error when it throws a documented one, undefined when it does not throw. */
export function documented(fn: () => void, where: string): ConnectionError | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return expectDocumentedError(err, where);
  }
}

/** An encoder's refusal of a value it cannot carry (541 INTERNAL_ERROR from encodeError). */
export function isEncodeRefusal(err: unknown): boolean {
  return err instanceof AmqpError && err.replyCode === ReplyCode.INTERNAL_ERROR;
}

export function invariant(ok: boolean, message: string): void {
  if (!ok) throw new OracleFailure('invariant', message);
}

// --- memory --------------------------------------------------------------------------------

/**
 * Bounded memory per input byte: after a full GC, what an input left reachable (JS heap plus
 * Buffer backing stores) may be at most MEMORY_SLACK + MEMORY_FACTOR[kind] × input bytes.
 *
 * - decoders, 128: their worst honest case is a field array of one-octet 'V' values or of empty
 *   arrays and tables, one small object per one to five input octets (about 40 bytes each);
 * - a whole connection, 1024: what a broker keeps for a declare is far larger than the frame.
 *   A plain queue.declare of 23 octets keeps about 3.6 KB (158 per octet); one with
 *   x-max-priority 255 (about 40 octets) keeps about 25 KB, one ready list per priority level
 *   (RabbitMQ too builds one backing queue per level).
 *
 * The slack covers a fresh broker's, connection's and channel's fixed state. A length field
 * believed before its bytes arrived, or state that grows with every repetition of the same
 * frame beyond that, blows past it.
 */
export const MEMORY_FACTOR = { decoder: 128, connection: 1024 } as const;
export const MEMORY_SLACK = 1024 * 1024;

let gcFn: (() => void) | undefined;

/** global.gc, exposed at run time if node was started without --expose-gc. */
export function gc(): void {
  if (!gcFn) {
    const g = (globalThis as { gc?: () => void }).gc;
    if (g) gcFn = g;
    else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    }
  }
  gcFn();
}

/** Reachable bytes after a full GC: this isolate's JS heap plus external (Buffer) memory. */
export function retainedBytes(): number {
  gc();
  gc();
  const s = getHeapStatistics() as ReturnType<typeof getHeapStatistics> & { external_memory: number };
  return s.used_heap_size + s.external_memory;
}

export function memoryLimit(kind: keyof typeof MEMORY_FACTOR, inputBytes: number): number {
  return MEMORY_SLACK + MEMORY_FACTOR[kind] * inputBytes;
}

export function checkMemory(kind: keyof typeof MEMORY_FACTOR, before: number, after: number, inputBytes: number, where: string): void {
  const grown = after - before;
  const limit = memoryLimit(kind, inputBytes);
  if (grown > limit) {
    throw new OracleFailure('memory', `${where}: ${grown} bytes retained for ${inputBytes} input bytes (limit ${limit} = ${MEMORY_SLACK} + ${MEMORY_FACTOR[kind]}×input)`);
  }
}

// --- time ----------------------------------------------------------------------------------

/**
 * No hang: every input finishes within a bound of wall-clock time (generous, for a shared 2-core
 * machine). A synchronous loop that never ends is caught by the runner's watchdog, which stops
 * the worker after HANG_MS; an input that ends but took longer is reported as a hang too.
 */
export const HANG_MS = { decoder: 1000, connection: 5000 } as const;
