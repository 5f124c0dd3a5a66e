/**
 * What access cases need besides AMQP: creating users, permissions, topic permissions and vhosts
 * on the broker under test, and removing them afterwards. AMQP 0-9-1 has no method for that, so
 * an admin is given to the runner:
 *
 * - HttpAdmin, RabbitMQ's management HTTP API (PUT/DELETE /api/users, /api/permissions,
 *   /api/topic-permissions, /api/vhosts). By default at the AMQP port + 10000 on the AMQP host
 *   (the reference script's layout), or at `--admin-url`; it logs in with the AMQP URL's user.
 *   This works for RabbitMQ and for any broker serving that API.
 * - For Warren started in-process by the runner, run.ts passes an admin over the broker's own
 *   public operations (Broker.putVhost/deleteVhost, Broker.access), so the access cases run
 *   without any HTTP server.
 *
 * Cases that use an admin get unique names from the case context (t.user(), t.vhost()), which
 * the normaliser rewrites like other resource names, and the runner deletes them afterwards.
 */
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
}

/** RabbitMQ's management HTTP API. */
export class HttpAdmin implements BrokerAdmin {
  private readonly auth: string;

  constructor(
    private readonly base: string,
    user: string,
    password: string,
  ) {
    this.auth = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  }

  /** The admin of the broker at amqpUrl: adminUrl if given, else http://host:(port + 10000). */
  static forBroker(amqpUrl: string, adminUrl?: string): HttpAdmin {
    const u = new URL(amqpUrl);
    const base = adminUrl ?? `http://${u.hostname}:${Number(u.port || 5672) + 10000}`;
    return new HttpAdmin(base.replace(/\/$/, ''), decodeURIComponent(u.username || 'guest'), decodeURIComponent(u.password || 'guest'));
  }

  private async call(method: string, path: string, body?: unknown): Promise<void> {
    const res = await fetch(`${this.base}/api/${path}`, {
      method,
      headers: { authorization: this.auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    // 404 on a delete: already gone, which is what was asked.
    if (res.status >= 300 && !(method === 'DELETE' && res.status === 404)) throw new Error(`admin ${method} /api/${path}: ${res.status} ${text}`);
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
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
