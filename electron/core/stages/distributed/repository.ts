import type { DistributedResult } from '../../../../shared/stages/distributed/api';
import { AmwError } from '../../../../shared/errors';
import { msg } from '../../../../shared/api/text';
import type { ArtifactStore } from '../../db/artifacts';
import type { Db } from '../../db/open';
import { nowIso } from '../../db/open';

/** The distributed stage's table: a run's fleet document (an artifact) and its headline. */
export class DistributedRepository {
  constructor(
    private readonly db: Db,
    private readonly artifacts: ArtifactStore,
  ) {}

  save(runId: number, result: DistributedResult): void {
    const sha = this.artifacts.put(JSON.stringify(result), 'distributed', 'application/json');
    this.db
      .prepare(
        'INSERT OR REPLACE INTO distributed_runs (stage_run_id, hosts, answered, collective_ok, result_sha256, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(
        runId,
        result.hosts.length,
        result.hosts.filter((h) => h.reachable).length,
        result.collective ? (result.collective.ok ? 1 : 0) : null,
        sha,
        nowIso(),
      );
  }

  has(runId: number): boolean {
    return !!this.db.prepare('SELECT 1 FROM distributed_runs WHERE stage_run_id = ?').get(runId);
  }

  get(runId: number): DistributedResult {
    const row = this.db
      .prepare('SELECT result_sha256 FROM distributed_runs WHERE stage_run_id = ?')
      .get(runId) as { result_sha256: string } | undefined;
    if (!row)
      throw new AmwError('NOT_FOUND', msg('errors.text.noDistributed', { id: runId }), {
        runId,
      });
    return JSON.parse(this.artifacts.readText(row.result_sha256)) as DistributedResult;
  }
}
