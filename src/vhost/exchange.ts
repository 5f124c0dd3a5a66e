import type { ExchangeType, Router } from '../exchange/exchange-type.js';
import { fieldString, type FieldTable } from '../frame/field-table.js';
import type { Queue } from '../queue/queue.js';

export type Destination = Queue | Exchange;

/** A declared exchange: its settings and the router of its type holding its bindings. */
export class Exchange {
  readonly router: Router<Destination>;
  deleted = false;

  constructor(
    readonly vhost: string,
    readonly name: string,
    readonly type: ExchangeType,
    readonly durable: boolean,
    readonly autoDelete: boolean,
    readonly internal: boolean,
    readonly args: FieldTable,
  ) {
    this.router = type.createRouter<Destination>(args);
  }

  /** The alternate-exchange argument, if any (RabbitMQ's "ae" doc page). */
  get alternateExchange(): string | undefined {
    return fieldString(this.args['alternate-exchange']);
  }
}

export function isExchange(d: Destination): d is Exchange {
  return d instanceof Exchange;
}
