import { renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupResult } from '../../../shared/api';
import type { Db } from '../db/open';
import { mkdirPrivate, touchPrivate } from '../db/private-files';
import type { JobContext } from '../jobs/runner';

/** Pages copied per step: small enough that progress and cancellation stay responsive. */
const PAGES_PER_STEP = 64;

/**
 * Online backup through SQLite's backup API, written to a temporary name and renamed when
 * complete, so a cancelled or failed backup never leaves a file that looks whole.
 */
export async function backupDatabase(
  db: Db,
  dataDir: string,
  ctx: JobContext,
  opts: { pagesPerStep?: number } = {},
): Promise<BackupResult> {
  const dir = join(dataDir, 'backups');
  mkdirPrivate(dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = join(dir, `amw-${stamp}.db`);
  // named by this process, so a later start can tell a killed backup's leftovers from a running
  // one (see sweepPartials); created 0600 before SQLite writes it, and so is its -journal
  const tmp = `${file}.${process.pid}.partial`;
  touchPrivate(tmp);
  const step = opts.pagesPerStep ?? PAGES_PER_STEP;
  try {
    const { totalPages } = await db.backup(tmp, {
      progress: ({ totalPages: total, remainingPages }) => {
        // Throwing here makes better-sqlite3 close the backup and reject.
        ctx.throwIfCancelled();
        const done = total - remainingPages;
        ctx.progress(total ? done / total : null, {
          key: 'copyPages',
          params: { done, total },
        });
        return step;
      },
    });
    ctx.throwIfCancelled();
    renameSync(tmp, file);
    // the job's last word says where the copy is (the jobs list shows it)
    ctx.progress(1, { key: 'backupWritten', params: { file } });
    return { file, bytes: statSync(file).size, pages: totalPages };
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}-journal`, { force: true });
  }
}
