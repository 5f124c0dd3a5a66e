import { seedConfigUsers } from '../access/config-users.js';
import type { Broker } from '../broker.js';
import { ReplyCode, replyText } from '../errors.js';
import type { PolicyKind } from '../policy/policy.js';
import { closeConnections, SHUTDOWN_REASON, type Faults } from './faults.js';
import { configuredVhostMetadata } from '../vhost/vhost-metadata.js';

const POLICY_KINDS: readonly PolicyKind[] = ['policy', 'operator-policy'];
/** Store definitions of what reset deletes outright (vhosts, users and permissions are left to their owners). */
const SWEPT_KINDS: readonly string[] = [...POLICY_KINDS, 'parameter'];

/** The exchanges every vhost is born with: the default exchange and the amq.* ones. */
function isBuiltIn(name: string): boolean {
  return name === '' || name.startsWith('amq.');
}

/**
 * broker.reset(): back to the state of a broker just started on a new data dir — the
 * configured vhosts with their standard exchanges, the configured users with their
 * permissions, the configured policies, runtime and global parameters and cluster name — and
 * nothing else: every vhost, user, permission, queue, message, declared exchange, binding,
 * delayed message, policy, vhost limit and global parameter added since is gone (the broker
 * keeps its internal_cluster_id),
 * from memory and from the store (a data dir too, in one commit). Open connections are closed
 * with 320 CONNECTION_FORCED, as a broker stop closes them. Faults are cleared, tracing is
 * off in every vhost. Resolves once
 * the connections are closed and the store has committed; waits of broker.until stay pending.
 */
export async function resetBroker(broker: Broker, faults: Faults): Promise<void> {
  const text = replyText(ReplyCode.CONNECTION_FORCED, SHUTDOWN_REASON);
  // Each connection's channels are released and its exclusive queues deleted at once; the
  // sockets close when the clients answer.
  const closing = closeConnections(broker, [...broker.connections], ReplyCode.CONNECTION_FORCED, text);
  // Its synchronous part now (hooks unset, alarms cleared); a failed store resumes below.
  const cleared = faults.clear();
  // Tracing off everywhere, as after a start (RabbitMQ does not store it).
  broker.tracing.clear();
  // Vhosts: the configured ones, with the metadata a new one has; the others are deleted with
  // everything in them. (A broker that imports definitions instead of seeding keeps none.)
  const seeds = broker.seedsConfiguredUsersAndVhosts;
  const configured = new Set(seeds ? broker.config.vhosts : []);
  for (const [name, vhost] of [...broker.vhosts]) {
    if (!configured.has(name) || vhost.metadata.defaultQueueType !== undefined) broker.deleteVhost(name);
  }
  for (const name of configured) broker.putVhost(name, configuredVhostMetadata(name));
  // Users and their permissions: the configured ones, as a new data dir gets them.
  for (const user of broker.access.users()) broker.access.deleteUser(user.name);
  if (seeds) seedConfigUsers(broker.config.users, broker.config.vhosts, broker.access, broker.log);
  for (const kind of POLICY_KINDS) for (const p of broker.policies.list(kind)) broker.policies.delete(kind, p.vhost, p.name);
  broker.parameters.clear();
  broker.globalParameters.reset(broker.config.clusterName);
  for (const vhost of broker.vhosts.values()) {
    for (const q of [...vhost.queues.values()]) vhost.removeQueue(q);
    for (const x of [...vhost.exchanges.values()]) if (!isBuiltIn(x.name)) vhost.deleteExchange(x.name, { ifUnused: false });
    // What is left: bindings between standard exchanges.
    for (const b of vhost.listBindings()) vhost.unbind(b.source, b.destination, b.routingKey, b.args);
  }
  sweepStore(broker);
  broker.globalParameters.apply(broker.config.globalParameters);
  broker.policies.apply('policy', broker.config.policies);
  broker.parameters.apply(broker.config.parameters);
  // The definitions the broker imported at boot, imported again.
  broker.importConfiguredDefinitions();
  await cleared;
  await Promise.all([closing, broker.store.messages.sync().catch(() => undefined)]);
}

/**
 * Deletes whatever the store still holds that the broker does not show (records of vhosts not
 * configured, transient messages paged out): topology, delayed messages, message entries,
 * stored policies and runtime parameters. Other definitions (users, permissions, vhosts,
 * global parameters) are left to their owners.
 */
function sweepStore(broker: Broker): void {
  const { messages, metadata } = broker.store;
  const { exchanges, queues, bindings } = metadata.load();
  for (const b of bindings) metadata.deleteBinding(b);
  for (const q of queues) metadata.deleteQueue(q.vhost, q.name);
  for (const x of exchanges) metadata.deleteExchange(x.vhost, x.name);
  for (const d of metadata.loadDelayed()) metadata.deleteDelayed(d.record);
  for (const r of metadata.loadDefinitions()) if (SWEPT_KINDS.includes(r.kind)) metadata.deleteDefinition(r.kind, r.key);
  for (const key of messages.queues()) messages.deleteQueue(key);
}
