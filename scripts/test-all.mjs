// The whole test suite, as the README's second command runs it: system packages, lint, types,
// build, unit + integration (vitest), e2e (Playwright in Debian Chromium). Ends with one line
// "amw tests: N passed, N failed, N skipped" and a non-zero exit if anything failed.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, mkdirSync } from 'node:fs';
import { ensureSystemPackages } from './system-deps.mjs';

ensureSystemPackages();
mkdirSync('test-results', { recursive: true });

const steps = [
  ['lint', 'node_modules/.bin/eslint', ['.']],
  ['format', 'node_modules/.bin/prettier', ['--check', '--log-level', 'warn', '.']],
  ['typecheck', process.execPath, ['scripts/typecheck.mjs']],
  ['build', process.execPath, ['scripts/build.mjs']],
  [
    'unit+integration',
    'node_modules/.bin/vitest',
    ['run', '--reporter=default', '--reporter=json', '--outputFile.json=test-results/unit.json'],
    { AMW_SKIP_BUILD: '1' },
  ],
  ['e2e', 'node_modules/.bin/playwright', ['test']],
];

const failedSteps = [];
for (const [name, cmd, args, env] of steps) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  console.log(
    `=== ${name}: ${r.status === 0 ? 'ok' : `FAILED (exit ${r.status ?? r.signal})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  if (r.status !== 0) failedSteps.push(name);
}

let passed = 0;
let failed = 0;
let skipped = 0;
const read = (f) => (existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null);
const unit = read('test-results/unit.json');
if (unit) {
  passed += unit.numPassedTests;
  failed += unit.numFailedTests;
  skipped += unit.numPendingTests + unit.numTodoTests;
}
const e2e = read('test-results/e2e.json');
if (e2e) {
  passed += e2e.stats.expected + e2e.stats.flaky;
  failed += e2e.stats.unexpected;
  skipped += e2e.stats.skipped;
}
// a step that failed without failing a test (lint, types, build) still counts as a failure
failed += failedSteps.filter((s) => !['unit+integration', 'e2e'].includes(s)).length;
if (failedSteps.length) console.log(`\nfailed steps: ${failedSteps.join(', ')}`);
console.log(`\namw tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failedSteps.length ? 1 : 0);
