import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { FakeClock, SystemClock, type Clock } from './clock.js';
import { memoryWatermark, resolveConfig, type BrokerConfig, type BrokerOptions } from './config.js';
import { Heartbeats } from './connection/heartbeats.js';
import { ReadCoalescing } from './connection/read-coalescing.js';
import { ConnectionLimits, FD_RESERVE, procFdProbe, REFUSALS, type FdProbe, type Refusal } from './connection-limits.js';
import { Connection } from './connection/connection.js';
import type { BrokerContext } from './connection/context.js';
import { ReplyToRegistry } from './connection/direct-reply-to.js';
import { DirectListener } from './direct-listener.js';
import { DiskMonitor } from './disk-monitor.js';
import { ReplyCode, replyText } from './errors.js';
import { Hooks } from './hooks.js';
import { defaultExchangeTypes, type ExchangeTypeRegistry } from './exchange/exchange-type-registry.js';
import { decodeTable, type FieldTable } from './frame/field-table.js';
import { createLogger, type Logger } from './log.js';
import { LoginThrottle } from './login-throttle.js';
import { collectGarbage, MemoryMonitor, sampleProcessMemory } from './memory-monitor.js';
import { BrokerMetrics } from './metrics/broker-metrics.js';
import { nodeIdentity, type NodeIdentity } from './node-name.js';
import type { NodeStats, PrometheusSource } from './prometheus/collector.js';
import { PrometheusServer } from './prometheus/prometheus-server.js';
import { CommitBatcher } from './queue/commit-batcher.js';
import { LaterTurns } from './later-turns.js';
import { Message, senderSelectedRoutingKeys } from './queue/message.js';
import { TRANSIENT_PREFIX } from './queue/paged-ready-list.js';
import type { Queue } from './queue/queue.js';
import { TransientPager } from './queue/transient-pager.js';
import { TlsListener } from './tls/tls-listener.js';
import { checkTlsConfig, DEFAULT_TLS_PORT, secureContextOptions, serverOptions } from './tls/tls-options.js';
import { openLmdbStore } from './store/lmdb/index.js';
import { openMemoryStore } from './store/memory-store.js';
import type { Store } from './store/message-store.js';
import { PolicyOperations } from './policy/policy-operations.js';
import { GlobalParameters } from './parameters/global-parameters.js';
import { RuntimeParameters } from './parameters/runtime-parameters.js';
import { VHostLimitOperations } from './parameters/vhost-limits.js';
import { SHOVEL_COMPONENT } from './shovel/shovel-parameters.js';
import { Shovels } from './shovel/shovels.js';
import type { Faults } from './testing/faults.js';
import type { Inspector } from './testing/inspect.js';
import { createToolkit, type Toolkit } from './testing/toolkit.js';
import type { Until } from './testing/until.js';
import { Tracing } from './trace/tracing.js';
import { VHost, type VHostDeps } from './vhost/vhost.js';
import { canonicalArgs } from './vhost/binding-table.js';
import { urlHost } from './peer-address.js';
import { configuredVhostMetadata, defaultVHostMetadata, QUEUE_TYPES, vhostDefinition, vhostFromDefinition, type VHostMetadata } from './vhost/vhost-metadata.js';
import { AccessControl, AccessError } from './access/access-control.js';
import { FULL_PERMISSIONS, reportUnappliedConfig, seedConfigUsers } from './access/config-users.js';
import { metricsStats } from './management/message-stats.js';
import { ManagementServer } from './management/server.js';
import { staticFiles } from './management/static-files.js';
import { brokerTarget } from './management/definitions/broker-definitions.js';
import { DefinitionsError, parseDefinitions } from './management/definitions/format.js';
import { importDefinitions } from './management/definitions/import.js';
import { HttpError } from './management/http.js';

/** The arguments of every recovered queue that has none: one frozen table, never written. */
const NO_QUEUE_ARGUMENTS: FieldTable = Object.freeze(Object.create(null) as FieldTable);

/**
 * A commit held while publishers stream goes once none waited on a confirm for this many naps
 * of read coalescing (200 µs at the default 50; at 100 µs, the pauses in amqplib's confirmed
 * publishing ended most holds early: BENCHMARKS.md, thirteenth session).
 */
const HOLD_QUIET_NAPS = 4;

/** A stored queue's arguments (an encoded table): the shared empty table when there are none. */
function storedQueueArguments(encoded: Buffer): FieldTable {
  if (encoded.length === 4 && encoded.readUInt32BE(0) === 0) return NO_QUEUE_ARGUMENTS;
  return decodeTable(encoded, 0).table;
}

/**
 * The composition root: builds config, logger, clock, store and vhosts, recovers durable state,
 * and accepts connections. Nothing in Warren is a singleton, so several brokers can share a
 * process (tests do).
 */
export class Broker implements BrokerContext, PrometheusSource {
  readonly config: BrokerConfig;
  readonly log: Logger;
  readonly clock: Clock;
  readonly store: Store;
  readonly commits: CommitBatcher;
  /** Where queues spread large removals over turns (Queue.removeWhile); settle() waits for it. */
  readonly later = new LaterTurns((err) => this.log.error({ err }, 'internal error in work spread over turns'));
  readonly replyTo = new ReplyToRegistry();
  readonly exchangeTypes: ExchangeTypeRegistry;
  readonly vhosts = new Map<string, VHost>();
  readonly connections = new Set<Connection>();
  /** Every connection's heartbeat checks, on one timer per heartbeat interval. */
  readonly heartbeats: Heartbeats;
  /** Naps of the event loop while clients stream small writes (connection/read-coalescing.ts); undefined when off. */
  readonly readCoalescing: ReadCoalescing | undefined;
  readonly limits: ConnectionLimits;
  /**
   * The management HTTP API (src/management); listening from listen() on unless
   * config.managementPort is 'off'. Its auth, stats and routes may be replaced before then.
   */
  readonly management: ManagementServer;
  /** Every listener up now (AMQP, management, ...), as /api/overview and the health checks report them. */
  readonly listeners: ListenerInfo[] = [];
  /** The management API's base URL once it listens (http://host:port). */
  managementUrl: string | undefined;
  /** Policies and operator policies: set, delete, list, and what applies to a queue or exchange. */
  readonly policies: PolicyOperations;
  /** Which vhosts RabbitMQ's firehose traces (src/trace: rabbit_trace:start/stop/enabled; not stored). */
  readonly tracing: Tracing;
  /** Runtime parameters per vhost (vhost-limits, operator policies as parameters): /api/parameters. */
  readonly parameters: RuntimeParameters;
  /** Dynamic shovels (src/shovel): the `shovel` runtime parameter component, /api/shovels. */
  readonly shovels: Shovels;
  /** Vhost limits (max-connections, max-queues) one at a time: /api/vhost-limits. */
  readonly vhostLimits: VHostLimitOperations;
  /** Global parameters, the cluster name and the internal cluster id: /api/global-parameters, /api/cluster-name. */
  readonly globalParameters: GlobalParameters;
  readonly loginThrottle: LoginThrottle;
  /** The seams of the test toolkit (src/hooks.ts, src/testing); unset, they cost a null check. */
  readonly hooks = new Hooks();
  /** Message, churn and login counters, and the read API of src/metrics. */
  readonly metrics: BrokerMetrics;
  /** Node name, cluster name and permanent cluster id (src/node-name.ts). */
  readonly identity: NodeIdentity;
  /** How open file descriptors and their limit are read. */
  readonly fds: FdProbe;
  /** The Prometheus endpoint (http://host:port), once listening; undefined when off. */
  prometheusUrl: string | undefined;
  private prometheus: PrometheusServer | undefined;
  private server: Server | undefined;
  /** Where the shovels' direct connections (`amqp://`) come in: not the AMQP listener. */
  private readonly directListener = new DirectListener();

  /** The direct listener's socket path (src/direct-listener.ts), once listening. */
  get directListenerPath(): string | undefined {
    return this.directListener.path;
  }
  /** Sockets refused since the last warning about it (logged at most every REFUSAL_LOG_MS). */
  private refused = { count: 0, loggedAt: -Infinity };
  private connectionIds = 0;
  private closing: Promise<void> | undefined;

  constructor(options: BrokerOptions = {}) {
    const { clock, logger, freeDiskSpace, fdProbe, ...rest } = options;
    this.explicitUsersOrVhosts = rest.users !== undefined || rest.vhosts !== undefined;
    this.config = resolveConfig(rest);
    if (this.config.tls) checkTlsConfig(this.config.tls, 'tls');
    if (this.config.managementTls) checkTlsConfig(this.config.managementTls, 'managementTls');
    this.fds = fdProbe ?? procFdProbe;
    this.limits = new ConnectionLimits(this.config, this.fds, () => this.clock.monotonic());
    this.loginThrottle = new LoginThrottle(this.config.loginFailureLimit, () => this.clock.monotonic());
    this.log = logger ?? createLogger(this.config.logLevel);
    this.clock = clock ?? new SystemClock((err) => this.log.error({ err }, 'error in a timer callback (the broker goes on)'));
    this.heartbeats = new Heartbeats(this.clock);
    this.readCoalescing = this.config.readCoalescingMicros > 0 ? new ReadCoalescing(this.config.readCoalescingMicros) : undefined;
    this.metrics = new BrokerMetrics(this);
    if (this.config.dataDir) {
      mkdirSync(this.config.dataDir, { recursive: true });
      // A broker that naps for read coalescing also holds a commit while publishers stream
      // (store/lmdb/commit.ts): its turns nap alike, and its publishers' input is what it waits on.
      const napMs = this.config.readCoalescingMicros / 1000;
      this.store = openLmdbStore(join(this.config.dataDir, 'store'), {
        log: (m) => this.log.info(m),
        onError: (err) => this.storeFailed(err),
        commitHold: napMs > 0 ? { quietMs: HOLD_QUIET_NAPS * napMs, napMs } : undefined,
      });
    } else {
      this.store = openMemoryStore({ log: (m) => this.log.info(m), onError: (err) => this.storeFailed(err) });
    }
    // The cluster name and the persistent cluster id, before anything reports them.
    this.globalParameters = new GlobalParameters({ metadata: this.store.metadata, log: this.log });
    this.globalParameters.recover(this.config.clusterName);
    this.identity = nodeIdentity(() => this.globalParameters, this.clock.now());
    this.tracing = new Tracing({ log: this.log, vhosts: this.vhosts, node: () => this.identity.node, nextMessageId: () => this.nextMessageId(), nextProcessName: () => this.identity.nextProcessName() });
    this.commits = new CommitBatcher(this.store.messages, (err) => this.log.error({ err }, 'internal error after a store commit'));
    // Under memory pressure transient messages are paged out to the store; without a data dir
    // there is no store to page them out to.
    this.pager = new TransientPager(() => this.allQueues(), this.store.messages, () => this.memory.isPaging && !this.storeBroken, this.log);
    const transientPaging = this.config.dataDir ? this.pager : undefined;
    // With the real clock, memory is also checked after collections V8 runs by itself and every
    // 256 KiB read from clients (the heap can outgrow its headroom between two ticks, and within
    // one turn of the event loop); with an injected clock, only on its ticks.
    this.memory = new MemoryMonitor(this.clock, this.log, memoryWatermark(this.config), () => this.updateBlocked(), sampleProcessMemory, 1000, {
      collectGarbage,
      checkAfterGc: clock === undefined,
      inputCheckBytes: clock === undefined ? 256 * 1024 : undefined,
      onPaging: (paging) => {
        if (paging) transientPaging?.wake();
      },
    });
    this.disk = this.config.dataDir
      ? new DiskMonitor(this.clock, this.log, this.config.dataDir, this.config.diskFreeLimit, (alarmed) => this.diskChecked(alarmed), freeDiskSpace)
      : undefined;
    this.exchangeTypes = defaultExchangeTypes(() => this.clock.now());
    this.vhostDeps = {
      log: this.log,
      clock: this.clock,
      exchangeTypes: this.exchangeTypes,
      metadata: this.store.metadata,
      queueDeps: { log: this.log, clock: this.clock, store: this.store.messages, memoryWindow: this.config.queueMemoryWindow, deadLetterRetryMs: this.config.deadLetterRetryMs, transientPaging, hooks: this.hooks, state: this.store.metadata, later: this.later },
      nextMessageId: () => this.nextMessageId(),
      churn: this.metrics.churn,
    };
    this.access = new AccessControl({
      store: this.store.metadata,
      log: this.log,
      loopbackUsers: this.config.loopbackUsers,
      vhostExists: (name) => this.vhosts.has(name),
      onUserDeleted: (user) => this.forceClose((conn) => conn.username === user && !conn.unrestricted, `user '${user}' is deleted`),
    });
    this.loadDefinitions();
    this.policies = new PolicyOperations(this.vhosts, this.store.metadata, this.log);
    this.parameters = new RuntimeParameters({ vhosts: this.vhosts, metadata: this.store.metadata, policies: this.policies, log: this.log });
    this.vhostLimits = new VHostLimitOperations(this.parameters, this.vhosts);
    this.shovels = new Shovels({
      clock: this.clock,
      log: this.log.child({ component: 'shovel' }),
      node: () => this.identity.node,
      clusterName: () => this.identity.cluster,
      clearParameter: (vhost, name) => this.parameters.delete(SHOVEL_COMPONENT, vhost, name),
      directSecret: this.access.directSecret,
    });
    this.parameters.register(SHOVEL_COMPONENT, this.shovels);
    this.onVhostDeleted((name) => this.parameters.vhostDeleted(name));
    this.management = new ManagementServer(this, { auth: this.access, stats: metricsStats(this.metrics, this.vhosts), fallback: staticFiles() });
    this.recover();
    // Policies and parameters from the config file (RabbitMQ's definitions shapes), applied and
    // stored at each boot like a definitions file: after recovery, so they act on recovered
    // queues at once.
    try {
      this.globalParameters.apply(this.config.globalParameters);
      this.policies.apply('policy', this.config.policies);
      this.parameters.apply(this.config.parameters);
      // A definitions file is loaded at every boot, as RabbitMQ's load_definitions is.
      this.importConfiguredDefinitions();
    } catch (err) {
      void this.store.close();
      throw err;
    }
    // A FakeClock's advance() resolves once this broker has settled what fell due.
    if (this.clock instanceof FakeClock) this.unregisterSettle = this.clock.onAdvance(() => this.settle());
  }

  private unregisterSettle: (() => void) | undefined;
  private toolkitInstance: Toolkit | undefined;

  /**
   * The test toolkit over this broker (src/testing: inspect, until, faults, reset), built on
   * first use, one per broker: startBroker() returns it and the management API serves it under
   * /api/warren/, so both see the same faults and waits.
   */
  get toolkit(): Toolkit {
    return (this.toolkitInstance ??= createToolkit(this));
  }

  /**
   * Resolves once what the broker has set going is done: frames queued for clients written to
   * their sockets (connections flush from setImmediate), store writes committed and the
   * confirms waiting on them sent. FakeClock.advance() awaits it after firing what fell due.
   * What a client makes of those frames reaches it as the client's own events.
   */
  async settle(): Promise<void> {
    do {
      // A removal a queue spreads over turns (dead-lettering thousands at once) first.
      await this.later.whenIdle();
      for (let round = 0; round < 2; round++) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        // A failed store rejects at once; its confirms were nacked (storeFailed).
        await this.store.messages.sync().catch(() => undefined);
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    } while (!this.later.idle);
  }

  /**
   * Whether a blank node gets the config's vhosts and users: not when it imports definitions
   * and the config names none (RabbitMQ's maybe_insert_default_data). broker.reset() follows it.
   */
  get seedsConfiguredUsersAndVhosts(): boolean {
    return this.config.definitions === undefined || this.explicitUsersOrVhosts;
  }

  /**
   * Imports config.definitions (a file name, or the document itself), if any: at boot, and again
   * at broker.reset(). Throws saying what failed.
   */
  importConfiguredDefinitions(): void {
    const source = this.config.definitions;
    if (source === undefined) return;
    const where = typeof source === 'string' ? `definitions file ${source}` : 'definitions';
    try {
      const defs = typeof source === 'string' ? parseDefinitions(readFileSync(source)) : source;
      importDefinitions(brokerTarget(this), defs);
    } catch (err) {
      const reason = err instanceof DefinitionsError || err instanceof HttpError ? (typeof err.reason === 'string' ? err.reason : JSON.stringify(err.reason)) : (err as Error).message;
      throw new Error(`${where}: ${reason}`);
    }
    this.log.info({ definitions: typeof source === 'string' ? source : 'inline' }, 'imported definitions');
  }

  /**
   * Users, vhosts, permissions and topic permissions (src/access). Changes made through it
   * are stored at once; a deleted user's connections are closed.
   */
  readonly access: AccessControl;
  private readonly vhostDeps: VHostDeps;
  private readonly vhostDeletedHooks: Array<(name: string) => void> = [];
  /** The options named users or vhosts (not just the defaults: guest and '/'). */
  private readonly explicitUsersOrVhosts: boolean;

  /**
   * Vhosts, users and permissions from the store; on a blank store (no users and no vhosts:
   * a new data dir, or no data dir) the config's vhosts and users instead, which are stored
   * (src/access/config-users.ts explains why later starts ignore the config's lists).
   */
  private loadDefinitions(): void {
    const records = this.store.metadata.loadDefinitions();
    if (!records.some((r) => r.kind === 'vhost' || r.kind === 'user')) {
      // As RabbitMQ's maybe_insert_default_data: a blank node that imports definitions gets no
      // default vhost and no default user (users and vhosts the config names are still made).
      if (!this.seedsConfiguredUsersAndVhosts) {
        this.log.info('blank node with definitions to import: no default vhost or user');
        return;
      }
      for (const name of this.config.vhosts) this.putVhost(name, configuredVhostMetadata(name));
      seedConfigUsers(this.config.users, this.config.vhosts, this.access, this.log);
      return;
    }
    for (const r of records) {
      if (r.kind !== 'vhost') continue;
      const v = vhostFromDefinition(r);
      if (v) this.vhosts.set(v.name, new VHost(v.name, this.vhostDeps, v.metadata));
      else this.log.warn({ key: r.key }, 'skipping a malformed stored vhost definition');
    }
    const loaded = this.access.load(records);
    this.log.info({ vhosts: this.vhosts.size, ...loaded }, 'loaded vhosts, users and permissions from the data dir');
    reportUnappliedConfig(this.config.users, this.config.vhosts, this.access, (v) => this.vhosts.has(v), this.log);
  }

  // ---- vhosts (public operations: the management API and definitions use these) -------------

  /**
   * Creates a vhost (with the standard exchanges), or updates the description and tags of an
   * existing one, as rabbit_vhost:put_vhost does; stored at once. A vhost created on behalf of
   * an existing user (actingUser) gives that user full permissions in it, as RabbitMQ does.
   * Throws AccessError for a default queue type RabbitMQ does not know or a name too long to store.
   */
  putVhost(name: string, metadata: Partial<VHostMetadata>, actingUser?: string): 'created' | 'updated' {
    const dqt = metadata.defaultQueueType;
    if (dqt !== undefined && !(QUEUE_TYPES as readonly string[]).includes(dqt)) throw new AccessError('invalid_queue_type', `unknown queue type '${dqt}'`);
    if (Buffer.byteLength(name, 'utf8') > 1977) throw new AccessError('name_too_long', 'vhost name longer than 1977 bytes');
    const existing = this.vhosts.get(name);
    if (existing) {
      existing.metadata = { ...existing.metadata, description: metadata.description ?? existing.metadata.description, tags: metadata.tags ?? existing.metadata.tags };
      this.store.metadata.putDefinition(vhostDefinition(name, existing.metadata));
      return 'updated';
    }
    const vhost = new VHost(name, this.vhostDeps, { ...defaultVHostMetadata(), ...withoutUndefined(metadata) });
    this.store.metadata.putDefinition(vhostDefinition(name, vhost.metadata));
    this.vhosts.set(name, vhost);
    this.tracing.attach(vhost);
    this.log.info({ vhost: name }, `added vhost '${name}'`);
    if (actingUser !== undefined && this.access.hasUser(actingUser)) this.access.setPermission(actingUser, name, FULL_PERMISSIONS);
    return 'created';
  }

  /**
   * Deletes a vhost as rabbit_vhost:delete does: its permissions and topic permissions first
   * (no new connection gets in), then its queues with their messages and its exchanges, then
   * the vhost; its connections are closed with 320 CONNECTION_FORCED - vhost 'x' is deleted.
   * Returns false if there was no such vhost.
   */
  deleteVhost(name: string): boolean {
    const vhost = this.vhosts.get(name);
    if (!vhost) return false;
    this.log.info({ vhost: name }, `deleting vhost '${name}'`);
    this.access.vhostDeleted(name);
    vhost.destroy();
    // Its message counts stay in the broker's totals, as RabbitMQ's do.
    this.metrics.vhostDeleted(vhost);
    this.vhosts.delete(name);
    this.store.metadata.deleteDefinition('vhost', name);
    for (const hook of this.vhostDeletedHooks) hook(name);
    this.forceClose((conn) => conn.vhost === vhost, `vhost '${name}' is deleted`);
    return true;
  }

  /** Runs hook(name) when a vhost is deleted (for what else lives in a vhost: policies, parameters). */
  onVhostDeleted(hook: (name: string) => void): void {
    this.vhostDeletedHooks.push(hook);
  }

  /** Closes the connections that match with 320 CONNECTION_FORCED and the reason. */
  private forceClose(match: (conn: Connection) => boolean, reason: string): void {
    const text = replyText(ReplyCode.CONNECTION_FORCED, reason);
    for (const conn of [...this.connections]) if (match(conn)) conn.closeWithError(ReplyCode.CONNECTION_FORCED, text, 0, 0);
  }

  /** Why publishers are blocked now (RabbitMQ's alarm reasons), if they are. */
  blockedReason: string | undefined;
  private storeBroken = false;
  private storeResumedAt = -Infinity;
  private diskAlarmed = false;
  readonly memory: MemoryMonitor;
  /** RabbitMQ's disk_free_limit alarm; only with a data dir. */
  readonly disk: DiskMonitor | undefined;

  /**
   * The store failed to commit (typically a full disk). Every confirm still waiting is nacked
   * by the store's rejected sync(); publishers are blocked ("low on disk", as RabbitMQ blocks
   * them when it runs low on disk) until free space is back above the limit and the store has
   * written what it could not (diskChecked); the reason is logged with the data directory.
   */
  private storeFailed(err: Error): void {
    if (this.storeBroken) return; // a retry that failed again: resumeStore() logs it
    this.log.error({ err: err.message, dataDir: this.config.dataDir }, 'message store failed; blocking publishers');
    this.storeBroken = true;
    this.updateBlocked();
  }

  private readonly pager: TransientPager;

  private *allQueues(): Iterable<Queue> {
    for (const vhost of this.vhosts.values()) yield* vhost.queues.values();
  }

  /** After each disk check: follow the alarm, and retry a failed store once there is room. */
  private diskChecked(alarmed: boolean): void {
    if (alarmed !== this.diskAlarmed) {
      this.diskAlarmed = alarmed;
      this.updateBlocked();
    }
    if (this.storeBroken && !alarmed) this.resumeStore();
  }

  /** At most one attempt a second: a commit that fails again (a file-size limit, a quota) is not hammered. */
  private resumeStore(): void {
    const now = this.clock.monotonic();
    if (now - this.storeResumedAt < STORE_RESUME_INTERVAL_MS) return;
    this.storeResumedAt = now;
    this.retryStore().catch((err: Error) => this.log.warn({ err: err.message, dataDir: this.config.dataDir }, 'message store still cannot write'));
  }

  /**
   * After a failed store commit: writes what the store could not (Store.resume) and, once that
   * committed, unblocks publishers. The disk check does this by itself once the data dir's disk
   * has room again; the test toolkit calls it (faults.resumeStore). Rejects if the store still
   * cannot write; resolves at once when nothing failed.
   */
  async retryStore(): Promise<void> {
    await this.store.resume();
    if (!this.storeBroken) return;
    this.storeBroken = false;
    this.log.info({ dataDir: this.config.dataDir }, 'message store writes again; unblocking publishers');
    this.updateBlocked();
  }

  /** Alarms raised by hand (setAlarm), on top of what the monitors measure. */
  private readonly forcedAlarms = new Set<'memory' | 'disk'>();

  /**
   * Raises (or clears) a resource alarm by hand, whatever memory and disk measure — as
   * `rabbitmqctl set_vm_memory_high_watermark 0` or `set_disk_free_limit` do to RabbitMQ:
   * publishers are blocked as by a real alarm (connection.blocked, no longer read). Clearing
   * only takes back what setAlarm raised; a measured alarm stays. The test toolkit's faults use it.
   */
  setAlarm(resource: 'memory' | 'disk', raised: boolean): void {
    if (raised === this.forcedAlarms.has(resource)) return;
    if (raised) this.forcedAlarms.add(resource);
    else this.forcedAlarms.delete(resource);
    this.log.warn({ resource, raised }, `${resource} alarm ${raised ? 'raised' : 'cleared'} by hand`);
    this.updateBlocked();
  }

  /** RabbitMQ's blocked-by text: "low on disk", "low on memory" or "low on disk & memory". */
  private updateBlocked(): void {
    const resources: string[] = [];
    if (this.storeBroken || this.diskAlarmed || this.forcedAlarms.has('disk')) resources.push('disk');
    if (this.memory.isAlarmed || this.forcedAlarms.has('memory')) resources.push('memory');
    const reason = resources.length > 0 ? `low on ${resources.join(' & ')}` : undefined;
    this.blockedReason = reason;
    for (const conn of this.connections) {
      if (reason) conn.block(reason);
      else conn.unblock();
    }
  }

  nextMessageId(): number {
    return this.store.messages.nextMessageId();
  }

  /** Present while the broker is stopped after a clean shutdown. */
  private get cleanShutdownMarker(): string | undefined {
    return this.config.dataDir ? join(this.config.dataDir, 'clean-shutdown') : undefined;
  }

  /**
   * Rebuilds durable exchanges, queues, bindings and queue contents from the store. After a
   * crash, delivery marks written just before it may not have reached the disk, so every
   * recovered message is flagged redelivered: consumers may see a duplicate, never a false
   * "first delivery".
   */
  private recover(): void {
    const started = Date.now();
    const marker = this.cleanShutdownMarker;
    const crashed = marker !== undefined && !existsSync(marker);
    if (marker) rmSync(marker, { force: true });
    // Transient messages paged out under memory pressure do not survive a restart.
    for (const key of this.store.messages.queues()) if (key.startsWith(TRANSIENT_PREFIX)) this.store.messages.deleteQueue(key);
    const policies = this.policies.recover();
    const parameters = this.parameters.recover();
    const { exchanges, queues, bindings } = this.store.metadata.load();
    for (const r of exchanges) {
      const vhost = this.vhosts.get(r.vhost);
      if (!vhost || vhost.exchanges.has(r.name) || !this.exchangeTypes.get(r.type)) continue;
      vhost.createExchange({ name: r.name, type: r.type, durable: true, autoDelete: r.autoDelete, internal: r.internal, arguments: decodeTable(r.arguments, 0).table });
    }
    const recovered: Queue[] = [];
    for (const r of queues) {
      const vhost = this.vhosts.get(r.vhost);
      if (!vhost || vhost.queues.has(r.name)) continue;
      const q = vhost.createQueue({ name: r.name, durable: true, exclusiveOwner: null, autoDelete: r.autoDelete, arguments: storedQueueArguments(r.arguments) });
      q.recover(crashed);
      recovered.push(q);
    }
    // RabbitMQ re-adds bindings after a restart in (routing key, destination) order, which decides
    // the bucket order of an x-consistent-hash ring: do the same so keys map to the same queues.
    const ordered = [...bindings].sort((a, b) =>
      compare(a.routingKey, b.routingKey) || compare(a.destinationKind, b.destinationKind) || compare(a.destination, b.destination));
    for (const r of ordered) {
      const vhost = this.vhosts.get(r.vhost);
      const source = vhost?.exchanges.get(r.source);
      const destination = r.destinationKind === 'queue' ? vhost?.queues.get(r.destination) : vhost?.exchanges.get(r.destination);
      if (!vhost || !source || !destination) continue;
      const args = decodeTable(r.arguments, 0).table;
      vhost.bind(source, destination, r.routingKey, args);
      // Stored before binding arguments were kept sorted: the record bind() wrote under the
      // sorted arguments replaces it, so an unbind removes the binding for good.
      if (canonicalArgs(args) !== args) this.store.metadata.deleteBinding(r);
    }
    let messages = 0;
    for (const q of recovered) {
      q.recovered();
      messages += q.messageCount;
    }
    for (const { record, message } of this.store.metadata.loadDelayed()) {
      const vhost = this.vhosts.get(record.vhost);
      const x = vhost?.exchanges.get(record.exchange);
      if (!vhost || !x) {
        this.store.metadata.deleteDelayed(record);
        continue;
      }
      const msg = Message.fromStored(message);
      const cc = senderSelectedRoutingKeys(msg.properties.headers);
      vhost.recoverDelayed(x, msg, cc, record);
    }
    if (queues.length || exchanges.length || policies || parameters) {
      this.log.info({ exchanges: exchanges.length, queues: queues.length, messages, policies, parameters, crashed, ms: Date.now() - started }, 'recovered durable state');
    }
  }

  /**
   * Starts the AMQP listener (and AMQPS with `tls`), then the management API (unless its port
   * is 'off'), and logs "Server startup complete" once all are up (testcontainers wait for that
   * line, as they do for RabbitMQ's). Resolves with the AMQP port.
   */
  async listen(): Promise<number> {
    const port = await this.listenAmqp();
    const managementPort = this.config.managementPort;
    const managementTls = this.config.managementTls;
    try {
      if (managementPort !== 'off') {
        const bound = await this.management.listen(managementPort, this.config.host);
        this.listeners.push({ protocol: 'http', ip: this.config.host, port: bound });
        this.managementUrl = `http://${urlHost(this.config.host)}:${bound}`;
        this.log.info({ host: this.config.host, port: bound }, `management API listening on ${this.config.host}:${bound}`);
      }
      if (managementTls) {
        const bound = await this.management.listen(managementTls.port ?? DEFAULT_MANAGEMENT_TLS_PORT, this.config.host, serverOptions(managementTls));
        this.listeners.push({ protocol: 'https', ip: this.config.host, port: bound, certfile: managementTls.certfile, cacertfile: managementTls.cacertfile });
        this.managementHttpsUrl = `https://${urlHost(this.config.host)}:${bound}`;
        this.log.info({ host: this.config.host, port: bound }, `management API listening for HTTPS on ${this.config.host}:${bound}`);
      }
    } catch (err) {
      this.server?.close();
      throw err;
    }
    // Shovels (recovered or set before now) connect once the direct listener is up: `amqp://` is it.
    const directSockets = () => this.shovels.connectionsNeeded + DIRECT_SPARE_SOCKETS;
    this.shovels.listening(await this.directListener.listen((socket) => this.startConnection(socket, true), directSockets));
    this.log.info('Server startup complete');
    return port;
  }

  private listenAmqp(): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = createServer({ noDelay: true }, (socket) => this.accept(socket));
      this.server = server;
      server.once('error', reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off('error', reject);
        // An accept that fails (EMFILE, ENFILE) must not take the broker down.
        server.on('error', (err) => this.log.error({ err: err.message }, 'listener error'));
        const port = (server.address() as AddressInfo).port;
        this.listeners.push({ protocol: 'amqp', ip: this.config.host, port });
        this.log.info({ host: this.config.host, port }, `warren listening on ${this.config.host}:${port}`);
        this.memory.start();
        this.disk?.start();
        this.listenTls().then(() => this.listenPrometheus()).then(() => resolve(port), reject);
      });
    });
  }

  /** Starts the Prometheus endpoint when config.prometheusPort is set (RabbitMQ's rabbitmq_prometheus). */
  private async listenPrometheus(): Promise<void> {
    const port = this.config.prometheusPort;
    if (port === 'off' || this.closing) return;
    const server = new PrometheusServer(this, this.log);
    this.prometheus = server;
    const bound = await server.listen(port, this.config.host);
    this.prometheusUrl = `http://${urlHost(this.config.host)}:${bound}`;
    this.log.info({ host: this.config.host, port: bound }, `Prometheus metrics on ${this.prometheusUrl}/metrics`);
  }

  /** RabbitMQ's version as Warren advertises it (connection.start, Prometheus build info). */
  get version(): string {
    return this.config.version;
  }

  /** Readings of the process and its limits for Prometheus (and the management API's node). */
  nodeStats(): NodeStats {
    const maxFds = this.fds.limit();
    const { connectionMax } = this.config;
    const fdSockets = maxFds === undefined ? undefined : Math.max(0, maxFds - FD_RESERVE);
    return {
      openFds: this.fds.open(),
      maxFds,
      openSockets: this.limits.open,
      maxSockets: connectionMax > 0 ? Math.min(connectionMax, fdSockets ?? Infinity) : fdSockets,
      memoryUsed: sampleProcessMemory(),
      memoryLimit: this.memory.limitBytes,
      diskFree: this.disk?.freeBytes,
      diskFreeLimit: this.config.diskFreeLimit,
      memoryAlarm: this.memory.isAlarmed,
      diskAlarm: this.diskAlarmed || this.storeBroken,
    };
  }

  /** The resource alarms in effect (RabbitMQ's memory and disk alarms); a failed store commit counts as disk. */
  get alarms(): Array<'memory' | 'disk'> {
    const out: Array<'memory' | 'disk'> = [];
    if (this.memory.isAlarmed) out.push('memory');
    if (this.storeBroken || this.diskAlarmed) out.push('disk');
    return out;
  }

  /** The AMQPS listener's port, once listening (only with `tls` configured). */
  tlsPort: number | undefined;
  private tlsListener: TlsListener | undefined;

  private async listenTls(): Promise<void> {
    const tls = this.config.tls;
    if (!tls) return;
    this.tlsListener = new TlsListener(tls, {
      log: this.log,
      clock: this.clock,
      handshakeTimeout: this.config.handshakeTimeout,
      admit: (socket) => this.admit(socket),
      accept: (socket) => this.startConnection(socket),
    });
    this.tlsPort = await this.tlsListener.listen(this.config.host, tls.port ?? DEFAULT_TLS_PORT);
    this.listeners.push({ protocol: 'amqp/ssl', ip: this.config.host, port: this.tlsPort, certfile: tls.certfile, cacertfile: tls.cacertfile });
    this.log.info({ host: this.config.host, port: this.tlsPort }, `warren listening for AMQPS on ${this.config.host}:${this.tlsPort}`);
  }

  /**
   * Reads the TLS certificate, key and CA files again: new handshakes use them, connections
   * already open keep theirs. Throws (and keeps the old ones) if a file is missing or bad.
   */
  reloadTls(): void {
    if (!this.tlsListener && !this.config.managementTls) throw new Error('TLS is not configured');
    // Both read first, so a bad file changes neither.
    const management = this.config.managementTls && secureContextOptions(this.config.managementTls);
    this.tlsListener?.reload();
    if (management) this.management.reloadTls(management);
  }

  /** https://host:port of the management API's HTTPS listener, with managementTls. */
  managementHttpsUrl: string | undefined;

  private accept(socket: Socket): void {
    if (this.admit(socket)) this.startConnection(socket);
  }

  /**
   * Whether a new socket may become a connection (connection limits, file descriptors); a
   * refused one is closed at once. The slot it takes is given back when the socket closes.
   */
  private admit(socket: Socket): boolean {
    if (this.closing) {
      socket.destroy();
      return false;
    }
    const address = socket.remoteAddress ?? '';
    const refusal = this.limits.admit(address);
    if (refusal) {
      this.refuse(socket, address, refusal);
      return false;
    }
    socket.on('close', this.releaseSlot);
    return true;
  }

  /**
   * Every admitted socket's 'close' listener (one function, not a closure per socket): gives
   * back the slot admit() took for its address (net.Socket keeps the peer address it read).
   */
  private readonly releaseSlot = (() => {
    const broker = this;
    return function (this: Socket): void {
      broker.limits.release(this.remoteAddress ?? '');
    };
  })();

  /**
   * An admitted socket (plain, or TLS after its handshake), or one from the direct listener,
   * becomes an AMQP connection.
   */
  private startConnection(socket: Socket, viaDirectListener = false): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    // The connection calls connectionOpened, connectionClosed and noteInput (no closures per connection).
    this.connections.add(new Connection(socket, this, ++this.connectionIds, viaDirectListener));
  }

  /**
   * BrokerContext: a connection is past connection.open. Blocked by whatever alarm is on now
   * (which may have come or gone since it was accepted). RabbitMQ counts a connection opened
   * once it is past connection.open, and closed whenever its socket closes, handshake or not.
   */
  connectionOpened(conn: Connection): void {
    if (this.blockedReason) conn.block(this.blockedReason);
    this.hooks.connections?.opened(conn);
    this.metrics.churn.connectionsOpened++;
  }

  /** BrokerContext: a connection's socket closed. */
  connectionClosed(conn: Connection): void {
    this.connections.delete(conn);
    this.metrics.churn.connectionsClosed++;
  }

  /** BrokerContext: octets read from a client, after its connection handled them. */
  noteInput(bytes: number): void {
    this.memory.noteInput(bytes);
  }

  /**
   * Closes a socket over a connection limit before sending anything: the client sees its
   * connection closed during the opening handshake. (RabbitMQ at connection_max stops
   * accepting instead: the kernel completes the TCP handshake and the client waits without a
   * connection.start until another connection closes.) Warned about at most every 10 s.
   */
  private refuse(socket: Socket, address: string, reason: Refusal): void {
    socket.on('error', () => {});
    socket.destroy();
    this.refused.count++;
    const now = this.clock.monotonic();
    if (now - this.refused.loggedAt < REFUSAL_LOG_MS) return;
    const { connectionMax, connectionMaxPerIp } = this.config;
    this.log.warn({ reason, peer: address, refused: this.refused.count, open: this.limits.open, connectionMax, connectionMaxPerIp },
      `refusing connections: ${REFUSALS[reason]}`);
    this.refused = { count: 0, loggedAt: now };
  }

  /** Closes every connection with 320 CONNECTION_FORCED, stops listening and closes the store. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.log.info('shutting down');
      this.unregisterSettle?.();
      const managementClosed = this.management.close();
      this.memory.stop();
      this.disk?.stop();
      this.pager.stop();
      this.metrics.sampler.stop();
      // Stop accepting now; the server's close callback fires once every socket is gone.
      const serverClosed = Promise.all([
        new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve())),
        this.tlsListener?.close(),
        this.directListener.close(),
        this.prometheus?.close(),
      ]);
      // Shovels stop first, waiting for their destinations' confirms (this broker's too).
      await this.shovels.stopAll();
      // What was published before now is committed and confirmed before the connections close:
      // a publisher (a shovel, say) that sees its confirms does not publish those messages again.
      for (const conn of this.connections) conn.stopReading();
      await Promise.race([this.settle(), new Promise((r) => setTimeout(r, this.config.closeTimeout).unref())]);
      // Work still spread over turns (a removal, an ack, redelivered marks) stops here: see LaterTurns.stop.
      this.later.stop();
      const text = replyText(ReplyCode.CONNECTION_FORCED, "broker forced connection closure with reason 'shutdown'");
      const closed = [...this.connections].map((conn) => new Promise<void>((resolve) => {
        conn.onClosed(resolve);
        conn.closeWithError(ReplyCode.CONNECTION_FORCED, text, 0, 0);
        if (conn.state === 'closed') resolve();
      }));
      await Promise.race([Promise.all(closed), new Promise((r) => setTimeout(r, this.config.closeTimeout).unref())]);
      for (const conn of this.connections) conn.destroy();
      await serverClosed;
      await managementClosed;
      // Nothing is left to arm a timer: those of queues and delayed messages stop, before the store they write to closes.
      for (const vhost of this.vhosts.values()) vhost.stopTimers();
      await this.store.close();
      if (this.cleanShutdownMarker) writeFileSync(this.cleanShutdownMarker, new Date().toISOString());
    })();
    return this.closing;
  }
}

const STORE_RESUME_INTERVAL_MS = 1000;
/** RabbitMQ's management.ssl.port default. */
const DEFAULT_MANAGEMENT_TLS_PORT = 15671;
const REFUSAL_LOG_MS = 10_000;
/** Sockets the direct listener takes beyond two per shovel (a worker's old ones may still be closing). */
const DIRECT_SPARE_SOCKETS = 16;

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A listener as RabbitMQ's rabbit_networking reports it. */
export interface ListenerInfo {
  /** 'amqp', 'http' (the management API), ... */
  protocol: string;
  ip: string;
  port: number;
  /** A TLS listener's certificate (chain) and CA bundle files. */
  certfile?: string;
  cacertfile?: string;
}


function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export interface RunningBroker<C extends Clock = Clock> {
  /** amqp://guest:guest@host:port */
  url: string;
  port: number;
  /** http://host:port of the management API, when managementPort was given (not 'off'). */
  managementUrl: string | undefined;
  /** The AMQPS port, with `tls` configured. */
  tlsPort: number | undefined;
  broker: Broker;
  /**
   * The broker's clock: the one given as `clock` (a FakeClock: `await clock.advance(ms)` fires
   * what falls due — TTLs, x-expires, delayed messages, consumer timeouts, heartbeats — and
   * resolves once the broker has settled it), else the system clock.
   */
  clock: C;
  /**
   * Back to the state of a broker just started on a new data dir: the configured vhosts (with
   * their standard exchanges), users and policies; every other vhost, user, permission, queue,
   * message, exchange, binding and policy gone (from the data dir too), connections closed with
   * 320 CONNECTION_FORCED (src/testing/reset.ts).
   */
  reset(): Promise<void>;
  /** Queues, exchanges, bindings, consumers, connections and messages as plain values (src/testing/inspect.ts). */
  inspect: Inspector;
  /** Promises resolved by broker events, with timeouts that say what was awaited (src/testing/until.ts). */
  until: Until;
  /** Failures injected through the broker's real failure paths (src/testing/faults.ts). */
  faults: Faults;
  close(): Promise<void>;
}

/**
 * Starts a broker (e.g. `await startBroker({ port: 0 })` in a test suite), with the test
 * toolkit (docs/testing.md): reset, inspect, until, faults and the clock. The management API
 * and the Prometheus endpoint are off unless managementPort / prometheusPort is given (0: any
 * free port), so test brokers do not compete for ports 15672 and 15692.
 */
export async function startBroker<C extends Clock = Clock>(options: BrokerOptions & { clock?: C } = {}): Promise<RunningBroker<C>> {
  const broker = new Broker({
    host: '127.0.0.1',
    logLevel: 'warn',
    ...options,
    managementPort: options.managementPort ?? 'off',
    prometheusPort: options.prometheusPort ?? 'off',
    readCoalescingMicros: options.readCoalescingMicros ?? 0,
  });
  const port = await broker.listen();
  const host = urlHost(broker.config.host);
  const { inspect, until, faults, reset } = broker.toolkit;
  return {
    url: `amqp://guest:guest@${host}:${port}`, port, tlsPort: broker.tlsPort, managementUrl: broker.managementUrl, broker,
    clock: broker.clock as C,
    reset, inspect, until, faults,
    close: () => {
      until.cancelAll('the broker was closed');
      return broker.close();
    },
  };
}
