/**
 * RabbitMQ's firehose tracer (rabbit_trace): while tracing is on for a vhost, every message a
 * client publishes there is copied to the vhost's `amq.rabbitmq.trace` exchange with routing key
 * `publish.<exchange>`, and every delivery (basic.deliver, basic.get-ok) with
 * `deliver.<queue>`. The copy has the original body and, as its only property, headers that
 * describe the message (rabbit_trace:msg_to_table and the tap_in / tap_out extras, in their order
 * and with their field types, checked against RabbitMQ 3.10.8):
 *
 *   exchange_name (longstr), routing_keys (array of longstr: the routing key, then CC and BCC),
 *   properties (table: the message's properties without BCC, in reverse P_basic order;
 *   integers as signedint, headers as a table, the rest as longstr), node (longstr), then
 *   publish: vhost, connection, channel (signedint), user, routed_queues (array of longstr)
 *   deliver: redelivered (signedint 0/1), vhost, connection, channel (signedint), user
 *
 * A message published to amq.rabbitmq.trace itself (the copies, when they are delivered from a
 * queue bound to it) is not traced again (rabbit_trace:trace/5). Publishes that do not come from
 * a channel (dead-lettering, delayed messages when due) are not traced, as in RabbitMQ.
 */
import { F, type FieldTable, type FieldValue } from '../frame/field-table.js';
import { decodeContentHeader, encodeContentHeaderPayload, type BasicProperties } from '../frame/generated/properties.js';
import { headerRoutingKeys, Message } from '../queue/message.js';
import type { Queue } from '../queue/queue.js';
import type { Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import { compareUtf8 } from '../sorted.js';

/** The firehose exchange: a durable internal topic exchange in every vhost (rabbit_vhost). */
export const TRACE_EXCHANGE = 'amq.rabbitmq.trace';

/** Who published or received a traced message: rabbit_channel's conn_name, channel number and user. */
export interface TraceOrigin {
  /** RabbitMQ's connection name, "peer:port -> local:port". */
  readonly connection: string;
  readonly channel: number;
  readonly user: string;
}

/**
 * The tracer of one vhost while tracing is on there (VHost.tracer; src/trace/tracing.ts turns
 * it on and off). The publish and deliver paths call it only when VHost.tracer is set.
 */
export class Tracer {
  constructor(
    private readonly vhost: VHost,
    /** The node name the copies carry (rabbit_trace: node()). */
    private readonly node: string,
    private readonly nextMessageId: () => number,
  ) {}

  /**
   * rabbit_trace:tap_in: a publish routed (or about to be enqueued at tx.commit). message is
   * the message as queued (without BCC); cc the CC then BCC routing keys; routed the names of
   * the queues it was routed to, as rabbit_exchange:route gives them (routedQueueNames).
   */
  published(origin: TraceOrigin, message: Message, cc: readonly string[] | undefined, routed: readonly string[]): void {
    if (message.exchange === TRACE_EXCHANGE) return;
    const routingKeys = [message.routingKey, ...(cc ?? [])];
    const headers = this.messageTable(message, routingKeys, message.properties);
    headers['vhost'] = F.str(this.vhost.name);
    headers['connection'] = F.str(origin.connection);
    headers['channel'] = F.int32(origin.channel);
    headers['user'] = F.str(origin.user);
    headers['routed_queues'] = F.array(routed.map((q) => F.str(q)));
    this.publishCopy(`publish.${message.exchange}`, headers, message.body);
  }

  /**
   * rabbit_trace:tap_out: a basic.deliver or basic.get-ok of message from queue. header is the
   * content header the client got, when it is not the message's own (a quorum queue's
   * x-delivery-count).
   */
  delivered(origin: TraceOrigin, queue: string, message: Message, redelivered: boolean, header: Buffer = message.header): void {
    if (message.exchange === TRACE_EXCHANGE) return;
    const properties = header === message.header ? message.properties : decodeContentHeader(header).properties;
    const headers = this.messageTable(message, deliveredRoutingKeys(message), properties);
    headers['redelivered'] = F.int32(redelivered ? 1 : 0);
    headers['vhost'] = F.str(this.vhost.name);
    headers['connection'] = F.str(origin.connection);
    headers['channel'] = F.int32(origin.channel);
    headers['user'] = F.str(origin.user);
    this.publishCopy(`deliver.${queue}`, headers, message.body);
  }

  /** rabbit_trace:msg_to_table. */
  private messageTable(message: Message, routingKeys: readonly string[], properties: BasicProperties): FieldTable {
    return {
      exchange_name: F.str(message.exchange),
      routing_keys: F.array(routingKeys.map((k) => F.str(k))),
      properties: F.table(propertiesTable(properties)),
      node: F.str(this.node),
    };
  }

  /** rabbit_basic:publish to amq.rabbitmq.trace: routed like any message (bindings, e2e, AE). */
  private publishCopy(routingKey: string, headers: FieldTable, body: Buffer): void {
    const exchange = this.vhost.exchanges.get(TRACE_EXCHANGE);
    if (!exchange) return;
    const properties: BasicProperties = { headers };
    const header = encodeContentHeaderPayload(60, body.length, properties);
    this.vhost.publish(exchange, new Message(this.nextMessageId(), TRACE_EXCHANGE, routingKey, header, body, properties), undefined);
  }
}

/**
 * The queues rabbit_exchange:route returns, as tap_in lists them: for the default exchange the
 * routing keys themselves (sorted, without duplicates and direct reply-to addresses, whether a
 * queue of that name exists or not); for any other exchange the names of the queues reached,
 * sorted (lists:usort on the names' bytes). queues undefined: taken aside (a direct reply,
 * a delayed message), no queue.
 */
export function routedQueueNames(exchange: Exchange, routingKey: string, cc: readonly string[] | undefined, queues: Iterable<Queue | string> | undefined): string[] {
  if (exchange.name === '') {
    const keys = [routingKey, ...(cc ?? [])].filter((k) => !k.startsWith('amq.rabbitmq.reply-to.'));
    return usort(keys);
  }
  if (queues === undefined) return [];
  return usort([...queues].map((q) => (typeof q === 'string' ? q : q.name)));
}

/** Erlang's lists:usort of binaries: byte order, duplicates removed. */
function usort(names: string[]): string[] {
  const unique = [...new Set(names)];
  return unique.sort(compareUtf8);
}

/**
 * A queued message's routing keys as RabbitMQ keeps them (basic_message.routing_keys): its
 * routing key, the CC header's keys (still in the message) and the BCC keys it was published
 * with (Message.bccRoutingKeys, kept when the header was removed).
 */
function deliveredRoutingKeys(message: Message): string[] {
  const keys = [message.routingKey];
  headerRoutingKeys(message.properties.headers?.['CC'], keys);
  if (message.bccRoutingKeys) keys.push(...message.bccRoutingKeys);
  return keys;
}

/** The P_basic fields in record order, with their AMQP property names. */
const P_BASIC: Array<[keyof BasicProperties, string]> = [
  ['contentType', 'content_type'], ['contentEncoding', 'content_encoding'], ['headers', 'headers'],
  ['deliveryMode', 'delivery_mode'], ['priority', 'priority'], ['correlationId', 'correlation_id'],
  ['replyTo', 'reply_to'], ['expiration', 'expiration'], ['messageId', 'message_id'],
  ['timestamp', 'timestamp'], ['type', 'type'], ['userId', 'user_id'], ['appId', 'app_id'],
  ['clusterId', 'cluster_id'],
];

/**
 * rabbit_trace:msg_to_table's properties: the fields that are set, last field first (its fold
 * prepends); headers as a table, integers as signedint (32 bits, as rabbit_binary_generator
 * writes them), everything else as longstr.
 */
function propertiesTable(props: BasicProperties): FieldTable {
  const table: FieldTable = {};
  for (let i = P_BASIC.length - 1; i >= 0; i--) {
    const [field, name] = P_BASIC[i]!;
    const v = props[field];
    if (v === undefined || v === null) continue;
    table[name] = propertyValue(v as string | number | FieldTable);
  }
  return table;
}

function propertyValue(v: string | number | FieldTable): FieldValue {
  if (typeof v === 'number') return F.int32(Number(BigInt.asIntN(32, BigInt(Math.trunc(v)))));
  if (typeof v === 'string') return F.str(v);
  return F.table(v);
}
