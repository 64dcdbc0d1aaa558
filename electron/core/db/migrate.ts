import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { AmwError } from '../../../shared/errors';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  sha256: string;
}

const FILE_PATTERN = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/** Reads `NNNN_name.sql` files; numbers must run 1, 2, 3 … with no gap or duplicate. */
export function loadMigrations(dir: string): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  const migrations = files.map((file) => {
    const m = FILE_PATTERN.exec(file);
    if (!m) throw new Error(`migration file name must look like 0001_name.sql: ${file}`);
    // Hash with normalised line endings so a CRLF checkout does not look like an edit.
    const sql = readFileSync(join(dir, file), 'utf8').replace(/\r\n/g, '\n');
    return {
      version: Number(m[1]),
      name: m[2]!,
      sql,
      sha256: createHash('sha256').update(sql).digest('hex'),
    };
  });
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new Error(
        `migrations must be numbered without gaps: expected ${i + 1}, found ${m.version}`,
      );
    }
  });
  return migrations;
}

export function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the database up to the newest migration. Each migration runs in its own transaction
 * together with its `user_version` bump, so a crash leaves the database at a whole version.
 */
export function migrate(db: Database.Database, migrations: Migration[], dbPath: string): number {
  const latest = migrations.length;
  const current = userVersion(db);
  if (current > latest) {
    throw new AmwError(
      'DB_TOO_NEW',
      `The database ${dbPath} has schema version ${current}, but this version of the workbench knows only up to ${latest}. Update the workbench, or point it at another database with --db.`,
      { dbPath, dbVersion: current, appVersion: latest },
    );
  }
  if (current > 0) verifyApplied(db, migrations.slice(0, current), dbPath);

  const record = (m: Migration) =>
    db
      .prepare(
        'INSERT INTO schema_migrations (version, name, sha256, applied_at) VALUES (?, ?, ?, ?)',
      )
      .run(m.version, m.name, m.sha256, new Date().toISOString());

  for (const m of migrations.slice(current)) {
    db.transaction(() => {
      db.exec(m.sql);
      record(m);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
  return latest;
}

function verifyApplied(db: Database.Database, applied: Migration[], dbPath: string): void {
  const rows = db.prepare('SELECT version, name, sha256 FROM schema_migrations').all() as {
    version: number;
    name: string;
    sha256: string;
  }[];
  const byVersion = new Map(rows.map((r) => [r.version, r]));
  for (const m of applied) {
    const row = byVersion.get(m.version);
    if (!row || row.sha256 !== m.sha256) {
      throw new AmwError(
        'DB_MIGRATION_EDITED',
        `Migration ${String(m.version).padStart(4, '0')}_${m.name} was changed after it was applied to ${dbPath}. Shipped migrations must never be edited; add a new migration instead.`,
        { dbPath, version: m.version, expected: row?.sha256 ?? null, actual: m.sha256 },
      );
    }
  }
}
