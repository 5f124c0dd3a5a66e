import { startBroker } from '../../src/broker.js';

/** The broker the UI tests drive: its management API (…/api) and its AMQP URL. */
export interface UiTarget {
  readonly name: string;
  readonly apiUrl: string;
  readonly amqpUrl: string;
  /** Where the broker itself serves the UI (Warren at `/` on its management port); else the tests serve it. */
  readonly pageUrl?: string;
  close(): Promise<void>;
}

/**
 * Picks the broker for the UI tests, in this order:
 * 1. WARREN_UI_TARGET=amqp://guest:guest@127.0.0.1:5705 — an already running broker, e.g. a
 *    reference RabbitMQ (`../shared/tools/reference-rabbitmq.sh start 5705`); its management API
 *    is WARREN_UI_API (default: http://host:AMQP_PORT+10000/api, the reference script's layout).
 * 2. Otherwise an in-process Warren from `startBroker({ managementPort: 0 })`, whose management
 *    server serves the UI itself.
 * Returns the reason to skip when the configured broker does not answer.
 */
export async function uiTarget(): Promise<UiTarget | { skip: string }> {
  const configured = process.env.WARREN_UI_TARGET;
  if (configured) {
    const amqp = new URL(configured);
    const apiUrl = process.env.WARREN_UI_API ?? `http://${amqp.hostname}:${Number(amqp.port || 5672) + 10000}/api`;
    const reachable = await fetch(`${apiUrl}/overview`, { headers: { authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}` } })
      .then((r) => r.ok)
      .catch(() => false);
    if (!reachable) return { skip: `WARREN_UI_TARGET=${configured}, but no management API answers at ${apiUrl}` };
    return { name: `broker at ${configured}`, apiUrl, amqpUrl: configured, close: async () => {} };
  }

  const running = await startBroker({ port: 0, managementPort: 0, logLevel: 'silent' });
  const managementUrl = running.managementUrl!;
  return {
    name: 'in-process Warren',
    apiUrl: `${managementUrl}/api`,
    amqpUrl: running.url,
    pageUrl: `${managementUrl}/`,
    close: () => running.close(),
  };
}
