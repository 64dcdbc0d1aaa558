import { mkdirSync } from 'node:fs';
import { msg } from '../../../../shared/api/text';
import { AmwError } from '../../../../shared/errors';
import { join } from 'node:path';
import type { ProfileResult } from '../../../../shared/stages/profiling/api';
import type { JobContext } from '../../jobs/runner';
import type { DomainHandlers, MethodsOf, Services } from '../../api/services';
import { stageStatus } from '../../sessions/repository';
import { markEndedRun } from '../run-stage';
import { profilingAdvice } from './advice';
import { compareProfiles } from './compare';
import { importProfile } from './import';
import { profilingOutcomes, projectStepMs } from './outcomes';
import { ProfileRepository, type GatheredFile } from './repository';
import { addCompleteness, failureText, type NodeFailure } from './completeness';
import { gatherFolder } from './gather';
import { readTimeline } from './timeline-handler';

/**
 * The profiling stage's own methods: an import of a local folder (a stage run of the session with
 * no host: its checks are the same), a stored profile, and a comparison of two.
 */
export function profilingHandlers(s: Services): DomainHandlers<MethodsOf<'profiling'>> {
  const repo = new ProfileRepository(s.db, s.artifacts);
  return {
    'profiling.import': ({ dir, sessionId, project }) =>
      storeImport(s, { sessionId, project, title: `profile ${dir}`, hosts: [] }, async (ctx) => ({
        result: await importProfile(dir, {
          signal: ctx.signal,
          onFile: (done, total) =>
            ctx.progress(total ? done / total : null, { key: 'scanning', params: { done, total } }),
        }),
        filesDir: dir,
        files: [],
      })),
    'profiling.gather': ({ hosts, dir, sessionId, project, password, worldSize }) => {
      hosts.forEach((h) => s.hostRepo.get(h)); // NOT_FOUND now, not in the job
      return storeImport(
        s,
        { sessionId, project, title: `profile ${hosts.join(',')}:${dir}`, hosts },
        async (ctx, runId) => {
          const local = join(s.artifacts.dataDir, 'profiles', String(runId));
          const files: GatheredFile[] = [];
          const failed: NodeFailure[] = [];
          for (const [i, host] of hosts.entries()) {
            ctx.throwIfCancelled();
            ctx.progress(i / hosts.length, { key: 'connecting', params: { host } });
            try {
              files.push(
                ...(await gatherFolder(s.hosts, host, dir, join(local, host), {
                  password,
                  signal: ctx.signal,
                })),
              );
            } catch (err) {
              if (ctx.signal.aborted) throw err;
              failed.push({ host, error: failureText(err) });
            }
          }
          mkdirSync(local, { recursive: true });
          const result = await importProfile(local, { signal: ctx.signal });
          result.source = `${hosts.join(',')}:${dir}`;
          addCompleteness(result, hosts, failed, { perHostFolders: true, worldSize });
          return { result, filesDir: local, files };
        },
      );
    },
    'profiling.get': ({ stageRunId }) => ({ ...storedProfile(s, repo, stageRunId), stageRunId }),
    'profiling.list': ({ sessionId, limit }) => repo.list(sessionId, limit),
    'profiling.compare': ({ a, b }) =>
      compareProfiles(storedProfile(s, repo, a), storedProfile(s, repo, b)),
    'profiling.timeline': ({ stageRunId, unit, step }) =>
      readTimeline(repo, stageRunId, unit ?? null, step),
  };
}

/**
 * A run's stored profile; for a run that stored none (an import or a run that ended in error, a
 * run of another stage) a refusal that says so and how the run ended, in the reader's language.
 */
function storedProfile(s: Services, repo: ProfileRepository, id: number) {
  if (repo.has(id)) return repo.get(id);
  const run = s.sessions.run(id); // no such run at all: that refusal, in words of its own
  throw new AmwError(
    'NOT_FOUND',
    msg('errors.text.noProfileOf', { id, status: msg(`sessions.status.${run.status}`) }),
    { stageRunId: id, status: run.status },
  );
}

/**
 * An import (a local folder, or folders gathered from hosts) as a stage run of a session: the run
 * row first, the job reads and stores the profile and its checks in one go (or marks the run as
 * cancelled / interrupted / error), as runStage() does for runs on a host.
 */
function storeImport(
  s: Services,
  at: { sessionId?: number; project?: string; title: string; hosts: string[] },
  body: (
    ctx: JobContext,
    runId: number,
  ) => Promise<{ result: ProfileResult; filesDir: string; files: GatheredFile[] }>,
): { jobId: string; sessionId: number; stageRunId: number } {
  if (at.sessionId) s.sessions.session(at.sessionId);
  const session =
    at.sessionId ??
    s.sessions.createSession({ project: at.project, title: at.title, hosts: at.hosts });
  const runId = s.sessions.startRun(session, 'profiling', {
    hostId: null,
    target: at.hosts.length ? at.hosts.join(',') : null,
    addHosts: at.hosts,
  });
  const repo = new ProfileRepository(s.db, s.artifacts);
  let job;
  try {
    job = s.jobs.start(
      'stage.profiling',
      { sessionId: session, stageRunId: runId },
      async (ctx) => {
        try {
          const rules = profilingAdvice();
          const { result, filesDir, files } = await body(ctx, runId);
          ctx.throwIfCancelled();
          repo.save(runId, result, { filesDir, files });
          const outcomes = profilingOutcomes(
            {
              result,
              error: null,
              profiler: null,
              entry: result.source,
              host: at.hosts.join(',') || '(local)',
              steps: 0,
              baseline: null,
              projectStepMs: projectStepMs(s.sessions, session),
              targetRatio: null,
            },
            rules,
          );
          s.sessions.finishRun(runId, stageStatus(outcomes), outcomes);
          return s.sessions.run(runId);
        } catch (err) {
          markEndedRun(s.sessions, runId, ctx, err);
          throw err;
        }
      },
    );
  } catch (err) {
    s.sessions.markRun(runId, 'error');
    throw err;
  }
  s.sessions.attachJob(runId, job.id);
  return { jobId: job.id, sessionId: session, stageRunId: runId };
}
