/**
 * The Prometheus text exposition format, version 0.0.4, written directly (no client library):
 * `# TYPE`, then `# HELP`, then one line per sample, in the order rabbitmq_prometheus writes
 * them. A family without samples still gets its TYPE and HELP lines, as RabbitMQ's do.
 */

export const CONTENT_TYPE = 'text/plain; version=0.0.4';

export type MetricType = 'counter' | 'gauge' | 'untyped';

/** A sample: its label set (already formatted by `labels`, '' for none) and its value. */
export type Sample = readonly [labels: string, value: number];

export class Exposition {
  private parts: string[] = [];

  /** Lines written since the last take(). */
  get pending(): number {
    return this.parts.length;
  }

  family(name: string, type: MetricType, help: string, samples: Iterable<Sample>): void {
    this.head(name, type, help);
    for (const [labels, value] of samples) this.sample(name, labels, value);
  }

  /** A family's TYPE and HELP lines; its samples follow (sample). */
  head(name: string, type: MetricType, help: string): void {
    this.parts.push(`# TYPE ${name} ${type}\n# HELP ${name} ${escapeHelp(help)}\n`);
  }

  sample(name: string, labels: string, value: number): void {
    this.parts.push(labels === '' ? `${name} ${formatValue(value)}\n` : `${name}{${labels}} ${formatValue(value)}\n`);
  }

  /** What was written since the last take(), as text. */
  take(): string {
    const text = this.parts.join('');
    this.parts = [];
    return text;
  }
}

/** `a="1",b="2"` from [name, value] pairs, values escaped as the format requires. */
export function labels(...pairs: Array<readonly [string, string]>): string {
  let out = '';
  for (const [name, value] of pairs) out += `${out === '' ? '' : ','}${name}="${escapeLabelValue(value)}"`;
  return out;
}

/** A label value: backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

/** HELP text: backslash and line feed are escaped. */
function escapeHelp(help: string): string {
  return /[\\\n]/.test(help) ? help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') : help;
}

/** Integers as integers, NaN and infinities as the format spells them. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}
