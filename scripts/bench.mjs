// `npm run bench [name]`: runs each bench/*.bench.ts; each prints its own figures.
// Benchmarks print numbers; nothing here asserts a speed.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { runTs } from './run-ts.mjs';

const only = process.argv[2];
// the scan bench uses the built worker (dist/scan-worker.js), the diff view bench the built page:
// build what the chosen benches run
const needsPage = !only || ['diffview', 'timeline', 'charts'].some((b) => b.includes(only));
execFileSync(process.execPath, ['scripts/build.mjs', ...(needsPage ? [] : ['node'])], {
  stdio: 'inherit',
});
let failed = false;
for (const file of readdirSync('bench').filter(
  (f) => f.endsWith('.bench.ts') && (!only || f.includes(only)),
)) {
  console.log(`\n## bench/${file}`);
  failed ||= (await runTs(`bench/${file}`, [], ['--expose-gc'])) !== 0;
}
process.exit(failed ? 1 : 0);
