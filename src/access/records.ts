/**
 * The shapes of users, permissions and topic permissions: in memory, and as stored under the
 * store's definition kinds 'user', 'permission' and 'topic-permission' (the JSON is RabbitMQ's
 * definitions format, so a definitions export can copy it as it is).
 */
import type { DefinitionRecord } from '../store/metadata-store.js';
import { isHashingAlgorithm, isPasswordHash, type HashingAlgorithm } from './password.js';

/** RabbitMQ's per-user limits (rabbitmqctl set_user_limits); a negative value means no limit. */
export interface UserLimits {
  'max-connections'?: number;
  'max-channels'?: number;
}

export const USER_LIMIT_NAMES = ['max-connections', 'max-channels'] as const;

export interface User {
  readonly name: string;
  /** base64(salt ‖ hash); '' = no password (the user cannot log in with one). Never logged. */
  readonly passwordHash: string;
  readonly hashingAlgorithm: HashingAlgorithm;
  readonly tags: readonly string[];
  readonly limits: Readonly<UserLimits>;
}

/** configure, write and read regular expressions (RabbitMQ's #permission{}). */
export interface Permissions {
  readonly configure: string;
  readonly write: string;
  readonly read: string;
}

export interface PermissionEntry extends Permissions {
  readonly user: string;
  readonly vhost: string;
}

/** write and read regular expressions on routing keys of one topic exchange. */
export interface TopicPermissions {
  readonly write: string;
  readonly read: string;
}

export interface TopicPermissionEntry extends TopicPermissions {
  readonly user: string;
  readonly vhost: string;
  readonly exchange: string;
}

export type PermissionName = 'configure' | 'write' | 'read';

// ---- store keys and values ----------------------------------------------------------------

const SEP = '\u0000';

export const permissionKey = (user: string, vhost: string): string => `${user}${SEP}${vhost}`;
export const topicPermissionKey = (user: string, vhost: string, exchange: string): string => `${user}${SEP}${vhost}${SEP}${exchange}`;

/** A user as RabbitMQ's management API and definitions show one (GET /api/users/NAME). */
export function userJson(u: User): { name: string; password_hash: string; hashing_algorithm: string; tags: string[]; limits: UserLimits } {
  return { name: u.name, password_hash: u.passwordHash, hashing_algorithm: u.hashingAlgorithm, tags: [...u.tags], limits: { ...u.limits } };
}

/** A permission entry as RabbitMQ shows one (GET /api/permissions/VHOST/USER, definitions). */
export function permissionJson(p: PermissionEntry): { user: string; vhost: string; configure: string; write: string; read: string } {
  return { user: p.user, vhost: p.vhost, configure: p.configure, write: p.write, read: p.read };
}

/** A topic permission as RabbitMQ shows one (GET /api/topic-permissions/VHOST/USER, definitions). */
export function topicPermissionJson(p: TopicPermissionEntry): { user: string; vhost: string; exchange: string; write: string; read: string } {
  return { user: p.user, vhost: p.vhost, exchange: p.exchange, write: p.write, read: p.read };
}

export function userDefinition(u: User): DefinitionRecord {
  return { kind: 'user', key: u.name, value: userJson(u) };
}

export function permissionDefinition(p: PermissionEntry): DefinitionRecord {
  return { kind: 'permission', key: permissionKey(p.user, p.vhost), value: permissionJson(p) };
}

export function topicPermissionDefinition(p: TopicPermissionEntry): DefinitionRecord {
  return { kind: 'topic-permission', key: topicPermissionKey(p.user, p.vhost, p.exchange), value: topicPermissionJson(p) };
}

/** The user stored in a definition, or undefined if it is not a well-formed one. */
export function userFromDefinition(value: unknown): User | undefined {
  if (!isObject(value)) return undefined;
  const { name, password_hash: hash, hashing_algorithm: algorithm, tags, limits } = value;
  if (typeof name !== 'string' || !isPasswordHash(hash) || !isHashingAlgorithm(algorithm)) return undefined;
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string')) return undefined;
  const checkedLimits = limits === undefined ? {} : checkUserLimits(limits);
  if (checkedLimits === undefined) return undefined;
  return { name, passwordHash: hash, hashingAlgorithm: algorithm, tags, limits: checkedLimits };
}

export function permissionFromDefinition(value: unknown): PermissionEntry | undefined {
  if (!isObject(value)) return undefined;
  const { user, vhost, configure, write, read } = value;
  if (![user, vhost, configure, write, read].every((v) => typeof v === 'string')) return undefined;
  return { user, vhost, configure, write, read } as PermissionEntry;
}

export function topicPermissionFromDefinition(value: unknown): TopicPermissionEntry | undefined {
  if (!isObject(value)) return undefined;
  const { user, vhost, exchange, write, read } = value;
  if (![user, vhost, exchange, write, read].every((v) => typeof v === 'string')) return undefined;
  return { user, vhost, exchange, write, read } as TopicPermissionEntry;
}

/** Limits as RabbitMQ validates them (integers, only the two known names), or undefined. */
export function checkUserLimits(value: unknown): UserLimits | undefined {
  if (!isObject(value)) return undefined;
  const out: UserLimits = {};
  for (const [k, v] of Object.entries(value)) {
    if (!(USER_LIMIT_NAMES as readonly string[]).includes(k) || !Number.isSafeInteger(v)) return undefined;
    out[k as keyof UserLimits] = v as number;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
