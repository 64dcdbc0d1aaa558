import { execFileSync } from 'node:child_process';

/** Tests that spawn `amw` run the real bundles: build them once before the suite. */
export default function setup(): void {
  if (process.env.AMW_SKIP_BUILD) return;
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
}
