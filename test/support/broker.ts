import type { Socket } from 'node:net';
import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { BrokerOptions } from '../../src/config.js';
import type { Connection } from '../../src/connection/connection.js';

/**
 * Starts a private broker on port 0 for the enclosing mocha describe block and closes it after.
 * Usage: `const b = useBroker();` then `b.url` inside tests.
 */
export function useBroker(options: BrokerOptions = {}): { readonly url: string; readonly port: number; readonly running: RunningBroker } {
  let running: RunningBroker | undefined;
  before(async () => {
    running = await startBroker({ port: 0, logLevel: (process.env.TEST_LOG as 'debug') ?? 'silent', ...options });
  });
  after(async () => {
    await running?.close();
  });
  return {
    get url() {
      return (running as RunningBroker).url;
    },
    get port() {
      return (running as RunningBroker).port;
    },
    get running() {
      return running as RunningBroker;
    },
  };
}

/** Collects n values delivered to a callback, resolving when all n have arrived. */
export function collect<T>(n: number): { push: (v: T) => void; done: Promise<T[]> } {
  const items: T[] = [];
  let resolve!: (v: T[]) => void;
  const done = new Promise<T[]>((r) => (resolve = r));
  return {
    push: (v: T) => {
      items.push(v);
      if (items.length === n) resolve(items);
    },
    done,
  };
}

/**
 * Polls state that has no event of its own (an in-process broker's internals), with a deadline;
 * the poll interval only decides how soon the wait ends, never whether it succeeds.
 */
export async function waitUntil(predicate: () => boolean, what: string, timeoutMs = 10000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The broker side of a client's socket (a RawClient's, say), found by the client's port. */
export function serverSideOf(running: RunningBroker, client: { socket: Socket }): Connection {
  const port = client.socket.localPort;
  const conn = [...running.broker.connections].find((c) => c.socket.remotePort === port);
  if (!conn) throw new Error('no broker connection for the client');
  return conn;
}
