import type { Clock } from '../clock.js';
import type { BrokerConfig } from '../config.js';
import type { Hooks } from '../hooks.js';
import type { Logger } from '../log.js';
import type { CommitBatcher } from '../queue/commit-batcher.js';
import type { VHost } from '../vhost/vhost.js';
import type { LoginThrottle } from '../login-throttle.js';
import type { ReplyToRegistry } from './direct-reply-to.js';

/** What a connection needs from the broker that accepted it (no singletons: passed in). */
export interface BrokerContext {
  readonly config: BrokerConfig;
  readonly log: Logger;
  readonly clock: Clock;
  readonly vhosts: ReadonlyMap<string, VHost>;
  readonly commits: CommitBatcher;
  readonly replyTo: ReplyToRegistry;
  /** The test toolkit's seams (src/hooks.ts): faults in the publish and confirm paths. */
  readonly hooks: Hooks;
  /** Failed-login back-off per client address (config.loginFailureLimit). */
  readonly loginThrottle: LoginThrottle;
  /** A broker-wide unique message id. */
  nextMessageId(): number;
}
