import type { DomainHandlers, MethodsOf, Services } from '../../api/services';
import { stageStatus } from '../../sessions/repository';
import { markEndedRun } from '../run-stage';
import { profilingAdvice } from './advice';
import { compareProfiles } from './compare';
import { importProfile } from './import';
import { profilingOutcomes } from './outcomes';
import { ProfileRepository } from './repository';

/**
 * The profiling stage's own methods: an import of a local folder (a stage run of the session with
 * no host: its checks are the same), a stored profile, and a comparison of two.
 */
export function profilingHandlers(s: Services): DomainHandlers<MethodsOf<'profiling'>> {
  const repo = new ProfileRepository(s.db, s.artifacts);
  return {
    'profiling.import': ({ dir, sessionId, project }) => {
      if (sessionId) s.sessions.session(sessionId);
      const session = sessionId ?? s.sessions.createSession({ project, title: `profile ${dir}` });
      const runId = s.sessions.startRun(session, 'profiling', {
        hostId: null,
        target: null,
        addHosts: [],
      });
      let job;
      try {
        job = s.jobs.start(
          'stage.profiling',
          { dir, sessionId: session, stageRunId: runId },
          async (ctx) => {
            try {
              const rules = profilingAdvice();
              const result = await importProfile(dir, {
                signal: ctx.signal,
                rules,
                onFile: (done, total) =>
                  ctx.progress(total ? done / total : null, {
                    key: 'scanning',
                    params: { done, total },
                  }),
              });
              ctx.throwIfCancelled();
              repo.save(runId, result, { filesDir: dir });
              const outcomes = profilingOutcomes(
                {
                  result,
                  error: null,
                  profiler: null,
                  entry: dir,
                  host: '(local)',
                  steps: 0,
                  baseline: null,
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
    },
    'profiling.get': ({ stageRunId }) => ({ ...repo.get(stageRunId), stageRunId }),
    'profiling.compare': ({ a, b }) => compareProfiles(repo.get(a), repo.get(b)),
  };
}
