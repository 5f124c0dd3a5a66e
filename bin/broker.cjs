'use strict';
// The broker process's entry (what the `warren` command's launcher, src/launcher.ts, starts, and
// the benchmarks): runs the bundle dist/bundle/main.cjs with a V8 code cache beside it
// (main.cjs.cache), which spares compiling the bundle's startup code again: about 40 ms of a
// 320 ms start on a 2-core VM (BENCHMARKS.md, "Time to listen"). Node 20 has no compile cache
// of its own (module.enableCompileCache is Node 22's).
//
// V8 checks a cache against its own version and the flags it runs with, but of the source only
// its length: the cache starts with the SHA-256 of the bundle it was made from, and is not used
// for another. A cache not used, or rejected by V8, means the bundle is compiled as usual; once
// the broker listens the cache is written again (to a temporary file renamed over the old one,
// so a broker starting meanwhile reads the old cache or the new one). A cache that cannot be
// read or written (a read-only install) only costs that time: nothing else depends on it.
const { createHash } = require('node:crypto');
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { createRequire, wrap } = require('node:module');
const { dirname, join } = require('node:path');
const { Script } = require('node:vm');

const file = join(__dirname, '..', 'dist', 'bundle', 'main.cjs');
const cacheFile = `${file}.cache`;
const source = readFileSync(file);
const digest = createHash('sha256').update(source).digest();
let cachedData;
try {
  const cache = readFileSync(cacheFile);
  if (cache.length > digest.length && cache.subarray(0, digest.length).equals(digest)) cachedData = cache.subarray(digest.length);
} catch {
  cachedData = undefined;
}
const script = new Script(wrap(source.toString('utf8')), { filename: file, cachedData });
const bundle = { exports: {} };
script.runInThisContext()(bundle.exports, createRequire(file), bundle, file, dirname(file));
// main() resolves with the broker once it listens (undefined for --help and the subcommands):
// by then the code a start runs is compiled, and goes into the cache.
void bundle.exports.main(process.argv.slice(2)).then((broker) => {
  if (broker === undefined || (cachedData !== undefined && !script.cachedDataRejected)) return;
  try {
    const temporary = `${cacheFile}.${process.pid}`;
    writeFileSync(temporary, Buffer.concat([digest, script.createCachedData()]));
    renameSync(temporary, cacheFile);
  } catch {
    // Not writable here: the next start compiles the bundle again.
  }
});
