/**
 * Traces hold what a client can observe; a few observed values legitimately differ between two
 * correct brokers, or between two runs against the same broker. They are rewritten here, the
 * same way for golden and live traces:
 *
 * - the run token in resource names (`cf.<token>.<case>.<suffix>`) becomes `T`;
 * - server-generated names — `amq.gen-…` queues, `amq.ctag-…` consumer tags,
 *   `amq.rabbitmq.reply-to.…` direct reply-to addresses — become `amq.gen-#1`, `amq.ctag-#2`,
 *   … numbered by first appearance in the trace, so "the same name again" is still checked;
 * - the `time` of an x-death entry (a timestamp the broker takes when dead-lettering) becomes
 *   `<time>`;
 * - server properties that name the product rather than its behaviour (product, version,
 *   platform, cluster_name, copyright, information) are replaced by cases that record them,
 *   through `serverPropertyValue`.
 */
import type { Json } from './json.js';
import { sortKeys } from './json.js';

const GENERATED: Array<[RegExp, string]> = [
  [/amq\.gen-[A-Za-z0-9_-]+/g, 'amq.gen-'],
  [/amq\.ctag-[A-Za-z0-9_-]+/g, 'amq.ctag-'],
  [/amq\.rabbitmq\.reply-to\.[A-Za-z0-9+/=._-]+/g, 'amq.rabbitmq.reply-to.'],
];

export const SERVER_IDENTITY_KEYS = new Set(['product', 'version', 'platform', 'cluster_name', 'copyright', 'information']);

/** What a case records instead of an identity string (its type tag is kept). */
export function serverPropertyValue(key: string, typedValue: string): string {
  if (!SERVER_IDENTITY_KEYS.has(key)) return typedValue;
  const tag = typedValue.slice(0, typedValue.indexOf(':') + 1);
  return `${tag}<${key}>`;
}

export function normaliseTrace(trace: unknown, token: string): Json {
  const numbering = new Map<string, string>();
  const counters = new Map<string, number>();
  const rewrite = (s: string): string => {
    let out = token ? s.split(token).join('T') : s;
    for (const [re, prefix] of GENERATED) {
      out = out.replace(re, (name) => {
        let n = numbering.get(name);
        if (!n) {
          const k = (counters.get(prefix) ?? 0) + 1;
          counters.set(prefix, k);
          n = `${prefix}#${k}`;
          numbering.set(name, n);
        }
        return n;
      });
    }
    return out;
  };
  const walk = (v: Json): Json => {
    if (typeof v === 'string') return rewrite(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const isDeath = 'reason' in v && 'count' in v && 'queue' in v;
      const out: { [k: string]: Json } = {};
      for (const [k, x] of Object.entries(v)) {
        if (isDeath && k === 'time') out[k] = typeof x === 'string' ? `${x.slice(0, x.indexOf(':') + 1)}<time>` : '<time>';
        else out[rewrite(k)] = walk(x);
      }
      return out;
    }
    return v;
  };
  return walk(sortKeys(trace));
}
