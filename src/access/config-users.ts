/**
 * The users of the config file (BrokerConfig.users): checked and hashed when the config is
 * resolved, so no plain password outlives reading it, and created on a blank data dir only.
 *
 * A config's users and vhosts play the part of RabbitMQ's default_user / default_vhost: they
 * seed a node whose store holds no users and no vhosts yet (a new data dir, or every start
 * without one). Once the store has users or vhosts, the store is the truth and the config's
 * lists are not applied again: a user deleted through the management API stays deleted, a
 * password changed there stays changed. Config entries the store lacks are named in a log
 * line, so an operator who edits the config of a running node sees why nothing changed.
 */
import type { UserConfig } from '../config.js';
import type { Logger } from '../log.js';
import type { AccessControl } from './access-control.js';
import { hashPassword, isHashingAlgorithm, isPasswordHash, DEFAULT_HASHING_ALGORITHM } from './password.js';
import type { Permissions } from './records.js';

/** Full permissions: what `vhosts` in a config user grants (RabbitMQ's default_permissions). */
export const FULL_PERMISSIONS: Permissions = { configure: '.*', write: '.*', read: '.*' };

/** The tags of a config user without `tags`: guest is an administrator, as RabbitMQ's default user. */
export function defaultTags(username: string): string[] {
  return username === 'guest' ? ['administrator'] : [];
}

/**
 * Config users as the broker keeps them: a plain `password` replaced by its salted hash
 * (`passwordHash`, `hashingAlgorithm`), everything checked. Throws on a malformed entry.
 */
export function hashConfigUsers(users: readonly UserConfig[]): UserConfig[] {
  return users.map((u, i) => {
    const where = `users[${i}]`;
    if (typeof u !== 'object' || u === null || typeof u.username !== 'string' || u.username === '') {
      throw new Error(`${where}: a user needs a username`);
    }
    const { password, ...rest } = u;
    if (password !== undefined && u.passwordHash !== undefined) throw new Error(`${where} (${u.username}): give password or passwordHash, not both`);
    if (password !== undefined && typeof password !== 'string') throw new Error(`${where} (${u.username}): password must be a string`);
    if (u.passwordHash !== undefined && !isPasswordHash(u.passwordHash)) throw new Error(`${where} (${u.username}): passwordHash must be base64`);
    if (u.hashingAlgorithm !== undefined && !isHashingAlgorithm(u.hashingAlgorithm)) {
      throw new Error(`${where} (${u.username}): hashingAlgorithm must be rabbit_password_hashing_sha256, _sha512 or _md5`);
    }
    if (u.tags !== undefined && !(Array.isArray(u.tags) && u.tags.every((t) => typeof t === 'string'))) throw new Error(`${where} (${u.username}): tags must be strings`);
    if (u.vhosts !== undefined && !(Array.isArray(u.vhosts) && u.vhosts.every((v) => typeof v === 'string'))) throw new Error(`${where} (${u.username}): vhosts must be strings`);
    for (const [vhost, p] of Object.entries(u.permissions ?? {})) {
      if (typeof p !== 'object' || p === null || !['configure', 'write', 'read'].every((k) => typeof (p as unknown as Record<string, unknown>)[k] === 'string')) {
        throw new Error(`${where} (${u.username}): permissions['${vhost}'] needs configure, write and read patterns`);
      }
    }
    if (password === undefined) return { ...rest };
    return { ...rest, passwordHash: hashPassword(password), hashingAlgorithm: DEFAULT_HASHING_ALGORITHM };
  });
}

/**
 * Creates the config's users on a blank store, with their tags and permissions: `permissions`
 * as given, plus full permissions on each of `vhosts`; a user with neither gets full
 * permissions on every configured vhost. Vhosts must exist already.
 */
export function seedConfigUsers(users: readonly UserConfig[], vhosts: readonly string[], access: AccessControl, log: Logger): void {
  for (const u of users) {
    access.putUser(u.username, {
      passwordHash: u.passwordHash,
      hashingAlgorithm: u.hashingAlgorithm,
      tags: u.tags ?? defaultTags(u.username),
    });
    const grants = new Map<string, Permissions>();
    for (const vhost of u.vhosts ?? (u.permissions ? [] : vhosts)) grants.set(vhost, FULL_PERMISSIONS);
    for (const [vhost, p] of Object.entries(u.permissions ?? {})) grants.set(vhost, p);
    for (const [vhost, p] of grants) {
      if (!vhosts.includes(vhost)) {
        log.warn({ user: u.username, vhost }, `config user '${u.username}': vhost '${vhost}' is not among the configured vhosts; no permissions there`);
        continue;
      }
      access.setPermission(u.username, vhost, p);
    }
  }
}

/** On a store that already has users and vhosts: names the config entries it does not have. */
export function reportUnappliedConfig(users: readonly UserConfig[], vhosts: readonly string[], access: AccessControl, hasVhost: (name: string) => boolean, log: Logger): void {
  const missingUsers = users.filter((u) => !access.hasUser(u.username)).map((u) => u.username);
  const missingVhosts = vhosts.filter((v) => !hasVhost(v));
  if (missingUsers.length === 0 && missingVhosts.length === 0) return;
  log.info(
    { users: missingUsers, vhosts: missingVhosts },
    'config users and vhosts seed a new data dir only; these are not in the data dir and were not created (use the management API or a definitions file)',
  );
}
