import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A fresh directory under os.tmpdir(); remove it with removeDir. */
export function makeTmpDir(prefix = 'warren-store-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}
