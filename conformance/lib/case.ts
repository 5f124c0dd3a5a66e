/**
 * The case registry. A case belongs to an area (one golden file each), has a kebab-case name
 * unique in its area, cites the spec rule or RabbitMQ documentation page whose behaviour it
 * checks, and writes observable facts into its trace.
 */
import type { CaseContext } from './context.js';

export const AREAS = [
  'connection',
  'bad-input',
  'exchanges',
  'routing',
  'queues',
  'consuming',
  'ttl-dlx',
  'priorities-consumers',
  'confirms-tx',
  'fidelity',
  'extensions',
  'streams',
  'access',
  'policies',
  'limits',
] as const;

export type Area = (typeof AREAS)[number];

export interface Case {
  area: Area;
  name: string;
  /** The spec rule or RabbitMQ doc page this case checks. */
  cite: string;
  run(t: CaseContext): Promise<void>;
  /** Longest the case may take (default 8 s). */
  timeoutMs?: number;
}

export const registry: Case[] = [];

/** `const test = area('queues'); test('name', 'cite', async (t) => { ... })` */
export function area(a: Area): (name: string, cite: string, run: (t: CaseContext) => Promise<void>, opts?: { timeoutMs?: number }) => void {
  return (name, cite, run, opts = {}) => {
    if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) throw new Error(`case name must be kebab-case: ${name}`);
    if (registry.some((c) => c.area === a && c.name === name)) throw new Error(`duplicate case ${a}/${name}`);
    registry.push({ area: a, name, cite, run, ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) });
  };
}

export function caseId(c: Case): string {
  return `${c.area}/${c.name}`;
}
