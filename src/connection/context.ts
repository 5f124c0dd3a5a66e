import type { Clock } from '../clock.js';
import type { BrokerConfig } from '../config.js';
import type { Hooks } from '../hooks.js';
import type { Logger } from '../log.js';
import type { BrokerMetrics } from '../metrics/broker-metrics.js';
import type { NodeIdentity } from '../node-name.js';
import type { CommitBatcher } from '../queue/commit-batcher.js';
import type { VHost } from '../vhost/vhost.js';
import type { LoginThrottle } from '../login-throttle.js';
import type { AccessControl } from '../access/access-control.js';
import type { Connection } from './connection.js';
import type { Heartbeats } from './heartbeats.js';
import type { ReadCoalescing } from './read-coalescing.js';
import type { ReplyToRegistry } from './direct-reply-to.js';
import type { LaterTurns } from '../later-turns.js';

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
  /** Churn and login counters, and identifiers for per-object metrics (src/metrics). */
  readonly metrics: BrokerMetrics;
  /** The node and cluster names (connection.start's cluster_name). */
  readonly identity: NodeIdentity;
  /** Failed-login back-off per client address (config.loginFailureLimit). */
  readonly loginThrottle: LoginThrottle;
  /** Users, permissions and topic permissions: logins and every permission check. */
  readonly access: AccessControl;
  /** Every open connection (user limits count a user's connections and channels). */
  readonly connections: ReadonlySet<Connection>;
  /** The heartbeat checks of every connection (one timer per interval, not per connection). */
  readonly heartbeats: Heartbeats;
  /** Where work too large for one turn goes on (an ack of many deliveries: Channel.ackTag). */
  readonly later: LaterTurns;
  /** Naps of the event loop while clients stream small writes (config.readCoalescingMicros); undefined when off. */
  readonly readCoalescing: ReadCoalescing | undefined;
  /** A connection got past connection.open (counted; blocked by the alarm in force, if any). */
  connectionOpened(conn: Connection): void;
  /** A connection's socket closed (counted; it leaves `connections`). */
  connectionClosed(conn: Connection): void;
  /** Octets read from a client, once its connection has handled them (the memory monitor's input check). */
  noteInput(bytes: number): void;
  /** A broker-wide unique message id. */
  nextMessageId(): number;
}
