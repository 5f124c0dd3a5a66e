import type { BasicProperties } from '../frame/generated/properties.js';
import type { Broker } from '../broker.js';
import type { Channel } from '../connection/channel.js';
import type { Connection } from '../connection/connection.js';
import { tableToJS } from '../frame/field-table.js';
import type { Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import type { VHost } from '../vhost/vhost.js';
import { isExchange } from '../vhost/exchange.js';

/**
 * broker.inspect: the broker's objects as plain values, for assertions in tests. Everything is
 * read from the broker's public state at the moment of the call; nothing is taken, moved,
 * expired or paged in.
 */

/** Which vhost to look in (default '/'). */
export interface VHostOption {
  vhost?: string;
}

export interface QueueInfo {
  vhost: string;
  name: string;
  type: 'classic' | 'quorum';
  durable: boolean;
  autoDelete: boolean;
  exclusive: boolean;
  /** The x-arguments as declared, as plain values. */
  arguments: Record<string, unknown>;
  /**
   * Ready and unacknowledged messages, and a quorum queue's held at-least-once dead-letters (the
   * management API's `messages`).
   */
  messages: number;
  /** Ready messages: what queue.declare-ok reports and x-max-length counts. */
  ready: number;
  /** Delivered and not yet acknowledged. */
  unacked: number;
  consumers: number;
  /** The policy that applies, if any. */
  policy: string | undefined;
}

export interface ExchangeInfo {
  vhost: string;
  /** '' is the default exchange. */
  name: string;
  type: string;
  durable: boolean;
  autoDelete: boolean;
  internal: boolean;
  arguments: Record<string, unknown>;
}

export interface BindingInfo {
  vhost: string;
  /** '' for the default exchange's implicit binding of every queue (as rabbitmqctl list_bindings shows it). */
  source: string;
  destination: string;
  destinationType: 'queue' | 'exchange';
  routingKey: string;
  arguments: Record<string, unknown>;
}

export interface ConsumerInfo {
  vhost: string;
  queue: string;
  consumerTag: string;
  /** The broker's name of the consumer's connection (ConnectionInfo.name). */
  connection: string;
  /** The client's connection_name, if it gave one. */
  connectionName: string | undefined;
  channel: number;
  /** Acknowledgements required (basic.consume without no-ack). */
  ack: boolean;
  exclusive: boolean;
  /** The per-consumer prefetch (basic.qos global=false); 0 = unlimited. */
  prefetch: number;
  priority: number;
  /** Receives now (false for a waiting single-active-consumer). */
  active: boolean;
  /** Delivered to it and not yet acknowledged. */
  unacked: number;
}

export interface ConnectionInfo {
  /** RabbitMQ's name of a connection: "client address:port -> broker address:port". */
  name: string;
  /** The client's connection_name client property, if it gave one. */
  connectionName: string | undefined;
  /** '' before the client has logged in. */
  user: string;
  /** Undefined before connection.open. */
  vhost: string | undefined;
  state: Connection['state'];
  peerHost: string;
  peerPort: number;
  channels: number;
  /** Negotiated heartbeat in seconds (0 = off). */
  heartbeat: number;
  /** No longer read because of a resource alarm (RabbitMQ's 'blocked'). */
  blocked: boolean;
  clientProperties: Record<string, unknown>;
}

/** A connection: a string names it by its connection_name (or its broker name); a function picks. */
export type ConnectionSelector = string | ((conn: ConnectionInfo) => boolean);

/** The message properties, as amqplib presents them (headers as plain values). */
export type MessageProperties = Omit<BasicProperties, 'headers'> & { headers?: Record<string, unknown> };

/** One x-death entry (RabbitMQ's dead-letter history), as plain values. */
export interface XDeath {
  count: number;
  reason: 'rejected' | 'expired' | 'maxlen' | 'delivery_limit';
  queue: string;
  time: number;
  exchange: string;
  'routing-keys': string[];
  'original-expiration'?: string;
}

export interface InspectedMessage {
  body: Buffer;
  exchange: string;
  routingKey: string;
  properties: MessageProperties;
  /** Delivered (and returned) before: what the next delivery's redelivered flag will say. */
  redelivered: boolean;
  /** Times it came back to the queue, as quorum queues count it (x-delivery-count); 0 on classic queues. */
  deliveryCount: number;
  /** When it expires (ms since the epoch, the broker clock's wall time), from its or the queue's TTL. */
  expiresAt: number | undefined;
  /** The x-death header, when it was dead-lettered before. */
  xDeath: XDeath[] | undefined;
  /** Stored by the broker (a persistent message on a durable queue; any message on a quorum queue). */
  persistent: boolean;
  /** For an unacknowledged message: where it was delivered. */
  delivery?: {
    connection: string;
    connectionName: string | undefined;
    channel: number;
    deliveryTag: number;
    /** Undefined for a basic.get delivery. */
    consumerTag: string | undefined;
  };
}

export interface QueueMessages {
  /** In the order they will be delivered, paged-out ones included. */
  ready: InspectedMessage[];
  /** Delivered and not yet acknowledged, by connection and channel, in delivery order. */
  unacked: InspectedMessage[];
}

export class Inspector {
  constructor(private readonly broker: Broker) {}

  queues(options: { vhost?: string } = {}): QueueInfo[] {
    const out: QueueInfo[] = [];
    for (const vhost of this.vhostsFor(options.vhost)) for (const q of vhost.queues.values()) out.push(this.queueInfo(vhost.name, q));
    return out;
  }

  /** One queue, or undefined when there is none of that name. */
  queue(name: string, options: VHostOption = {}): QueueInfo | undefined {
    const vhost = this.vhost(options.vhost);
    const q = vhost.queues.get(name);
    return q && this.queueInfo(vhost.name, q);
  }

  exchanges(options: { vhost?: string } = {}): ExchangeInfo[] {
    const out: ExchangeInfo[] = [];
    for (const vhost of this.vhostsFor(options.vhost)) {
      for (const x of vhost.exchanges.values()) {
        out.push({
          vhost: vhost.name, name: x.name, type: x.type.name, durable: x.durable, autoDelete: x.autoDelete, internal: x.internal,
          arguments: tableToJS(x.args),
        });
      }
    }
    return out;
  }

  /** The bindings, the default exchange's implicit ones first (one per queue). */
  bindings(options: { vhost?: string } = {}): BindingInfo[] {
    const out: BindingInfo[] = [];
    for (const vhost of this.vhostsFor(options.vhost)) {
      for (const q of vhost.queues.values()) {
        out.push({ vhost: vhost.name, source: '', destination: q.name, destinationType: 'queue', routingKey: q.name, arguments: {} });
      }
      for (const b of vhost.listBindings()) {
        out.push({
          vhost: vhost.name, source: b.source.name, destination: b.destination.name,
          destinationType: isExchange(b.destination) ? 'exchange' : 'queue', routingKey: b.routingKey, arguments: tableToJS(b.args),
        });
      }
    }
    return out;
  }

  consumers(options: { vhost?: string } = {}): ConsumerInfo[] {
    const out: ConsumerInfo[] = [];
    for (const conn of this.broker.connections) {
      if (!conn.vhost || (options.vhost !== undefined && conn.vhost.name !== options.vhost)) continue;
      for (const ch of conn.channels.values()) {
        for (const c of ch.consumers.values()) {
          out.push({
            vhost: conn.vhost.name, queue: c.queue.name, consumerTag: c.tag, connection: conn.name,
            connectionName: clientConnectionName(conn), channel: ch.id, ack: !c.noAck, exclusive: c.exclusive, prefetch: c.prefetch,
            priority: c.priority, active: c.queue.settings.singleActiveConsumer ? c.queue.activeConsumer === c : true, unacked: c.unacked,
          });
        }
      }
    }
    return out;
  }

  connections(): ConnectionInfo[] {
    return [...this.broker.connections].map(connectionInfo);
  }

  /**
   * The ready and unacknowledged messages of a queue: body, properties, redelivered, delivery
   * count, expiry and x-death, without consuming, reordering or expiring any. Ready messages
   * paged out to the store are read back for the look and left where they are. Throws when
   * there is no such queue.
   */
  messages(queue: string, options: VHostOption = {}): QueueMessages {
    const { ready, unacked } = this.messageEntries(queue, options);
    return {
      ready: ready.map((entry) => inspectedMessage(entry)),
      unacked: unacked.map(({ entry, delivery }) => ({ ...inspectedMessage(entry), delivery })),
    };
  }

  /**
   * What messages() reads, before it is made plain: the queued entries (the message as
   * received, its raw properties) in the same order, for callers that present them otherwise
   * (the management API's /api/warren/queues/{vhost}/{queue}/messages). Nothing is taken,
   * moved or expired. Throws when there is no such queue.
   */
  messageEntries(queue: string, options: VHostOption = {}): { ready: QueuedMessage[]; unacked: Array<{ entry: QueuedMessage; delivery: NonNullable<InspectedMessage['delivery']> }> } {
    const vhost = this.vhost(options.vhost);
    const q = vhost.queues.get(queue);
    if (!q) throw new Error(`inspect.messages: no queue '${queue}' in vhost '${vhost.name}'`);
    const ready = Array.from(q.readyEntries());
    const unacked: Array<{ entry: QueuedMessage; delivery: NonNullable<InspectedMessage['delivery']> }> = [];
    for (const conn of this.broker.connections) {
      for (const ch of conn.channels.values()) {
        for (const d of ch.unacked.values()) {
          if (d.queue !== q) continue;
          unacked.push({ entry: d.entry, delivery: deliveryOf(conn, ch, d.tag, d.consumer?.tag) });
        }
      }
    }
    return { ready, unacked };
  }

  queueInfo(vhost: string, q: Queue): QueueInfo {
    const ready = q.messageCount;
    return {
      vhost, name: q.name, type: q.isQuorum ? 'quorum' : 'classic', durable: q.durable, autoDelete: q.autoDelete,
      exclusive: q.exclusiveOwner !== null, arguments: tableToJS(q.arguments), messages: q.totalCount, ready,
      unacked: q.unackedCount, consumers: q.consumerCount, policy: this.broker.policies.infoOf(vhost, q).policy ?? undefined,
    };
  }

  /** The vhost of that name (default '/'); throws when there is none. */
  vhost(name = '/'): VHost {
    const vhost = this.broker.vhosts.get(name);
    if (!vhost) throw new Error(`no vhost '${name}' (vhosts: ${[...this.broker.vhosts.keys()].map((v) => `'${v}'`).join(', ')})`);
    return vhost;
  }

  private vhostsFor(name: string | undefined): VHost[] {
    return name === undefined ? [...this.broker.vhosts.values()] : [this.vhost(name)];
  }
}

function deliveryOf(conn: Connection, ch: Channel, deliveryTag: number, consumerTag: string | undefined): NonNullable<InspectedMessage['delivery']> {
  return { connection: conn.name, connectionName: clientConnectionName(conn), channel: ch.id, deliveryTag, consumerTag };
}

/** A queued message as plain values (its properties decoded from the header as received). */
export function inspectedMessage(entry: QueuedMessage): InspectedMessage {
  const msg = entry.msg;
  const properties = plainProperties(msg.properties);
  const deaths = properties.headers?.['x-death'];
  return {
    body: msg.body, exchange: msg.exchange, routingKey: msg.routingKey, properties, redelivered: entry.redelivered,
    deliveryCount: entry.deliveryCount, expiresAt: entry.expiresAt === 0 ? undefined : entry.expiresAt,
    xDeath: Array.isArray(deaths) ? (deaths as XDeath[]) : undefined, persistent: entry.persisted,
  };
}

function plainProperties(props: import('../frame/generated/properties.js').BasicProperties): MessageProperties {
  const out: MessageProperties = {};
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined) continue;
    (out as Record<string, unknown>)[key] = key === 'headers' ? tableToJS(value as Parameters<typeof tableToJS>[0]) : value;
  }
  return out;
}

export function connectionInfo(conn: Connection): ConnectionInfo {
  return {
    name: conn.name, connectionName: clientConnectionName(conn), user: conn.username, vhost: conn.vhost?.name,
    state: conn.state, peerHost: conn.remoteAddress, peerPort: conn.socket.remotePort ?? 0, channels: conn.channels.size,
    heartbeat: conn.heartbeat, blocked: conn.readPausedBy.includes('alarm'), clientProperties: tableToJS(conn.clientProperties),
  };
}

/** The connection_name client property, if the client gave one. */
export function clientConnectionName(conn: Connection): string | undefined {
  const v = conn.clientProperties['connection_name'];
  return v?.type === 'S' ? v.value.toString('utf8') : undefined;
}

/** Whether conn is one the selector names. */
export function selects(selector: ConnectionSelector, conn: Connection): boolean {
  if (typeof selector === 'function') return selector(connectionInfo(conn));
  return clientConnectionName(conn) === selector || conn.name === selector;
}

/** How a selector reads in a message. */
export function describeSelector(selector: ConnectionSelector): string {
  return typeof selector === 'function' ? 'the connection the given function picks' : `the connection '${selector}'`;
}
