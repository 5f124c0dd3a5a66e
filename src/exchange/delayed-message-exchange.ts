import { ConnectionError, preconditionFailed, ReplyCode } from '../errors.js';
import { fieldInteger, type FieldTable } from '../frame/field-table.js';
import type { ExchangeType, ExchangeTypeLookup, Router } from './exchange-type.js';

/**
 * `x-delayed-message`, compatible with the community rabbitmq-delayed-message-exchange plugin:
 * routing is delegated to the type named by the `x-delayed-type` argument; holding a message
 * back for its `x-delay` header is the vhost's job (it owns the clock and the store).
 */
export class DelayedMessageExchange implements ExchangeType {
  readonly name = 'x-delayed-message';

  constructor(private readonly registry: ExchangeTypeLookup) {}

  private delegate(args: FieldTable): ExchangeType {
    const t = args['x-delayed-type'];
    const name = t && (t.type === 'S' || t.type === 'x') ? t.value.toString('utf8') : undefined;
    if (name === this.name) {
      throw preconditionFailed("Invalid argument, 'x-delayed-message' can't be used for 'x-delayed-type'");
    }
    if (name === undefined) throw preconditionFailed("Invalid argument, 'x-delayed-type' must be an existing exchange type");
    const type = this.registry.get(name);
    if (!type) throw new ConnectionError(ReplyCode.COMMAND_INVALID, `unknown exchange type '${name}'`);
    return type;
  }

  validateDeclareArgs(args: FieldTable): void {
    this.delegate(args).validateDeclareArgs(args);
  }

  validateBinding(): void {}

  createRouter<D>(exchangeArgs: FieldTable): Router<D> {
    return this.delegate(exchangeArgs).createRouter<D>(exchangeArgs);
  }
}

/** The x-delay header in ms when it asks for a delay (an integer > 0), else undefined. */
export function delayOf(headers: FieldTable | undefined): number | undefined {
  const n = fieldInteger(headers?.['x-delay']);
  return n !== undefined && n > 0 ? n : undefined;
}
