// Builds everything the app, `amw serve` and the CLI run from: the renderer (Vite) and the Node
// bundles (esbuild). Dependencies stay external: native modules load from node_modules.
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { treeSitterGlue } from './tree-sitter-glue.mjs';

const only = process.argv[2];
// a production build whoever calls it: run from vitest, NODE_ENV=test would otherwise give Vite
// (and React) their development builds, several times slower in the UI
process.env.NODE_ENV = 'production';
const started = Date.now();
// `node`: only the Node bundles, over an existing dist/ (the renderer stays)
if (only !== 'node') rmSync('dist', { recursive: true, force: true });
// chunks are named by their content: drop the previous build's, nothing imports them any more
else rmSync('dist/chunks', { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  packages: 'external',
  logLevel: 'warning',
};

// Pure-JavaScript packages a one-shot `amw scan` loads, bundled into the CLI: loaded from
// node_modules, zod alone is ~100 ES modules to resolve, read and link at every start (a fifth of
// an empty scan's CPU). The rest stay external: native modules, WebAssembly found beside its
// package, and what only other commands load.
const BUNDLED = new Set(['zod', 'diff', 'i18next', 'commander']);
const { dependencies } = JSON.parse(readFileSync('package.json', 'utf8'));
// What the CommonJS CLI still require()s from node_modules: native code, WebAssembly found beside
// its package, and playwright-core (imported, not required, and large). Each loads the same code
// either way.
const REQUIRED = ['better-sqlite3', 'ssh2', 'tree-sitter-python', 'playwright-core'];
// Where the CommonJS CLI says which build it is (stampBuild): bin/code-cache.js keys its cache by it.
const BUILD_STAMP = `/*amw-build:${'0'.repeat(24)}*/`;
// The function Node's loader would wrap the CommonJS CLI in, written into the file by the build:
// bin/code-cache.js compiles the file's text as it is read (joined to a wrapper there, V8 made a
// flat copy of the whole bundle before compiling it: 650 page faults of every one-shot start).
// The same text as bin/code-cache.js's WRAPPER.
const WRAPPER = '(function (exports, require, module, __filename, __dirname) {';
const external = Object.keys(dependencies)
  .filter((d) => !BUNDLED.has(d))
  .flatMap((d) => [d, `${d}/*`]);

await Promise.all([
  build({
    ...common,
    packages: undefined,
    external,
    // commander is CommonJS: its require() of Node's own modules needs a real require in ESM
    banner: {
      js: "import { createRequire as __amwCreateRequire } from 'node:module'; const require = __amwCreateRequire(import.meta.url);",
    },
    format: 'esm',
    // the scan worker is its own file: worker_threads load it by path from dist/
    entryPoints: {
      cli: 'electron/cli/index.ts',
      'scan-worker': 'electron/core/analyzer/scan-worker.ts',
    },
    // what a command imports when it runs is a chunk of its own: `amw scan` loads the scanner,
    // not the database, SSH and stage code of the other commands
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    outdir: 'dist',
  }),
  // The same CLI as one CommonJS file, for the one-shot commands: bin/amw.js runs it from V8's
  // code cache (bin/code-cache.js), which Node 20 offers for a script, not for ES modules.
  // Every pure-JavaScript package is bundled in, from the files an ES-module import loads: what
  // require() loads of a package that ships both can differ (ssh-config's default export does).
  build({
    ...common,
    packages: undefined,
    external: REQUIRED.flatMap((d) => [d, `${d}/*`]),
    // import() of a package or Node module becomes require(): a function V8 restores from the
    // code cache has lost its script's import() callback ("A dynamic import callback was not
    // specified"), so web-tree-sitter's import('fs/promises') failed from a cached run
    supported: { 'dynamic-import': false },
    // web-tree-sitter's ES-module file binds its own `require` after such an import(); its
    // CommonJS file is the same runtime, written for require()
    alias: { 'web-tree-sitter': createRequire(import.meta.url).resolve('web-tree-sitter') },
    // and its glue reading and writing WebAssembly memory without a call per value (why: there)
    plugins: [treeSitterGlue()],
    format: 'cjs',
    // Minified: every one-shot command reads the file, makes it a string and compiles from it;
    // 2.7 MB as written, 1.4 MB minified — 1,000 fewer page faults (each fresh page costs ~12 µs
    // on a virtual machine) and 6% of an empty `amw scan`'s CPU. Names are not kept: nothing reads
    // a function's or class's name (errors set theirs), and the source map maps stacks back.
    minify: true,
    entryPoints: { cli: 'electron/cli/index.ts' },
    outExtension: { '.js': '.cjs' },
    outdir: 'dist',
    define: { 'import.meta.url': '__amwModuleUrl' },
    banner: {
      js: `${BUILD_STAMP}${WRAPPER}var __amwModuleUrl = require('node:url').pathToFileURL(__filename).href;`,
    },
    footer: { js: '\n})' },
  }),
  build({
    ...common,
    format: 'esm',
    entryPoints: { main: 'electron/main/index.ts' },
    outdir: 'dist',
  }),
  // A sandboxed preload can only be CommonJS and can require nothing but `electron`: bundle all in.
  build({
    ...common,
    packages: undefined,
    external: ['electron'],
    format: 'cjs',
    entryPoints: { preload: 'electron/preload/index.ts' },
    outExtension: { '.js': '.cjs' },
    outdir: 'dist',
  }),
  only === 'node'
    ? null
    : viteBuild({ configFile: 'vite.config.ts', mode: 'production', logLevel: 'warn' }),
]);
asciiComments('dist/cli.cjs');
stampBuild('dist/cli.cjs');
console.log(`built dist/ in ${Date.now() - started} ms`);

/**
 * An ASCII bundle is a one-byte string to V8 (bin/code-cache.js decodes it): one non-ASCII
 * character makes the whole 1.4 MB two bytes a character. esbuild escapes strings but keeps
 * legal comments as written: their non-ASCII characters become escapes (a comment means the
 * same). Non-ASCII code is left alone, and said.
 */
function asciiComments(file) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const code = lines.findIndex((l) => /[\u0080-\uffff]/.test(l) && !/^\s*(\/\/|\/\*|\*)/.test(l));
  if (code >= 0) {
    console.log(
      `${file}:${code + 1} is not ASCII: one-shot commands compile it from two bytes a character`,
    );
    return;
  }
  const escape = (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  writeFileSync(file, lines.map((l) => l.replace(/[\u0080-\uffff]/g, escape)).join('\n'));
}

/**
 * Writes the bundle's own hash into its first line (in place of the zeros, so no line moves and
 * the source map holds): bin/code-cache.js reads it instead of hashing the bundle at every start
 * (6% of an empty `amw scan`'s instructions).
 */
function stampBuild(file) {
  const source = readFileSync(file, 'latin1');
  if (!source.startsWith(BUILD_STAMP)) throw new Error(`${file} does not start with its stamp`);
  const hash = createHash('sha256').update(source, 'latin1').digest('hex').slice(0, 24);
  writeFileSync(
    file,
    BUILD_STAMP.replace(/0{24}/, hash) + source.slice(BUILD_STAMP.length),
    'latin1',
  );
}
