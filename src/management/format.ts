/**
 * Broker objects as RabbitMQ 3.10's management API shows them: every key its objects carry,
 * with the same JSON types. Counts are live (RabbitMQ's lag by its stats interval). Keys that
 * describe the Erlang VM (garbage_collection, reductions) carry RabbitMQ's own "not available"
 * values (-1, 0); rates are 0.0 (Warren does not sample). Policies come from broker.policies
 * (src/policy).
 */
import { X509Certificate } from 'node:crypto';
import { TLSSocket } from 'node:tls';
import { nodeName } from '../node-name.js';
import { distinguishedName, issuerName } from '../tls/peer-identity.js';
import type { Channel } from '../connection/channel.js';
import type { Connection } from '../connection/connection.js';
import { plainAddress } from '../peer-address.js';
import { fieldString } from '../frame/field-table.js';
import type { Consumer } from '../queue/consumer.js';
import type { Queue } from '../queue/queue.js';
import { StreamQueue } from '../stream/stream-queue.js';
import { formatStream } from './format-stream.js';
import type { Binding } from '../vhost/binding-table.js';
import { isExchange, type Exchange } from '../vhost/exchange.js';
import type { VHost } from '../vhost/vhost.js';
import { tableToJson } from './amqp-json.js';
import { packBindingProps } from './binding-key.js';
import { float, noRate, type Json, type JsonObject } from './json.js';
import { asMap } from './query.js';
import type { MessageStatsSource } from './stats.js';
import type { HeadTimestamps } from '../metrics/head-timestamps.js';
import type { PolicyInfo } from '../policy/policy-operations.js';

export const NODE = nodeName();

/** rabbit_mgmt_wm_queue:ensure_defaults: RabbitMQ's garbage_collection when it has none to show. */
export const noGarbageCollection = (): JsonObject => ({ max_heap_size: -1, min_bin_vheap_size: -1, min_heap_size: -1, fullsweep_after: -1, minor_gcs: -1 });

/** rabbit_mgmt_format:now_to_str: RFC 3339 with milliseconds and the local offset. */
export function timeString(ms: number): string {
  const d = new Date(ms);
  const offset = -d.getTimezoneOffset();
  const local = new Date(ms + offset * 60000).toISOString().slice(0, 23);
  const sign = offset >= 0 ? '+' : '-';
  const abs = Math.abs(offset);
  return `${local}${sign}${String(Math.trunc(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

// ---- queues -----------------------------------------------------------------------------------

/** A classic queue's keys a quorum queue does not have (rabbit_quorum_queue:info). */
const CLASSIC_ONLY = [
  'backing_queue_status', 'exclusive_consumer_tag', 'head_message_timestamp', 'idle_since', 'message_bytes_paged_out', 'messages_paged_out',
  'messages_ready_ram', 'messages_unacknowledged_ram', 'recoverable_slaves', 'single_active_consumer_tag',
];

/**
 * A quorum queue as RabbitMQ 3.10.8 shows it (rabbit_quorum_queue:info, recorded): a classic
 * queue's keys without its backing-queue, paging, *_ram split, idle and exclusive-consumer
 * ones; with leader, members, online, open_files, the dead-letters it holds at least once
 * (messages_dlx, message_bytes_dlx: in messages and message_bytes too), no message counted in memory, and the single active consumer as
 * single_active_consumer_ctag. Keys sorted, `extra` (the detail's) among them.
 */
function quorumFields(q: Queue, classic: Record<string, Json | undefined>, extra: Record<string, Json> = {}): Record<string, Json | undefined> {
  const fields: Record<string, Json | undefined> = { ...classic, ...extra };
  for (const k of CLASSIC_ONLY) delete fields[k];
  Object.assign(fields, {
    leader: NODE, members: [NODE], online: [NODE], open_files: { [NODE]: 0 }, message_bytes_dlx: q.heldDeadLetterBytes, messages_dlx: q.heldDeadLetterCount,
    // 3.10.8 counts none of a quorum queue's messages as in memory (recorded with 3 ready and 2
    // unacknowledged), and every one as persistent (the queue keeps them all: Queue.keeps).
    messages_ram: 0, message_bytes_ram: 0,
    single_active_consumer_ctag: classic['single_active_consumer_tag'] ?? null, type: 'quorum',
  });
  return Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** A queue in /api/queues (detail adds consumer_details, deliveries and incoming). */
export function formatQueue(vhost: string, q: Queue, stats: MessageStatsSource, policies: PolicyInfo, heads: HeadTimestamps, detail = false): JsonObject {
  if (q instanceof StreamQueue) {
    const out = formatStream(vhost, q, stats, policies);
    if (detail) Object.assign(out, { consumer_details: q.consumerList.map((c) => formatConsumer(c)), deliveries: [], incoming: [] });
    return out;
  }
  const ready = q.messageCount;
  const unacked = q.unackedCount;
  const inMemory = q.readyInMemory;
  const consumers = q.consumerCount;
  // A float with consumers, the integer 0 without (as 3.10.8 writes them).
  const capacity = consumers > 0 ? float(q.consumerCapacity) : 0;
  const exclusiveConsumer = q.consumerList.find((c) => c.exclusive);
  const out: Record<string, Json | undefined> = {
    arguments: tableToJson(q.arguments),
    auto_delete: q.autoDelete,
    backing_queue_status: asMap({
      avg_ack_egress_rate: float(0), avg_ack_ingress_rate: float(0), avg_egress_rate: float(0), avg_ingress_rate: float(0),
      delta: ['delta', 'undefined', ready - inMemory, 0, 'undefined'],
      len: ready,
      mode: fieldString(q.arguments['x-queue-mode']) === 'lazy' ? 'lazy' : 'default',
      next_deliver_seq_id: 0, next_seq_id: 0, q1: 0, q2: 0, q3: 0, q4: inMemory,
      target_ram_count: 'infinity',
      version: 1,
    }),
    consumer_capacity: capacity,
    consumer_utilisation: capacity,
    consumers,
    durable: q.durable,
    effective_policy_definition: asMap({ ...(policies.effective_policy_definition as JsonObject) }),
    exclusive: q.exclusiveOwner !== null,
    exclusive_consumer_tag: exclusiveConsumer?.tag ?? null,
    garbage_collection: noGarbageCollection(),
    head_message_timestamp: q.isQuorum ? null : (heads.of(q) ?? null),
    idle_since: timeString(q.createdAt),
    // What the queue holds in memory: message bodies (and headers) of ready and unacked messages.
    memory: q.readyBytesInMemory + q.unackedBytes,
    message_bytes: q.totalBytes,
    message_bytes_paged_out: q.readyBytes - q.readyBytesInMemory,
    message_bytes_persistent: q.persistentBytes,
    message_bytes_ram: q.readyBytesInMemory + q.unackedBytes,
    message_bytes_ready: q.readyBytes,
    message_bytes_unacknowledged: q.unackedBytes,
    message_stats: stats.queue?.(vhost, q),
    messages: q.totalCount,
    messages_details: noRate(),
    messages_paged_out: ready - inMemory,
    messages_persistent: q.persistentCount,
    messages_ram: inMemory + unacked,
    messages_ready: ready,
    messages_ready_details: noRate(),
    messages_ready_ram: inMemory,
    messages_unacknowledged: unacked,
    messages_unacknowledged_details: noRate(),
    messages_unacknowledged_ram: unacked,
    name: q.name,
    node: NODE,
    operator_policy: policies.operator_policy,
    policy: policies.policy,
    recoverable_slaves: null,
    reductions: 0,
    reductions_details: noRate(),
    single_active_consumer_tag: q.settings.singleActiveConsumer ? (q.activeConsumer?.tag ?? null) : null,
    state: 'running',
    type: 'classic',
    vhost,
  };
  if (q.isQuorum) {
    if (!detail) return quorumFields(q, out);
    // The detail puts consumer_details first, then every key sorted (deliveries and incoming too).
    return { consumer_details: q.consumerList.map((c) => formatConsumer(c)), ...quorumFields(q, out, { deliveries: [], incoming: [] }) };
  }
  if (detail) {
    if (q.exclusiveOwner !== null) out['owner_pid_details'] = connectionDetails(q.exclusiveOwner as Connection);
    out['consumer_details'] = q.consumerList.map((c) => formatConsumer(c));
    out['deliveries'] = [];
    out['incoming'] = [];
  }
  return out;
}

// ---- exchanges and bindings --------------------------------------------------------------------

/** An exchange in /api/exchanges; `policy` only when one applies, as RabbitMQ lists it. */
export function formatExchange(vhost: string, x: Exchange, stats: MessageStatsSource, policies: PolicyInfo, detail = false): JsonObject {
  return {
    arguments: tableToJson(x.args),
    auto_delete: x.autoDelete,
    durable: x.durable,
    ...(detail ? { incoming: [], outgoing: [] } : {}),
    internal: x.internal,
    message_stats: stats.exchange?.(vhost, x),
    name: x.name,
    policy: policies.policy ?? undefined,
    type: x.type.name,
    user_who_performed_action: x.actingUser,
    vhost,
  };
}

/** A binding as rabbit_mgmt_format:binding shows it. */
export function formatBinding(vhost: string, b: { source: string; destination: string; destinationType: 'queue' | 'exchange'; routingKey: string; args: Binding['args'] }): JsonObject {
  return {
    source: b.source,
    vhost,
    destination: b.destination,
    destination_type: b.destinationType,
    routing_key: b.routingKey,
    arguments: tableToJson(b.args),
    properties_key: packBindingProps(b.routingKey, b.args),
  };
}

/** A declared binding in formatBinding's terms. */
export function bindingFacts(b: Binding): Parameters<typeof formatBinding>[1] {
  return {
    source: b.source.name, destination: b.destination.name, destinationType: isExchange(b.destination) ? 'exchange' : 'queue',
    routingKey: b.routingKey, args: b.args,
  };
}

/** The default exchange's implicit binding to a queue (RabbitMQ lists it, as `source: ""`). */
export function implicitBinding(queue: string): Parameters<typeof formatBinding>[1] {
  return { source: '', destination: queue, destinationType: 'queue', routingKey: queue, args: {} };
}

// ---- connections, channels, consumers ----------------------------------------------------------

/** The connection a channel or an exclusive queue belongs to. */
function connectionDetails(conn: Connection): JsonObject {
  return { name: conn.name, ...peer(conn) };
}

/**
 * Where a connection comes from. A direct connection has no socket in RabbitMQ: its peer_host
 * and peer_port are the Erlang atom undefined, which the API writes as the string "undefined".
 */
function peer(conn: Connection): { peer_host: string; peer_port: number | string } {
  if (conn.direct) return { peer_host: 'undefined', peer_port: 'undefined' };
  return { peer_host: conn.remoteAddress, peer_port: conn.socket.remotePort ?? 0 };
}

/**
 * A direct connection as RabbitMQ lists one (rabbit_direct's connection_created event, recorded
 * from 3.10.8 with a shovel's `amqp://`): no socket, so none of a network connection's
 * addresses, counters, tuning or TLS fields; its client properties are what the shovel names it.
 */
function formatDirectConnection(conn: Connection): JsonObject {
  const name = conn.clientProperties['connection_name'];
  return {
    client_properties: name === undefined ? {} : tableToJson({ connection_name: name }),
    connected_at: conn.connectedAt,
    name: conn.name,
    node: NODE,
    protocol: 'Direct 0-9-1',
    type: 'direct',
    user: conn.username,
    user_who_performed_action: conn.username,
    vhost: conn.vhost?.name ?? '',
  };
}

function connectionState(conn: Connection): string {
  switch (conn.state) {
    case 'open':
      return conn.blockState ?? 'running';
    case 'closing':
    case 'closed':
      return 'closing';
    default:
      return 'starting';
  }
}

/**
 * What rabbit_reader shows of a TLS connection: the protocol, the cipher suite's key exchange,
 * cipher and MAC as Erlang's ssl names them (TLS_AES_256_GCM_SHA384: any, aes_256_gcm, aead;
 * TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256: ecdhe_rsa, aes_128_cbc, sha256), and the client
 * certificate's subject, issuer and validity as rabbit_cert_info formats them.
 */
function tlsInfo(socket: TLSSocket): Record<string, string | null> {
  const suite = socket.getCipher()?.standardName ?? '';
  const m = /^TLS_(?:(.+)_WITH_)?(.+?)_(SHA\d*|MD5)$/.exec(suite);
  const cipher = (m?.[2] ?? suite).toLowerCase();
  const aead = /gcm|ccm|chacha20/.test(cipher);
  const der = socket.getPeerCertificate()?.raw;
  const cert = der ? new X509Certificate(der) : undefined;
  const time = (t: string) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    ssl_protocol: (socket.getProtocol() ?? '').toLowerCase(),
    ssl_key_exchange: m?.[1]?.toLowerCase() ?? 'any',
    ssl_cipher: cipher,
    ssl_hash: aead ? 'aead' : (m?.[3] ?? '').toLowerCase(),
    peer_cert_subject: cert ? distinguishedName(cert) : null,
    peer_cert_issuer: cert ? issuerName(cert) : null,
    peer_cert_validity: cert ? `${time(cert.validFrom)} - ${time(cert.validTo)}` : null,
  };
}

/**
 * A connection in /api/connections. The one-connection reply (detail) is a map, and writes its
 * absent TLS fields as "" where the list writes null, as RabbitMQ does.
 */
export function formatConnection(conn: Connection, detail = false): JsonObject {
  if (conn.direct) return detail ? asMap(formatDirectConnection(conn)) : formatDirectConnection(conn);
  const socket = conn.socket;
  const none = detail ? '' : null;
  const userProvided = fieldString(conn.clientProperties['connection_name']);
  const out: Record<string, Json | undefined> = {
    auth_mechanism: conn.authMechanism,
    channel_max: conn.channelMax,
    channels: conn.channels.size,
    client_properties: tableToJson(conn.clientProperties),
    connected_at: conn.connectedAt,
    frame_max: conn.frameMax,
    garbage_collection: noGarbageCollection(),
    host: plainAddress(socket.localAddress),
    name: conn.name,
    node: NODE,
    peer_cert_issuer: none,
    peer_cert_subject: none,
    peer_cert_validity: none,
    peer_host: conn.remoteAddress,
    peer_port: socket.remotePort ?? 0,
    port: socket.localPort ?? 0,
    protocol: 'AMQP 0-9-1',
    recv_cnt: conn.counters.recvCnt,
    recv_oct: socket.bytesRead,
    recv_oct_details: noRate(),
    reductions: 0,
    reductions_details: noRate(),
    send_cnt: conn.writer.writes,
    send_oct: socket.bytesWritten,
    send_oct_details: noRate(),
    send_pend: conn.unsentBytes,
    ssl: false,
    ssl_cipher: none,
    ssl_hash: none,
    ssl_key_exchange: none,
    ssl_protocol: none,
    state: connectionState(conn),
    timeout: conn.heartbeat,
    type: 'network',
    user: conn.username,
    user_provided_name: userProvided,
    user_who_performed_action: conn.username,
    vhost: conn.vhost?.name ?? '',
  };
  if (socket instanceof TLSSocket) {
    for (const [k, v] of Object.entries(tlsInfo(socket))) out[k] = v ?? none;
    out['ssl'] = true;
  }
  return detail ? asMap(out) : out;
}

/** RabbitMQ's channel name: "<connection name> (<number>)". */
export function channelName(ch: Channel): string {
  return `${ch.conn.name} (${ch.id})`;
}

export function formatChannel(ch: Channel, stats: MessageStatsSource, detail = false): JsonObject {
  return {
    acks_uncommitted: ch.acksUncommitted,
    confirm: ch.publisher.confirming,
    connection_details: connectionDetails(ch.conn),
    consumer_count: ch.consumers.size,
    ...(detail ? { consumer_details: [...ch.consumers.values()].map((c) => formatConsumer(c)), deliveries: [] } : {}),
    garbage_collection: noGarbageCollection(),
    global_prefetch_count: ch.globalPrefetch,
    idle_since: timeString(ch.createdAt),
    message_stats: stats.channel?.(ch),
    messages_unacknowledged: ch.unacked.size,
    messages_uncommitted: ch.publisher.uncommitted,
    messages_unconfirmed: ch.publisher.unconfirmed,
    name: channelName(ch),
    node: NODE,
    number: ch.id,
    pending_raft_commands: 0,
    prefetch_count: ch.consumerPrefetch,
    ...(detail ? { publishes: [] } : {}),
    reductions: 0,
    reductions_details: noRate(),
    state: ch.closing ? 'closing' : 'running',
    transactional: ch.txMode,
    user: ch.conn.username,
    user_who_performed_action: ch.conn.username,
    vhost: ch.conn.vhost?.name ?? '',
  };
}

/**
 * A consumer (in /api/consumers, and a queue's or channel's consumer_details). Under
 * single-active-consumer only the active one is active ("single_active"); the others wait.
 */
export function formatConsumer(c: Consumer): JsonObject {
  const ch = c.host as Channel;
  const q = c.queue;
  const single = q.settings.singleActiveConsumer;
  // A stream's consumers are registered inactive (rabbit_stream_queue:consume).
  const active = q instanceof StreamQueue ? false : !single || q.activeConsumer === c;
  return {
    arguments: tableToJson(c.arguments),
    ack_required: !c.noAck,
    active,
    activity_status: single ? (active ? 'single_active' : 'waiting') : 'up',
    channel_details: {
      connection_name: ch.conn.name,
      name: channelName(ch),
      node: NODE,
      number: ch.id,
      ...peer(ch.conn),
      user: ch.conn.username,
    },
    consumer_tag: c.tag,
    // 3.10 has no consumer_timeout key; rabbitmq-http-api-rs (rabbitmqadmin v2) requires one.
    consumer_timeout: ch.conn.broker.config.consumerTimeout,
    exclusive: c.exclusive,
    prefetch_count: c.prefetch,
    queue: { name: q.name, vhost: (ch.conn.vhost as VHost).name },
  };
}
