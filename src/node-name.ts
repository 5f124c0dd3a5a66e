import { hostname } from 'node:os';
import type { GlobalParameters } from './parameters/global-parameters.js';

/**
 * How the broker names itself where RabbitMQ shows its node and cluster: connection.start
 * (`cluster_name`), the management API (`node`, `cluster_name`), Prometheus
 * (`rabbitmq_identity_info`). One place, so every surface says the same. The cluster name and
 * the persistent cluster id are global parameters (src/parameters), as in RabbitMQ.
 */
export interface NodeIdentity {
  /** RabbitMQ's node name: `rabbit@` and the short host name (RabbitMQ's default, rabbit@vm). */
  readonly node: string;
  /**
   * The cluster name (rabbit_nodes:cluster_name): the `cluster_name` global parameter, by default
   * the node name's `rabbit` with the host's full name (rabbit_nodes:cluster_name_default).
   */
  readonly cluster: string;
  /**
   * RabbitMQ's persistent cluster id (rabbit_nodes:persistent_cluster_id,
   * `rabbitmq-cluster-id-` and 22 base64url characters): the global parameter
   * `internal_cluster_id`, made at the first boot (and again if it is deleted) and stored.
   */
  readonly clusterPermanentId: string;
  /**
   * A new name in the form of an Erlang pid on this node, "<rabbit@vm.1795449011.1822.0>": what
   * RabbitMQ shows for a process without a socket, such as a direct connection (a shovel's
   * `amqp://`, the management API's publish and get). The middle numbers are the broker's start
   * (seconds since the epoch) and a counter, so a name is never given twice in its life.
   */
  nextProcessName(): string;
}

/** RabbitMQ's default node name for this host: `rabbit@` and the host name up to its first dot. */
export function nodeName(host = hostname()): string {
  return `rabbit@${host.split('.')[0]}`;
}

/**
 * The broker's identity, read from its global parameters whenever it is asked for; `startedAt`
 * (ms since the epoch) is the "creation" of its process names.
 */
export function nodeIdentity(globals: () => GlobalParameters, startedAt: number, host = hostname()): NodeIdentity {
  const node = nodeName(host);
  const creation = Math.floor(startedAt / 1000);
  let processes = 0;
  return {
    node,
    nextProcessName: () => `<${node}.${creation}.${++processes}.0>`,
    get cluster() {
      return globals().clusterNameText();
    },
    get clusterPermanentId() {
      return globals().persistentClusterId();
    },
  };
}
