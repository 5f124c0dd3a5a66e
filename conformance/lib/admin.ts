/**
 * What access and limits cases need besides AMQP: creating users, permissions, topic
 * permissions, vhosts and vhost limits on the broker under test, and removing them afterwards.
 * AMQP 0-9-1 has no method for that: HttpAdmin does it over RabbitMQ's management HTTP API
 * (PUT/DELETE /api/users, /api/permissions, /api/topic-permissions, /api/vhosts, PUT
 * /api/vhost-limits), found as the policy cases find it (lib/management.ts: `--mgmt URL`, else
 * the AMQP port + 10000 on the AMQP host; the management URL of a Warren the runner started
 * itself) and logged in to as the AMQP URL's user. This works for RabbitMQ and for Warren alike.
 *
 * Cases that use an admin get unique names from the case context (t.user(), t.vhost()), which
 * the normaliser rewrites like other resource names, and the runner deletes them afterwards
 * (a vhost's limits go with it).
 */
import type { ManagementClient } from './management.js';

export interface Permissions {
  configure: string;
  write: string;
  read: string;
}

/** RabbitMQ's user limits (max-connections, max-channels). */
export type UserLimits = Partial<Record<'max-connections' | 'max-channels', number>>;

export interface BrokerAdmin {
  putUser(name: string, password: string, tags?: string[], limits?: UserLimits): Promise<void>;
  deleteUser(name: string): Promise<void>;
  setPermissions(vhost: string, user: string, p: Permissions): Promise<void>;
  clearPermissions(vhost: string, user: string): Promise<void>;
  setTopicPermissions(vhost: string, user: string, exchange: string, write: string, read: string): Promise<void>;
  putVhost(name: string): Promise<void>;
  deleteVhost(name: string): Promise<void>;
  /** One vhost limit (PUT /api/vhost-limits/{vhost}/{name} {"value": n}); a negative value is no limit. */
  setVhostLimit(vhost: string, name: 'max-connections' | 'max-queues', value: number): Promise<void>;
}

/** RabbitMQ's management HTTP API (through the suite's ManagementClient, lib/management.ts). */
export class HttpAdmin implements BrokerAdmin {
  constructor(private readonly client: ManagementClient) {}

  private async call(method: string, path: string, body?: unknown): Promise<void> {
    const { status, body: answer } = await this.client.request(method, `/api/${path}`, body);
    // 404 on a delete: already gone, which is what was asked.
    if (status >= 300 && !(method === 'DELETE' && status === 404)) throw new Error(`admin ${method} /api/${path}: ${status} ${JSON.stringify(answer)}`);
  }

  putUser(name: string, password: string, tags: string[] = [], limits?: UserLimits): Promise<void> {
    return this.call('PUT', `users/${enc(name)}`, { password, tags: tags.join(','), ...(limits ? { limits } : {}) });
  }
  deleteUser(name: string): Promise<void> {
    return this.call('DELETE', `users/${enc(name)}`);
  }
  setPermissions(vhost: string, user: string, p: Permissions): Promise<void> {
    return this.call('PUT', `permissions/${enc(vhost)}/${enc(user)}`, p);
  }
  clearPermissions(vhost: string, user: string): Promise<void> {
    return this.call('DELETE', `permissions/${enc(vhost)}/${enc(user)}`);
  }
  setTopicPermissions(vhost: string, user: string, exchange: string, write: string, read: string): Promise<void> {
    return this.call('PUT', `topic-permissions/${enc(vhost)}/${enc(user)}`, { exchange, write, read });
  }
  putVhost(name: string): Promise<void> {
    return this.call('PUT', `vhosts/${enc(name)}`, {});
  }
  deleteVhost(name: string): Promise<void> {
    return this.call('DELETE', `vhosts/${enc(name)}`);
  }
  setVhostLimit(vhost: string, name: 'max-connections' | 'max-queues', value: number): Promise<void> {
    return this.call('PUT', `vhost-limits/${enc(vhost)}/${name}`, { value });
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
