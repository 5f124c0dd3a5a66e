/**
 * Checks LMDB's data file before LMDB maps it. LMDB trusts its file: pages past the end of a
 * truncated file kill the process with SIGBUS when touched, and a zeroed meta page makes it
 * crash with SIGSEGV, before anything is logged. This reads the two meta pages with plain file
 * reads (LMDB's layout, liblmdb/mdb.c: MDB_page header, MDB_meta, MDB_db, MDB_node) and says
 * what is wrong instead.
 *
 * On every open: both meta pages must be sane (page flags, magic, version, page size, page
 * numbers), and the file must hold the pages the newer one says are in use. LMDB may leave
 * the file a little shorter than that when the last pages were freed in the transaction that
 * allocated them, so a short file is not refused outright: then, and on request (`warren
 * check`), every page reachable from the newer meta page is walked and must be in the file and
 * look like what refers to it.
 */

import fs from 'node:fs';
import path from 'node:path';

const PAGE_HEADER = 24; // pgno u64, txnid u64, pad u16, flags u16, lower u16, upper u16
const META_SIZE = 144; // MDB_meta after the page header (64-bit build)
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const NO_PAGE = 0xffffffffffffffffn;
const MAX_PROBLEMS = 50;

/** The data file is damaged in a way LMDB cannot survive; nothing was opened or changed. */
export class StoreDamagedError extends Error {
  override readonly name = 'StoreDamagedError';
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(
      `store data file ${file} is damaged and was not opened (LMDB would crash on it): ${problems.slice(0, 3).join('; ')}` +
        `${problems.length > 3 ? `; and ${problems.length - 3} more` : ''}. Nothing was changed. ` +
        '`warren check --data-dir <data dir>` lists what is wrong; restore the data dir from a backup, or move it away to start empty.',
    );
  }
}

export interface DataFileReport {
  file: string;
  exists: boolean;
  size: number;
  pageSize: number | undefined;
  /** Pages in use according to the newer meta page. */
  pagesInUse: number | undefined;
  /** Whether the B-trees were walked page by page. */
  walked: boolean;
  problems: string[];
}

interface Meta {
  pageSize: number;
  lastPage: number;
  txnid: bigint;
  freeRoot: bigint;
  mainRoot: bigint;
}

export function dataFilePath(dir: string): string {
  return path.join(dir, 'data.mdb');
}

/** Checks dir/data.mdb (a missing file is fine: LMDB creates it). `walk` forces the page walk. */
export function checkDataFile(dir: string, opts: { walk?: boolean } = {}): DataFileReport {
  const file = dataFilePath(dir);
  const report: DataFileReport = { file, exists: false, size: 0, pageSize: undefined, pagesInUse: undefined, walked: false, problems: [] };
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return report;
    throw err;
  }
  try {
    report.exists = true;
    report.size = fs.fstatSync(fd).size;
    if (report.size === 0) {
      report.problems.push('the file is empty (0 bytes): it was truncated, or never initialised');
      return report;
    }
    const m0 = readMeta(fd, 0, 0, report.size, report.problems);
    // Meta page 1 sits one page size further; guess LMDB's usual 4 KiB if meta page 0 cannot say.
    const m1 = readMeta(fd, 1, m0?.pageSize ?? 4096, report.size, report.problems);
    if (!m0 || !m1) return report;
    if (m0.pageSize !== m1.pageSize) {
      report.problems.push(`the meta pages disagree on the page size (${m0.pageSize} and ${m1.pageSize})`);
      return report;
    }
    const newer = m1.txnid > m0.txnid ? m1 : m0;
    const pageSize = newer.pageSize;
    const filePages = Math.floor(report.size / pageSize);
    report.pageSize = pageSize;
    report.pagesInUse = newer.lastPage + 1;
    if (opts.walk || filePages < report.pagesInUse || report.size % pageSize !== 0) {
      report.walked = true;
      walk(fd, pageSize, filePages, newer, report.problems);
      if (report.problems.length > 0 && filePages < report.pagesInUse) {
        report.problems.unshift(
          `the file is ${report.size} bytes, ${report.pagesInUse} pages of ${pageSize} bytes (${report.pagesInUse * pageSize} bytes) are in use: it was truncated`,
        );
      }
    }
    return report;
  } finally {
    fs.closeSync(fd);
  }
}

function readMeta(fd: number, index: number, offset: number, size: number, problems: string[]): Meta | undefined {
  const buf = Buffer.alloc(PAGE_HEADER + META_SIZE);
  const n = fs.readSync(fd, buf, 0, buf.length, offset);
  const where = `meta page ${index}`;
  if (n < buf.length) {
    problems.push(`${where} is missing: the file is only ${size} bytes`);
    return undefined;
  }
  if (buf.every((b) => b === 0)) {
    problems.push(`${where} is all zeros`);
    return undefined;
  }
  const pgno = buf.readBigUInt64LE(0);
  const flags = buf.readUInt16LE(18);
  const magic = buf.readUInt32LE(PAGE_HEADER);
  const version = buf.readUInt32LE(PAGE_HEADER + 4) & 0xffff;
  const pageSize = buf.readUInt32LE(PAGE_HEADER + 24); // mm_dbs[FREE_DBI].md_pad
  const freeRoot = buf.readBigUInt64LE(PAGE_HEADER + 24 + 40);
  const mainRoot = buf.readBigUInt64LE(PAGE_HEADER + 24 + 48 + 40);
  const lastPage = buf.readBigUInt64LE(PAGE_HEADER + 120);
  const txnid = buf.readBigUInt64LE(PAGE_HEADER + 128);
  const wrong: string[] = [];
  if (pgno !== BigInt(index) || !(flags & P_META)) wrong.push(`not a meta page (page number ${pgno}, flags 0x${flags.toString(16)})`);
  if (magic !== MAGIC) wrong.push(`magic 0x${magic.toString(16)} instead of 0x${MAGIC.toString(16)}`);
  if (version !== DATA_VERSION) wrong.push(`file format version ${version} instead of ${DATA_VERSION}`);
  if (pageSize < 512 || pageSize > 0x10000 || (pageSize & (pageSize - 1)) !== 0) wrong.push(`page size ${pageSize}`);
  if (lastPage < 1n || lastPage > BigInt(Number.MAX_SAFE_INTEGER)) wrong.push(`last page ${lastPage}`);
  if (txnid !== 0n && Number(txnid & 1n) !== index) wrong.push(`transaction id ${txnid} belongs in meta page ${Number(txnid & 1n)}`);
  for (const [name, root] of [['free-page', freeRoot], ['main', mainRoot]] as const) {
    if (root !== NO_PAGE && (root < 2n || root > lastPage)) wrong.push(`${name} tree root page ${root} outside pages 2..${lastPage}`);
  }
  if (wrong.length > 0) {
    problems.push(`${where}: ${wrong.join(', ')}`);
    return undefined;
  }
  return { pageSize, lastPage: Number(lastPage), txnid, freeRoot, mainRoot };
}

/** Walks every B-tree reachable from meta (free pages, main tree, named databases) and overflow page. */
function walk(fd: number, pageSize: number, filePages: number, meta: Meta, problems: string[]): void {
  const page = Buffer.alloc(pageSize);
  const seen = new Set<number>();
  const stack: Array<{ pgno: bigint; tree: string }> = [];
  if (meta.freeRoot !== NO_PAGE) stack.push({ pgno: meta.freeRoot, tree: 'free-page tree' });
  if (meta.mainRoot !== NO_PAGE) stack.push({ pgno: meta.mainRoot, tree: 'main tree' });
  const problem = (text: string): boolean => {
    problems.push(text);
    return problems.length >= MAX_PROBLEMS;
  };
  /** Reads page pgno into `page`; false (and a problem) if it is not wholly in the file. */
  const read = (pgno: bigint, tree: string, count = 1): boolean => {
    if (pgno < 2n || pgno + BigInt(count) > BigInt(filePages)) {
      problem(`${tree}: page ${pgno}${count > 1 ? ` (+${count - 1} overflow pages)` : ''} is not in the file (${filePages} whole pages)`);
      return false;
    }
    fs.readSync(fd, page, 0, pageSize, Number(pgno) * pageSize);
    if (page.readBigUInt64LE(0) !== pgno) {
      problem(`${tree}: page ${pgno} holds page number ${page.readBigUInt64LE(0)}`);
      return false;
    }
    return true;
  };
  while (stack.length > 0 && problems.length < MAX_PROBLEMS) {
    const { pgno, tree } = stack.pop()!;
    if (seen.has(Number(pgno))) {
      problem(`${tree}: page ${pgno} is referred to twice`);
      continue;
    }
    seen.add(Number(pgno));
    if (!read(pgno, tree)) continue;
    const flags = page.readUInt16LE(18);
    const lower = page.readUInt16LE(20);
    const upper = page.readUInt16LE(22);
    const isBranch = (flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META)) === P_BRANCH;
    const isLeaf = (flags & (P_BRANCH | P_LEAF | P_OVERFLOW | P_META)) === P_LEAF;
    if ((!isBranch && !isLeaf) || lower > upper || PAGE_HEADER + upper > pageSize) {
      problem(`${tree}: page ${pgno} is not a branch or leaf page (flags 0x${flags.toString(16)}, free space ${lower}..${upper})`);
      continue;
    }
    const count = lower >> 1;
    const children: Array<{ pgno: bigint; tree: string }> = [];
    const overflows: Array<{ pgno: bigint; pages: number }> = [];
    for (let i = 0; i < count; i++) {
      const node = page.readUInt16LE(PAGE_HEADER + 2 * i) + PAGE_HEADER;
      if (node < PAGE_HEADER + upper || node + 8 > pageSize) {
        problem(`${tree}: page ${pgno} node ${i} lies outside the page's data area`);
        break;
      }
      const lo = page.readUInt16LE(node);
      const hi = page.readUInt16LE(node + 2);
      const nodeFlags = page.readUInt16LE(node + 4);
      const keySize = page.readUInt16LE(node + 6);
      const data = node + 8 + keySize;
      if (isBranch) {
        children.push({ pgno: BigInt(lo) | (BigInt(hi) << 16n) | (BigInt(nodeFlags) << 32n), tree });
        continue;
      }
      const dataSize = lo | (hi << 16);
      if (nodeFlags & F_BIGDATA) {
        if (data + 8 > pageSize) {
          problem(`${tree}: page ${pgno} node ${i} overflow reference lies outside the page`);
          break;
        }
        overflows.push({ pgno: page.readBigUInt64LE(data), pages: Math.floor((PAGE_HEADER - 1 + dataSize) / pageSize) + 1 });
      } else if (nodeFlags & F_SUBDATA) {
        if (data + 48 > pageSize) {
          problem(`${tree}: page ${pgno} node ${i} database record lies outside the page`);
          break;
        }
        const root = page.readBigUInt64LE(data + 40);
        const name = page.toString('utf8', node + 8, node + 8 + keySize).replace(/\0$/, '');
        if (root !== NO_PAGE) children.push({ pgno: root, tree: `database '${name}'` });
      } else if (data + dataSize > pageSize) {
        problem(`${tree}: page ${pgno} node ${i} value runs past the end of the page`);
        break;
      }
    }
    stack.push(...children);
    for (const ov of overflows) {
      if (problems.length >= MAX_PROBLEMS) break;
      if (seen.has(Number(ov.pgno))) {
        problem(`${tree}: overflow page ${ov.pgno} is referred to twice`);
        continue;
      }
      seen.add(Number(ov.pgno));
      if (!read(ov.pgno, tree, ov.pages)) continue;
      const ovFlags = page.readUInt16LE(18);
      const ovPages = page.readUInt32LE(20);
      if (!(ovFlags & P_OVERFLOW) || ovPages < ov.pages) {
        problem(`${tree}: page ${ov.pgno} is not the overflow run of ${ov.pages} page(s) its value needs (flags 0x${ovFlags.toString(16)}, ${ovPages} pages)`);
      }
    }
  }
}
