import type { ExchangeType, Router } from '../exchange/exchange-type.js';
import { fieldString, ownField, type FieldTable } from '../frame/field-table.js';
import { ExchangeCounters } from '../metrics/counters.js';
import type { Queue } from '../queue/queue.js';

export type Destination = Queue | Exchange;

/** What an exchange is created with (exchange.declare's fields, the type by name). */
export interface ExchangeOptions {
  name: string;
  type: string;
  durable: boolean;
  autoDelete: boolean;
  internal: boolean;
  arguments: FieldTable;
  /** Who declared it (RabbitMQ's user_who_performed_action); built-in and recovered ones: rmq-internal. */
  actingUser?: string;
}

/** A declared exchange: its settings and the router of its type holding its bindings. */
export class Exchange {
  readonly name: string;
  readonly durable: boolean;
  readonly autoDelete: boolean;
  readonly internal: boolean;
  readonly args: FieldTable;
  readonly actingUser: string;
  readonly router: Router<Destination>;
  /**
   * The alternate exchange in force (RabbitMQ's "ae" doc page): the alternate-exchange
   * argument, else a policy's; the vhost updates it when policies change.
   */
  alternateExchange: string | undefined;
  deleted = false;
  /** Messages clients published to it and copies it routed to queues (src/metrics). */
  readonly counters = new ExchangeCounters();

  constructor(
    readonly vhost: string,
    readonly type: ExchangeType,
    options: Omit<ExchangeOptions, 'type'>,
  ) {
    this.name = options.name;
    this.durable = options.durable;
    this.autoDelete = options.autoDelete;
    this.internal = options.internal;
    this.args = options.arguments;
    this.actingUser = options.actingUser ?? 'rmq-internal';
    this.router = type.createRouter<Destination>(options.arguments);
    this.alternateExchange = fieldString(ownField(this.args, 'alternate-exchange'));
  }
}

export function isExchange(d: Destination): d is Exchange {
  return d instanceof Exchange;
}
