import type { Broker } from '../broker.js';
import type { Connection } from '../connection/connection.js';
import type { ConnectionWatcher, QueueWatcher } from '../hooks.js';
import type { Queue } from '../queue/queue.js';
import type { QueuedMessage } from '../queue/queued-message.js';
import {
  clientConnectionName, connectionInfo, inspectedMessage, type ConnectionInfo, type InspectedMessage, type Inspector, type QueueInfo,
} from './inspect.js';

/** How long to wait, in real milliseconds (default: Until.defaultTimeout), and in which vhost (default '/'). */
export interface WaitOptions {
  vhost?: string;
  timeout?: number;
}

interface Waiter<T> {
  /**
   * Checks the condition; resolves (and returns true) when it holds. A queue watcher passes the
   * queue that changed (it may not be in its vhost's table yet: a queue reports its creation).
   */
  check(queue?: Queue): boolean;
  reject(err: Error): void;
  resolve(value: T): void;
}

/**
 * broker.until: promises that broker events resolve — never a poll. Each condition is checked
 * at once, then again whenever the broker reports a change that could make it true (src/hooks.ts:
 * a queue's counts, a message enqueued, a connection opened). Each wait has a timeout in real
 * time (a FakeClock does not move it) that rejects with what was still awaited and what the
 * broker had instead. While nothing waits, the broker's hooks are unset.
 */
export class Until {
  /** The timeout of a wait that gives none, in real ms: shorter than mocha's, jest's and vitest's defaults. */
  defaultTimeout = 1500;
  /** Waiters on a queue's state, by queue store key (vhost NUL name). */
  private readonly queueWaiters = new Map<string, Set<Waiter<QueueInfo>>>();
  /** Waiters for a message routed to a queue, by queue store key. */
  private readonly routedWaiters = new Map<string, Set<(queue: Queue, entry: QueuedMessage) => void>>();
  private readonly connectionWaiters = new Set<Waiter<ConnectionInfo>>();
  /** How to reject each wait still pending. */
  private readonly pending = new Set<(err: Error) => void>();

  private readonly queueWatcher: QueueWatcher = {
    changed: (queue) => {
      const waiters = this.queueWaiters.get(queue.storeKey);
      if (waiters) for (const w of [...waiters]) w.check(queue);
    },
    enqueued: (queue, entry) => {
      const waiters = this.routedWaiters.get(queue.storeKey);
      if (waiters) for (const w of [...waiters]) w(queue, entry);
    },
  };

  private readonly connectionWatcher: ConnectionWatcher = {
    opened: () => {
      for (const w of [...this.connectionWaiters]) w.check();
    },
  };

  constructor(
    private readonly broker: Broker,
    private readonly inspect: Inspector,
  ) {}

  /**
   * Resolves with the queue's state once predicate holds for it (checked now and after every
   * change of its counts); a queue that does not exist never satisfies it. description says
   * what is awaited in the timeout's message ("to <description>").
   */
  queue(queue: string, predicate: (q: QueueInfo) => boolean, options: WaitOptions & { description?: string } = {}): Promise<QueueInfo> {
    return this.onQueue('queue', queue, predicate, options.description ?? 'satisfy the given predicate', options);
  }

  /** Resolves once the queue holds at least n ready messages (queue.declare-ok's message_count). */
  queueLength(queue: string, n: number, options: WaitOptions = {}): Promise<QueueInfo> {
    return this.onQueue('queueLength', queue, (q) => q.ready >= n, `hold at least ${n} ready message(s)`, options);
  }

  /** Resolves once the queue has no ready and no unacknowledged messages. */
  queueDrained(queue: string, options: WaitOptions = {}): Promise<QueueInfo> {
    return this.onQueue('queueDrained', queue, (q) => q.ready === 0 && q.unacked === 0, 'be drained (no ready and no unacknowledged messages)', options);
  }

  /** Resolves once the queue has exactly n consumers. */
  consumerCount(queue: string, n: number, options: WaitOptions = {}): Promise<QueueInfo> {
    return this.onQueue('consumerCount', queue, (q) => q.consumers === n, `have ${n} consumer(s)`, options);
  }

  /**
   * Resolves with the next message routed to the queue (and accepted by it) from now on — one
   * that match accepts, when given. Messages already in the queue do not count: start waiting
   * before the publish (`const routed = until.routed('q'); publish(); await routed`).
   */
  routed(queue: string, options: WaitOptions & { match?: (m: InspectedMessage) => boolean } = {}): Promise<InspectedMessage> {
    const vhost = this.inspect.vhost(options.vhost);
    const key = storeKey(vhost.name, queue);
    let seen = 0;
    return this.wait<InspectedMessage>(options, (settle) => {
      const waiter = (_q: Queue, entry: QueuedMessage): void => {
        const m = inspectedMessage(entry);
        seen++;
        let matched: boolean;
        try {
          matched = options.match ? options.match(m) : true;
        } catch (err) {
          settle.reject(err as Error);
          return;
        }
        if (matched) settle.resolve(m);
      };
      add(this.routedWaiters, key, waiter);
      this.updateHooks();
      return {
        stop: () => {
          remove(this.routedWaiters, key, waiter);
          this.updateHooks();
        },
        describe: () => `until.routed('${queue}'): still waiting after ${this.ms(options)} ms for a message routed to queue '${queue}' in vhost '${vhost.name}'` +
          (options.match ? ` that the given match accepts (${seen} arrived, none matched)` : ' (none arrived)'),
      };
    });
  }

  /**
   * Resolves once a connection whose client gave this connection_name (a client property, as
   * amqplib's `clientProperties: { connection_name }`) is open — at once if one is.
   */
  connection(connectionName: string, options: Omit<WaitOptions, 'vhost'> = {}): Promise<ConnectionInfo> {
    return this.wait<ConnectionInfo>(options, (settle) => {
      const find = (): Connection | undefined =>
        [...this.broker.connections].find((c) => c.state === 'open' && clientConnectionName(c) === connectionName);
      const waiter: Waiter<ConnectionInfo> = {
        check: () => {
          const conn = find();
          if (conn) settle.resolve(connectionInfo(conn));
          return conn !== undefined;
        },
        resolve: settle.resolve,
        reject: settle.reject,
      };
      if (waiter.check()) return { stop: () => {}, describe: () => '' };
      this.connectionWaiters.add(waiter);
      this.updateHooks();
      return {
        stop: () => {
          this.connectionWaiters.delete(waiter);
          this.updateHooks();
        },
        describe: () => {
          const open = [...this.broker.connections].filter((c) => c.state === 'open').map((c) => clientConnectionName(c) ?? '(unnamed)');
          return `until.connection('${connectionName}'): still waiting after ${this.ms(options)} ms for an open connection named '${connectionName}'` +
            ` (open connections: ${open.length > 0 ? open.map((n) => `'${n}'`).join(', ') : 'none'})`;
        },
      };
    });
  }

  /** Rejects every wait still pending (the broker is closing). */
  cancelAll(reason: string): void {
    const err = new Error(reason);
    for (const reject of [...this.pending]) reject(err);
  }

  private onQueue(method: string, queue: string, predicate: (q: QueueInfo) => boolean, what: string, options: WaitOptions): Promise<QueueInfo> {
    const vhost = this.inspect.vhost(options.vhost);
    const key = storeKey(vhost.name, queue);
    return this.wait<QueueInfo>(options, (settle) => {
      const waiter: Waiter<QueueInfo> = {
        check: (changed) => {
          const q = changed ?? vhost.queues.get(queue);
          if (!q || q.deleted) return false;
          const info = this.inspect.queueInfo(vhost.name, q);
          let holds: boolean;
          try {
            holds = predicate(info);
          } catch (err) {
            settle.reject(err as Error);
            return true;
          }
          if (holds) settle.resolve(info);
          return holds;
        },
        resolve: settle.resolve,
        reject: settle.reject,
      };
      if (waiter.check()) return { stop: () => {}, describe: () => '' };
      add(this.queueWaiters, key, waiter);
      this.updateHooks();
      return {
        stop: () => {
          remove(this.queueWaiters, key, waiter);
          this.updateHooks();
        },
        describe: () => {
          const q = vhost.queues.get(queue);
          const now = q ? this.inspect.queueInfo(vhost.name, q) : undefined;
          const state = now
            ? `it has ${now.ready} ready and ${now.unacked} unacknowledged message(s) and ${now.consumers} consumer(s)`
            : 'the queue does not exist';
          return `until.${method}('${queue}'): still waiting after ${this.ms(options)} ms for queue '${queue}' in vhost '${vhost.name}' to ${what}; ${state}`;
        },
      };
    });
  }

  /**
   * The common part of every wait: start(settle) registers the waiter (resolving it at once
   * if it can) and returns how to stop it and how to describe what is awaited; the timeout
   * rejects with that description.
   */
  private wait<T>(
    options: { timeout?: number },
    start: (settle: { resolve: (v: T) => void; reject: (e: Error) => void }) => { stop: () => void; describe: () => string },
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      let registration: { stop: () => void; describe: () => string } | undefined;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        if (timer) clearTimeout(timer);
        registration?.stop();
        this.pending.delete(settle.reject);
        return true;
      };
      const settle = {
        resolve: (v: T) => {
          if (finish()) resolve(v);
        },
        reject: (e: Error) => {
          if (finish()) reject(e);
        },
      };
      registration = start(settle);
      if (done) {
        registration.stop();
        return;
      }
      this.pending.add(settle.reject);
      const reg = registration;
      timer = setTimeout(() => {
        if (finish()) reject(new Error(reg.describe()));
      }, this.ms(options));
    });
  }

  private ms(options: { timeout?: number }): number {
    return options.timeout ?? this.defaultTimeout;
  }

  /** Sets the broker's hooks while something waits, and unsets them when nothing does. */
  private updateHooks(): void {
    const hooks = this.broker.hooks;
    hooks.queues = this.queueWaiters.size > 0 || this.routedWaiters.size > 0 ? this.queueWatcher : undefined;
    hooks.connections = this.connectionWaiters.size > 0 ? this.connectionWatcher : undefined;
  }
}

function storeKey(vhost: string, queue: string): string {
  return `${vhost}\u0000${queue}`;
}

function add<T>(map: Map<string, Set<T>>, key: string, value: T): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

function remove<T>(map: Map<string, Set<T>>, key: string, value: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}
