/**
 * The management API's one seam to authentication and authorisation. The server asks a
 * ManagementAuth who is calling (HTTP basic auth) and what they may touch; it never reads users
 * or permissions itself. The broker's AccessControl (src/access) implements it.
 */

/** A logged-in user, as RabbitMQ's #user{} reaches the management plugin. */
export interface ManagementUser {
  readonly name: string;
  /** RabbitMQ's user tags: administrator, monitoring, policymaker, management, or others. */
  readonly tags: readonly string[];
}

/**
 * Why a login was refused: wrong name or password (RabbitMQ's "Login failed"), or a user of
 * loopback_users calling from another host ("User can only log in via localhost").
 */
export type LoginRefusal = 'credentials' | 'loopback';

export type LoginResult = { user: ManagementUser } | { refusal: LoginRefusal };

/** RabbitMQ's three resource permissions. */
export type Permission = 'configure' | 'write' | 'read';

export interface ResourceRef {
  kind: 'queue' | 'exchange';
  name: string;
}

export interface ManagementAuth {
  /** Checks a name and password sent by a client at remoteAddress (the socket's peer address). */
  login(name: string, password: string, remoteAddress: string): LoginResult;
  /** The user may open vhost (RabbitMQ's check_vhost_access: it holds permissions there). */
  mayAccessVhost(user: ManagementUser, vhost: string): boolean;
  /** The user holds permission on the resource in vhost (RabbitMQ's check_resource_access). */
  mayUseResource(user: ManagementUser, vhost: string, resource: ResourceRef, permission: Permission): boolean;
}

// rabbit_mgmt_util's tag rules: each tag grants what the ones below it do.
const has = (user: ManagementUser, tags: string[]) => user.tags.some((t) => tags.includes(t));
export const isAdmin = (u: ManagementUser): boolean => has(u, ['administrator']);
export const isMonitor = (u: ManagementUser): boolean => has(u, ['administrator', 'monitoring']);
export const isPolicymaker = (u: ManagementUser): boolean => has(u, ['administrator', 'policymaker']);
export const isManagementUser = (u: ManagementUser): boolean => has(u, ['administrator', 'monitoring', 'policymaker', 'management']);
