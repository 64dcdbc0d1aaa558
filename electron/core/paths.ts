import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PRODUCT_NAME = 'Ascend Migration Workbench';
const PACKAGE_NAME = 'ascend-migration-workbench';

let cachedRoot: string | undefined;

/**
 * The package root, found by walking up from this file. Works from the TypeScript sources (tests),
 * from the bundles in dist/, and inside an Electron asar alike.
 */
export function appRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === PACKAGE_NAME) {
          cachedRoot = dir;
          return dir;
        }
      } catch {
        // an unreadable package.json further down is not ours; keep walking
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root`);
    dir = parent;
  }
}

export function appVersion(): string {
  return (JSON.parse(readFileSync(join(appRoot(), 'package.json'), 'utf8')) as { version: string })
    .version;
}

export const resourcesDir = (): string => join(appRoot(), 'resources');
export const migrationsDir = (): string => join(appRoot(), 'electron', 'core', 'db', 'migrations');
export const rendererDistDir = (): string => join(appRoot(), 'dist', 'renderer');

/**
 * The directory Electron would use as userData, so the desktop app and the CLI share one store
 * unless told otherwise.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const home = homedir();
  if (process.platform === 'win32') {
    return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), PRODUCT_NAME);
  }
  if (process.platform === 'darwin') {
    return join(home, 'Library', 'Application Support', PRODUCT_NAME);
  }
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), PRODUCT_NAME);
}

export interface StoreLocation {
  dataDir: string;
  dbPath: string;
  /**
   * The data directory is the workbench's own (AMW_HOME or the default), so it is kept private
   * (0700). False when it is only the folder an explicit --db file happens to sit in.
   */
  ownDir?: boolean;
}

/**
 * Where the store lives: an explicit db path wins, then AMW_DB, then AMW_HOME (or the caller's
 * default, e.g. Electron userData), then the platform default. Artifacts sit beside the database.
 */
export function resolveStoreLocation(
  opts: { db?: string; home?: string } = {},
  env: NodeJS.ProcessEnv = process.env,
): StoreLocation {
  const db = opts.db ?? env.AMW_DB;
  if (db) {
    const dbPath = resolve(db);
    return env.AMW_HOME
      ? { dataDir: resolve(env.AMW_HOME), dbPath, ownDir: true }
      : { dataDir: dirname(dbPath), dbPath, ownDir: false };
  }
  const dataDir = resolve(env.AMW_HOME ?? opts.home ?? defaultDataDir(env));
  return { dataDir, dbPath: join(dataDir, 'amw.db'), ownDir: true };
}
