import { AmqpError, ChannelError, commandInvalid, ConnectionError, ReplyCode } from '../errors.js';
import { METHODS, type Method } from '../frame/generated/methods.js';
import type { Channel } from './channel.js';
import type { Content } from './content-assembler.js';
import { channelHandlers } from './handlers/index.js';

/**
 * The input of a channel other than 0: a method frame goes to its handler (handlers/, keyed by
 * name), content frames to the channel's ContentAssembler, and a complete basic.publish to its
 * Publisher. Errors thrown here name the method they belong to.
 */
export function dispatchMethod(ch: Channel, method: Method): void {
  if (ch.closing) {
    // After our channel.close only close-ok (or a crossing close) matters (rabbit_channel); a
    // channel.open there is one for a channel that is still open to rabbit_reader.
    if (method.name === 'channel.close-ok') ch.conn.channelClosed(ch);
    else if (method.name === 'channel.close') ch.send('channel.close-ok', {});
    else if (method.name === 'channel.open') throw new ConnectionError(ReplyCode.CHANNEL_ERROR, "second 'channel.open' seen").at(method.classId, method.methodId);
    return;
  }
  const assembler = ch.assembler;
  if (assembler.pending) throw assembler.unexpectedFrame();
  const handler = channelHandlers[method.name] as ((ch: Channel, args: unknown) => void) | undefined;
  if (!handler) {
    if (METHODS[method.name].hasContent) {
      // rabbit_command_assembler collects the content of any content method before the
      // channel finds it has no use for it.
      assembler.start(method.classId, method.methodId, undefined);
      return;
    }
    throw unimplemented(method.classId, method.methodId);
  }
  try {
    handler(ch, method.args);
  } catch (err) {
    if (err instanceof AmqpError) err.at(method.classId, method.methodId);
    throw err;
  }
}

/** A content header frame on channel ch. */
export function dispatchHeader(ch: Channel, payload: Buffer): void {
  if (ch.closing) return;
  try {
    const content = ch.assembler.onHeader(payload);
    if (content) publish(ch, content);
  } finally {
    // rabbit_reader:post_process_frame blocks after each content frame under an alarm.
    ch.conn.afterContentFrame();
  }
}

/** A content body frame on channel ch, its payload buf[start, end). */
export function dispatchBody(ch: Channel, buf: Buffer, start: number, end: number): void {
  if (ch.closing) return;
  try {
    const content = ch.assembler.onBodyAt(buf, start, end);
    if (content) publish(ch, content);
  } finally {
    ch.conn.afterContentFrame();
  }
}

/**
 * basic.publish on an open channel with no content pending (the 'basic.publish' handler, and
 * Connection's fast path that decodes it without a Method object): its content is expected next.
 */
export function startPublish(ch: Channel, exchange: string, routingKey: string, mandatory: boolean): void {
  ch.counters.publisher = true;
  ch.assembler.startPublish(exchange, routingKey, mandatory);
}

/** A complete basic.publish: published now, or held until tx.commit. */
function publish(ch: Channel, content: Content): void {
  const { args } = content;
  if (!args) throw unimplemented(content.classId, content.methodId);
  try {
    if (ch.txMode) ch.publisher.hold(args, content);
    else ch.publisher.publish(args, content);
  } catch (err) {
    // A channel error names basic.publish; a crash decoding the properties names nothing.
    if (err instanceof ChannelError) err.at(60, 40);
    throw err;
  } finally {
    ch.assembler.release();
  }
}

/** RabbitMQ's answer to a method no handler implements. */
function unimplemented(classId: number, methodId: number): ConnectionError {
  return commandInvalid('unimplemented method').at(classId, methodId);
}
