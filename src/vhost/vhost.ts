import type { Tracer } from '../trace/tracer.js';
import { randomBytes } from 'node:crypto';
import {
  accessRefused, ChannelError, commandInvalid, notFound, preconditionFailed, resourceLocked, resourceName,
} from '../errors.js';
import { latin1ToText } from '../erlang/format.js';
import { formatParts } from '../erlang/pretty.js';
import { binary, list, type ErlTerm } from '../erlang/term.js';
import type { ExchangeTypeLookup, RoutingInput } from '../exchange/exchange-type.js';
import { encodeTable, F, fieldString, fieldTypeName, type FieldTable } from '../frame/field-table.js';
import type { Logger } from '../log.js';
import type { Clock } from '../clock.js';
import { VHostCounters, type ChurnCounters } from '../metrics/counters.js';
import { deadLetterCycle, deadLetterMessage, latestDeath } from '../queue/dead-letter.js';
import type { OutDeadLetter } from '../queue/held-dead-letters.js';
import { hasNoArguments, NO_ARGUMENT_SETTINGS, parseQueueArguments, type QueueSettings } from '../queue/queue-arguments.js';
import { EnqueueResult, Queue, type DeadLetterReason, type QueueDeps, type QueueOptions } from '../queue/queue.js';
import type { Message } from '../queue/message.js';
import type { DelayedRecord } from '../store/metadata-store.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import type { MetadataStore } from '../store/metadata-store.js';
import { NO_POLICY, type Policy, type PolicyKind, type PolicyMatch } from '../policy/policy.js';
import { PolicyTable, type PolicyTarget } from '../policy/policy-table.js';
import { effectiveAlternateExchange, effectiveQueueSettings } from '../policy/queue-settings.js';
import { BindingTable, canonicalArgs, type Binding } from './binding-table.js';
import { dedupSpace, hasDiskCache, persistDedupCache } from './dedup-persistence.js';
import { DelayedMessages } from './delayed-messages.js';
import { assertArgsEquivalent, assertFieldEquivalent } from './equivalence.js';
import { Exchange, isExchange, type Destination, type ExchangeOptions } from './exchange.js';
import { defaultVHostMetadata, type VHostMetadata } from './vhost-metadata.js';
import { NO_LIMITS, queueLimitError, type VHostLimits } from './vhost-limits.js';
import { checkStreamDeclare, STREAM_EQUIVALENCE_KEYS } from '../stream/stream-arguments.js';
import { StreamQueue } from '../stream/stream-queue.js';

export type { Binding } from './binding-table.js';

/** What became of a published message (VHost.publish). */
export interface Published {
  /** The message as queued (and as returned to a mandatory publisher): without its BCC header. */
  message: Message;
  /**
   * The queues the message was offered to; empty when it was unroutable. Read it at once: it may
   * be a fanout exchange's own set of bound queues.
   */
  queues: ReadonlySet<Queue>;
  /** Some queue wrote it to the store: a confirm must wait for the store commit. */
  durable: boolean;
  /** Some queue refused it (x-overflow=reject-publish or reject-publish-dlx). */
  rejected: boolean;
  /**
   * An x-message-deduplication exchange held it back as a duplicate: queues may be empty, yet
   * it is not unroutable (no basic.return) and is confirmed.
   */
  duplicate?: boolean;
}

/**
 * The permission checks RabbitMQ makes in the middle of a declare or delete (rabbit_channel's
 * check_configure_permitted, check_read_permitted, check_write_permitted), each throwing its
 * 403 when the user may not. The vhost calls them at the points RabbitMQ does, so refusals come
 * in RabbitMQ's order; without a guard (recovery, internal callers) nothing is checked.
 */
export interface AccessGuard {
  configure(kind: 'queue' | 'exchange', name: string): void;
  write(kind: 'queue' | 'exchange', name: string): void;
  read(kind: 'queue' | 'exchange', name: string): void;
}

export interface ExchangeDeclare extends ExchangeOptions {
  passive: boolean;
  guard?: AccessGuard;
}

export interface QueueDeclare {
  name: string;
  passive: boolean;
  durable: boolean;
  exclusive: boolean;
  autoDelete: boolean;
  arguments: FieldTable;
  /** The declaring connection (owner of an exclusive queue). */
  owner: object;
  guard?: AccessGuard;
}

/** Queue arguments RabbitMQ compares on redeclaration (rabbit_amqqueue:assert_args_equivalence). */
const QUEUE_EQUIVALENCE_KEYS = [
  'x-expires', 'x-message-ttl', 'x-max-length', 'x-max-length-bytes', 'x-max-priority', 'x-overflow',
  'x-dead-letter-exchange', 'x-dead-letter-routing-key', 'x-queue-mode', 'x-single-active-consumer',
] as const;
const EXCHANGE_EQUIVALENCE_KEYS = ['alternate-exchange'] as const;

/** The standard exchanges every RabbitMQ vhost has. */
const STANDARD_EXCHANGES: Array<[string, string]> = [
  ['amq.direct', 'direct'], ['amq.fanout', 'fanout'], ['amq.topic', 'topic'],
  ['amq.headers', 'headers'], ['amq.match', 'headers'],
];
/** The firehose tracer's exchange, present (internal) in every RabbitMQ vhost. */
const TRACE_EXCHANGE = 'amq.rabbitmq.trace';

export interface VHostDeps {
  log: Logger;
  clock: Clock;
  exchangeTypes: ExchangeTypeLookup;
  metadata: MetadataStore;
  queueDeps: Omit<QueueDeps, 'onAutoDelete' | 'deadLetter' | 'dropped' | 'forwardDeadLetter'>;
  nextMessageId: () => number;
  /** The broker's queue churn counters (declared, created, deleted). */
  churn: ChurnCounters;
}

/** A dead-lettering asked for during an offer (VHost.offer). */
interface DeferredDeadLetter {
  queue: Queue;
  entries: QueuedMessage[];
  reason: DeadLetterReason;
}

/** Queues matched against the policies per turn after a policy change (VHost.reapplyQueues). */
export const POLICY_CHUNK = 2000;

/**
 * One virtual host: its exchanges, queues and bindings, and RabbitMQ's rules for declaring,
 * binding and deleting them. The one publish path (route, then enqueue) and routing through
 * exchange-to-exchange bindings and alternate exchanges also live here; the per-type matching
 * is in src/exchange, the binding bookkeeping in BindingTable, delayed messages in
 * DelayedMessages.
 */
export class VHost {
  readonly exchanges = new Map<string, Exchange>();
  readonly queues = new Map<string, Queue>();
  /**
   * A queue has been in this vhost since the broker started: RabbitMQ's statistics then keep
   * the vhost's queue totals (zeros once its last queue is gone), reported in /api/overview.
   */
  hadQueues = false;
  private readonly bindings = new BindingTable();
  private readonly delayed: DelayedMessages;
  readonly defaultExchange: Exchange;
  /** The vhost's policies and operator policies (src/policy). */
  readonly policies: PolicyTable;
  /** The policies that apply to each queue and exchange (absent: none). */
  private readonly applied = new WeakMap<Queue | Exchange, PolicyMatch>();
  /**
   * max-connections and max-queues in force (the vhost-limits runtime parameter; src/parameters
   * sets them). declareQueue checks max-queues; the handshake checks max-connections.
   */
  limits: VHostLimits = NO_LIMITS;
  /**
   * The firehose tracer while tracing is on for this vhost (src/trace; Broker.tracing sets it):
   * the publish and deliver paths copy messages to amq.rabbitmq.trace through it. Unset, it
   * costs them a null check.
   */
  tracer: Tracer | undefined = undefined;
  /** Offers under way (offer): more than one while a deferred dead-lettering publishes. */
  private offering = 0;
  /**
   * Dead-letterings that queues asked for while a message was being offered (drop-head,
   * reject-publish-dlx, expiry), done once it reached every queue (offer).
   */
  private deferredDeadLetters: DeferredDeadLetter[] = [];
  /** What clients publish into this vhost, dead-lettering, and the counts of deleted queues (src/metrics). */
  readonly counters = new VHostCounters();

  constructor(
    readonly name: string,
    private readonly deps: VHostDeps,
    /** Description, tags and default queue type (Broker.putVhost changes them). */
    public metadata: VHostMetadata = defaultVHostMetadata(),
  ) {
    this.policies = new PolicyTable(name, deps.metadata);
    this.delayed = new DelayedMessages(name, deps.clock, deps.metadata, (x, msg, cc) => this.publish(x, msg, cc));
    const builtIn = (name: string, type: string, internal = false): Exchange =>
      this.createExchange({ name, type, durable: true, autoDelete: false, internal, arguments: {} });
    this.defaultExchange = builtIn('', 'direct');
    for (const [name, type] of STANDARD_EXCHANGES) builtIn(name, type);
    builtIn(TRACE_EXCHANGE, 'topic', true);
  }

  private rs(kind: 'queue' | 'exchange', name: string): string {
    return resourceName(kind, name, this.name);
  }

  // ---- exchanges ----------------------------------------------------------------------------

  getExchange(name: string): Exchange {
    const x = this.exchanges.get(name);
    if (!x) throw notFound(`no ${this.rs('exchange', name)}`);
    return x;
  }

  /** The exchange a publish names, if it exists and may be published to (404 / 403, basic.publish's checks). */
  publishableExchange(name: string): Exchange {
    const exchange = this.getExchange(name);
    if (exchange.internal) throw accessRefused(`cannot publish to internal ${this.rs('exchange', name)}`);
    return exchange;
  }

  declareExchange(d: ExchangeDeclare): Exchange {
    if (d.passive) {
      if (d.name === '') throw accessRefused('operation not permitted on the default exchange');
      return this.getExchange(d.name);
    }
    // rabbit_channel checks the type before anything else, and an unknown one is a hard error.
    const type = this.deps.exchangeTypes.get(d.type);
    // rabbit_exchange:check_type: '' is a known atom but no type ("invalid"), others "unknown".
    if (!type) throw commandInvalid(`${d.type === '' ? 'invalid' : 'unknown'} exchange type '${d.type}'`);
    if (d.name === '') throw accessRefused('operation not permitted on the default exchange');
    d.guard?.configure('exchange', d.name);
    const existing = this.exchanges.get(d.name);
    if (existing) {
      const rs = this.rs('exchange', d.name);
      assertFieldEquivalent('type', existing.type.name, d.type, rs);
      assertFieldEquivalent('durable', existing.durable, d.durable, rs);
      assertFieldEquivalent('auto_delete', existing.autoDelete, d.autoDelete, rs);
      assertFieldEquivalent('internal', existing.internal, d.internal, rs);
      assertArgsEquivalent(existing.args, d.arguments, rs, EXCHANGE_EQUIVALENCE_KEYS);
      return existing;
    }
    if (d.name.startsWith('amq.')) throw accessRefused(`exchange name '${d.name}' contains reserved prefix 'amq.*'`);
    const ae = d.arguments['alternate-exchange'];
    if (ae && ae.type !== 'S') {
      throw preconditionFailed(`invalid type '${fieldTypeName(ae.type)}' for arg 'alternate-exchange' in ${this.rs('exchange', d.name)}`);
    }
    if (ae && d.guard) {
      d.guard.read('exchange', d.name);
      d.guard.write('exchange', fieldString(ae) ?? '');
    }
    type.validateDeclareArgs(d.arguments);
    const x = this.createExchange(d);
    if (x.durable) this.deps.metadata.putExchange({
      vhost: this.name, name: x.name, type: d.type, durable: true, autoDelete: x.autoDelete, internal: x.internal,
      arguments: encodeTable(x.args),
    });
    return x;
  }

  /** Creates an exchange without declare's checks (built-in exchanges, recovery). */
  createExchange(options: ExchangeOptions): Exchange {
    const type = this.deps.exchangeTypes.get(options.type);
    if (!type) throw new Error(`exchange type ${options.type} is not registered`);
    const x = new Exchange(this.name, type, options);
    if (hasDiskCache(x)) persistDedupCache(x, this.deps.metadata, this.deps.clock);
    this.exchanges.set(x.name, x);
    this.applyExchangePolicies(x, this.policies.match(EXCHANGE_TARGET, x.name));
    return x;
  }

  deleteExchange(name: string, { ifUnused, guard }: { ifUnused: boolean; guard?: AccessGuard }): void {
    if (name === '') throw accessRefused('operation not permitted on the default exchange');
    if (name.startsWith('amq.')) throw accessRefused(`deletion of system ${this.rs('exchange', name)} not allowed`);
    guard?.configure('exchange', name);
    const x = this.exchanges.get(name);
    if (!x) return;
    if (ifUnused && this.bindings.hasSource(x)) throw preconditionFailed(`${this.rs('exchange', name)} in use`);
    this.removeExchange(x);
  }

  private removeExchange(x: Exchange): void {
    x.deleted = true;
    this.delayed.drop(x);
    this.exchanges.delete(x.name);
    for (const b of this.bindings.from(x)) this.removeBinding(b);
    for (const b of this.bindings.to(x)) this.removeBinding(b);
    if (x.durable) this.deps.metadata.deleteExchange(this.name, x.name);
    if (hasDiskCache(x)) this.deps.metadata.deleteStateSpace(dedupSpace(this.name, x.name));
  }

  // ---- queues -------------------------------------------------------------------------------

  /** Looks a queue up for use by owner: 404 when missing, 405 when another connection owns it. */
  getQueue(name: string, owner: object | null): Queue {
    const q = this.queues.get(name);
    if (!q) throw notFound(`no ${this.rs('queue', name)}`);
    if (owner !== null) this.checkExclusive(q, owner);
    return q;
  }

  private checkExclusive(q: Queue, owner: object): void {
    if (q.exclusiveOwner !== null && q.exclusiveOwner !== owner) throw this.locked(q);
  }

  private locked(q: Queue): ChannelError {
    return resourceLocked(
      `cannot obtain exclusive access to locked ${this.rs('queue', q.name)}. It could be originally declared on another connection or the exclusive property value does not match that of the original declaration.`,
    );
  }

  declareQueue(d: QueueDeclare): Queue {
    if (d.passive) {
      const q = this.getQueue(d.name, d.owner);
      q.touch(); // a declare, even passive, renews an x-expires lease
      return q;
    }
    d = this.withDefaultQueueType(d);
    let name = d.name;
    if (name === '') {
      // rabbit_amqqueue:is_server_named_allowed, before any permission check.
      const type = queueTypeOf(d.arguments);
      if (type === 'quorum' || type === 'stream') throw preconditionFailed(`Cannot declare a server-named queue for type rabbit_${type}_queue`);
      name = `amq.gen-${randomBytes(16).toString('base64url')}`;
    }
    else if (name.startsWith('amq.')) throw accessRefused(`queue name '${name}' contains reserved prefix 'amq.*'`);
    d.guard?.configure('queue', name);
    // rabbit_channel counts a declare here, after the permission check and before the
    // equivalence and argument checks.
    this.deps.churn.queuesDeclared++;
    const durable = d.durable && !d.exclusive;
    const existing = this.queues.get(name);
    if (existing) {
      // rabbit_amqqueue:assert_equivalence checks the owner strictly, then the fields.
      if (existing.exclusiveOwner !== (d.exclusive ? d.owner : null)) throw this.locked(existing);
      const rs = this.rs('queue', name);
      assertFieldEquivalent('durable', existing.durable, durable, rs);
      assertFieldEquivalent('auto_delete', existing.autoDelete, d.autoDelete, rs);
      assertArgsEquivalent(existing.arguments, d.arguments, rs, existing instanceof StreamQueue ? STREAM_EQUIVALENCE_KEYS : QUEUE_EQUIVALENCE_KEYS);
      // x-queue-type is compared with a missing value standing for 'classic'.
      if (queueTypeOf(existing.arguments) !== queueTypeOf(d.arguments)) {
        assertArgsEquivalent(existing.arguments, d.arguments, rs, ['x-queue-type']);
      }
      existing.touch();
      return existing;
    }
    // rabbit_channel enforces the vhost's queue limit on new queues only, after the existence
    // check and before the dead-letter exchange and argument checks.
    const overLimit = queueLimitError(this.name, name, this.limits, this.queues.size);
    if (overLimit) throw overLimit;
    const rs = this.rs('queue', name);
    const dlx = d.arguments['x-dead-letter-exchange'];
    if (dlx && dlx.type !== 'S') {
      throw preconditionFailed(`invalid type '${fieldTypeName(dlx.type)}' for arg 'x-dead-letter-exchange' in ${rs}`);
    }
    if (dlx && d.guard) {
      d.guard.read('queue', name);
      d.guard.write('exchange', fieldString(dlx) ?? '');
    }
    const settings = parseQueueArguments(d.arguments, rs);
    if (settings.queueType === 'quorum') {
      // rabbit_quorum_queue:declare refuses what a replicated queue cannot be.
      if (!d.durable) throw preconditionFailed(`invalid property 'non-durable' for ${rs}`);
      if (d.exclusive) throw preconditionFailed(`invalid property 'exclusive-owner' for ${rs}`);
      if (d.autoDelete) throw preconditionFailed(`invalid property 'auto-delete' for ${rs}`);
    }
    if (settings.queueType === 'stream') checkStreamDeclare(d, settings, rs);
    const q = this.createQueue({ name, durable, exclusiveOwner: d.exclusive ? d.owner : null, autoDelete: d.autoDelete, arguments: d.arguments, settings });
    this.deps.churn.queuesCreated++;
    if (durable) this.deps.metadata.putQueue({ vhost: this.name, name, durable: true, autoDelete: d.autoDelete, arguments: encodeTable(d.arguments) });
    return q;
  }

  /**
   * rabbit_amqqueue:augment_declare_args: a queue declared without x-queue-type gets the vhost's
   * default queue type, when that type can be declared so (quorum and stream queues must be
   * durable, not exclusive, not auto-delete; classic ones can be anything).
   */
  private withDefaultQueueType(d: QueueDeclare): QueueDeclare {
    const type = this.metadata.defaultQueueType;
    if (type === undefined || d.arguments['x-queue-type'] !== undefined) return d;
    if (type !== 'classic' && (!d.durable || d.exclusive || d.autoDelete)) return d;
    return { ...d, arguments: { ...d.arguments, 'x-queue-type': F.str(type) } };
  }

  /** What every queue of this vhost depends on: one object shared by all of them. */
  private sharedQueueDeps: QueueDeps | undefined;
  private get queueDeps(): QueueDeps {
    this.sharedQueueDeps ??= {
      ...this.deps.queueDeps,
      onAutoDelete: (queue) => this.removeQueue(queue),
      deadLetter: (queue, entries, reason) => this.deadLetter(queue, entries, reason),
      dropped: (queue, reason, count) => this.counters.deadLettered.count(queue.isQuorum, 'disabled', reason, count),
      forwardDeadLetter: (queue, out) => this.forwardDeadLetter(queue, out),
    };
    return this.sharedQueueDeps;
  }

  /** Creates a queue without declare's checks (recovery); settings are parsed from the arguments unless given. */
  createQueue(options: Omit<QueueOptions, 'vhost' | 'settings'> & { settings?: QueueSettings }): Queue {
    const args = options.arguments;
    // The resource name is for error messages: not made for the (many) queues without arguments.
    const settings = options.settings ?? (hasNoArguments(args) ? NO_ARGUMENT_SETTINGS : parseQueueArguments(args, this.rs('queue', options.name)));
    const match = this.policies.match(queueTarget(settings), options.name);
    // Resolved even without a policy: a quorum queue turns reject-publish-dlx into drop-head.
    const effective = effectiveQueueSettings(settings, options.arguments, match);
    const full: QueueOptions = {
      name: options.name, durable: options.durable, exclusiveOwner: options.exclusiveOwner, autoDelete: options.autoDelete,
      arguments: args, vhost: this.name, settings, effective,
    };
    const q = settings.queueType === 'stream' ? new StreamQueue(full, this.queueDeps) : new Queue(full, this.queueDeps);
    this.queues.set(q.name, q);
    this.hadQueues = true;
    if (match !== NO_POLICY) this.applied.set(q, match);
    return q;
  }

  deleteQueue(name: string, owner: object, { ifUnused, ifEmpty }: { ifUnused: boolean; ifEmpty: boolean }): number {
    const q = this.queues.get(name);
    if (!q) return 0;
    this.checkExclusive(q, owner);
    // A stream's delete ignores if-unused and if-empty (rabbit_stream_queue:delete/4).
    if (q instanceof StreamQueue) return this.removeQueue(q);
    if (ifUnused && q.consumerCount > 0) throw preconditionFailed(`${this.rs('queue', name)} in use`);
    if (ifEmpty && q.messageCount > 0) throw preconditionFailed(`${this.rs('queue', name)} not empty`);
    return this.removeQueue(q);
  }

  /** Deletes a queue: its bindings, its consumers (told by basic.cancel) and its messages. */
  removeQueue(q: Queue): number {
    if (q.deleted) return 0;
    this.queues.delete(q.name);
    this.deps.churn.queuesDeleted++;
    this.counters.retire(q);
    for (const b of this.bindings.to(q)) this.removeBinding(b);
    if (q.durable) this.deps.metadata.deleteQueue(this.name, q.name);
    return q.destroy();
  }

  /**
   * The vhost is being deleted (Broker.deleteVhost): its policies go, then every queue, with its
   * stored messages (consumers are told by basic.cancel), then every exchange, with its bindings
   * and delayed messages.
   */
  destroy(): void {
    this.policies.clearAll();
    for (const q of [...this.queues.values()]) this.removeQueue(q);
    for (const x of [...this.exchanges.values()]) if (!x.deleted) this.removeExchange(x);
  }

  /** An exclusive queue lives as long as its connection. */
  connectionClosed(owner: object): void {
    for (const q of [...this.queues.values()]) if (q.exclusiveOwner === owner) this.removeQueue(q);
  }

  // ---- policies -----------------------------------------------------------------------------

  /**
   * Sets (adds or replaces) a policy or operator policy validated by validatePolicy, persists
   * it, and re-evaluates every exchange of the vhost at once and its queues a chunk a turn
   * (reapplyQueues). False when an equal policy was already set (then nothing changes, as in
   * RabbitMQ).
   */
  setPolicy(policy: Policy): boolean {
    if (!this.policies.set(policy)) return false;
    this.reapplyPolicies();
    return true;
  }

  /** Deletes a policy or operator policy and re-evaluates; false when there was none of that name. */
  clearPolicy(kind: PolicyKind, name: string): boolean {
    if (!this.policies.clear(kind, name)) return false;
    this.reapplyPolicies();
    return true;
  }

  /** The policy and operator policy that apply to a queue or exchange of this vhost. */
  policiesOf(entity: Queue | Exchange): PolicyMatch {
    return this.applied.get(entity) ?? NO_POLICY;
  }

  /**
   * Matches every queue and exchange against the policies again (rabbit_policy:
   * update_matched_objects): an entity whose policy or operator policy changed takes its new
   * settings now (Queue.applySettings; an exchange its alternate exchange).
   */
  reapplyPolicies(): void {
    for (const x of this.exchanges.values()) {
      const match = this.policies.match(EXCHANGE_TARGET, x.name);
      if (!samePolicies(match, this.policiesOf(x))) this.applyExchangePolicies(x, match);
    }
    // A change made while queues are still being matched starts over with the new policies.
    this.reapplying = this.queues.values();
    this.reapplyQueues();
  }

  /**
   * The queues still to match against the policies since their last change: a live iterator of
   * `queues` (a queue deleted meanwhile is passed over; one declared meanwhile took the
   * policies in force at its declaration).
   */
  private reapplying: Iterator<Queue> | undefined;

  /**
   * Matches POLICY_CHUNK queues, and the rest in later turns (LaterTurns, which settle() waits
   * for): a policy over 100,000 queues held the event loop for 0.4 s. Until a queue's turn it
   * keeps the settings of the policies before.
   */
  private reapplyQueues(): void {
    const left = this.reapplying;
    if (left === undefined) return;
    const later = this.deps.queueDeps.later;
    for (let n = 0; later === undefined || n < POLICY_CHUNK; n++) {
      const next = left.next();
      if (next.done === true) {
        this.reapplying = undefined;
        return;
      }
      const q = next.value;
      const match = this.policies.match(queueTarget(q.declared), q.name);
      if (samePolicies(match, this.policiesOf(q))) continue;
      if (match === NO_POLICY) this.applied.delete(q);
      else this.applied.set(q, match);
      q.applySettings(effectiveQueueSettings(q.declared, q.arguments, match));
    }
    later.schedule(() => {
      if (this.reapplying === left) this.reapplyQueues();
    });
  }

  private applyExchangePolicies(x: Exchange, match: PolicyMatch): void {
    if (match === NO_POLICY) this.applied.delete(x);
    else this.applied.set(x, match);
    // The default exchange routes by queue name only: it has no alternate exchange.
    x.alternateExchange = x.name === '' ? undefined : effectiveAlternateExchange(x.args, match);
  }

  // ---- bindings -----------------------------------------------------------------------------

  /** queue.bind / exchange.bind. */
  bind(source: Exchange, destination: Destination, routingKey: string, given: FieldTable): void {
    if (source === this.defaultExchange || destination === this.defaultExchange) {
      throw accessRefused('operation not permitted on the default exchange');
    }
    const args = canonicalArgs(given);
    if (this.bindings.get(source, destination, routingKey, args)) return;
    source.type.validateBinding(routingKey, args);
    source.router.bind(destination, routingKey, args);
    this.bindings.add({ source, destination, routingKey, args });
    if (source.durable && destination.durable) this.deps.metadata.putBinding(this.bindingRecord(source, destination, routingKey, args));
  }

  /** Every binding of the vhost (the default exchange's implicit ones are not bindings here). */
  listBindings(): Binding[] {
    return this.bindings.all();
  }

  /** Bindings whose source is exchange. */
  bindingsFrom(exchange: Exchange): Binding[] {
    return this.bindings.from(exchange);
  }

  /** Bindings whose destination is d. */
  bindingsTo(d: Destination): Binding[] {
    return this.bindings.to(d);
  }

  /**
   * queue.unbind / exchange.unbind: unbinding what is not bound is fine, as in RabbitMQ.
   * `whenBound` runs (and may throw) only when there is a binding to remove: rabbit_binding:remove
   * checks an exclusive queue's owner only then.
   */
  unbind(source: Exchange, destination: Destination, routingKey: string, args: FieldTable, whenBound?: () => void): void {
    if (source === this.defaultExchange || destination === this.defaultExchange) {
      throw accessRefused('operation not permitted on the default exchange');
    }
    const b = this.bindings.get(source, destination, routingKey, canonicalArgs(args));
    if (!b) return;
    whenBound?.();
    this.removeBinding(b);
  }

  private removeBinding(b: Binding): void {
    if (!this.bindings.delete(b)) return;
    b.source.router.unbind(b.destination, b.routingKey, b.args);
    if (b.source.durable && b.destination.durable) {
      this.deps.metadata.deleteBinding(this.bindingRecord(b.source, b.destination, b.routingKey, b.args));
    }
    // An auto-delete exchange goes when its last binding (as source) goes.
    if (b.source.autoDelete && !b.source.deleted && !this.bindings.hasSource(b.source)) {
      this.removeExchange(b.source);
    }
  }

  private bindingRecord(source: Exchange, destination: Destination, routingKey: string, args: FieldTable) {
    return {
      vhost: this.name, source: source.name, destination: destination.name,
      destinationKind: isExchange(destination) ? ('exchange' as const) : ('queue' as const),
      routingKey, arguments: encodeTable(args),
    };
  }

  /** The default exchange binds every queue by its name. */
  private routeDefault(input: RoutingInput, out: Set<Destination>): void {
    const q = this.queues.get(input.routingKey);
    if (q) out.add(q);
    if (input.ccRoutingKeys) {
      for (const key of input.ccRoutingKeys) {
        const cq = this.queues.get(key);
        if (cq) out.add(cq);
      }
    }
  }

  // ---- delayed messages (x-delayed-message) -------------------------------------------------

  /**
   * Holds msg back for delayMs, then publishes it through exchange. A persistent message on a
   * durable exchange is stored with its absolute due time, so it survives a restart; returns
   * true when a store commit holds it.
   */
  delay(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, delayMs: number): boolean {
    return this.delayed.hold(exchange, msg, ccRoutingKeys, delayMs);
  }

  /** Arms the timer of a delayed message recovered from the store. */
  recoverDelayed(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, record: DelayedRecord): void {
    this.delayed.recover(exchange, msg, ccRoutingKeys, record);
  }

  /** The broker is closing: the timers of its delayed messages and of its queues stop (Queue.stopTimers). */
  stopTimers(): void {
    this.delayed.stop();
    for (const q of this.queues.values()) q.stopTimers();
  }

  // ---- dead-lettering ----------------------------------------------------------------------

  /**
   * Republishes messages that left queue (rejected, expired, maxlen, delivery_limit) to its
   * dead-letter exchange with an updated x-death header (RabbitMQ's dlx guide). A missing DLX
   * drops them, as RabbitMQ does; cycles without a rejection are cut. Queues report every
   * message they drop for these reasons, DLX or not, and all are counted. A quorum queue that
   * dead-letters at least once holds each until the queues reached have taken it
   * (Queue.holdDeadLetter, forwardDeadLetter).
   */
  deadLetter(queue: Queue, entries: QueuedMessage[], reason: DeadLetterReason): void {
    if (this.offering > 0) {
      this.deferredDeadLetters.push({ queue, entries, reason });
      return;
    }
    const dlxName = queue.settings.deadLetterExchange;
    if (dlxName !== undefined && reason !== 'maxlen' && queue.deadLettersAtLeastOnce) {
      // rabbit_fifo_dlx:discard: counted as at_least_once whether the exchange exists or not.
      this.counters.deadLettered.count(true, 'at_least_once', reason, entries.length);
      const now = this.deps.clock.now();
      for (const entry of entries) {
        const { message } = deadLetterMessage(entry.msg, reason, queue.name, dlxName, queue.settings.deadLetterRoutingKey, now, this.deps.nextMessageId());
        queue.holdDeadLetter(message, reason);
      }
      return;
    }
    const dlx = dlxName === undefined ? undefined : this.exchanges.get(dlxName);
    // Counted whether the messages go anywhere or not (strategy at_most_once or disabled).
    this.counters.deadLettered.count(queue.isQuorum, dlx !== undefined ? 'at_most_once' : 'disabled', reason, entries.length);
    if (dlxName === undefined) return;
    if (!dlx) {
      this.deps.log.warn({ queue: queue.name, dlx: dlxName }, 'dead-letter exchange not found; message dropped');
      return;
    }
    const now = this.deps.clock.now();
    for (const entry of entries) {
      const { message, routingKeys } = deadLetterMessage(
        entry.msg, reason, queue.name, dlxName, queue.settings.deadLetterRoutingKey, now, this.deps.nextMessageId(),
      );
      // Cycles are cut unless a rejection happened in them (deadLetterCycle). RabbitMQ 3.10
      // drops what a queue dead-letters into a stream (rabbit_stream_queue:deliver, stateless).
      const admit = (q: Queue) => {
        if (q instanceof StreamQueue) return false;
        const cycle = deadLetterCycle(message, q.name, reason);
        if (cycle === undefined) return true;
        // rabbit_dead_letter:log_cycle_once, in the source queue's process: once per cycle.
        this.warnOnce(queue, `cycle\u0000${cycle.join('\u0000')}`, () =>
          latin1ToText(formatParts(['Message dropped. Dead-letter queues cycle detected: ', { p: queueList(cycle) }, '\nThis cycle will NOT be reported again.'])));
        return false;
      };
      // message.routingKey is routingKeys[0]; the rest are its CC keys.
      this.publish(dlx, message, routingKeys.slice(1), admit);
    }
  }

  /**
   * rabbit_fifo_dlx_worker's forward and redeliver, on one node: routes a dead-letter the queue
   * holds through its dead-letter exchange in force now, with its dead-letter routing key or else
   * the keys of its latest death, and offers it to every queue reached but those that took it
   * already (out.settled) and those a cycle without a rejection cuts; streams take it. True once
   * every queue reached took it, or none is reached now but one took it before (the routes
   * changed); false while the exchange is missing, routes it nowhere, or a queue refused it
   * (x-overflow reject-publish): it stays held. Each taking is counted as confirmed.
   */
  private forwardDeadLetter(queue: Queue, out: OutDeadLetter): boolean {
    const dlxName = queue.settings.deadLetterExchange;
    const dlx = dlxName === undefined ? undefined : this.exchanges.get(dlxName);
    const dlrk = queue.settings.deadLetterRoutingKey;
    if (dlx === undefined) {
      this.warnOnce(queue, `missing\u0000${dlxName}`, () =>
        `Cannot forward any dead-letter messages from source quorum ${this.rs('queue', queue.name)} because its configured dead-letter-exchange ` +
        `${this.rs('exchange', dlxName ?? '')} does not exist. Either create the configured dead-letter-exchange or re-configure the ` +
        'dead-letter-exchange policy for the source quorum queue to prevent dead-lettered messages from piling up in the source quorum queue. ' +
        'This message will not be logged again.');
      return false;
    }
    const keys = dlrk !== undefined ? [dlrk] : latestDeath(out.message).routingKeys;
    // As published to the exchange in force, under the first key (the rest as CC keys).
    if (out.message.exchange !== dlx.name || out.message.routingKey !== keys[0]) {
      out.message = out.message.withProperties(this.deps.nextMessageId(), dlx.name, keys[0] ?? '', out.message.properties);
    }
    const message = out.message;
    const queues = new Set<Queue>();
    this.route(dlx, routingInput(message, keys.length > 1 ? keys.slice(1) : undefined), queues);
    for (const q of queues) {
      if (out.settled?.has(q.name)) {
        queues.delete(q);
        continue;
      }
      const cycle = deadLetterCycle(message, q.name, out.reason);
      if (cycle === undefined) continue;
      queues.delete(q);
      // rabbit_fifo_dlx_worker:log_cycle_once: once per source queue and cycle.
      this.warnOnce(queue, `cycle\u0000${cycle.join('\u0000')}`, () => latin1ToText(formatParts([
        // ~s of the resources' names: their UTF-8 octets, as the ~p terms print theirs.
        Buffer.from(`Dead-letter queues cycle detected for source quorum ${this.rs('queue', queue.name)} with dead-letter exchange ${this.rs('exchange', dlx.name)} and routing keys `, 'utf8').toString('latin1'),
        { p: queueList(keys) }, ': ', { p: queueList(cycle) }, ' This message will not be logged again.',
      ])));
    }
    if (queues.size === 0) {
      const done = out.settled !== undefined;
      if (done) this.counters.deadLettered.confirmed++;
      else {
        this.warnOnce(queue, `no-route\u0000${dlx.name}\u0000${dlrk}`, () =>
          `Cannot forward any dead-letter messages from source quorum ${this.rs('queue', queue.name)} with configured dead-letter-exchange ` +
          `${this.rs('exchange', dlx.name)} and configured dead-letter-routing-key '${dlrk ?? 'undefined'}'. This can happen either if the ` +
          'dead-letter routing topology is misconfigured (for example no queue bound to dead-letter-exchange or wrong dead-letter-routing-key ' +
          'configured) or if non-mirrored classic queues are bound whose host node is down. Fix this issue to prevent dead-lettered messages ' +
          'from piling up in the source quorum queue. This message will not be logged again.');
      }
      return done;
    }
    const refused = new Set<Queue>();
    this.offer(message.withoutBcc(), queues, refused);
    out.lastPublishedAt = this.deps.clock.now();
    for (const q of queues) if (!refused.has(q)) (out.settled ??= new Set()).add(q.name);
    if (refused.size > 0) return false;
    this.counters.deadLettered.confirmed++;
    return true;
  }

  /**
   * What each source queue was warned about (rabbit_fifo_dlx_worker's `logged`, and
   * rabbit_dead_letter's process dictionary for cycles): a warning is logged once per queue and
   * missing exchange, exchange and routing key, or dead-letter cycle.
   */
  private readonly deadLetterWarnings = new WeakMap<Queue, Set<string>>();

  private warnOnce(queue: Queue, key: string, text: () => string): void {
    let warned = this.deadLetterWarnings.get(queue);
    if (warned === undefined) this.deadLetterWarnings.set(queue, (warned = new Set()));
    if (warned.has(key)) return;
    warned.add(key);
    this.deps.log.warn(text());
  }

  // ---- publishing ---------------------------------------------------------------------------

  /**
   * The one publish path (basic.publish, delayed messages when due, dead-lettering): routes msg
   * by its routing key and ccRoutingKeys (and its headers and properties, BCC included) through
   * exchange, then offers it without its BCC header to each queue reached (to those admit
   * accepts, when given).
   */
  publish(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, admit?: (q: Queue) => boolean): Published {
    if (admit === undefined && exchange === this.defaultExchange && ccRoutingKeys === undefined) {
      // To the queue its routing key names (no CC or BCC keys): no routing input, no new set.
      const q = this.queues.get(msg.routingKey);
      if (q !== undefined) return this.offer(msg.withoutBcc(), q.alone);
    } else if (admit === undefined && !this.bindings.hasExchangeDestinations && exchange !== this.defaultExchange) {
      // An exchange bound to queues only whose router has the set at hand: a fanout's, or a
      // direct exchange's for the routing key (without CC or BCC keys), neither matched nor copied.
      const router = exchange.router;
      const all = (router.everyMessage?.() ?? (ccRoutingKeys === undefined ? router.forRoutingKey?.(msg.routingKey) : undefined)) as ReadonlySet<Queue> | undefined;
      if (all !== undefined && all.size > 0) return this.offer(msg.withoutBcc(), all);
    }
    const input = routingInput(msg, ccRoutingKeys);
    const queues = new Set<Queue>();
    this.route(exchange, input, queues);
    if (admit !== undefined) for (const q of queues) if (!admit(q)) queues.delete(q);
    const published = this.offer(msg.withoutBcc(), queues);
    if (input.duplicates !== undefined && queues.size === 0) published.duplicate = true;
    return published;
  }

  /**
   * The names of the queues msg routes to now, for a transaction that enqueues at tx.commit
   * (offer). As in rabbit_exchange:route, the default exchange names queues by the routing keys
   * without looking them up, so a queue declared before the commit still gets the message.
   */
  routeNames(exchange: Exchange, msg: Message, ccRoutingKeys: string[] | undefined, routed?: { duplicate?: boolean }): string[] {
    if (exchange === this.defaultExchange) return [...new Set([msg.routingKey, ...(ccRoutingKeys ?? [])])];
    const input = routingInput(msg, ccRoutingKeys);
    const queues = new Set<Queue>();
    this.route(exchange, input, queues);
    // A deduplication exchange held it back (routed.duplicate): it is not returned at commit.
    if (input.duplicates !== undefined && queues.size === 0 && routed) routed.duplicate = true;
    return [...queues].map((q) => q.name);
  }

  /**
   * Offers a routed message (already without its BCC header) to each of queues. What the queues
   * dead-letter meanwhile (a drop-head queue's head, a reject-publish-dlx queue's refusal) is
   * published once the message reached all of them: in RabbitMQ the channel hands the message to
   * every queue before any queue's dead-lettering publishes, so a dead-lettered copy comes after
   * the message that pushed it out, in every queue the two reach. The queues that refuse it
   * (x-overflow reject-publish) are added to `refused` when given.
   */
  offer(message: Message, queues: ReadonlySet<Queue>, refused?: Set<Queue>): Published {
    let durable = false;
    let rejected = false;
    // Delivered to three queues or more: encoded once for all of them (a second delivery would
    // not repay keeping the frames).
    if (queues.size > 2) message.keepFrames();
    this.offering++;
    try {
      for (const q of queues) {
        const result = q.enqueue(message);
        if (result === EnqueueResult.Durable) durable = true;
        else if (result === EnqueueResult.Rejected) {
          rejected = true;
          refused?.add(q);
        }
      }
    } finally {
      // Nothing allocated per publish: the list is taken only when a queue dead-lettered.
      if (--this.offering === 0 && this.deferredDeadLetters.length > 0) {
        const deferred = this.deferredDeadLetters;
        this.deferredDeadLetters = [];
        // Each publishes as an offer of its own (what it dead-letters in turn waits for it).
        for (const d of deferred) this.deadLetter(d.queue, d.entries, d.reason);
      }
    }
    return { message, queues, durable, rejected };
  }

  // ---- routing ------------------------------------------------------------------------------

  /**
   * Routes through exchange-to-exchange bindings (each exchange visited once, so cycles are
   * harmless and each queue is reached once) and alternate exchanges (used by an exchange that
   * routes nowhere, as rabbit_exchange:route does).
   */
  route(exchange: Exchange, input: RoutingInput, out: Set<Queue>): void {
    if (!this.bindings.hasExchangeDestinations) {
      // No exchange-to-exchange bindings: every destination is a queue.
      const before = out.size;
      if (exchange === this.defaultExchange) this.routeDefault(input, out);
      else exchange.router.route(input, out as Set<Destination>);
      // A duplicate held back by x-message-deduplication goes to no alternate exchange.
      if (out.size > before || exchange.alternateExchange === undefined || input.duplicates !== undefined) return;
    }
    const visited = new Set<Exchange>();
    const pending: Exchange[] = [exchange];
    const dests = new Set<Destination>();
    for (let x = pending.pop(); x !== undefined; x = pending.pop()) {
      if (visited.has(x)) continue;
      visited.add(x);
      dests.clear();
      const duplicates = input.duplicates;
      if (x === this.defaultExchange) this.routeDefault(input, dests);
      else x.router.route(input, dests);
      if (dests.size === 0) {
        if (input.duplicates !== duplicates) continue;
        const aeName = x.alternateExchange;
        const ae = aeName !== undefined ? this.exchanges.get(aeName) : undefined;
        // The default exchange routes by queue name only when published to (rabbit_exchange:route);
        // as an alternate exchange it is a direct exchange without bindings: no route.
        if (ae && ae !== this.defaultExchange) pending.push(ae);
        continue;
      }
      for (const d of dests) {
        if (isExchange(d)) pending.push(d);
        else out.add(d);
      }
    }
  }
}

/** What the exchanges route msg by: its routing key, ccRoutingKeys, headers (BCC included) and properties. */
function routingInput(msg: Message, ccRoutingKeys: string[] | undefined): RoutingInput {
  const properties = msg.properties;
  return { routingKey: msg.routingKey, ccRoutingKeys, headers: properties.headers, properties: properties as Record<string, unknown> };
}

const EXCHANGE_TARGET: PolicyTarget = { kind: 'exchange' };

function queueTarget(settings: QueueSettings): PolicyTarget {
  return { kind: 'queue', queueType: settings.queueType };
}

function samePolicies(a: PolicyMatch, b: PolicyMatch): boolean {
  return a.policy === b.policy && a.operatorPolicy === b.operatorPolicy;
}

function queueTypeOf(args: FieldTable): string {
  return fieldString(args['x-queue-type']) ?? 'classic';
}

/** Names as the Erlang list of binaries RabbitMQ's log lines print with ~p. */
function queueList(names: readonly string[]): ErlTerm {
  return list(names.map((n) => binary(n)));
}
