import { accessRefused, preconditionFailed, resourceName, type ChannelError } from '../errors.js';
import type { AccessControl, CompiledPermissions } from './access-control.js';
import { PermissionPattern } from './permission-pattern.js';
import type { PermissionName } from './records.js';

/** Names that passed a check, per permission, kept until anything changes (bounded). */
const CACHE_LIMIT = 256;

/** No name has passed a check yet (Authorizer.passed). */
function noneYet(): Record<PermissionName, Set<string> | undefined> {
  return { configure: undefined, write: undefined, read: undefined };
}

/** A pattern no routing key matches. */
const NOTHING = new PermissionPattern('(?!)');

/** The exchange a topic check is about: only exchanges of type topic have topic permissions. */
export interface TopicExchangeRef {
  readonly name: string;
  readonly type: { readonly name: string };
}

/**
 * The permission checks of one connection (a user on a vhost), as rabbit_channel makes them
 * (check_configure_permitted, check_write_permitted, check_read_permitted,
 * check_topic_authorisation, check_user_id_header), throwing RabbitMQ's 403 / 406 channel
 * errors. Every name that passed a check is remembered (RabbitMQ keeps a per-channel permission
 * cache for the same reason: basic.publish checks write on every message) until users or
 * permissions change anywhere (AccessControl.generation): a revoked permission applies to the
 * very next operation, also on channels already open.
 */
export class Authorizer {
  private generation = -1;
  private patterns: CompiledPermissions | undefined;
  /**
   * Per permission, made by its first check: a connection that never checks (an idle one) holds
   * no set. Every permission is a field from the start, so that every connection's object has
   * one shape whichever it checked first (keys added as checked would give each order its own,
   * and the compiled publish path would be thrown away for each new one).
   */
  private passed: Record<PermissionName, Set<string> | undefined> = noneYet();
  /** Topic patterns of this user and vhost by exchange, with {username} and {vhost} expanded; null = none. */
  private topics: Map<string, { write: PermissionPattern; read: PermissionPattern } | null> | undefined;
  private impersonator = false;

  constructor(
    private readonly access: AccessControl,
    readonly username: string,
    readonly vhost: string,
    /**
     * The broker's own direct connection without a user (AccessControl.directAuthorizer): every
     * check passes, any user_id too, as for RabbitMQ's rabbit_auth_backend_dummy user.
     */
    private readonly unrestricted = false,
  ) {}

  /** configure on a queue or exchange: declare and delete. */
  configure(kind: 'queue' | 'exchange', name: string): void {
    this.check('configure', kind, name);
  }

  /** write on a queue or exchange: publish, and the destination of a binding. */
  write(kind: 'queue' | 'exchange', name: string): void {
    this.check('write', kind, name);
  }

  /** read on a queue or exchange: consume, get, purge, and the source of a binding. */
  read(kind: 'queue' | 'exchange', name: string): void {
    this.check('read', kind, name);
  }

  /** A publish to a topic exchange: write on the routing key (a no-op for other exchange types). */
  topicWrite(exchange: TopicExchangeRef, routingKey: string): void {
    this.checkTopic('write', exchange, routingKey);
  }

  /** A binding from a topic exchange: read on the binding key (a no-op for other exchange types). */
  topicRead(exchange: TopicExchangeRef, routingKey: string): void {
    this.checkTopic('read', exchange, routingKey);
  }

  /**
   * The user_id property of a published message must name the user who published it, unless
   * that user has the impersonator tag (rabbit_channel:check_user_id_header).
   */
  checkUserId(claimed: string | undefined): void {
    if (claimed === undefined || claimed === this.username || this.unrestricted) return;
    this.refresh();
    checkUserIdHeader(this.username, this.impersonator, claimed);
  }

  private check(permission: PermissionName, kind: 'queue' | 'exchange', name: string): void {
    if (this.unrestricted) return;
    if (this.generation !== this.access.generation) this.refresh();
    const passed = (this.passed[permission] ??= new Set());
    // The default exchange is checked as 'amq.default' (rabbit_access_control), a name no
    // queue can have (amq.* queue names are refused), so one set serves both kinds.
    const checked = kind === 'exchange' && name === '' ? 'amq.default' : name;
    if (passed.has(checked)) return;
    if (!this.patterns?.[permission].test(checked)) throw this.refused(resourceName(kind, checked, this.vhost));
    if (passed.size >= CACHE_LIMIT) passed.clear();
    passed.add(checked);
  }

  private checkTopic(permission: 'write' | 'read', exchange: TopicExchangeRef, routingKey: string): void {
    if (exchange.type.name !== 'topic' || this.unrestricted) return;
    if (this.generation !== this.access.generation) this.refresh();
    const topics = (this.topics ??= new Map());
    let patterns = topics.get(exchange.name);
    if (patterns === undefined) {
      const entry = this.access.topicPermission(this.username, this.vhost, exchange.name);
      patterns = entry ? { write: this.expanded(entry.write), read: this.expanded(entry.read) } : null;
      topics.set(exchange.name, patterns);
    }
    // No topic permission on the exchange: everything is allowed (check_topic_access).
    if (patterns === null || patterns[permission].test(routingKey)) return;
    throw this.refused(`topic '${routingKey}' in exchange '${exchange.name}' in vhost '${this.vhost}'`);
  }

  /** rabbit_auth_backend_internal:expand_topic_permission with the variables of AMQP 0-9-1. */
  private expanded(source: string): PermissionPattern {
    // '' means '^$' before expansion, as in RabbitMQ (PermissionPattern does that).
    try {
      return new PermissionPattern(source.replaceAll('{username}', this.username).replaceAll('{vhost}', this.vhost));
    } catch {
      // A user or vhost name that breaks the pattern (a '(' in it) grants nothing.
      return NOTHING;
    }
  }

  private refused(what: string): ChannelError {
    return accessRefused(`access to ${what} refused for user '${this.username}'`);
  }

  private refresh(): void {
    this.generation = this.access.generation;
    this.patterns = this.access.compiledPermissions(this.username, this.vhost);
    this.impersonator = this.access.tags(this.username).includes('impersonator');
    this.passed = noneYet();
    this.topics = undefined;
  }
}

/**
 * rabbit_channel:check_user_id_header: a message may carry only its publisher's name as
 * user_id, unless the publisher has the impersonator tag. (The management API's publish is
 * checked the same way, for the user logged in over HTTP.)
 */
export function checkUserIdHeader(username: string, impersonator: boolean, claimed: string | undefined): void {
  if (claimed === undefined || claimed === username || impersonator) return;
  throw preconditionFailed(`user_id property set to '${claimed}' but authenticated user was '${username}'`);
}
