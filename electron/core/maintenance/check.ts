import { existsSync } from 'node:fs';
import type { CheckResult } from '../../../shared/api';
import type { ArtifactStore } from '../db/artifacts';
import { hashFile } from '../db/artifacts';
import type { Db } from '../db/open';
import type { JobContext } from '../jobs/runner';

/**
 * Verifies the store end to end: SQLite's own integrity check, foreign keys, and every artifact
 * file against the sha256 it is named by. Progress counts artifacts, the slow part.
 */
export async function checkStore(
  db: Db,
  artifacts: ArtifactStore,
  ctx: JobContext,
): Promise<CheckResult> {
  // A badly damaged file makes SQLite throw instead of listing problems: that is a finding too.
  const damage = (err: unknown) =>
    `${(err as Error).message} (${(err as { code?: string }).code ?? 'error'})`;
  ctx.progress(null, { key: 'integrity' });
  let integrity: string[];
  try {
    integrity = (db.pragma('integrity_check') as { integrity_check: string }[])
      .map((r) => r.integrity_check)
      .filter((line) => line !== 'ok');
  } catch (err) {
    integrity = [damage(err)];
  }
  ctx.throwIfCancelled();

  ctx.progress(null, { key: 'foreignKeys' });
  let foreignKeys: CheckResult['foreignKeys'] = [];
  try {
    foreignKeys = (
      db.pragma('foreign_key_check') as { table: string; rowid: number | null; parent: string }[]
    ).map(({ table, rowid, parent }) => ({ table, rowid, parent }));
  } catch (err) {
    integrity.push(damage(err));
  }
  ctx.throwIfCancelled();

  let rows: { sha256: string; size: number; kind: string }[] = [];
  try {
    rows = artifacts.list();
  } catch (err) {
    integrity.push(damage(err));
  }
  const missing: string[] = [];
  const corrupt: string[] = [];
  // named, so a reader can look for them (or in a backup)
  const files: NonNullable<CheckResult['artifacts']['files']> = [];
  const named = (row: { sha256: string; kind: string }, problem: 'missing' | 'damaged') => {
    if (files.length < 200)
      files.push({
        sha256: row.sha256,
        kind: row.kind,
        path: artifacts.pathOf(row.sha256),
        problem,
      });
  };
  for (const [i, row] of rows.entries()) {
    ctx.throwIfCancelled();
    ctx.progress(i / rows.length, { key: 'artifacts', params: { done: i, total: rows.length } });
    const file = artifacts.pathOf(row.sha256);
    if (!existsSync(file)) {
      missing.push(row.sha256);
      named(row, 'missing');
      continue;
    }
    if ((await hashFile(file, ctx.signal)) !== row.sha256) {
      corrupt.push(row.sha256);
      named(row, 'damaged');
    }
  }
  ctx.progress(1, { key: 'artifacts', params: { done: rows.length, total: rows.length } });
  return {
    ok: integrity.length === 0 && foreignKeys.length === 0 && !missing.length && !corrupt.length,
    integrity,
    foreignKeys,
    artifacts: { checked: rows.length, missing, corrupt, files },
  };
}
