import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';

export type { ParsedFamily };

/** The counters compared with RabbitMQ's: global message counters, churn, and AMQP logins. */
export const COUNTER =
  /^rabbitmq_(global_messages_|connections_(opened|closed)_total|channels_(opened|closed)_total|queues_(declared|created|deleted)_total|auth_attempts_(succeeded_|failed_)?total\{protocol="amqp091"\})/;

/** Parses Prometheus text with the npm parser (parse-prometheus-text-format). */
export function parseFamilies(text: string): ParsedFamily[] {
  return parsePrometheusTextFormat(text);
}

/** `name{a="1",b="2"}` with labels sorted by name: a key for one sample. */
export function sampleKey(name: string, labels: Record<string, string> | undefined): string {
  const pairs = Object.entries(labels ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${name}{${pairs.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}}`;
}

/** Every sample of the text, by sampleKey, as numbers. */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const f of parseFamilies(text)) {
    for (const m of f.metrics) if (m.value !== undefined) out.set(sampleKey(f.name, m.labels), Number(m.value));
  }
  return out;
}

/**
 * Replaces each `channel="<0.N.0>"` label value by `ch1`, `ch2`... numbered by the pids' order
 * in `order` (the channels of channel_metrics, oldest first), so per-object samples of two
 * brokers can be compared.
 */
export function renameChannels(key: string, order: readonly string[]): string {
  return key.replace(/channel="(<[^"]*>)"/g, (whole, pid: string) => {
    const i = order.indexOf(pid);
    return i < 0 ? whole : `channel="ch${i + 1}"`;
  });
}

/** The channel pids of channel_metrics rows, oldest (lowest pid) first. */
export function channelOrder(text: string): string[] {
  const pids = new Set<string>();
  for (const f of parseFamilies(text)) {
    if (f.name.endsWith('channel_consumers')) for (const m of f.metrics) if (m.labels?.['channel']) pids.add(m.labels['channel']);
  }
  return [...pids].sort((a, b) => pidNumber(a) - pidNumber(b));
}

function pidNumber(pid: string): number {
  return Number(/^<\d+\.(\d+)\.\d+>$/.exec(pid)?.[1] ?? NaN);
}
