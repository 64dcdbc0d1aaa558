import type { ProfileResult } from '../../../../shared/stages/profiling/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { ArtifactStore } from '../../db/artifacts';
import type { Db } from '../../db/open';
import { nowIso } from '../../db/open';

export interface GatheredFile {
  host: string;
  path: string;
  size: number;
  sha256: string;
}

/** A stored profile as a list shows it (to pick two to compare). */
export interface StoredProfile {
  stageRunId: number;
  sessionId: number;
  /** The host(s) it ran on (`(local)` for an import of a folder here). */
  host: string;
  source: string;
  kind: string;
  profiler: string | null;
  createdAt: string;
}

/** The profiling stage's tables: a run's analysed profile (an artifact) and the files it came from. */
export class ProfileRepository {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  save(
    runId: number,
    result: ProfileResult,
    at: {
      entry?: string | null;
      profiler?: string | null;
      filesDir?: string | null;
      files?: GatheredFile[];
    } = {},
  ): void {
    const sha = this.artifacts.put(JSON.stringify(result), 'profile', 'application/json');
    this.db.transaction(() => {
      this.db
        .prepare(
          'INSERT OR REPLACE INTO profiles (stage_run_id, source, kind, entry, profiler, result_sha256, files_dir, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(
          runId,
          result.source,
          result.kind,
          at.entry ?? null,
          at.profiler ?? null,
          sha,
          at.filesDir ?? null,
          nowIso(),
        );
      const insert = this.db.prepare(
        'INSERT OR REPLACE INTO profile_files (stage_run_id, host, path, size, sha256) VALUES (?, ?, ?, ?, ?)',
      );
      for (const f of at.files ?? []) insert.run(runId, f.host, f.path, f.size, f.sha256);
    })();
  }

  has(runId: number): boolean {
    return !!this.db.prepare('SELECT 1 FROM profiles WHERE stage_run_id = ?').get(runId);
  }

  get(runId: number): ProfileResult & { entry: string | null; profiler: string | null } {
    const row = this.db
      .prepare('SELECT entry, profiler, result_sha256 FROM profiles WHERE stage_run_id = ?')
      .get(runId) as
      { entry: string | null; profiler: string | null; result_sha256: string } | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noProfile', { id: runId }));
    return {
      ...(JSON.parse(this.artifacts.readText(row.result_sha256)) as ProfileResult),
      entry: row.entry,
      profiler: row.profiler,
    };
  }

  /** The folder the profile was read from (an import's own folder, or the gathered copy). */
  filesDir(runId: number): string | null {
    const row = this.db
      .prepare('SELECT files_dir FROM profiles WHERE stage_run_id = ?')
      .get(runId) as { files_dir: string | null } | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noProfile', { id: runId }));
    return row.files_dir;
  }

  /**
   * Stored profiles, newest first: those of `sessionId` before every other (a GPU baseline is
   * often profiled in a session of its own), at most `limit`.
   */
  list(sessionId: number | undefined, limit: number): StoredProfile[] {
    return this.db
      .prepare(
        `SELECT p.stage_run_id AS stageRunId, r.session_id AS sessionId, r.target AS host,
                p.source, p.kind, p.profiler, p.created_at AS createdAt
           FROM profiles p JOIN stage_runs r ON r.id = p.stage_run_id
          ORDER BY (r.session_id = ?) DESC, p.stage_run_id DESC LIMIT ?`,
      )
      .all(sessionId ?? 0, limit) as StoredProfile[];
  }

  files(runId: number): GatheredFile[] {
    return this.db
      .prepare(
        'SELECT host, path, size, sha256 FROM profile_files WHERE stage_run_id = ? ORDER BY host, path',
      )
      .all(runId) as GatheredFile[];
  }
}
