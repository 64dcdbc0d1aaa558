#!/usr/bin/env node
// The long fuzz run: the suite in tests/fuzz/ with a time budget shared by every parser.
//   npm run fuzz                  10 minutes (default)
//   npm run fuzz -- --minutes 30  or AMW_FUZZ_MINUTES=30 npm run fuzz
// Exits non-zero on the first finding, printing the counterexample and the seed to replay it.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const i = process.argv.indexOf('--minutes');
const minutes = Number(i >= 0 ? process.argv[i + 1] : (process.env.AMW_FUZZ_MINUTES ?? 10));
if (!Number.isFinite(minutes) || minutes <= 0) {
  console.error('usage: npm run fuzz -- [--minutes N]   (N > 0; default 10)');
  process.exit(2);
}
console.log(`fuzzing every parser for ${minutes} minute(s)…`);
const started = Date.now();
const r = spawnSync(
  process.execPath,
  [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', 'tests/fuzz', '--reporter=verbose'],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      AMW_FUZZ_SECONDS: String(Math.round(minutes * 60)),
      AMW_SKIP_BUILD: '1',
    },
  },
);
console.log(
  `fuzz ended after ${((Date.now() - started) / 60000).toFixed(1)} min, exit ${r.status}`,
);
process.exit(r.status ?? 1);
