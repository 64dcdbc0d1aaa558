#!/usr/bin/env node
// `amw` entry: runs the bundled CLI. The bundle is made by `npm run build` (npm install does it).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write(
    `amw: ${cli} is missing; run \`npm run build\` in the workbench folder first.\n`,
  );
  process.exit(2);
}
await import(pathToFileURL(cli).href);
