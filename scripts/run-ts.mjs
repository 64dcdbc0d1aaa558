// Runs a TypeScript entry (a bench, the screenshot script) by bundling it with esbuild first:
// `node scripts/run-ts.mjs FILE.ts [args…]`. Dependencies stay external.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { basename } from 'node:path';

export async function runTs(entry, args = [], nodeArgs = []) {
  const out = `dist/run/${basename(entry).replace(/\.ts$/, '.js')}`;
  await build({
    entryPoints: [entry],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return spawnSync(process.execPath, [...nodeArgs, out, ...args], { stdio: 'inherit' }).status ?? 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [entry, ...args] = process.argv.slice(2);
  process.exit(await runTs(entry, args));
}
