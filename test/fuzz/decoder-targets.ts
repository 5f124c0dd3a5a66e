/**
 * Fuzz targets over the codec in src/frame: each takes arbitrary bytes and throws OracleFailure
 * when the code under test does something it must not. Beyond "only documented errors", each
 * checks a property that can fail on a wrong but crash-free decoder:
 *
 * - frame-reader: feeding the stream in arbitrary chunks gives exactly the frames, errors and
 *   leftover bytes that feeding it whole does;
 * - method, content-header, field-table: whatever decodes re-encodes to something that decodes
 *   to the same value (where the encoder can carry it at all);
 * - protocol-header: the two classifiers agree.
 */
import { isDeepStrictEqual } from 'node:util';
import { decodeTable, encodeTable, parseArray, tableToJS, toJS } from '../../src/frame/field-table.js';
import { FatalFrameError } from '../../src/frame/frame-errors.js';
import { FrameReader } from '../../src/frame/frame-reader.js';
import { decodeMethod, encodeMethodFrame, methodNameOf, type Method } from '../../src/frame/generated/methods.js';
import { decodeContentHeader, encodeContentHeaderPayload, type ContentHeader } from '../../src/frame/generated/properties.js';
import { checkProtocolHeader, classifyProtocolHeader } from '../../src/frame/protocol-header.js';
import { rng, type Rng } from '../frame/helpers.js';
import { documented, invariant, isEncodeRefusal, OracleFailure } from './oracles.js';

/** Splits `bytes` into chunks whose sizes `r` picks: mostly small, sometimes large. */
export function chunked(bytes: Buffer, r: Rng): Buffer[] {
  const out: Buffer[] = [];
  let off = 0;
  while (off < bytes.length) {
    const x = r();
    const n = x < 0.4 ? 1 + Math.floor(r() * 8) : x < 0.8 ? 1 + Math.floor(r() * 64) : 1 + Math.floor(r() * bytes.length);
    out.push(bytes.subarray(off, off + n));
    off += n;
  }
  return out;
}

// --- frame reader ----------------------------------------------------------------------------

const FRAME_MAXES = [0, 4096, 131072, 8, 9, 16, 64, 1024];

type ReaderEvent = string;

/** Feeds the chunks; records frames and errors; goes on after errors the reader recovers from. */
function readAll(frameMax: number, chunks: Buffer[]): { events: ReaderEvent[]; buffered: number; reader: FrameReader } {
  const reader = new FrameReader(frameMax);
  const events: ReaderEvent[] = [];
  const onFrame = (type: number, channel: number, payload: Buffer): void => {
    events.push(`frame ${type} ${channel} ${payload.toString('hex')}`);
  };
  for (const chunk of chunks) {
    let next = chunk;
    for (;;) {
      const err = documented(() => reader.feed(next, onFrame), 'FrameReader.feed');
      if (!err) break;
      events.push(`error ${err.replyCode} ${err.replyText}`);
      if (err instanceof FatalFrameError) {
        invariant(reader.failed, 'a FatalFrameError leaves the reader failed');
        return { events, buffered: reader.bufferedBytes, reader };
      }
      invariant(!reader.failed, `a non-fatal error (${err.replyText}) left the reader failed`);
      next = Buffer.alloc(0);
    }
  }
  return { events, buffered: reader.bufferedBytes, reader };
}

/**
 * Input: frame-max choice (1 octet), chunking seed (4 octets), then the stream. Each decoder
 * target returns what the code under test holds on to (for the memory oracle).
 */
export function fuzzFrameReader(input: Buffer): unknown {
  if (input.length < 5) return undefined;
  const frameMax = FRAME_MAXES[input[0]! % FRAME_MAXES.length]!;
  const stream = input.subarray(5);
  const whole = readAll(frameMax, [stream]);
  const parts = readAll(frameMax, chunked(stream, rng(input.readUInt32BE(1))));
  invariant(isDeepStrictEqual(parts.events, whole.events), `chunked feeding differs from whole feeding:\n  whole ${whole.events.join('\n        ')}\n  chunks ${parts.events.join('\n         ')}`);
  invariant(parts.buffered === whole.buffered, `chunked feeding keeps ${parts.buffered} bytes, whole feeding ${whole.buffered}`);
  invariant(whole.buffered <= stream.length, 'the reader holds more bytes than it was fed');
  return parts.reader;
}

// --- methods -----------------------------------------------------------------------------------

/** Input: a method frame's payload (class-id, method-id, arguments). */
export function fuzzMethod(payload: Buffer): unknown {
  let m: Method | undefined;
  if (documented(() => (m = decodeMethod(payload)), 'decodeMethod') || !m) return undefined;
  invariant(methodNameOf(m.classId, m.methodId) === m.name, `decoded ${m.name} from ids ${m.classId}/${m.methodId}`);
  // Encoders cut reply texts over 255 octets (RabbitMQ's rule); one decoded from invalid UTF-8
  // (basic.return's is not checked) can grow past that by replacement characters.
  const text = (m.args as { replyText?: unknown }).replyText;
  if (typeof text === 'string' && Buffer.byteLength(text) > 255) return m;
  let frame: Buffer;
  try {
    frame = encodeMethodFrame(0, m.name, m.args as never);
  } catch (err) {
    if (isEncodeRefusal(err)) return m; // e.g. a longlong above 2^53, or a non-UTF-8 shortstr that grows past 255
    throw new OracleFailure('crash', `encodeMethodFrame of decoded ${m.name}`, err);
  }
  let again: Method | undefined;
  try {
    again = decodeMethod(frame.subarray(7, frame.length - 1));
  } catch (err) {
    throw new OracleFailure('invariant', `re-encoded ${m.name} does not decode`, err);
  }
  invariant(isDeepStrictEqual(again, m), `${m.name} does not survive decode → encode → decode`);
  return m;
}

// --- content headers -------------------------------------------------------------------------

/** Input: a content header frame's payload. */
export function fuzzContentHeader(payload: Buffer): unknown {
  let h: ContentHeader | undefined;
  if (documented(() => (h = decodeContentHeader(payload)), 'decodeContentHeader') || !h) return undefined;
  if (h.properties.headers) tableToJS(h.properties.headers);
  let encoded: Buffer;
  try {
    encoded = encodeContentHeaderPayload(h.classId, h.bodySize, h.properties);
  } catch (err) {
    if (isEncodeRefusal(err)) return h;
    throw new OracleFailure('crash', 'encodeContentHeaderPayload of decoded properties', err);
  }
  let again: ContentHeader;
  try {
    again = decodeContentHeader(encoded);
  } catch (err) {
    throw new OracleFailure('invariant', 're-encoded content header does not decode', err);
  }
  invariant(
    again.classId === h.classId && again.bodySize === h.bodySize && isDeepStrictEqual(again.properties, h.properties),
    'content header does not survive decode → encode → decode',
  );
  return h;
}

// --- field tables ------------------------------------------------------------------------------

/** The same bytes with others after them: a decoder must not look past the end it was given. */
const TRAILER = Buffer.from([0x41, 0, 0, 0, 9, 0x53, 0xff, 0xff, 0xff, 0xff, 0x46, 0x74, 1]);

/**
 * Input: octet 0 even → a length-prefixed table at offset 1; odd → array values from offset 1.
 * What decodes must decode the same from an exact-size copy and with other bytes after it.
 */
export function fuzzFieldTable(input: Buffer): unknown {
  if (input.length < 1) return undefined;
  const body = input.subarray(1);
  if (input[0]! % 2 === 1) {
    let arr: ReturnType<typeof parseArray> | undefined;
    if (documented(() => (arr = parseArray(body, 0, body.length)), 'parseArray') || !arr) return undefined;
    for (const v of arr) toJS(v);
    const padded = Buffer.concat([body, TRAILER]);
    invariant(isDeepStrictEqual(parseArray(padded, 0, body.length), arr), 'parseArray reads past its end');
    return arr;
  }
  let decoded: ReturnType<typeof decodeTable> | undefined;
  if (documented(() => (decoded = decodeTable(body, 0)), 'decodeTable') || !decoded) return undefined;
  const { table, offset } = decoded;
  invariant(offset === 4 + body.readUInt32BE(0), `decodeTable ends at ${offset}, not after the table`);
  for (const bytes of [Buffer.from(body.subarray(0, offset)), Buffer.concat([body.subarray(0, offset), TRAILER])]) {
    let same: ReturnType<typeof decodeTable> | undefined;
    const err = documented(() => (same = decodeTable(bytes, 0)), 'decodeTable');
    invariant(!err && isDeepStrictEqual(same, decoded), 'decodeTable depends on the bytes after the table');
  }
  tableToJS(table);
  let encoded: Buffer;
  try {
    encoded = encodeTable(table);
  } catch (err) {
    if (isEncodeRefusal(err)) return table; // a key that grew past 255 octets by UTF-8 replacement
    throw new OracleFailure('crash', 'encodeTable of a decoded table', err);
  }
  let again: ReturnType<typeof decodeTable>;
  try {
    again = decodeTable(encoded, 0);
  } catch (err) {
    throw new OracleFailure('invariant', 're-encoded table does not decode', err);
  }
  invariant(isDeepStrictEqual(again.table, table), 'field table does not survive decode → encode → decode');
  return table;
}

// --- protocol header -------------------------------------------------------------------------

export function fuzzProtocolHeader(input: Buffer): unknown {
  let check: ReturnType<typeof checkProtocolHeader> | undefined;
  let kind: ReturnType<typeof classifyProtocolHeader>;
  try {
    check = checkProtocolHeader(input);
    kind = classifyProtocolHeader(input);
  } catch (err) {
    throw new OracleFailure('crash', 'protocol header checks throw', err);
  }
  invariant((check === 'incomplete') === (kind === undefined), `check ${check} but classify ${kind}`);
  invariant((check === 'ok') === (kind === 'amqp-0-9-1'), `check ${check} but classify ${kind}`);
  invariant((input.length < 8) === (check === 'incomplete'), `check ${check} for ${input.length} octets`);
  return kind;
}
