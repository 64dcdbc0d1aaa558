import type { ReactNode } from 'react';
import { uiJobStep } from '../../format';
import { useTranslation } from 'react-i18next';
import type { JobRecord, JobStarted, MethodName, Output } from '../../../../shared/api';
import { useAction } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useJob } from '../../components/JobsDrawer';

/** The methods that start a job and answer with its id at once. */
export type JobMethod = {
  [K in MethodName]: Output<K> extends JobStarted ? K : never;
}[MethodName];

/** What a run block shows of a job-starting action. */
export interface RunState {
  /** Asked, queued or running. */
  running: boolean;
  job: JobRecord | null;
  /** The request itself failed (validation, not found…): no job started. */
  error: Error | null;
}

/** A job-starting action and the live state of the job it started. */
export interface JobAction<K extends JobMethod> extends RunState {
  start: ReturnType<typeof useAction<K>>['mutate'];
}

/**
 * Starts a stage run (or any job) and follows it. What a finished job makes stale is refreshed
 * in one place (jobs/invalidation.ts), not by each caller.
 */
export function useJobAction<K extends JobMethod>(method: K): JobAction<K> {
  const action = useAction(method, ['jobs.list']);
  const data = action.data as JobStarted | undefined;
  const job = useJob(data?.jobId ?? null);
  const running =
    action.isPending || job?.status === 'running' || job?.status === 'queued' || false;
  return { start: action.mutate, running, job, error: action.error };
}

/**
 * The one run block every stage shows under its controls: the job's progress while it runs,
 * and either way it ended badly (the request refused, or the job failed) through the one error
 * display. `idle` shows when nothing runs and nothing went wrong (e.g. "not run yet").
 */
export function RunBlock(props: { run: RunState; idle?: ReactNode }) {
  const { t } = useTranslation();
  const { job, running, error } = props.run;
  return (
    <div className="run-block" data-testid="run-block" data-running={running || undefined}>
      {running && (
        <div className="run-progress" role="status" data-testid="run-progress">
          <div
            className="progress"
            role="progressbar"
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={
              job?.progress === null || !job ? undefined : Math.round(job.progress * 100)
            }
          >
            <span
              className={job?.progress == null ? 'indeterminate' : ''}
              style={{ width: `${Math.round((job?.progress ?? 0.3) * 100)}%` }}
            />
          </div>
          <p className="muted small">
            {job?.message ? uiJobStep(job.message) : t('common.loading')}
          </p>
        </div>
      )}
      {error && <ErrorText error={error} />}
      {!running && job?.status === 'failed' && job.error && <ErrorText error={job.error} />}
      {!running && !error && job?.status !== 'failed' && props.idle}
    </div>
  );
}
