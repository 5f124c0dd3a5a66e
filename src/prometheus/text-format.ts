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
  private readonly parts: string[] = [];

  family(name: string, type: MetricType, help: string, samples: Iterable<Sample>): void {
    const parts = this.parts;
    parts.push(`# TYPE ${name} ${type}\n# HELP ${name} ${escapeHelp(help)}\n`);
    for (const [labels, value] of samples) {
      parts.push(labels === '' ? `${name} ${formatValue(value)}\n` : `${name}{${labels}} ${formatValue(value)}\n`);
    }
  }

  toString(): string {
    return this.parts.join('');
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
