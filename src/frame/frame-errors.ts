/**
 * The errors the frame layer throws, worded byte for byte as RabbitMQ 3.10.8 words them.
 *
 * Everything here is a ConnectionError (a hard error), in three flavours that tell the
 * connection how RabbitMQ ends the connection:
 *
 * - a plain ConnectionError: send connection.close and wait for close-ok as usual
 *   (e.g. `FRAME_ERROR - cannot decode <<...>>`, `FRAME_ERROR - type 5, all octets = <<...>>:
 *   unknown_frame`). RabbitMQ keeps parsing frames while it waits, so the FrameReader can be
 *   fed again after one of these.
 * - FatalFrameError: framing is lost (bad frame-end octet, frame larger than frame-max).
 *   RabbitMQ (rabbit_reader:fatal_frame_error) sends connection.close, reads nothing more,
 *   waits 3 s for the close to reach the client, then closes the socket without waiting for
 *   close-ok. The FrameReader ignores anything fed after one of these.
 * - AbruptClose: input that crashes RabbitMQ's reader process (an unknown class/method id, a
 *   field table it cannot parse inside method arguments). The client sees the socket reset
 *   with no connection.close at all (`socket.resetAndDestroy()` in Node). Its replyCode/text
 *   (541 INTERNAL_ERROR) are only a fallback for code that does not special-case it.
 */
import { ConnectionError, ReplyCode } from '../errors.js';
import { latin1ToText, writeBinaryInts } from '../erlang/format.js';
import { formatParts } from '../erlang/pretty.js';
import { atom, binary, int, tuple, type ErlTerm } from '../erlang/term.js';

export class FatalFrameError extends ConnectionError {}

export class AbruptClose extends ConnectionError {
  /** What RabbitMQ's reader would have crashed with, as an Erlang term, for logs. */
  readonly reason: string;
  constructor(reason: string) {
    super(ReplyCode.INTERNAL_ERROR, '');
    this.reason = reason;
    this.message = `INTERNAL_ERROR - ${reason}`;
  }
}

/** rabbit_reader:payload_snippet — the whole payload when at most 16 octets, else the first 16. */
function snippet(payload: Buffer): [string, Buffer] {
  return payload.length <= 16 ? ['all', payload] : ['first 16', payload.subarray(0, 16)];
}

/** "type ~p, ~s octets = ~p: ~p" (rabbit_reader:frame_error/5). */
export function frameErrorText(type: number, payload: Buffer, error: ErlTerm): string {
  const [str, bin] = snippet(payload);
  return latin1ToText(formatParts([`type ${type}, ${str} octets = `, { p: binary(bin) }, ': ', { p: error }]));
}

/** "type ~p, ~s octets = ~p" (rabbit_reader:unexpected_frame/4), code 505. */
export function unexpectedFrameError(type: number, payload: Buffer): ConnectionError {
  const [str, bin] = snippet(payload);
  return new ConnectionError(
    ReplyCode.UNEXPECTED_FRAME,
    latin1ToText(formatParts([`type ${type}, ${str} octets = `, { p: binary(bin) }])),
  );
}

/** 501, connection stays readable: a frame of a known shape RabbitMQ's analyze_frame rejects. */
export function unknownFrameError(type: number, payload: Buffer): ConnectionError {
  return new ConnectionError(ReplyCode.FRAME_ERROR, frameErrorText(type, payload, atom('unknown_frame')));
}

export function frameTooLargeError(type: number, payloadSize: number, frameMax: number): FatalFrameError {
  const err = tuple(atom('frame_too_large'), int(payloadSize), int(frameMax - 8));
  return new FatalFrameError(ReplyCode.FRAME_ERROR, frameErrorText(type, Buffer.alloc(0), err));
}

export function badFrameEndError(type: number, payload: Buffer, endMarker: number): FatalFrameError {
  const err = tuple(atom('invalid_frame_end_marker'), int(endMarker));
  return new FatalFrameError(ReplyCode.FRAME_ERROR, frameErrorText(type, payload, err));
}

/**
 * rabbit_misc:frame_error/2: "cannot decode ~w" of the method's argument bytes, naming the
 * method. RabbitMQ cuts reply texts to 255 octets (252 + "..."), so a long dump is cut early.
 */
export function cannotDecodeError(args: Buffer, classId: number, methodId: number): ConnectionError {
  return new ConnectionError(ReplyCode.FRAME_ERROR, 'cannot decode ' + writeBinaryInts(args, 300), classId, methodId);
}

/** rabbit_binary_parser:assert_utf8 (no method named: RabbitMQ reports 0/0 here). */
export function malformedUtf8Error(): ConnectionError {
  return new ConnectionError(ReplyCode.FRAME_ERROR, 'Malformed UTF-8 in shortstr');
}

/** Content properties RabbitMQ's channel cannot decode crash the channel: 541 with no detail. */
export function propertiesCrash(): ConnectionError {
  return new ConnectionError(ReplyCode.INTERNAL_ERROR, '');
}

export function unknownMethodCrash(classId: number, methodId: number): AbruptClose {
  return new AbruptClose(`{unknown_method_id,{${classId},${methodId}}}`);
}

export function tableCrash(): AbruptClose {
  return new AbruptClose('function_clause in rabbit_binary_parser:parse_table/1');
}

/** An encoder was handed a value the wire cannot carry (a bug in the broker, not the peer). */
export function encodeError(detail: string): ConnectionError {
  return new ConnectionError(ReplyCode.INTERNAL_ERROR, detail);
}

/** RabbitMQ's reply-text rule (rabbit_binary_generator:amqp_exception_explanation). */
export function truncateReplyText(bytes: Buffer): Buffer {
  return bytes.length > 255 ? Buffer.concat([bytes.subarray(0, 252), Buffer.from('...')]) : bytes;
}
