import { readFileSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import type { Clock } from './clock.js';
import type { FreeSpace } from './disk-monitor.js';
import type { FdProbe } from './connection-limits.js';
import type { Logger } from './log.js';
import type { MemoryWatermark } from './memory-monitor.js';
import { hashConfigUsers } from './access/config-users.js';
import type { HashingAlgorithm } from './access/password.js';
import type { Permissions } from './access/records.js';
import type { PolicyRecord } from './policy/policy.js';
import type { GlobalParameterRecord, ParameterRecord } from './parameters/records.js';
import { checkTlsConfig, type TlsConfig } from './tls/tls-options.js';
import { DEAD_LETTER_RETRY_MS } from './queue/held-dead-letters.js';
import type { Definitions } from './management/definitions/format.js';

export interface UserConfig {
  username: string;
  /** A plain password: replaced by its salted SHA-256 hash when the config is resolved, never kept or logged. */
  password?: string;
  /** Or the password as a RabbitMQ hash (base64, as in a definitions export); neither = no password. */
  passwordHash?: string;
  /** The algorithm of passwordHash: rabbit_password_hashing_sha256 (default), _sha512 or _md5. */
  hashingAlgorithm?: HashingAlgorithm;
  /** Management tags (administrator, monitoring, policymaker, management, impersonator); default: ['administrator'] for guest, [] for others. */
  tags?: string[];
  /** vhosts where the user gets full permissions (.* .* .*); default: every configured vhost, unless `permissions` is given. */
  vhosts?: string[];
  /** Permissions by vhost (configure, write and read patterns, as RabbitMQ's set_permissions). */
  permissions?: Record<string, Permissions>;
}

export interface BrokerConfig {
  host: string;
  port: number;
  /** Where durable data lives; undefined keeps everything in memory (embedded/test use). */
  dataDir: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /**
   * Users created on a blank data dir (config-users.ts), with their passwords hashed once the
   * config is resolved. Later starts take users from the data dir.
   */
  users: UserConfig[];
  /** vhosts created on a blank data dir; later starts take vhosts from the data dir. */
  vhosts: string[];
  /** Users that may only connect from loopback (RabbitMQ's loopback_users; default guest). */
  loopbackUsers: string[];
  frameMax: number;
  channelMax: number;
  /** Heartbeat the server proposes, in seconds (0 disables). */
  heartbeat: number;
  /** RabbitMQ's consumer_timeout: ms a delivery may stay unacknowledged (0 disables). */
  consumerTimeout: number;
  /**
   * RabbitMQ's dead_letter_worker_publisher_confirm_timeout (advanced config, 180,000 ms): how
   * often a quorum queue forwards again the at-least-once dead-letters it holds.
   */
  deadLetterRetryMs: number;
  /** Largest message body accepted (RabbitMQ's max_message_size, 128 MiB by default). */
  maxMessageSize: number;
  /**
   * Share of the memory available (RAM, or the container's limit when lower) above which
   * publishers are blocked (RabbitMQ's vm_memory_high_watermark.relative, 0.4 by default).
   */
  memoryHighWatermark: number;
  /**
   * Free bytes below which publishers are blocked (RabbitMQ's disk_free_limit.absolute, 50 MB by
   * default). Checked only with a data dir. The config file and the CLI also take RabbitMQ's
   * units: "50MB", "2GB" (powers of 1000), "512MiB", "1G" (powers of 1024).
   */
  diskFreeLimit: number;
  /**
   * The watermark in bytes instead (RabbitMQ's vm_memory_high_watermark.absolute); wins over
   * memoryHighWatermark when set. The config file and the CLI also take RabbitMQ's units
   * ("1GB", "512MiB").
   */
  memoryHighWatermarkAbsolute: number | undefined;
  /** Ready messages a durable queue keeps in memory; more persistent ones wait in the store. */
  queueMemoryWindow: number;
  /** Connections open at once; more are closed as they arrive (RabbitMQ's connection_max). 0 = no limit. */
  connectionMax: number;
  /** Connections open at once from one client address (RabbitMQ has no such limit). 0 = no limit. */
  connectionMaxPerIp: number;
  /** Consumers one channel may have at once (RabbitMQ 4's consumer_max_per_channel; 3.10 has none). 0 = no limit. */
  consumerMaxPerChannel: number;
  /** New connections accepted per second, from all addresses together. 0 = no limit. */
  connectionRateLimit: number;
  /** New connections accepted per second from one client address. 0 = no limit. */
  connectionRateLimitPerIp: number;
  /**
   * Failed logins from one client address, within a minute, after which that address is refused
   * logins for a back-off (1 s, doubling with each further failure up to 60 s). 0 = off.
   */
  loginFailureLimit: number;
  /** Milliseconds to wait for connection.close-ok before dropping the socket. */
  closeTimeout: number;
  /** Milliseconds a client has to complete the handshake (RabbitMQ's handshake_timeout). */
  handshakeTimeout: number;
  /**
   * Port of the management HTTP API (RabbitMQ's management.tcp.port), on the same host as AMQP;
   * 0 takes any free port, 'off' disables it. The CLI's default is 15672; startBroker's is 'off'.
   */
  managementPort: number | 'off';
  /**
   * Policies applied (and stored) at boot, in RabbitMQ's definitions shape:
   * {vhost, name, pattern, "apply-to", definition, priority}.
   */
  policies: PolicyRecord[];
  /**
   * Runtime parameters applied (and stored) at boot, in RabbitMQ's definitions shape:
   * {vhost, component, name, value} — vhost limits (component "vhost-limits", name "limits"),
   * operator policies (component "operator_policy").
   */
  parameters: ParameterRecord[];
  /** Global parameters applied (and stored) at boot, in RabbitMQ's definitions shape: {name, value}. */
  globalParameters: GlobalParameterRecord[];
  /**
   * The cluster name, set at every boot (RabbitMQ's cluster_name setting); undefined keeps the
   * stored one, or the default rabbit@<fqdn>. Sent as connection.start's cluster_name.
   */
  clusterName: string | undefined;
  /**
   * The AMQPS listener, with RabbitMQ's ssl_options names (tls/tls-options.ts): certfile,
   * keyfile, cacertfile, verify, fail_if_no_peer_cert; undefined = no TLS listener.
   */
  tls: TlsConfig | undefined;
  /**
   * Port of the Prometheus endpoint (RabbitMQ's rabbitmq_prometheus: /metrics, on the AMQP
   * host); 0 = any free port, false = off. The `warren` command defaults to 15692, as RabbitMQ
   * does; an embedded broker has none unless asked (false).
   */
  prometheusPort: number | 'off';
  /**
   * Definitions imported at every boot (RabbitMQ's load_definitions): a JSON file's name, or the
   * document itself. On a blank node they replace the default vhost and user.
   */
  definitions: string | Definitions | undefined;
  /**
   * An HTTPS listener for the management API (RabbitMQ's management.ssl.*: certfile, keyfile,
   * cacertfile, verify, fail_if_no_peer_cert; port 15671 by default), beside or instead of
   * the plain one (managementPort 'off').
   */
  managementTls: TlsConfig | undefined;
  /**
   * Read coalescing (connection/read-coalescing.ts): microseconds the event loop waits, once its
   * output is out, when a client streams small writes and waits for nothing in return, so the
   * next read takes what arrived meanwhile. 0 = off. The `warren` command's default is 50;
   * startBroker's is 0 (an embedded broker shares its event loop with the code around it).
   * Warren's own: RabbitMQ has no such setting.
   */
  readCoalescingMicros: number;
  /** Product/version strings advertised in connection.start. */
  product: string;
  version: string;
}

export interface BrokerOptions extends Partial<BrokerConfig> {
  clock?: Clock;
  logger?: Logger;
  /** Free bytes on the data dir's file system (tests inject one; default: fs.statfs). */
  freeDiskSpace?: FreeSpace;
  /** How open file descriptors are counted (default: /proc/self on Linux). */
  fdProbe?: FdProbe;
}

export const DEFAULT_CONFIG: BrokerConfig = {
  host: '0.0.0.0',
  port: 5672,
  dataDir: undefined,
  logLevel: 'info',
  users: [{ username: 'guest', password: 'guest', tags: ['administrator'] }],
  vhosts: ['/'],
  loopbackUsers: ['guest'],
  frameMax: 131072,
  channelMax: 2047,
  heartbeat: 60,
  consumerTimeout: 30 * 60 * 1000,
  deadLetterRetryMs: DEAD_LETTER_RETRY_MS,
  maxMessageSize: 128 * 1024 * 1024,
  memoryHighWatermark: 0.4,
  diskFreeLimit: 50_000_000,
  memoryHighWatermarkAbsolute: undefined,
  queueMemoryWindow: 4096,
  // RabbitMQ's default connection_max is infinity; what always bounds connections is the file
  // descriptor reserve (connection-limits.ts).
  connectionMax: 0,
  connectionMaxPerIp: 0,
  consumerMaxPerChannel: 0,
  connectionRateLimit: 0,
  connectionRateLimitPerIp: 0,
  loginFailureLimit: 0,
  closeTimeout: 3000,
  handshakeTimeout: 10000,
  managementPort: 15672,
  policies: [],
  parameters: [],
  globalParameters: [],
  clusterName: undefined,
  tls: undefined,
  managementTls: undefined,
  definitions: undefined,
  prometheusPort: 15692,
  readCoalescingMicros: 50,
  product: 'RabbitMQ',
  version: '3.10.8',
};

export function resolveConfig(options: Partial<BrokerConfig>): BrokerConfig {
  const config: BrokerConfig = { ...DEFAULT_CONFIG };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && key in DEFAULT_CONFIG) (config as unknown as Record<string, unknown>)[key] = value;
  }
  checkReadCoalescing(config.readCoalescingMicros, 'readCoalescingMicros');
  checkDeadLetterRetry(config.deadLetterRetryMs, 'deadLetterRetryMs');
  // Plain passwords do not outlive this line.
  config.users = hashConfigUsers(config.users);
  return config;
}

/** Reads a JSON config file whose keys are BrokerConfig's (e.g. {"users": [...], "vhosts": [...]}). */
export function readConfigFile(path: string): Partial<BrokerConfig> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`config file ${path} must hold a JSON object`);
  }
  const unknown = Object.keys(parsed).filter((k) => !(k in DEFAULT_CONFIG));
  if (unknown.length) throw new Error(`config file ${path}: unknown setting(s) ${unknown.join(', ')}`);
  const config = parsed as Partial<BrokerConfig> & { diskFreeLimit?: number | string; memoryHighWatermarkAbsolute?: number | string };
  if (config.diskFreeLimit !== undefined) config.diskFreeLimit = parseInformationUnit(config.diskFreeLimit, `config file ${path}: diskFreeLimit`);
  if (config.managementPort !== undefined) config.managementPort = parseOptionalPort(config.managementPort as unknown, `config file ${path}: managementPort`);
  if (config.memoryHighWatermarkAbsolute !== undefined) {
    config.memoryHighWatermarkAbsolute = parseInformationUnit(config.memoryHighWatermarkAbsolute, `config file ${path}: memoryHighWatermarkAbsolute`);
  }
  if (config.tls !== undefined) checkTlsConfig(config.tls, `config file ${path}: tls`);
  if (config.managementTls !== undefined) checkTlsConfig(config.managementTls, `config file ${path}: managementTls`);
  // A definitions file named in a config file is found beside it.
  if (typeof config.definitions === 'string') config.definitions = resolvePath(dirname(path), config.definitions);
  else if (config.definitions !== undefined && (typeof config.definitions !== 'object' || config.definitions === null || Array.isArray(config.definitions))) {
    throw new Error(`config file ${path}: definitions must be a file name or a definitions object`);
  }
  if (config.prometheusPort !== undefined) config.prometheusPort = parseOptionalPort(config.prometheusPort as unknown, `config file ${path}: prometheusPort`);
  if (config.readCoalescingMicros !== undefined) checkReadCoalescing(config.readCoalescingMicros, `config file ${path}: readCoalescingMicros`);
  if (config.deadLetterRetryMs !== undefined) checkDeadLetterRetry(config.deadLetterRetryMs, `config file ${path}: deadLetterRetryMs`);
  return config as Partial<BrokerConfig>;
}

/** deadLetterRetryMs: a whole number of milliseconds, at least 1. */
export function checkDeadLetterRetry(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new Error(`${what}: '${String(value)}' is not a whole number of milliseconds (at least 1)`);
  return value;
}

/** The longest nap read coalescing may take: 0.1 s (a nap stops the whole event loop). */
export const READ_COALESCING_MAX_MICROS = 100_000;

/** readCoalescingMicros: a number of microseconds, 0 (off) to READ_COALESCING_MAX_MICROS. */
export function checkReadCoalescing(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > READ_COALESCING_MAX_MICROS) {
    throw new Error(`${what}: '${String(value)}' is not a number of microseconds from 0 (off) to ${READ_COALESCING_MAX_MICROS}`);
  }
  return value;
}

/** A listener's port: a whole number 0..65535 (0 = any free port), or "off" (false) for none. */
export function parseOptionalPort(value: unknown, what: string): number | 'off' {
  if (value === false || value === 'off') return 'off';
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${what}: '${String(value)}' is not a port (0..65535) or "off"`);
  return n;
}

/** The memory watermark as MemoryMonitor takes it: bytes when absolute is set, else the share of RAM. */
export function memoryWatermark(config: Pick<BrokerConfig, 'memoryHighWatermark' | 'memoryHighWatermarkAbsolute'>): MemoryWatermark {
  return config.memoryHighWatermarkAbsolute !== undefined ? { absolute: config.memoryHighWatermarkAbsolute } : config.memoryHighWatermark;
}

const UNIT_MULTIPLIERS: Record<string, number> = {
  k: 1024, kiB: 1024, K: 1024, KiB: 1024, KIB: 1024, kib: 1024,
  m: 1024 ** 2, M: 1024 ** 2, MiB: 1024 ** 2, MIB: 1024 ** 2, mib: 1024 ** 2,
  g: 1024 ** 3, G: 1024 ** 3, GiB: 1024 ** 3, GIB: 1024 ** 3, gib: 1024 ** 3,
  kB: 1000, KB: 1000, kb: 1000, Kb: 1000,
  MB: 1e6, mb: 1e6, Mb: 1e6,
  GB: 1e9, gb: 1e9, Gb: 1e9,
};

/**
 * A byte count as RabbitMQ reads one (rabbit_resource_monitor_misc:parse_information_unit): a
 * whole number, optionally followed by a unit: k/K/KiB = 1024, kB/KB = 1000, M/MiB, MB, G/GiB, GB.
 */
export function parseInformationUnit(value: number | string, what: string): number {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  const m = typeof value === 'string' ? /^([0-9]+)([A-Za-z]*)$/.exec(value) : null;
  const multiplier = m && (m[2] === '' ? 1 : UNIT_MULTIPLIERS[m[2]!]);
  if (!m || !multiplier) throw new Error(`${what}: '${String(value)}' is not a byte count such as 50000000, 50MB or 1GiB`);
  return Number(m[1]) * multiplier;
}
