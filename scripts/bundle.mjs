// The build's last step (npm run build, after tsc): copies the web UI's static files and
// rabbitmqadmin (src/management/ui, src/management/cli) beside the compiled management modules,
// and bundles dist/main.js and every module it loads into dist/bundle/main.cjs, which the
// launcher runs (src/launcher.ts). lmdb (a native addon, found from its own directory) and
// amqplib (loaded only for shovels) stay outside; pino goes in: loaded from node_modules it cost
// about 50 ms of the start (finding its files, compiling them without the code cache), in the
// bundle 40-60 ms less to listen on a 2-core VM. pino's transports, which load worker files from
// its directory, are not used.
//
// CommonJS, not ESM: Node loads a CommonJS bundle and its CommonJS packages without the ESM
// loader's module-graph and CommonJS-export parsing (cjs-module-lexer) steps, and `lmdb` then
// loads as its single-file CommonJS build: about 30 ms less to listen on a 2-core VM
// (BENCHMARKS.md, "Time to listen"). import.meta.url becomes the bundle's file URL, and import()
// a require() made when first called.
import { cpSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

cpSync('src/management/ui', 'dist/management/ui', { recursive: true });
cpSync('src/management/cli', 'dist/management/cli', { recursive: true });
// The code cache bin/broker.cjs keeps belongs to one machine and one bundle: a new bundle starts
// without one (and npm pack, which builds first, packs none).
rmSync('dist/bundle/main.cjs.cache', { force: true });
await build({
  entryPoints: ['dist/main.js'],
  outfile: 'dist/bundle/main.cjs',
  bundle: true,
  platform: 'node',
  format: 'cjs',
  external: ['lmdb', 'amqplib'],
  sourcemap: true,
  logLevel: 'warning',
  define: { 'import.meta.url': 'importMetaUrl' },
  // bin/broker.cjs runs the bundle as a vm.Script, where import() has no loader ("A dynamic
  // import callback was not specified"): a package imported on demand (amqplib, for shovels) is
  // required instead, when first asked for.
  supported: { 'dynamic-import': false },
  banner: { js: "const importMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
});
