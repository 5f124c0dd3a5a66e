import { startBroker, type RunningBroker } from '../../src/broker.js';
import type { BrokerOptions } from '../../src/config.js';

/** The broker the UI tests drive: its management API (…/api) and its AMQP URL. */
export interface UiTarget {
  readonly name: string;
  readonly apiUrl: string;
  readonly amqpUrl: string;
  close(): Promise<void>;
}

/**
 * Picks the broker for the UI tests, in this order:
 * 1. WARREN_UI_TARGET=amqp://guest:guest@127.0.0.1:5705 — an already running broker, e.g. a
 *    reference RabbitMQ (`../shared/tools/reference-rabbitmq.sh start 5705`); its management API
 *    is WARREN_UI_API (default: http://host:AMQP_PORT+10000/api, the reference script's layout).
 * 2. An in-process Warren from `startBroker({ managementPort: 0 })`, once Warren has a
 *    management server (it then exposes `managementUrl`).
 * Returns the reason to skip when neither is there.
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

  const options = { port: 0, managementPort: 0, prometheusPort: 0, logLevel: 'silent' } as BrokerOptions;
  const running: RunningBroker & { managementUrl?: string } = await startBroker(options);
  const managementUrl = running.managementUrl ?? (running.broker as unknown as { managementUrl?: string }).managementUrl;
  if (typeof managementUrl === 'string') {
    return { name: 'in-process Warren', apiUrl: new URL('api', managementUrl.endsWith('/') ? managementUrl : `${managementUrl}/`).href, amqpUrl: running.url, close: () => running.close() };
  }
  await running.close();
  return {
    skip:
      'no management API to drive: this Warren has no management server yet, and WARREN_UI_TARGET is not set ' +
      '(start a reference RabbitMQ with ../shared/tools/reference-rabbitmq.sh start 5705, then WARREN_UI_TARGET=amqp://guest:guest@127.0.0.1:5705)',
  };
}
