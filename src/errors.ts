/**
 * Protocol errors are exceptions carrying AMQP reply codes (DESIGN.md, convention 2).
 *
 * Handlers throw a ChannelError (a soft error: the connection answers with channel.close) or a
 * ConnectionError (a hard error: connection.close). The reply text is written the way RabbitMQ
 * writes it, "<CODE_NAME> - <detail>", because clients and users match on it.
 */

export const ReplyCode = {
  REPLY_SUCCESS: 200,
  CONTENT_TOO_LARGE: 311,
  NO_ROUTE: 312,
  NO_CONSUMERS: 313,
  CONNECTION_FORCED: 320,
  INVALID_PATH: 402,
  ACCESS_REFUSED: 403,
  NOT_FOUND: 404,
  RESOURCE_LOCKED: 405,
  PRECONDITION_FAILED: 406,
  FRAME_ERROR: 501,
  SYNTAX_ERROR: 502,
  COMMAND_INVALID: 503,
  CHANNEL_ERROR: 504,
  UNEXPECTED_FRAME: 505,
  RESOURCE_ERROR: 506,
  NOT_ALLOWED: 530,
  NOT_IMPLEMENTED: 540,
  INTERNAL_ERROR: 541,
} as const;

const codeNames = new Map<number, string>(Object.entries(ReplyCode).map(([name, code]) => [code, name]));

/** RabbitMQ's reply-text convention: the code's name, " - ", then the detail. */
export function replyText(code: number, detail: string): string {
  const name = codeNames.get(code) ?? 'INTERNAL_ERROR';
  return detail ? `${name} - ${detail}` : name;
}

export abstract class AmqpError extends Error {
  /** reply-text as sent on the wire (already prefixed with the code name). */
  readonly replyText: string;
  constructor(
    readonly replyCode: number,
    detail: string,
    /** class-id and method-id of the method that caused the error (0 when none). */
    public classId = 0,
    public methodId = 0,
  ) {
    super(replyText(replyCode, detail));
    this.replyText = this.message;
  }
  private methodFixed = false;

  /** Fill in the failing method unless the thrower already named one (or chose none). */
  at(classId: number, methodId: number): this {
    if (!this.methodFixed && this.classId === 0 && this.methodId === 0) {
      this.classId = classId;
      this.methodId = methodId;
    }
    return this;
  }

  /** The close names no method (class-id and method-id 0), as RabbitMQ's does for this error. */
  withoutMethod(): this {
    this.methodFixed = true;
    return this;
  }
}

/** A soft error: closes only the channel it happened on. */
export class ChannelError extends AmqpError {
  override readonly name = 'ChannelError';
}

/** A hard error: closes the whole connection. */
export class ConnectionError extends AmqpError {
  override readonly name = 'ConnectionError';
}

/** Shorthands for the errors handlers throw most often, worded as RabbitMQ words them. */
export const notFound = (detail: string) => new ChannelError(ReplyCode.NOT_FOUND, detail);
export const accessRefused = (detail: string) => new ChannelError(ReplyCode.ACCESS_REFUSED, detail);
export const resourceLocked = (detail: string) => new ChannelError(ReplyCode.RESOURCE_LOCKED, detail);
export const preconditionFailed = (detail: string) => new ChannelError(ReplyCode.PRECONDITION_FAILED, detail);
export const commandInvalid = (detail: string) => new ConnectionError(ReplyCode.COMMAND_INVALID, detail);
export const unexpectedFrame = (detail: string) => new ConnectionError(ReplyCode.UNEXPECTED_FRAME, detail);
export const internalError = (detail: string) => new ConnectionError(ReplyCode.INTERNAL_ERROR, detail);

/** RabbitMQ names resources this way in reply texts: "queue 'q' in vhost '/'". */
export function resourceName(kind: 'queue' | 'exchange', name: string, vhost: string): string {
  return `${kind} '${name}' in vhost '${vhost}'`;
}
