/**
 * The offline check behind `warren check`: the data file page by page (file-check.ts), then
 * every record's checksum and the references and counters between records (consistency.ts).
 * Without repair the store is opened read-only and nothing changes; with repair damaged records
 * go to the quarantine and refcounts and counters are rewritten, in one transaction. Damage to
 * the file itself (a truncated file, a bad meta page, a broken B-tree page) is reported but not
 * repaired: LMDB cannot open such a file safely.
 */

import { fullCheck, checkRequested } from './consistency.js';
import { dbEntryCount, FORMAT_KEY, openDatabases, type Databases } from './databases.js';
import { checkDataFile, type DataFileReport } from './file-check.js';
import { checkFormat, FORMAT, knownFormat } from './format.js';

export interface CheckReport {
  storeDir: string;
  file: DataFileReport;
  /** Store format found (undefined when the file could not be opened). */
  format: number | undefined;
  /** Problems of the records; each ends with what repair does about it. */
  problems: string[];
  entries: number;
  messages: number;
  /** Records already in the quarantine before this check (found by the broker or an earlier repair). */
  quarantined: number;
  /** A run quarantined records and left refcounts and counters to the next open. */
  checkRequested: boolean;
  /** Format 1 (no checksums) that was not migrated: only the file was checked. */
  unchecksummed: boolean;
  repaired: boolean;
  /** How it went: nothing wrong; damage found (and repaired, with repair); damage repair cannot fix. */
  verdict: 'clean' | 'damaged' | 'unrepairable';
}

export async function checkStore(storeDir: string, opts: { repair: boolean; log?: (msg: string) => void }): Promise<CheckReport> {
  const file = checkDataFile(storeDir, { walk: true });
  if (!file.exists) throw new Error(`no store in ${storeDir} (no data.mdb)`);
  const report: CheckReport = {
    storeDir,
    file,
    format: undefined,
    problems: [],
    entries: 0,
    messages: 0,
    quarantined: 0,
    checkRequested: false,
    unchecksummed: false,
    repaired: false,
    verdict: 'unrepairable',
  };
  if (file.problems.length > 0) return report;
  const dbs = openDatabases(storeDir, { readOnly: !opts.repair });
  try {
    report.format = dbs.meta.get(FORMAT_KEY)?.[0];
    if (report.format === 1 && !opts.repair) {
      report.unchecksummed = true;
      report.verdict = 'clean';
      return report;
    }
    if (!knownFormat(report.format)) {
      report.problems.push(`unknown store format ${report.format}`);
      return report;
    }
    if (opts.repair) checkFormat(dbs, opts.log ?? (() => {}));
    recordCheck(dbs, report, opts.repair, opts.repair ? FORMAT : report.format!);
    return report;
  } finally {
    await dbs.root.close();
  }
}

/** `format`: the layout the records are in (an older one when not repaired, which migrates first). */
function recordCheck(dbs: Databases, report: CheckReport, repair: boolean, format: number): void {
  report.quarantined = dbEntryCount(dbs.quarantineDb);
  report.checkRequested = checkRequested(dbs);
  const result = fullCheck(dbs, { repair, deep: true, format });
  report.problems = result.problems;
  report.entries = result.entries;
  report.messages = result.messages;
  report.repaired = repair && (result.problems.length > 0 || report.checkRequested);
  report.verdict = result.problems.length > 0 ? 'damaged' : 'clean';
}
