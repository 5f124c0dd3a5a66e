import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { MetadataStore } from './store/metadata-store.js';

/**
 * How the broker names itself where RabbitMQ shows its node and cluster: the management API
 * (`node`, `cluster_name`), Prometheus (`rabbitmq_identity_info`) and definitions
 * (`internal_cluster_id`). One place, so every surface says the same.
 */
export interface NodeIdentity {
  /** RabbitMQ's node name: `rabbit@` and the short host name (RabbitMQ's default, rabbit@vm). */
  readonly node: string;
  /**
   * The cluster name (RabbitMQ's cluster_name): by default the node name with the host's full
   * name (rabbit_nodes:cluster_name_default). The management API may change it.
   */
  cluster: string;
  /**
   * RabbitMQ's persistent cluster id (rabbit_nodes:persistent_cluster_id,
   * `rabbitmq-cluster-id-` and 22 base64url characters): made once, kept in the store as the
   * global parameter `internal_cluster_id` when there is a data directory.
   */
  readonly clusterPermanentId: string;
}

/** RabbitMQ's default node name for this host: `rabbit@` and the host name up to its first dot. */
export function nodeName(host = hostname()): string {
  return `rabbit@${host.split('.')[0]}`;
}

/** The key and kind the permanent cluster id is stored under (a global parameter, as in RabbitMQ). */
export const CLUSTER_ID_PARAMETER = 'internal_cluster_id';

/**
 * The broker's identity: the node name, the default cluster name, and the permanent cluster id
 * read from the store (made and stored on the first boot). The id is the global parameter
 * `internal_cluster_id`, its value a JSON string, as RabbitMQ exports it in definitions.
 */
export function nodeIdentity(metadata: MetadataStore, host = hostname()): NodeIdentity {
  const stored = metadata.loadDefinitions().find((d) => d.kind === 'global-parameter' && d.key === CLUSTER_ID_PARAMETER)?.value;
  let clusterPermanentId: string;
  if (typeof stored === 'string') {
    clusterPermanentId = stored;
  } else {
    clusterPermanentId = `rabbitmq-cluster-id-${randomBytes(16).toString('base64url')}`;
    metadata.putDefinition({ kind: 'global-parameter', key: CLUSTER_ID_PARAMETER, value: clusterPermanentId });
  }
  return { node: nodeName(host), cluster: `rabbit@${host}`, clusterPermanentId };
}
