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

/** A fresh directory (under os.tmpdir()) for each test of the enclosing describe block, removed after it. */
export function useTmpDir(prefix: string): { readonly path: string } {
  let dir = '';
  beforeEach(() => {
    dir = makeTmpDir(prefix);
  });
  afterEach(() => removeDir(dir));
  return {
    get path(): string {
      return dir;
    },
  };
}
