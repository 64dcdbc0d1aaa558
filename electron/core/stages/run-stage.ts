import type { JobStarted } from '../../../shared/api';
import type { StageRunInput } from '../../../shared/stages';
import { AmwError } from '../../../shared/errors';
import { msg } from '../../../shared/api/text';
import type { JobContext, JobRunner } from '../jobs/runner';
import { stageStatus } from '../sessions/repository';
import type { StageDefinition, StageServices } from './define';
import { stageDefinition } from './registry';
import { withDiagnosis, withErrorDiagnosis } from './diagnose-outcomes';

/**
 * The one way a stage runs, whatever the stage: the input is checked, the session found or made,
 * the run row stored before the job starts (so the caller gets its id at once), and the job's end
 * decides the row's end — every result in one transaction with the status, or cancelled,
 * interrupted (connection lost, timeout: run it again) or error. Nothing is half-written.
 */
export function runStage(
  services: StageServices & { jobs: JobRunner },
  raw: StageRunInput,
): JobStarted & { sessionId: number; stageRunId: number } {
  const def = stageDefinition(raw.stage) as StageDefinition | undefined;
  if (!def)
    throw new AmwError(
      'VALIDATION',
      msg('errors.text.noStageInBuild', { stage: String(raw.stage) }),
      raw,
    );
  const input = def.prepare ? def.prepare(raw as never, services) : raw;
  const { runsOn } = def.shared;
  const target = input as { host?: string; hosts?: string[] };
  const host = runsOn === 'host' ? (target.host ?? null) : null;
  const hosts = runsOn === 'hosts' ? (target.hosts ?? []) : host ? [host] : [];
  const hostRecord = host ? services.hostRepo.get(host) : null; // NOT_FOUND now, not in the job
  hosts.forEach((h) => services.hostRepo.get(h));
  if (input.sessionId) services.sessions.session(input.sessionId);
  const sessionId =
    input.sessionId ??
    services.sessions.createSession({
      project: input.project,
      hosts: hosts.length ? hosts : undefined,
    });
  const runId = services.sessions.startRun(sessionId, def.shared.id, {
    hostId: hostRecord?.id ?? null,
    target: runsOn === 'local' ? null : hosts.join(','),
    addHosts: hosts,
  });
  let job;
  try {
    job = services.jobs.start(
      `stage.${def.shared.id}`,
      { host, hosts, sessionId, stageRunId: runId },
      async (ctx: JobContext) => {
        try {
          const out = await def.run({
            input: input as never,
            host,
            hosts,
            sessionId,
            runId,
            job: ctx,
            services,
          });
          ctx.throwIfCancelled();
          const outcomes = withDiagnosis(out.outcomes);
          services.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
          // a stage's results, not a host's inventory; a local stage has no host to name
          ctx.progress(
            1,
            host ? { key: 'stageStoredOn', params: { host } } : { key: 'stageStored' },
          );
          return out.result ?? services.sessions.run(runId);
        } catch (err) {
          markEndedRun(services.sessions, runId, ctx, err);
          throw withErrorDiagnosis(err);
        }
      },
    );
  } catch (err) {
    services.sessions.markRun(runId, 'error');
    throw err;
  }
  services.sessions.attachJob(runId, job.id);
  return { jobId: job.id, sessionId, stageRunId: runId };
}

/**
 * How a run that threw ended: cancelled, cut off (a connection lost or a timeout: it can be run
 * again, nothing was half-stored) or an error.
 */
export function markEndedRun(
  sessions: StageServices['sessions'],
  runId: number,
  ctx: Pick<JobContext, 'signal'>,
  err: unknown,
): void {
  const cancelled = ctx.signal.aborted || (err instanceof AmwError && err.code === 'CANCELLED');
  const cut =
    err instanceof AmwError && (err.code === 'DISCONNECTED' || err.code === 'COMMAND_TIMEOUT');
  sessions.markRun(runId, cancelled ? 'cancelled' : cut ? 'interrupted' : 'error');
}
