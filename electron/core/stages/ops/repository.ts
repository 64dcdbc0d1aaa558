import type { OpsResult, RawOpTrace } from '../../../../shared/stages/ops/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { ArtifactStore } from '../../db/artifacts';
import type { Db } from '../../db/open';
import { nowIso } from '../../db/open';
import { classifyTrace } from './classify';

/** The ops stage's own table: a run's raw trace (an artifact), its entry and target version. */
export class OpTraceRepository {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  save(runId: number, entry: string, target: string, trace: RawOpTrace): void {
    const sha = this.artifacts.put(JSON.stringify(trace), 'ops-trace', 'application/json');
    this.db
      .prepare(
        'INSERT OR REPLACE INTO op_traces (stage_run_id, entry, target_torch_npu, trace_sha256, created_at) VALUES (?, ?, ?, ?, ?)',
      )
      .run(runId, entry, target, sha, nowIso());
  }

  has(runId: number): boolean {
    return !!this.db.prepare('SELECT 1 FROM op_traces WHERE stage_run_id = ?').get(runId);
  }

  /** A stored run's trace, classified for its own target or for another torch_npu. */
  classified(runId: number, torchNpu?: string): OpsResult & { stageRunId: number; entry: string } {
    const row = this.db
      .prepare('SELECT entry, target_torch_npu, trace_sha256 FROM op_traces WHERE stage_run_id = ?')
      .get(runId) as { entry: string; target_torch_npu: string; trace_sha256: string } | undefined;
    if (!row) throw new AmwError('NOT_FOUND', msg('errors.text.noOpTrace', { id: runId }));
    const trace = JSON.parse(this.artifacts.readText(row.trace_sha256)) as RawOpTrace;
    return {
      ...classifyTrace(trace, torchNpu ?? row.target_torch_npu),
      stageRunId: runId,
      entry: row.entry,
    };
  }
}
