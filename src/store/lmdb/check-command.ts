/**
 * `warren check [--data-dir D] [--repair]`: checks a stopped broker's data directory offline
 * (check.ts) and prints what is wrong and what --repair does (or did) about it.
 *
 * Exit code: 0 nothing wrong; 1 damage found (repaired, with --repair); 2 the check could not
 * run, or found damage to the file itself that --repair cannot fix.
 */

import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkStore, type CheckReport } from './check.js';

const MAX_LISTED = 100;

export const CHECK_USAGE = `Usage: warren check [--data-dir D] [--repair]

Checks a data directory offline (stop the broker first): LMDB's data file page by page, then
the checksum of every stored record and the references and counters between records.

Options:
  --data-dir D      the broker's data dir (default ./warren-data; env WARREN_DATA_DIR)
  --repair          move damaged records to the quarantine and rewrite refcounts and counters
  -h, --help        show this help

Exit code: 0 nothing wrong; 1 damage found (and repaired, with --repair); 2 the check could
not run, or the file itself is damaged (--repair cannot fix that: restore a backup).
`;

export async function checkCommand(argv: string[], env: NodeJS.ProcessEnv, out: NodeJS.WritableStream): Promise<number> {
  let values: { 'data-dir'?: string; repair?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: { 'data-dir': { type: 'string' }, repair: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
      strict: true,
    }));
  } catch (err) {
    out.write(`warren check: ${(err as Error).message}\n\n${CHECK_USAGE}`);
    return 2;
  }
  if (values.help) {
    out.write(CHECK_USAGE);
    return 0;
  }
  const dataDir = values['data-dir'] ?? env['WARREN_DATA_DIR'] ?? './warren-data';
  const storeDir = path.resolve(dataDir, 'store'); // where the broker keeps its store (Broker constructor)
  const repair = values.repair === true;
  let report: CheckReport;
  try {
    report = await checkStore(storeDir, { repair, log: (m) => out.write(`${m}\n`) });
  } catch (err) {
    out.write(`warren check: ${(err as Error).message}\n`);
    return 2;
  }
  for (const line of describe(report, repair, dataDir)) out.write(`${line}\n`);
  return report.verdict === 'clean' ? 0 : report.verdict === 'damaged' ? 1 : 2;
}

function describe(r: CheckReport, repair: boolean, dataDir: string): string[] {
  const lines = [`checked ${r.file.file}`];
  if (r.file.problems.length > 0) {
    lines.push(`the data file is damaged (${r.file.problems.length} problem(s)); --repair cannot fix this, LMDB would crash on it:`);
    for (const p of r.file.problems) lines.push(`  ${p}`);
    lines.push('restore the data dir from a backup, or move it away to start empty');
    return lines;
  }
  lines.push(`data file: ${r.file.size} bytes, ${r.file.pagesInUse} pages of ${r.file.pageSize} bytes in use, every page in place`);
  if (r.unchecksummed) {
    lines.push('store format 1: its records have no checksums; the broker adds them when it next starts (or run with --repair)');
    return lines;
  }
  if (r.verdict === 'unrepairable') {
    lines.push(...r.problems.map((p) => `  ${p}`));
    return lines;
  }
  if (r.quarantined > 0) lines.push(`${r.quarantined} record(s) were already in the quarantine`);
  if (r.checkRequested) lines.push('the broker quarantined records in its last run and left refcounts and counters to its next start');
  if (r.problems.length === 0) {
    lines.push(`records: ${r.entries} entries, ${r.messages} messages, every checksum and reference right${r.repaired ? ' (counters settled)' : ''}`);
    return lines;
  }
  lines.push(`records: ${r.problems.length} problem(s)${repair ? ', repaired' : ''}:`);
  for (const p of r.problems.slice(0, MAX_LISTED)) lines.push(`  ${p}`);
  if (r.problems.length > MAX_LISTED) lines.push(`  and ${r.problems.length - MAX_LISTED} more`);
  if (!repair) lines.push(`run \`warren check --data-dir ${dataDir} --repair\` with the broker stopped to do what the arrows say`);
  return lines;
}
