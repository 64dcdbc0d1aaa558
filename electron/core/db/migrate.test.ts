import { appendFileSync, cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AmwError } from '../../../shared/errors';
import { migrationsDir } from '../paths';
import { tempDir } from '../../../tests/support/temp';
import { loadMigrations } from './migrate';
import { openStore } from './open';

const EXPECTED_TABLES = [
  'artifacts',
  'audit_log',
  'check_results',
  'distributed_runs',
  'findings',
  'hosts',
  'inventories',
  'jobs',
  'projects',
  'schema_migrations',
  'sessions',
  'settings',
  'stage_runs',
  'waivers',
];

function catchAmw(fn: () => unknown): AmwError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AmwError) return err;
    throw err;
  }
  throw new Error('expected an AmwError');
}

describe('migrations from an empty database', () => {
  it('creates every table as STRICT, with WAL and foreign keys on', () => {
    const dbPath = join(tempDir(), 'amw.db');
    const { db, schemaVersion } = openStore(dbPath);
    const latest = loadMigrations(migrationsDir()).length;
    expect(schemaVersion).toBe(latest);
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    const tables = db
      .prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
      .all() as { name: string; sql: string }[];
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(EXPECTED_TABLES));
    for (const t of tables) expect(t.sql, t.name).toMatch(/\)\s*STRICT$/);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    // STRICT: a wrong type is an error, not a silent coercion
    expect(() =>
      db
        .prepare(
          `INSERT INTO hosts (name, hostname, port, created_at, updated_at) VALUES ('a','h','x','t','t')`,
        )
        .run(),
    ).toThrow(/cannot store TEXT value in INTEGER column/);
    // foreign keys are enforced
    expect(() =>
      db.prepare(`INSERT INTO inventories (host_id, taken_at, data) VALUES (999, 't', '{}')`).run(),
    ).toThrow(/FOREIGN KEY/);
    db.close();
  });

  it('reopening an up-to-date database changes nothing', () => {
    const dbPath = join(tempDir(), 'amw.db');
    openStore(dbPath).db.close();
    const { db } = openStore(dbPath);
    const rows = db.prepare('SELECT version FROM schema_migrations').all();
    expect(rows).toHaveLength(loadMigrations(migrationsDir()).length);
    db.close();
  });
});

describe('refusals', () => {
  it('refuses a database written by a newer version, naming both versions and the file', () => {
    const dbPath = join(tempDir(), 'amw.db');
    openStore(dbPath).db.close();
    const raw = new Database(dbPath);
    raw.pragma('user_version = 42');
    raw.close();
    const err = catchAmw(() => openStore(dbPath));
    expect(err.code).toBe('DB_TOO_NEW');
    expect(err.message).toContain('42');
    expect(err.message).toContain(String(loadMigrations(migrationsDir()).length));
    expect(err.message).toContain(dbPath);
    expect(err.detail).toMatchObject({ dbVersion: 42, dbPath });
  });

  it('detects a migration edited after it was applied', () => {
    const dir = tempDir();
    const migrations = join(dir, 'migrations');
    cpSync(migrationsDir(), migrations, { recursive: true });
    const dbPath = join(dir, 'amw.db');
    openStore(dbPath, { migrationsDir: migrations }).db.close();
    appendFileSync(join(migrations, '0001_initial.sql'), '\n-- a harmless-looking edit\n');
    const err = catchAmw(() => openStore(dbPath, { migrationsDir: migrations }));
    expect(err.code).toBe('DB_MIGRATION_EDITED');
    expect(err.message).toContain('0001_initial');
  });

  it('applies a failing migration not at all, and keeps the earlier versions', () => {
    const dir = tempDir();
    const migrations = join(dir, 'migrations');
    cpSync(migrationsDir(), migrations, { recursive: true });
    const next = String(loadMigrations(migrations).length + 1).padStart(4, '0');
    writeFileSync(
      join(migrations, `${next}_broken.sql`),
      'CREATE TABLE half_done (id INTEGER) STRICT;\nINSERT INTO no_such_table VALUES (1);\n',
    );
    const dbPath = join(dir, 'amw.db');
    expect(() => openStore(dbPath, { migrationsDir: migrations })).toThrow(/no_such_table/);
    const raw = new Database(dbPath);
    expect(raw.pragma('user_version', { simple: true })).toBe(Number(next) - 1);
    expect(
      raw.prepare(`SELECT name FROM sqlite_schema WHERE name = 'half_done'`).get(),
    ).toBeUndefined();
    raw.close();
  });

  it('waivers stored before 0015 keep naming their host when the target column arrives', () => {
    const dir = tempDir();
    const older = join(dir, 'migrations');
    cpSync(migrationsDir(), older, { recursive: true });
    for (const f of readdirSync(older)) if (f >= '0015') rmSync(join(older, f));
    const dbPath = join(dir, 'amw.db');
    const { db } = openStore(dbPath, { migrationsDir: older });
    db.prepare(
      `INSERT INTO hosts (name, hostname, port, created_at, updated_at) VALUES ('npu-a', 'h', 22, 't', 't')`,
    ).run();
    db.prepare(`INSERT INTO sessions (title, hosts, created_at) VALUES ('s', '[]', 't')`).run();
    db.prepare(
      `INSERT INTO waivers (session_id, check_id, host_id, reason, waived_by, created_at) VALUES (1, 'env.limits', 1, 'ok', 'li', 't')`,
    ).run();
    db.close();
    const now = openStore(dbPath).db;
    // and no longer go with the host when it is removed (runs do not either)
    expect(now.prepare('SELECT target, host_id FROM waivers').all()).toEqual([
      { target: 'npu-a', host_id: null },
    ]);
    now.close();
  });

  it('rejects gaps in migration numbers', () => {
    const dir = tempDir();
    cpSync(migrationsDir(), dir, { recursive: true });
    // one number past the next: the last shipped migration + 2
    const gap = String(loadMigrations(migrationsDir()).length + 2).padStart(4, '0');
    writeFileSync(join(dir, `${gap}_gap.sql`), 'SELECT 1;');
    expect(() => loadMigrations(dir)).toThrow(/without gaps/);
  });
});

describe('bad database files', () => {
  it('names a corrupt file and says what to do', () => {
    const dbPath = join(tempDir(), 'amw.db');
    writeFileSync(dbPath, 'this is not sqlite, just some text that fills a header '.repeat(100));
    const err = catchAmw(() => openStore(dbPath));
    expect(err.code).toBe('DB_CORRUPT');
    expect(err.message).toContain(dbPath);
  });

  it('names an unwritable location', () => {
    const dir = tempDir();
    const blocker = join(dir, 'file');
    writeFileSync(blocker, 'x');
    const dbPath = join(blocker, 'amw.db'); // parent is a file: cannot be created
    const err = catchAmw(() => openStore(dbPath));
    expect(err.code).toBe('DB_UNWRITABLE');
    expect(err.message).toContain(dbPath);
  });
});
