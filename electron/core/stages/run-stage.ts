import type { CheckOutcome, StageRunRecord } from '../../../shared/api';
import { AmwError } from '../../../shared/errors';
import type { ArtifactStore } from '../db/artifacts';
import type { HostService } from '../hosts/host-service';
import type { JobContext } from '../jobs/runner';
import { loadKnowledge } from '../knowledge/load';
import type { SessionRepository } from '../sessions/repository';
import { stageStatus } from '../sessions/repository';
import { ENV_CHECKS, type CheckDef } from './env/checks';
import { parseEnvFacts, type EnvFacts } from './env/facts';

export interface StageDeps {
  hosts: HostService;
  sessions: SessionRepository;
  artifacts: ArtifactStore;
}

/** Runs every check's pure evaluator; one that throws becomes an `error` outcome, not a crash. */
export function evaluateChecks(checks: CheckDef[], facts: EnvFacts): CheckOutcome[] {
  const knowledge = loadKnowledge();
  return checks.map((def) => {
    try {
      return { id: def.id, title: def.title, ...def.evaluate(facts, knowledge) };
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return {
        id: def.id,
        title: def.title,
        status: 'error',
        summary: { en: `The check itself failed: ${message}`, 'zh-CN': `检查本身出错：${message}` },
        evidence: null,
        remediation: null,
      };
    }
  });
}

/**
 * The environment stage on one host: one probe round trip, every check evaluated locally, all
 * results stored with the run's final status in one transaction. A connection lost or a cancel
 * marks the run as such; nothing is half-written.
 */
export async function runEnvStage(
  deps: StageDeps,
  host: string,
  runId: number,
  ctx: JobContext,
  password?: string,
  only?: string[],
): Promise<StageRunRecord> {
  try {
    const res = await deps.hosts.runProbe(
      host,
      { name: 'env', parts: ['inventory', 'env'], timeoutMs: 420_000 },
      ctx,
      password,
    );
    ctx.throwIfCancelled();
    ctx.progress(0.8, { key: 'evaluating', params: { host } });
    const facts = parseEnvFacts(res.stdout, host, new Date().toISOString());
    if (res.code !== 0)
      facts.inventory.warnings.push(`probe exited with ${res.code}: ${res.stderr.slice(-300)}`);
    deps.hosts.saveInventory(host, facts.inventory, res.stdout);
    const unknown = only?.filter((id) => !ENV_CHECKS.some((c) => c.id === id)) ?? [];
    if (unknown.length)
      throw new AmwError('VALIDATION', `No such env checks: ${unknown.join(', ')}`, { unknown });
    const outcomes = evaluateChecks(
      only ? ENV_CHECKS.filter((c) => only.includes(c.id)) : ENV_CHECKS,
      facts,
    );
    deps.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
    ctx.progress(1, { key: 'stored', params: { host } });
    return deps.sessions.run(runId);
  } catch (err) {
    markEndedRun(deps.sessions, runId, ctx, err);
    throw err;
  }
}

/**
 * How a run that threw ended: cancelled, cut off (a connection lost or a timeout: it can be run
 * again, nothing was half-stored) or an error.
 */
export function markEndedRun(
  sessions: SessionRepository,
  runId: number,
  ctx: Pick<JobContext, 'signal'>,
  err: unknown,
): void {
  const cancelled = ctx.signal.aborted || (err instanceof AmwError && err.code === 'CANCELLED');
  const cut =
    err instanceof AmwError && (err.code === 'DISCONNECTED' || err.code === 'COMMAND_TIMEOUT');
  sessions.markRun(runId, cancelled ? 'cancelled' : cut ? 'interrupted' : 'error');
}
