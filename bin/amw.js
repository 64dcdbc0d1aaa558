#!/usr/bin/env node
// `amw` entry: runs the bundled CLI. The bundles are made by `npm run build` (npm install does it).
// CommonJS (bin/package.json): an ES-module entry made Node set up its ES-module loader for every
// one-shot command, ~6 ms of an empty `amw scan`'s CPU.
const { existsSync } = require('node:fs');
const { pathToFileURL } = require('node:url');
const { join } = require('node:path');
const { setFlagsFromString } = require('node:v8');
// required before the flags below are set, with the Node modules it uses (why: there)
const { runWithCodeCache } = require('./code-cache.js');

const dist = (name) => join(__dirname, '..', 'dist', name);
const esm = dist('cli.js');
const cjs = dist('cli.cjs');
for (const bundle of [esm, cjs])
  if (!existsSync(bundle)) {
    process.stderr.write(
      `amw: ${bundle} is missing; run \`npm run build\` in the workbench folder first.\n`,
    );
    process.exit(2);
  }

/** The command named past the global options (as electron/cli/program.ts's commandName reads it). */
function commandName(argv) {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--db' || argv[i] === '--known-hosts' || argv[i] === '--lang') i++;
    else if (!argv[i].startsWith('-')) return argv[i];
  }
  return undefined;
}

const command = commandName(process.argv.slice(2));
if (command === 'serve' || process.env.AMW_DEBUG) {
  // The long-lived `amw serve` keeps V8's defaults, and the ES-module CLI whose chunks load
  // only what a command uses. So does a command run with AMW_DEBUG: the stack it prints of an
  // unexpected error names the functions as written (the one-shot bundle is minified).
  void import(pathToFileURL(esm).href);
} else {
  // A one-shot command lives a few seconds: with V8's default budget its optimising compiler
  // works on background threads for much of that time, for code that runs only briefly (a fifth
  // of a 200k-line `amw scan`'s CPU). Sixteen times the budget optimises only what stays hot
  // (eight: 1.5% more CPU for 217k lines, 1% for 868k; thirty-two: more for both).
  // Node compiles its own modules from a code cache of its build, which V8 refuses once a flag
  // differs: a Node module first loaded after the flags below is parsed and compiled whole. So
  // the ones every one-shot command loads (commander needs child_process and process; the scan,
  // worker threads and fs/promises) are loaded first: 3% of an empty `amw scan`'s instructions.
  for (const builtin of [
    'node:child_process',
    'node:worker_threads',
    'node:fs/promises',
    'node:process',
  ])
    require(builtin);
  // and the standard streams, whose modules depend on what they are (a terminal, a pipe, a file)
  void process.stdout;
  void process.stderr;
  setFlagsFromString('--interrupt-budget=1081344');
  // The parser's WebAssembly stays baseline (Liftoff) code. Optimising it is paid for on the same
  // two cores, whatever the budget: tree-sitter's largest function alone took TurboFan 120-160 ms
  // and 20 MB of compiler memory (5k page faults), and it tiered up even in a two-file scan. Only
  // 8% of a tree's text is parsed, so the faster code never earns that back in a one-shot run:
  // measured on Node 20, a two-file scan 0.62 -> 0.35 CPU-s, 217k lines 1.93 -> 1.68, 868k
  // lines the same. Like every flag here, set before the code cache is read: V8 refuses a cache
  // made under other flags, and the cache is written at exit. On Node 22 and 24 (not measured
  // with this) optimisation is only delayed, to ten times V8's default work in a function.
  if (/^20\./.test(process.versions.node)) setFlagsFromString('--liftoff-only');
  else if (/^(22|24)\./.test(process.versions.node))
    setFlagsFromString('--wasm-tiering-budget=18000000');
  // Measured on Node 20 only, where these flags exist as named:
  if (/^20\./.test(process.versions.node))
    for (const flag of [
      // What the optimising compiler does to the few functions that get hot in a one-shot run
      // is paid for on the same two cores: a tenth of a 217k-line scan's CPU was TurboFan
      // compiling its text passes. Less inlining, no loop peeling and no escape analysis make
      // those compiles cheaper by more than their code gets slower (7.02 -> 6.77 G
      // instructions for that scan).
      '--max-inlined-bytecode-size-cumulative=200',
      '--no-turbo-loop-peeling',
      '--no-turbo-escape',
      // The young generation stays at its first size (1 MB a semi-space) instead of doubling up
      // to 16 MB: every page it grows into is a page fault the first time it is written, ~12 µs
      // each on a virtual machine, and a 217k-line scan wrote 32 MB of them. More, smaller
      // scavenges cost far less than that: 19.2k -> 12.1k page faults, 1.36 -> 1.20 CPU-s;
      // 868k lines the same CPU, peak RSS 130 -> 97 MB.
      '--semi-space-growth-factor=1',
      // Each of those ~150 scavenges of 1 MB is done on the main thread: handing each to helper
      // threads cost more than it saved (1.09 -> 1.07 CPU-s); so is sweeping the old
      // generation, which now holds what they promote (1.10 -> 1.085).
      '--no-parallel-scavenge',
      '--no-concurrent-sweeping',
    ])
      setFlagsFromString(flag);
  // One file compiled from V8's code cache: parsing and compiling the CLI's modules was a third
  // of an empty `amw scan`'s CPU.
  runWithCodeCache(cjs, command);
}
