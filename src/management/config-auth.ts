import { createHash, timingSafeEqual } from 'node:crypto';
import type { BrokerConfig } from '../config.js';
import { isLoopbackAddress } from '../connection/connection.js';
import type { LoginResult, ManagementAuth, ManagementUser } from './auth.js';

/**
 * ManagementAuth over the users of the broker's config (BrokerConfig.users): plain passwords,
 * tags, and a vhost list standing for full permissions in those vhosts (all vhosts without
 * one). The config is read at each call, as the AMQP handshake reads it.
 */
export function configUsersAuth(config: Pick<BrokerConfig, 'users' | 'loopbackUsers'>): ManagementAuth {
  const find = (name: string) => config.users.find((u) => u.username === name);
  const mayAccessVhost = (user: ManagementUser, vhost: string): boolean => {
    const u = find(user.name);
    return u !== undefined && (u.vhosts === undefined || u.vhosts.includes(vhost));
  };
  return {
    login(name: string, password: string, remoteAddress: string): LoginResult {
      const u = find(name);
      if (!u || !samePassword(u.password, password)) return { refusal: 'credentials' };
      if (config.loopbackUsers.includes(name) && !isLoopbackAddress(remoteAddress)) return { refusal: 'loopback' };
      return { user: { name, tags: u.tags ?? [] } };
    },
    mayAccessVhost,
    // A configured user holds every permission in the vhosts it may open.
    mayUseResource: (user, vhost) => mayAccessVhost(user, vhost),
  };
}

/** Compares without leaking the length of the common prefix through timing. */
function samePassword(expected: string, given: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(expected), digest(given));
}
