import type { Msg } from '../../../../shared/api/text';
import type {
  ModuleCompare,
  PrecisionCompareResult,
  PrecisionHistoryRow,
  PrecisionRunView,
  RawDump,
} from '../../../../shared/stages/precision/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { ArtifactStore } from '../../db/artifacts';
import type { Db } from '../../db/open';
import { nowIso } from '../../db/open';
import { firstDivergence } from './compare';

export interface PrecisionRunRow {
  source: 'run' | 'import';
  baseline: string;
  entry: string;
  backward: boolean;
  inputsSha256: string | null;
  baselineSnapshotId: number | null;
  targetSnapshotId: number | null;
  dumps: { baseline: RawDump; target: RawDump } | null;
  problems: Msg[];
}

interface ModuleRow {
  ord: number;
  module: string;
  cls: string | null;
  source: string | null;
  kind: string;
  result: string;
  reason: string | null;
  cosine: number | null;
  max_abs_err: number | null;
  max_rel_err: number | null;
  mean_rel_err: number | null;
  one_ratio: number | null;
  five_ratio: number | null;
  stat_drift: number | null;
  baseline: string | null;
  target: string | null;
}

/** The precision stage's tables: one row per run, one per module compared. */
export class PrecisionRepository {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  save(runId: number, run: PrecisionRunRow, result: PrecisionCompareResult): void {
    const dump = (d: RawDump | undefined) =>
      d ? this.artifacts.put(JSON.stringify(d), 'precision-dump', 'application/json') : null;
    const insert = this.db.prepare(
      `INSERT INTO precision_modules (stage_run_id, ord, module, cls, source, kind, result, reason,
         cosine, max_abs_err, max_rel_err, mean_rel_err, one_ratio, five_ratio, stat_drift, baseline, target)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const baselineSha = dump(run.dumps?.baseline);
    const targetSha = dump(run.dumps?.target);
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT OR REPLACE INTO precision_runs (stage_run_id, source, baseline, entry, dtype, mode, backward,
             inputs_sha256, baseline_snapshot_id, target_snapshot_id, baseline_dump_sha256, target_dump_sha256,
             first_divergence, n_pass, n_warning, n_error, problems, unmatched, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          runId,
          run.source,
          run.baseline,
          run.entry,
          result.dtype,
          result.mode,
          run.backward ? 1 : 0,
          run.inputsSha256,
          run.baselineSnapshotId,
          run.targetSnapshotId,
          baselineSha,
          targetSha,
          result.firstDivergence?.module ?? null,
          result.counts.pass,
          result.counts.warning,
          result.counts.error,
          JSON.stringify(run.problems),
          JSON.stringify(result.unmatched),
          nowIso(),
        );
      this.db.prepare('DELETE FROM precision_modules WHERE stage_run_id = ?').run(runId);
      for (const m of result.modules)
        insert.run(
          runId,
          m.order,
          m.module,
          m.cls,
          m.source,
          m.kind,
          m.result,
          m.reason ? JSON.stringify(m.reason) : null,
          m.cosine,
          m.maxAbsErr,
          m.maxRelErr,
          m.meanRelErr,
          m.oneThousandthRatio,
          m.fiveThousandthsRatio,
          m.statDrift,
          m.baseline ? JSON.stringify(m.baseline) : null,
          m.target ? JSON.stringify(m.target) : null,
        );
    })();
  }

  has(runId: number): boolean {
    return !!this.db.prepare('SELECT 1 FROM precision_runs WHERE stage_run_id = ?').get(runId);
  }

  get(runId: number, host: string): PrecisionRunView {
    const r = this.db.prepare('SELECT * FROM precision_runs WHERE stage_run_id = ?').get(runId) as
      Record<string, unknown> | undefined;
    if (!r) throw new AmwError('NOT_FOUND', msg('errors.text.noPrecision', { id: runId }));
    const rows = this.db
      .prepare('SELECT * FROM precision_modules WHERE stage_run_id = ? ORDER BY ord')
      .all(runId) as ModuleRow[];
    const modules: ModuleCompare[] = rows.map((x) => ({
      module: x.module,
      order: x.ord,
      cls: x.cls,
      source: x.source,
      kind: x.kind as ModuleCompare['kind'],
      result: x.result as ModuleCompare['result'],
      reason: x.reason ? (JSON.parse(x.reason) as ModuleCompare['reason']) : null,
      cosine: x.cosine,
      maxAbsErr: x.max_abs_err,
      maxRelErr: x.max_rel_err,
      meanRelErr: x.mean_rel_err,
      oneThousandthRatio: x.one_ratio,
      fiveThousandthsRatio: x.five_ratio,
      statDrift: x.stat_drift,
      baseline: x.baseline ? (JSON.parse(x.baseline) as ModuleCompare['baseline']) : null,
      target: x.target ? (JSON.parse(x.target) as ModuleCompare['target']) : null,
    }));
    return {
      stageRunId: runId,
      source: r.source as 'run' | 'import',
      host,
      baseline: r.baseline as string,
      entry: r.entry as string,
      backward: r.backward === 1,
      inputsSha256: (r.inputs_sha256 as string | null) ?? null,
      createdAt: r.created_at as string,
      dtype: r.dtype as PrecisionRunView['dtype'],
      mode: r.mode as PrecisionRunView['mode'],
      counts: {
        pass: r.n_pass as number,
        warning: r.n_warning as number,
        error: r.n_error as number,
      },
      firstDivergence: firstDivergence(modules),
      modules,
      unmatched: JSON.parse(r.unmatched as string) as PrecisionRunView['unmatched'],
      problems: JSON.parse(r.problems as string) as Msg[],
    };
  }

  /** The raw dumps of a run (both sides), for drill-down. */
  dumps(runId: number): { baseline: RawDump | null; target: RawDump | null } {
    const r = this.db
      .prepare(
        'SELECT baseline_dump_sha256 b, target_dump_sha256 t FROM precision_runs WHERE stage_run_id = ?',
      )
      .get(runId) as { b: string | null; t: string | null } | undefined;
    const read = (sha: string | null | undefined) =>
      sha ? (JSON.parse(this.artifacts.readText(sha)) as RawDump) : null;
    return { baseline: read(r?.b), target: read(r?.t) };
  }

  /** A session's runs, newest first: how the first divergence moved over time. */
  history(sessionId: number): PrecisionHistoryRow[] {
    const rows = this.db
      .prepare(
        `SELECT p.*, s.target AS host FROM precision_runs p JOIN stage_runs s ON s.id = p.stage_run_id
          WHERE s.session_id = ? ORDER BY p.stage_run_id DESC`,
      )
      .all(sessionId) as Record<string, unknown>[];
    return rows.map(historyRow);
  }

  /** One run's history row (NOT_FOUND when the run has no precision comparison). */
  row(runId: number): PrecisionHistoryRow {
    const r = this.db
      .prepare(
        `SELECT p.*, s.target AS host FROM precision_runs p JOIN stage_runs s ON s.id = p.stage_run_id
          WHERE p.stage_run_id = ?`,
      )
      .get(runId) as Record<string, unknown> | undefined;
    if (!r) throw new AmwError('NOT_FOUND', msg('errors.text.noPrecision', { id: runId }));
    return historyRow(r);
  }
}

function historyRow(r: Record<string, unknown>): PrecisionHistoryRow {
  return {
    stageRunId: r.stage_run_id as number,
    source: r.source as 'run' | 'import',
    host: (r.host as string | null) ?? '',
    baseline: r.baseline as string,
    entry: r.entry as string,
    dtype: r.dtype as string,
    mode: r.mode as string,
    createdAt: r.created_at as string,
    firstDivergence: (r.first_divergence as string | null) ?? null,
    counts: {
      pass: r.n_pass as number,
      warning: r.n_warning as number,
      error: r.n_error as number,
    },
  };
}
