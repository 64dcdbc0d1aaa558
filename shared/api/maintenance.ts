import { method } from './define';
import { NoInput } from './common';
import type { JobStarted } from './jobs';

/** Result of a finished `maintenance.backup` job. */
export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
}

/** Result of a finished `maintenance.check` job. */
export interface CheckResult {
  ok: boolean;
  /** `PRAGMA integrity_check` lines other than "ok". */
  integrity: string[];
  /** Rows that break a foreign key. */
  foreignKeys: { table: string; rowid: number | null; parent: string }[];
  artifacts: {
    checked: number;
    missing: string[];
    corrupt: string[];
    /** The missing and damaged files by name, with what they hold (the first 200). */
    files?: { sha256: string; kind: string; path: string; problem: 'missing' | 'damaged' }[];
  };
}

export const maintenanceApi = {
  /** Copies the live database into `<data dir>/backups/` page by page (a job). */
  'maintenance.backup': method(NoInput).returns<JobStarted>(),
  /** Verifies the database and every stored artifact against its sha256 (a job). */
  'maintenance.check': method(NoInput).returns<JobStarted>(),
};
