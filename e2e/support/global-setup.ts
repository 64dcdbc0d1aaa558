import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { electronRuntime } from './electron-runtime';
import { chromiumPath } from './chromium';

export default function globalSetup(): void {
  if (!existsSync('dist/cli.js') || !existsSync('dist/renderer/index.html')) {
    execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  }
  if (!chromiumPath()) {
    throw new Error(
      'Chromium not found: install Debian chromium (apt-get install chromium) or set AMW_CHROMIUM',
    );
  }
  const electron = electronRuntime();
  if ('skip' in electron) console.log(`electron e2e project skipped: ${electron.skip}`);
}
