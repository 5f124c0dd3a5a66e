/**
 * The cluster name (rabbit_nodes:cluster_name/0): the `cluster_name` global parameter, or by
 * default the node's name with the host's fully qualified name, "rabbit@<fqdn>" for RabbitMQ's
 * default node name. connection.start sends it as the server property `cluster_name`.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { ParameterInternalError } from './errors.js';
import type { JsonValue } from './value.js';

/** RabbitMQ's default node name is rabbit@<short hostname>; the cluster name keeps "rabbit". */
export const DEFAULT_NODE_ID = 'rabbit';

/**
 * rabbit_nodes:cluster_name_default/0: the node's id, "@", and rabbit_net:hostname/0 — the
 * canonical name gethostbyname gives the host name. Warren reads it from /etc/hosts as the
 * resolver's `files` source gives it (the first name on the first line that lists the host
 * name); without such a line, the host name itself (RabbitMQ would ask DNS).
 */
export function defaultClusterName(nodeId = DEFAULT_NODE_ID, host = hostname(), hostsFile = readHostsFile()): string {
  return `${nodeId}@${canonicalHostName(host, hostsFile)}`;
}

export function canonicalHostName(host: string, hostsFile: string): string {
  const wanted = host.toLowerCase();
  for (const raw of hostsFile.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') continue;
    const [, ...names] = line.split(/\s+/);
    if (names.some((n) => n.toLowerCase() === wanted)) return names[0]!;
  }
  return host;
}

function readHostsFile(): string {
  try {
    return readFileSync('/etc/hosts', 'utf8');
  } catch {
    return '';
  }
}

/**
 * The name PUT /api/cluster-name sets from its body's "name" (rabbit_mgmt_wm_cluster_name:
 * as_binary/1): a string, or a list taken as an Erlang iolist — strings, byte values and lists
 * of them, concatenated. Anything else crashes RabbitMQ's handler: ParameterInternalError (500).
 */
export function clusterNameFromJson(name: JsonValue): string {
  if (typeof name === 'string') return name;
  if (!Array.isArray(name)) throw new ParameterInternalError('cluster name is neither a string nor a list');
  const bytes: Buffer[] = [];
  const walk = (items: readonly JsonValue[]): void => {
    for (const item of items) {
      if (typeof item === 'string') bytes.push(Buffer.from(item, 'utf8'));
      else if (typeof item === 'number' && Number.isInteger(item) && item >= 0 && item <= 255) bytes.push(Buffer.of(item));
      else if (Array.isArray(item)) walk(item);
      else throw new ParameterInternalError('cluster name is not an iolist');
    }
  };
  walk(name);
  const text = new TextDecoder('utf-8', { fatal: true });
  try {
    return text.decode(Buffer.concat(bytes));
  } catch {
    // RabbitMQ stores the bytes, then cannot encode them as JSON or UTF-8 text.
    throw new ParameterInternalError('cluster name is not UTF-8');
  }
}
