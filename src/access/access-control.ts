import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Logger } from '../log.js';
import type { DefinitionRecord, MetadataStore } from '../store/metadata-store.js';
import { Authorizer } from './authorizer.js';
import { isLoopbackAddress } from './loopback.js';
import { DEFAULT_HASHING_ALGORITHM, hashPassword, isHashingAlgorithm, isPasswordHash, verifyPassword, type HashingAlgorithm } from './password.js';
import { checkPattern, InvalidPatternError, PermissionPattern } from './permission-pattern.js';
import {
  checkUserLimits, permissionDefinition, permissionFromDefinition, permissionKey, topicPermissionDefinition,
  topicPermissionFromDefinition, topicPermissionKey, userDefinition, userFromDefinition,
  type PermissionEntry, type PermissionName, type Permissions, type TopicPermissionEntry, type TopicPermissions,
  type User, type UserLimits,
} from './records.js';

/**
 * Why a change to users or permissions was refused. `reason` is RabbitMQ's error term where it
 * has one (what its management API answers in `reason`): 'vhost_or_user_not_found',
 * 'both_password_and_password_hash_are_provided', 'not_base64', 'invalid_regexp', ...
 */
export class AccessError extends Error {
  override readonly name = 'AccessError';
  constructor(
    readonly reason: string,
    message: string,
    /** `cause`: for 'invalid_regexp', the InvalidPatternError (pattern, PCRE's message and offset). */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** What putUser sets. Give a plain password, or its hash (and algorithm), or neither (no password). */
export interface UserSpec {
  /** Hashed with the default algorithm (salted SHA-256); never stored or logged as given. */
  password?: string;
  /** A RabbitMQ-format hash (base64); '' = the user has no password. */
  passwordHash?: string;
  /** The algorithm of passwordHash (default rabbit_password_hashing_sha256). */
  hashingAlgorithm?: HashingAlgorithm;
  tags: readonly string[];
  /** Replaces the user's limits; undefined keeps them (a new user has none). */
  limits?: UserLimits;
}

/**
 * The user a direct connection without credentials runs as: RabbitMQ names its
 * rabbit_auth_backend_dummy user `none` (GET /api/connections shows it).
 */
export const DIRECT_USER = 'none';

/** A logged-in user as the management API sees one (its ManagementUser). */
export interface AuthenticatedUser {
  readonly name: string;
  readonly tags: readonly string[];
}

/** Why a login was refused: bad name or password, or a loopback-only user calling from elsewhere. */
export type LoginRefusal = 'credentials' | 'loopback';
export type LoginResult = { user: AuthenticatedUser } | { refusal: LoginRefusal };

export interface AccessControlDeps {
  store: MetadataStore;
  log: Logger;
  /** RabbitMQ's loopback_users: these may only log in from a loopback address. */
  loopbackUsers: readonly string[];
  /** Whether a vhost exists (permissions may only be set in existing vhosts). */
  vhostExists: (vhost: string) => boolean;
  /** A user was deleted: its connections must be closed (RabbitMQ: "user 'x' is deleted"). */
  onUserDeleted?: (username: string) => void;
}

/** One (user, vhost) permission entry with its patterns compiled. */
export interface CompiledPermissions {
  readonly configure: PermissionPattern;
  readonly write: PermissionPattern;
  readonly read: PermissionPattern;
}

/** LMDB's key limit (1978 bytes) less the kind byte: longer keys cannot be stored. */
const MAX_KEY_BYTES = 1977;

/**
 * RabbitMQ's internal users database (rabbit_auth_backend_internal) and access control
 * (rabbit_access_control): users with password hashes, tags and limits; per (user, vhost)
 * configure/write/read permissions; per (user, vhost, exchange) topic permissions. Every change
 * is written to the store's definitions at once (committed with the store's next commit) and
 * bumps `generation`, which tells every Authorizer to drop what it cached.
 *
 * Deny by default: a user reaches a vhost only with a permission entry there, and uses a
 * resource only when the entry's pattern for that permission matches the resource's name.
 */
export class AccessControl {
  private readonly userMap = new Map<string, User>();
  private readonly permissionMap = new Map<string, PermissionEntry>();
  private readonly compiled = new Map<string, CompiledPermissions>();
  private readonly topicMap = new Map<string, TopicPermissionEntry>();
  private gen = 0;

  constructor(private readonly deps: AccessControlDeps) {}

  /** Changes with every change to users, permissions or topic permissions. */
  get generation(): number {
    return this.gen;
  }

  /**
   * Takes the users, permissions and topic permissions among stored definitions (at boot);
   * malformed records are skipped with a warning. Returns how many of each were loaded.
   */
  load(records: readonly DefinitionRecord[]): { users: number; permissions: number; topicPermissions: number } {
    const counts = { users: 0, permissions: 0, topicPermissions: 0 };
    const skip = (r: DefinitionRecord) => this.deps.log.warn({ kind: r.kind, key: r.key.replaceAll('\u0000', ' / ') }, 'skipping a malformed stored definition');
    for (const r of records) {
      if (r.kind === 'user') {
        const u = userFromDefinition(r.value);
        if (!u || u.name !== r.key) skip(r);
        else {
          this.userMap.set(u.name, u);
          counts.users++;
        }
      } else if (r.kind === 'permission') {
        const p = permissionFromDefinition(r.value);
        const c = p && r.key === permissionKey(p.user, p.vhost) ? tryCompile(p) : undefined;
        if (!p || !c) skip(r);
        else {
          this.permissionMap.set(r.key, p);
          this.compiled.set(r.key, c);
          counts.permissions++;
        }
      } else if (r.kind === 'topic-permission') {
        const p = topicPermissionFromDefinition(r.value);
        if (!p || r.key !== topicPermissionKey(p.user, p.vhost, p.exchange) || !validPatterns(p.write, p.read)) skip(r);
        else {
          this.topicMap.set(r.key, p);
          counts.topicPermissions++;
        }
      }
    }
    this.gen++;
    return counts;
  }

  // ---- authentication -----------------------------------------------------------------------

  /**
   * The user whose name and password these are, or undefined (rabbit_auth_backend_internal:
   * an unknown user, a wrong or empty password, a user without a password). Constant-time in
   * the password. The password is never logged.
   */
  authenticate(username: string, password: string): User | undefined {
    const user = this.userMap.get(username);
    if (!user) return undefined;
    return verifyPassword(password, user.passwordHash, user.hashingAlgorithm) ? user : undefined;
  }

  /** RabbitMQ's loopback_users rule: whether username may log in from remoteAddress. */
  loopbackAllows(username: string, remoteAddress: string): boolean {
    return !this.deps.loopbackUsers.includes(username) || isLoopbackAddress(remoteAddress);
  }

  /**
   * The password of the broker's own direct connections: a shovel's `amqp://` without a host,
   * which RabbitMQ opens inside the node (rabbit_direct) and Warren over its direct listener.
   * Random for this process; never stored, logged or shown.
   */
  readonly directSecret = randomBytes(32).toString('base64url');

  /** Whether password is this process's direct secret (constant time). */
  isDirectSecret(password: string): boolean {
    const given = Buffer.from(password);
    const secret = Buffer.from(this.directSecret);
    return given.length === secret.length && timingSafeEqual(given, secret);
  }

  /** A password login from remoteAddress, as the management API checks HTTP basic auth. */
  login(username: string, password: string, remoteAddress: string): LoginResult {
    const user = this.authenticate(username, password);
    if (!user) return { refusal: 'credentials' };
    if (!this.loopbackAllows(username, remoteAddress)) return { refusal: 'loopback' };
    return { user: { name: user.name, tags: user.tags } };
  }

  // ---- users --------------------------------------------------------------------------------

  user(name: string): User | undefined {
    return this.userMap.get(name);
  }

  hasUser(name: string): boolean {
    return this.userMap.has(name);
  }

  /** A user's tags (administrator, monitoring, policymaker, management, impersonator, ...). */
  tags(name: string): readonly string[] {
    return this.userMap.get(name)?.tags ?? [];
  }

  /** Every user, by name. */
  users(): User[] {
    return [...this.userMap.values()].sort(byName);
  }

  /**
   * Creates or updates a user, as rabbit_auth_backend_internal:put_user does: a plain password
   * is hashed (salted SHA-256); a hash is taken as it is; with neither, a new user has no
   * password and an existing one loses its password. Limits undefined keep the user's.
   */
  putUser(name: string, spec: UserSpec): 'created' | 'updated' {
    checkKey('user', name);
    if (spec.password !== undefined && spec.passwordHash !== undefined) {
      throw new AccessError('both_password_and_password_hash_are_provided', 'give a password or a password hash, not both');
    }
    let passwordHash = '';
    let hashingAlgorithm: HashingAlgorithm = DEFAULT_HASHING_ALGORITHM;
    const existing = this.userMap.get(name);
    if (spec.password !== undefined) {
      passwordHash = hashPassword(spec.password);
    } else if (spec.passwordHash !== undefined) {
      if (!isPasswordHash(spec.passwordHash)) throw new AccessError('not_base64', 'password_hash is not base64');
      passwordHash = spec.passwordHash;
      if (spec.hashingAlgorithm !== undefined) {
        if (!isHashingAlgorithm(spec.hashingAlgorithm)) {
          throw new AccessError('invalid_hashing_algorithm', `unknown hashing algorithm '${String(spec.hashingAlgorithm)}'`);
        }
        hashingAlgorithm = spec.hashingAlgorithm;
      }
    } else if (!existing) {
      // RabbitMQ creates such a user with the hash of an empty password, which no login matches.
      passwordHash = hashPassword('');
    }
    const tags = spec.tags.map((t) => t.trim()).filter((t) => t !== '');
    let limits: UserLimits = existing?.limits ?? {};
    if (spec.limits !== undefined) {
      const checked = checkUserLimits(spec.limits);
      if (!checked) throw new AccessError('invalid_user_limits', 'user limits are max-connections and max-channels, integers');
      limits = checked;
    }
    const user: User = { name, passwordHash, hashingAlgorithm, tags, limits };
    this.deps.store.putDefinition(userDefinition(user));
    this.userMap.set(name, user);
    this.changed();
    this.deps.log.info({ user: name, tags }, existing ? 'user updated' : 'user created');
    return existing ? 'updated' : 'created';
  }

  /** Sets (or, with a negative value, lifts) one of a user's limits. */
  setUserLimit(name: string, limit: keyof UserLimits, value: number): void {
    const u = this.requireUser(name);
    this.replaceUser({ ...u, limits: requireLimits({ ...u.limits, [limit]: value }) });
  }

  /** Clears one of a user's limits, or all of them. */
  clearUserLimits(name: string, limit: keyof UserLimits | 'all' = 'all'): void {
    const u = this.requireUser(name);
    const limits = { ...u.limits };
    if (limit === 'all') for (const k of Object.keys(limits)) delete limits[k as keyof UserLimits];
    else delete limits[limit];
    this.replaceUser({ ...u, limits });
  }

  /**
   * Deletes a user with its permissions and topic permissions; its connections are closed
   * (onUserDeleted). Returns false if there was no such user.
   */
  deleteUser(name: string): boolean {
    if (!this.userMap.has(name)) return false;
    for (const p of this.permissions({ user: name })) this.removePermission(p.user, p.vhost);
    for (const p of this.topicPermissions({ user: name })) this.removeTopicPermission(p.user, p.vhost, p.exchange);
    this.deps.store.deleteDefinition('user', name);
    this.userMap.delete(name);
    this.changed();
    this.deps.log.info({ user: name }, 'user deleted');
    this.deps.onUserDeleted?.(name);
    return true;
  }

  // ---- permissions --------------------------------------------------------------------------

  permission(user: string, vhost: string): PermissionEntry | undefined {
    return this.permissionMap.get(permissionKey(user, vhost));
  }

  /** Permission entries, optionally of one user and/or in one vhost, by user then vhost. */
  permissions(filter: { user?: string; vhost?: string } = {}): PermissionEntry[] {
    return [...this.permissionMap.values()]
      .filter((p) => (filter.user === undefined || p.user === filter.user) && (filter.vhost === undefined || p.vhost === filter.vhost))
      .sort((a, b) => cmp(a.user, b.user) || cmp(a.vhost, b.vhost));
  }

  /** rabbit_auth_backend_internal:set_permissions: the user and vhost must exist, the patterns compile. */
  setPermission(user: string, vhost: string, perms: Permissions): void {
    this.requireUserAndVhost(user, vhost);
    const entry: PermissionEntry = { user, vhost, configure: perms.configure, write: perms.write, read: perms.read };
    const compiled = compileOrThrow(entry);
    const key = permissionKey(user, vhost);
    checkKey('permission', key);
    this.deps.store.putDefinition(permissionDefinition(entry));
    this.permissionMap.set(key, entry);
    this.compiled.set(key, compiled);
    this.changed();
  }

  /** Removes a user's permissions in a vhost; returns false if there were none. */
  clearPermission(user: string, vhost: string): boolean {
    if (!this.removePermission(user, vhost)) return false;
    this.changed();
    return true;
  }

  /** RabbitMQ's check_vhost_access: the user holds a permission entry in vhost (which exists). */
  mayAccessVhost(user: string | AuthenticatedUser, vhost: string): boolean {
    return this.deps.vhostExists(vhost) && this.permissionMap.has(permissionKey(nameOf(user), vhost));
  }

  /**
   * RabbitMQ's check_resource_access: the user's pattern for permission matches the resource's
   * name (the default exchange is named 'amq.default' here, as in rabbit_access_control).
   */
  mayUseResource(user: string | AuthenticatedUser, vhost: string, resource: { kind: 'queue' | 'exchange'; name: string }, permission: PermissionName): boolean {
    const c = this.compiledPermissions(nameOf(user), vhost);
    return c !== undefined && c[permission].test(permissionResourceName(resource.kind, resource.name));
  }

  /** The compiled patterns of (user, vhost), or undefined when the user has no entry there. */
  compiledPermissions(user: string, vhost: string): CompiledPermissions | undefined {
    return this.compiled.get(permissionKey(user, vhost));
  }

  // ---- topic permissions --------------------------------------------------------------------

  topicPermission(user: string, vhost: string, exchange: string): TopicPermissionEntry | undefined {
    return this.topicMap.get(topicPermissionKey(user, vhost, exchange));
  }

  /** Topic permission entries, optionally of one user and/or in one vhost, by user, vhost, exchange. */
  topicPermissions(filter: { user?: string; vhost?: string } = {}): TopicPermissionEntry[] {
    return [...this.topicMap.values()]
      .filter((p) => (filter.user === undefined || p.user === filter.user) && (filter.vhost === undefined || p.vhost === filter.vhost))
      .sort((a, b) => cmp(a.user, b.user) || cmp(a.vhost, b.vhost) || cmp(a.exchange, b.exchange));
  }

  /** rabbit_auth_backend_internal:set_topic_permissions on one exchange. */
  setTopicPermission(user: string, vhost: string, exchange: string, perms: TopicPermissions): void {
    this.requireUserAndVhost(user, vhost);
    for (const source of [perms.write, perms.read]) {
      try {
        checkPattern(source);
      } catch (err) {
        throw new AccessError('invalid_regexp', (err as Error).message, { cause: err });
      }
    }
    const entry: TopicPermissionEntry = { user, vhost, exchange, write: perms.write, read: perms.read };
    const key = topicPermissionKey(user, vhost, exchange);
    checkKey('topic-permission', key);
    this.deps.store.putDefinition(topicPermissionDefinition(entry));
    this.topicMap.set(key, entry);
    this.changed();
  }

  /** Removes a user's topic permissions in a vhost, on one exchange or (exchange undefined) all. */
  clearTopicPermissions(user: string, vhost: string, exchange?: string): boolean {
    const targets = exchange !== undefined ? [this.topicPermission(user, vhost, exchange)].filter((p) => p !== undefined) : this.topicPermissions({ user, vhost });
    for (const p of targets) this.removeTopicPermission(p.user, p.vhost, p.exchange);
    if (targets.length > 0) this.changed();
    return targets.length > 0;
  }

  // ---- vhosts -------------------------------------------------------------------------------

  /** A vhost is going away: every permission and topic permission in it goes first (rabbit_vhost:delete). */
  vhostDeleted(vhost: string): void {
    for (const p of this.permissions({ vhost })) this.removePermission(p.user, p.vhost);
    for (const p of this.topicPermissions({ vhost })) this.removeTopicPermission(p.user, p.vhost, p.exchange);
    this.changed();
  }

  /** The checks of one connection: username on vhost, with a cache for the publish path. */
  authorizer(username: string, vhost: string): Authorizer {
    return new Authorizer(this, username, vhost);
  }

  /** The checks of a direct connection without a user (DIRECT_USER): every one passes. */
  directAuthorizer(vhost: string): Authorizer {
    return new Authorizer(this, DIRECT_USER, vhost, true);
  }

  // ---- internals ----------------------------------------------------------------------------

  private changed(): void {
    this.gen++;
  }

  private removePermission(user: string, vhost: string): boolean {
    const key = permissionKey(user, vhost);
    if (!this.permissionMap.delete(key)) return false;
    this.compiled.delete(key);
    this.deps.store.deleteDefinition('permission', key);
    return true;
  }

  private removeTopicPermission(user: string, vhost: string, exchange: string): void {
    const key = topicPermissionKey(user, vhost, exchange);
    if (this.topicMap.delete(key)) this.deps.store.deleteDefinition('topic-permission', key);
  }

  private requireUser(name: string): User {
    const u = this.userMap.get(name);
    if (!u) throw new AccessError('no_such_user', `no user '${name}'`);
    return u;
  }

  private requireUserAndVhost(user: string, vhost: string): void {
    if (!this.userMap.has(user) || !this.deps.vhostExists(vhost)) {
      throw new AccessError('vhost_or_user_not_found', `no user '${user}' or no vhost '${vhost}'`);
    }
  }

  private replaceUser(user: User): void {
    this.deps.store.putDefinition(userDefinition(user));
    this.userMap.set(user.name, user);
    this.changed();
  }
}

/** The name a resource's permission is checked against: the default exchange is 'amq.default'. */
export function permissionResourceName(kind: 'queue' | 'exchange', name: string): string {
  return kind === 'exchange' && name === '' ? 'amq.default' : name;
}

function nameOf(user: string | AuthenticatedUser): string {
  return typeof user === 'string' ? user : user.name;
}

function compileOrThrow(p: Permissions): CompiledPermissions {
  try {
    return { configure: new PermissionPattern(p.configure), write: new PermissionPattern(p.write), read: new PermissionPattern(p.read) };
  } catch (err) {
    if (err instanceof InvalidPatternError) throw new AccessError('invalid_regexp', err.message, { cause: err });
    throw err;
  }
}

function tryCompile(p: Permissions): CompiledPermissions | undefined {
  try {
    return compileOrThrow(p);
  } catch {
    return undefined;
  }
}

function validPatterns(...sources: string[]): boolean {
  try {
    for (const s of sources) checkPattern(s);
    return true;
  } catch {
    return false;
  }
}

function requireLimits(limits: unknown): UserLimits {
  const checked = checkUserLimits(limits);
  if (!checked) throw new AccessError('invalid_user_limits', 'user limits are max-connections and max-channels, integers');
  return checked;
}

function checkKey(kind: string, key: string): void {
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw new AccessError('name_too_long', `${kind} name longer than ${MAX_KEY_BYTES} bytes`);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byName(a: { name: string }, b: { name: string }): number {
  return cmp(a.name, b.name);
}
