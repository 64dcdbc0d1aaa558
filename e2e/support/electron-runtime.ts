import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * Where the Electron binary is, or why there is none. `npm install` here never downloads it (the
 * package's install script is denied in package.json; its download host is unreachable anyway).
 */
export function electronRuntime(): { path: string } | { skip: string } {
  let pkgDir: string;
  try {
    pkgDir = join(createRequire(import.meta.url).resolve('electron/package.json'), '..');
  } catch {
    return { skip: 'electron package not installed' };
  }
  const pathFile = join(pkgDir, 'path.txt');
  if (!existsSync(pathFile)) {
    return {
      skip: 'Electron runtime not downloaded (run `node node_modules/electron/install.js` where its download host is reachable)',
    };
  }
  const exe = join(pkgDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(exe) ? { path: exe } : { skip: `Electron binary missing at ${exe}` };
}
