import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { msg } from '../../../shared/api/text';
import { AmwError } from '../../../shared/errors';
import { migrationsDir, type StoreLocation } from '../paths';
import { loadMigrations, migrate } from './migrate';
import {
  freeBytes,
  mkdirPrivate,
  PRIVATE_DIR,
  PRIVATE_FILE,
  sweepPartials,
  tighten,
  touchPrivate,
} from './private-files';

export type Db = Database.Database;

export interface OpenedStore {
  db: Db;
  schemaVersion: number;
}

/**
 * Opens (creating if needed) and migrates the store. Every failure becomes an AmwError that names
 * the file, so the app and the CLI can say what is wrong instead of crashing in a loop.
 */
export function openStore(
  dbPath: string,
  opts: { migrationsDir?: string; nativeBinding?: string; location?: StoreLocation } = {},
): OpenedStore {
  const dataDir = opts.location?.ownDir ? opts.location.dataDir : null;
  try {
    // the data directory and every file in it are private: they hold hosts, users, key paths
    if (dataDir) {
      mkdirPrivate(dataDir);
      tighten(dataDir, PRIVATE_DIR);
      for (const sub of ['backups', 'artifacts']) tighten(join(dataDir, sub), PRIVATE_DIR);
    }
    mkdirPrivate(dirname(dbPath));
    // created 0600 before SQLite opens it: the -wal and -shm files take the database's mode
    touchPrivate(dbPath);
    for (const suffix of ['-wal', '-shm', '-journal']) tighten(`${dbPath}${suffix}`, PRIVATE_FILE);
  } catch (err) {
    throw classify(err, dbPath);
  }
  let db: Db | undefined;
  try {
    // Electron passes its own build of the native module (see scripts/start.mjs).
    db = new Database(dbPath, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    const schemaVersion = migrate(
      db,
      loadMigrations(opts.migrationsDir ?? migrationsDir()),
      dbPath,
    );
    // what a killed backup or artifact write left behind (not while its writer still runs)
    sweepPartials(opts.location?.dataDir ?? dirname(dbPath));
    return { db, schemaVersion };
  } catch (err) {
    db?.close();
    throw classify(err, dbPath);
  }
}

export function classify(err: unknown, dbPath: string): AmwError {
  if (err instanceof AmwError) return err;
  const code = (err as { code?: string }).code ?? '';
  const reason = err instanceof Error ? err.message : String(err);
  const free = freeBytes(dirname(dbPath));
  if (
    code === 'SQLITE_FULL' ||
    code === 'ENOSPC' ||
    ((code.startsWith('SQLITE_IOERR') || /disk I\/O error/i.test(reason)) &&
      free !== null &&
      free < 1024 * 1024)
  ) {
    return new AmwError(
      'DB_DISK_FULL',
      msg('errors.text.diskFull', { dbPath, free: free ?? 0, reason }),
      { dbPath, free },
    );
  }
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new AmwError(
      'DB_CORRUPT',
      `The database file ${dbPath} is damaged or is not a workbench database (${reason}). Restore a backup or move the file away; the workbench will create a new one.`,
      { dbPath, sqlite: code },
    );
  }
  if (
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_PERM' ||
    code === 'EACCES' ||
    code === 'EROFS' ||
    code === 'EPERM' ||
    code === 'ENOTDIR' ||
    code === 'EEXIST' ||
    /directory does not exist/i.test(reason)
  ) {
    return new AmwError(
      'DB_UNWRITABLE',
      `Cannot open the database file ${dbPath} for writing (${reason}). Check its permissions or choose another location with --db or AMW_HOME.`,
      { dbPath, cause: code || reason },
    );
  }
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new AmwError(
      'DB_BUSY',
      `The database file ${dbPath} is locked by another process. Close the other workbench or CLI and try again.`,
      { dbPath, sqlite: code },
    );
  }
  return new AmwError('INTERNAL', msg('errors.text.dbOpenFailed', { dbPath, reason }), { dbPath });
}

export const nowIso = (): string => new Date().toISOString();
