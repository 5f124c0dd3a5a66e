import { randomBytes } from 'node:crypto';
import type { Logger } from '../log.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { clusterNameFromJson, defaultClusterName } from './cluster-name.js';
import { keyMissing, ParameterInternalError } from './errors.js';
import { globalParameterDefinition, globalParameterFromDefinition, type GlobalParameterJson, type GlobalParameterRecord } from './records.js';
import { copyOf, storedValue, type JsonValue } from './value.js';
import { compareUtf8 } from '../sorted.js';

export const CLUSTER_NAME = 'cluster_name';
export const INTERNAL_CLUSTER_ID = 'internal_cluster_id';

/** Erlang atoms hold at most 255 characters; RabbitMQ names global parameters by atoms. */
const MAX_NAME_CHARS = 255;

export interface GlobalParametersDeps {
  metadata: MetadataStore;
  log: Logger;
  /** The cluster name without a cluster_name parameter (default: rabbit@<fqdn>, cluster-name.ts). */
  defaultClusterName?: string;
}

/**
 * RabbitMQ's global runtime parameters (rabbit_runtime_parameters:*_global): any JSON value
 * under a name, stored as the store's 'global-parameter' definitions. Two are RabbitMQ's own:
 * `cluster_name` (the cluster name; absent = the default) and `internal_cluster_id`, generated
 * once, at the first boot or the first boot after it was deleted (rabbit_nodes:boot/0).
 *
 * Public operations (Broker.globalParameters) map 1:1 to /api/global-parameters and
 * /api/cluster-name; see README.md.
 */
export class GlobalParameters {
  private readonly values = new Map<string, JsonValue>();
  private readonly defaultName: string;

  constructor(private readonly deps: GlobalParametersDeps) {
    this.defaultName = deps.defaultClusterName ?? defaultClusterName();
  }

  /** GET /api/global-parameters: {name, value} records, ordered by name. */
  list(): GlobalParameterRecord[] {
    return [...this.values]
      .sort(([a], [b]) => compareUtf8(a, b))
      .map(([name, value]) => ({ name, value: copyOf(value) }));
  }

  /** GET /api/global-parameters/{name}: {value, name}, or undefined (404). */
  get(name: string): GlobalParameterJson | undefined {
    const value = this.values.get(name);
    return value === undefined ? undefined : { value: copyOf(value), name };
  }

  /**
   * PUT /api/global-parameters/{name} with the request body already JSON-parsed: "value" is
   * required (400 "[{key_missing,value}]"), then put().
   */
  putBody(name: string, body: Record<string, unknown>): 'created' | 'updated' {
    if (!('value' in body) || body['value'] === undefined) throw keyMissing('value');
    return this.put(name, body['value']);
  }

  /**
   * Sets a global parameter (rabbit_runtime_parameters:set_global; RabbitMQ validates nothing):
   * 'created' (201) or 'updated' (204). An object is kept as RabbitMQ keeps it (value.ts: `{}`
   * becomes `[]`). A name over 255 characters cannot be an Erlang atom: RabbitMQ's handler
   * crashes (ParameterInternalError, 500).
   */
  put(name: string, value: unknown): 'created' | 'updated' {
    if ([...name].length > MAX_NAME_CHARS) throw new ParameterInternalError(`global parameter name longer than ${MAX_NAME_CHARS} characters`);
    const v = storedValue(value);
    const existed = this.values.has(name);
    this.values.set(name, v);
    this.deps.metadata.putDefinition(globalParameterDefinition({ name, value: v }));
    return existed ? 'updated' : 'created';
  }

  /** DELETE /api/global-parameters/{name}: false when there is none (404). */
  delete(name: string): boolean {
    if (!this.values.delete(name)) return false;
    this.deps.metadata.deleteDefinition('global-parameter', name);
    return true;
  }

  // ---- the cluster name --------------------------------------------------------------------

  /**
   * GET /api/cluster-name's name: the cluster_name parameter's value — whatever JSON it holds,
   * as RabbitMQ shows it — or the default.
   */
  clusterName(): JsonValue {
    const v = this.values.get(CLUSTER_NAME);
    return v === undefined ? this.defaultName : copyOf(v);
  }

  /**
   * The cluster name as connection.start's server property `cluster_name` carries it. A value
   * that is not a string (set through /api/global-parameters) makes RabbitMQ reset every new
   * AMQP connection; Warren sends its JSON text instead.
   */
  clusterNameText(): string {
    const v = this.clusterName();
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  /** Sets the cluster name (rabbit_nodes:set_cluster_name; rabbitmqctl set_cluster_name). */
  setClusterName(name: string): void {
    this.put(CLUSTER_NAME, name);
  }

  /**
   * PUT /api/cluster-name with the request body already JSON-parsed: "name" is required (400
   * "[{key_missing,name}]"); a string, or a list RabbitMQ takes as an iolist
   * (["a","b"] = "ab"); anything else is ParameterInternalError (500). Always HTTP 204.
   */
  setClusterNameBody(body: Record<string, unknown>): void {
    if (!('name' in body) || body['name'] === undefined) throw keyMissing('name');
    this.setClusterName(clusterNameFromJson(body['name'] as JsonValue));
  }

  /** The internal cluster id ("rabbitmq-cluster-id-" + 22 base64url characters), if it is set. */
  internalClusterId(): JsonValue | undefined {
    return this.values.get(INTERNAL_CLUSTER_ID);
  }

  /**
   * rabbit_nodes:persistent_cluster_id/0 (Prometheus' rabbitmq_cluster_permanent_id): the
   * internal cluster id, generated and stored at once if it was deleted; a value set to
   * something else than a string is given as its JSON text.
   */
  persistentClusterId(): string {
    if (!this.values.has(INTERNAL_CLUSTER_ID)) this.seedInternalClusterId();
    const v = this.values.get(INTERNAL_CLUSTER_ID);
    return typeof v === 'string' ? v : JSON.stringify(v);
  }

  /** rabbit_nodes:seed_internal_cluster_id/0. */
  private seedInternalClusterId(): void {
    const id = `rabbitmq-cluster-id-${randomBytes(16).toString('base64url')}`;
    this.deps.log.info(`Initialising internal cluster ID to '${id}'`);
    this.put(INTERNAL_CLUSTER_ID, id);
  }

  /**
   * Deletes every global parameter but internal_cluster_id (broker.reset(): the broker keeps its
   * identity), then sets a configured cluster name again.
   */
  reset(configuredClusterName?: string): void {
    for (const name of [...this.values.keys()]) if (name !== INTERNAL_CLUSTER_ID) this.delete(name);
    if (configuredClusterName !== undefined) this.setClusterName(configuredClusterName);
  }

  // ---- boot and definitions ----------------------------------------------------------------

  /**
   * At boot: loads the stored global parameters, then seeds internal_cluster_id if there is none
   * (rabbit_nodes:seed_internal_cluster_id, logged as RabbitMQ logs it) and sets a configured
   * cluster name (the config's clusterName, as RabbitMQ's cluster_name setting: at every boot).
   */
  recover(configuredClusterName?: string): number {
    for (const d of this.deps.metadata.loadDefinitions()) {
      if (d.kind !== 'global-parameter') continue;
      const r = globalParameterFromDefinition(d);
      if (r) this.values.set(r.name, r.value);
      else this.deps.log.warn({ key: d.key }, 'skipping a malformed stored global parameter');
    }
    const loaded = this.values.size;
    if (!this.values.has(INTERNAL_CLUSTER_ID)) this.seedInternalClusterId();
    if (configuredClusterName !== undefined) {
      this.deps.log.info(`Setting cluster name to '${configuredClusterName}' as configured`);
      this.setClusterName(configuredClusterName);
    }
    return loaded;
  }

  /**
   * Applies global parameters given in RabbitMQ's definitions shape (a definitions import's
   * `global_parameters`, the config file's), as rabbit_definitions:add_global_parameter does.
   */
  apply(records: ReadonlyArray<{ name: string; value: unknown }>): void {
    for (const r of records) this.put(r.name, r.value);
  }
}
