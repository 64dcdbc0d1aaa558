// `npm run bench`: bundles each bench/*.ts with esbuild and runs it; each prints its own figures.
// Benchmarks print numbers; nothing here asserts a speed.
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const only = process.argv[2];
const entries = readdirSync('bench')
  .filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only)))
  .map((f) => `bench/${f}`);
await build({
  entryPoints: entries,
  outdir: 'dist/bench',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  logLevel: 'warning',
});
let failed = false;
for (const entry of entries) {
  const out = `dist/bench/${entry.slice('bench/'.length).replace(/\.ts$/, '.js')}`;
  console.log(`\n## ${entry}`);
  const r = spawnSync(process.execPath, ['--expose-gc', out], { stdio: 'inherit' });
  failed ||= r.status !== 0;
}
process.exit(failed ? 1 : 0);
