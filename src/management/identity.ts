/**
 * What the management API says about the node it runs on: its name, the exchange types and
 * authentication mechanisms it offers (RabbitMQ's descriptions), the versions it reports.
 */
import { readFileSync } from 'node:fs';
import type { Broker } from '../broker.js';
import { NODE } from './format.js';
import type { JsonObject } from './json.js';

/** RabbitMQ's exchange type descriptions (each type's description/0). */
const EXCHANGE_DESCRIPTIONS: Record<string, string> = {
  direct: 'AMQP direct exchange, as per the AMQP specification',
  fanout: 'AMQP fanout exchange, as per the AMQP specification',
  headers: 'AMQP headers exchange, as per the AMQP specification',
  topic: 'AMQP topic exchange, as per the AMQP specification',
  'x-consistent-hash': 'Consistent Hashing Exchange',
  'x-delayed-message': 'Delayed Message Exchange.',
  'x-message-deduplication': 'Message Deduplication Exchange.',
};

/** The exchange types the broker offers, as /api/overview and /api/nodes list them. */
export function exchangeTypes(broker: Broker): JsonObject[] {
  return broker.exchangeTypes.names().map((name) => ({ name, description: EXCHANGE_DESCRIPTIONS[name] ?? '', enabled: true }));
}

/** The SASL mechanisms connection.start offers. */
export const AUTH_MECHANISMS: JsonObject[] = [
  { name: 'PLAIN', description: 'SASL PLAIN authentication mechanism', enabled: true },
  { name: 'AMQPLAIN', description: 'QPid AMQPLAIN mechanism', enabled: true },
];

/** Warren's own version (package.json, one level above src/ and dist/; dist/bundle/ is as deep as dist/management/). */
export const WARREN_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
})();

/** The management listener's web context, as RabbitMQ lists it (its port is a string). */
export function webContext(broker: Broker, withNode: boolean): JsonObject | undefined {
  const http = broker.listeners.find((l) => l.protocol === 'http');
  if (!http) return undefined;
  return {
    ...(withNode ? { ssl_opts: [], node: NODE } : {}),
    description: 'RabbitMQ Management',
    path: '/',
    cowboy_opts: '[{sendfile,false}]',
    ip: http.ip,
    port: String(http.port),
  };
}

/** The statistics retention RabbitMQ's UI offers (rates_mode basic). */
export const SAMPLE_RETENTION = (): JsonObject => ({ global: [600, 3600, 28800, 86400], basic: [600, 3600], detailed: [600] });
