#!/usr/bin/env node
// `amw` entry: runs the bundled CLI. The bundle is made by `npm run build` (npm install does it).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write(
    `amw: ${cli} is missing; run \`npm run build\` in the workbench folder first.\n`,
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

// A one-shot command lives a few seconds: with V8's default budget its optimising compiler works
// on background threads for much of that time, for code that runs only briefly (a fifth of a
// 200k-line `amw scan`'s CPU). Eight times the budget optimises only what stays hot. Not for the
// long-lived `amw serve`, which keeps V8's default. Set before the bundle is loaded.
if (commandName(process.argv.slice(2)) !== 'serve') setFlagsFromString('--interrupt-budget=540672');

await import(pathToFileURL(cli).href);
