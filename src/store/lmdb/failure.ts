/** The error a store stops on when a commit fails, worded for the operator who reads the log. */

import fs from 'node:fs';

/** A commit failed: what happened, where, and what it means. */
export class StoreFailedError extends Error {
  override readonly name = 'StoreFailedError';
  constructor(
    readonly dataDir: string,
    readonly detail: unknown,
  ) {
    super(describeFailure(dataDir, detail), { cause: detail });
  }
}

function describeFailure(dataDir: string, detail: unknown): string {
  const text = detail instanceof Error ? detail.message : String(detail);
  let space = '';
  try {
    const st = fs.statfsSync(dataDir);
    const free = st.bavail * st.bsize;
    space = `; ${(free / 2 ** 20).toFixed(1)} MiB free on its file system`;
    if (free < 64 * 2 ** 20 || free < st.blocks * st.bsize * 0.01) space += ' (the disk is full)';
  } catch {
    // the file system cannot tell; say nothing about space
  }
  const full = /MDB_MAP_FULL|No space left|ENOSPC|File too large|EFBIG|quota|EDQUOT/i.test(text);
  return (
    `LMDB commit failed in data dir ${dataDir}: ${text}${space}` +
    (full ? ' (the disk, a file-size limit or a quota is full)' : '') +
    (/Input\/output error/.test(text) ? ' (LMDB reports a short write as an I/O error: disk full, file-size limit or device error)' : '') +
    '. Writes since the last successful sync() are not durable until the store can write again; ' +
    'free space (or fix the cause): the broker retries once the disk has room, or restart it (recovery reloads the last committed state).'
  );
}
