import { readFileSync } from 'node:fs';
import type { Clock } from './clock.js';
import type { FdProbe } from './connection-limits.js';
import type { Logger } from './log.js';

export interface UserConfig {
  username: string;
  password: string;
  /** vhosts this user may open; default: all. */
  vhosts?: string[];
}

export interface BrokerConfig {
  host: string;
  port: number;
  /** Where durable data lives; undefined keeps everything in memory (embedded/test use). */
  dataDir: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  users: UserConfig[];
  vhosts: string[];
  /** Users that may only connect from loopback (RabbitMQ's loopback_users; default guest). */
  loopbackUsers: string[];
  frameMax: number;
  channelMax: number;
  /** Heartbeat the server proposes, in seconds (0 disables). */
  heartbeat: number;
  /** RabbitMQ's consumer_timeout: ms a delivery may stay unacknowledged (0 disables). */
  consumerTimeout: number;
  /** Largest message body accepted (RabbitMQ's max_message_size, 128 MiB by default). */
  maxMessageSize: number;
  /** Fraction of RAM above which publishers are blocked (RabbitMQ's vm_memory_high_watermark). */
  memoryHighWatermark: number;
  /** Ready messages a durable queue keeps in memory; more persistent ones wait in the store. */
  queueMemoryWindow: number;
  /** Connections open at once; more are closed as they arrive (RabbitMQ's connection_max). 0 = no limit. */
  connectionMax: number;
  /** Connections open at once from one client address (RabbitMQ has no such limit). 0 = no limit. */
  connectionMaxPerIp: number;
  /** Milliseconds to wait for connection.close-ok before dropping the socket. */
  closeTimeout: number;
  /** Milliseconds a client has to complete the handshake (RabbitMQ's handshake_timeout). */
  handshakeTimeout: number;
  /** Product/version strings advertised in connection.start. */
  product: string;
  version: string;
}

export interface BrokerOptions extends Partial<BrokerConfig> {
  clock?: Clock;
  logger?: Logger;
  /** How open file descriptors are counted (default: /proc/self on Linux). */
  fdProbe?: FdProbe;
}

export const DEFAULT_CONFIG: BrokerConfig = {
  host: '0.0.0.0',
  port: 5672,
  dataDir: undefined,
  logLevel: 'info',
  users: [{ username: 'guest', password: 'guest' }],
  vhosts: ['/'],
  loopbackUsers: ['guest'],
  frameMax: 131072,
  channelMax: 2047,
  heartbeat: 60,
  consumerTimeout: 30 * 60 * 1000,
  maxMessageSize: 128 * 1024 * 1024,
  memoryHighWatermark: 0.4,
  queueMemoryWindow: 4096,
  // RabbitMQ's default connection_max is infinity; what always bounds connections is the file
  // descriptor reserve (connection-limits.ts).
  connectionMax: 0,
  connectionMaxPerIp: 0,
  closeTimeout: 3000,
  handshakeTimeout: 10000,
  product: 'RabbitMQ',
  version: '3.10.8',
};

export function resolveConfig(options: Partial<BrokerConfig>): BrokerConfig {
  const config: BrokerConfig = { ...DEFAULT_CONFIG };
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && key in DEFAULT_CONFIG) (config as unknown as Record<string, unknown>)[key] = value;
  }
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
  return parsed as Partial<BrokerConfig>;
}
