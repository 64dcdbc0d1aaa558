import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import type { JobRecord } from '../../../shared/api';
import { jobTitle, type Translate } from '../../../shared/i18n';
import { useAction, useCall } from '../api';
import { ErrorText } from './ErrorText';
import { Icon } from './Icon';
import { uiDateTime, uiJobStep } from '../format';

export const LIST_INPUT = { limit: 30 };

/**
 * The newest jobs. The list is kept current from `job.updated` events by the app's one
 * listener (jobs/invalidation.ts, mounted in App), without polling.
 */
export function useJobs(): JobRecord[] {
  return useCall('jobs.list', LIST_INPUT).data ?? [];
}

/** The live state of one job. */
export function useJob(jobId: string | null): JobRecord | null {
  const jobs = useJobs();
  return jobId ? (jobs.find((j) => j.id === jobId) ?? null) : null;
}

/** A job's kind in the language shown; a stage run is named after its stage. */
function useJobTitle(): (kind: string) => string {
  const { t } = useTranslation();
  return (kind) => jobTitle(t as Translate, kind);
}

export function JobsDrawer(props: { jobs: JobRecord[]; onClose: () => void }) {
  const { t } = useTranslation();
  const cancel = useAction('jobs.cancel');
  const title = useJobTitle();
  const { onClose } = props;
  // Escape closes it, as it closes a dialog; a dialog open above takes the key itself
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented && !document.querySelector('dialog[open]'))
        onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <aside className="drawer" data-testid="jobs-drawer" aria-label={t('jobs.title')}>
      <header>
        <h2>{t('jobs.title')}</h2>
        <button className="icon-button" onClick={props.onClose} aria-label={t('common.close')}>
          <Icon name="close" />
        </button>
      </header>
      {props.jobs.length === 0 && <p className="muted">{t('jobs.empty')}</p>}
      <ul className="jobs">
        {props.jobs.map((job) => (
          <li
            key={job.id}
            className={`job ${job.status}`}
            data-testid="job"
            data-status={job.status}
          >
            <div className="job-head">
              <strong>{title(job.kind)}</strong>
              <span className={`badge ${job.status}`} data-testid="job-status">
                {t(`jobs.status.${job.status}`)}
              </span>
            </div>
            {job.status === 'running' && (
              <div
                className="progress"
                role="progressbar"
                aria-valuemin={0}
                aria-valuemax={100}
                aria-valuenow={job.progress === null ? undefined : Math.round(job.progress * 100)}
              >
                <span
                  className={job.progress === null ? 'indeterminate' : ''}
                  style={{ width: `${Math.round((job.progress ?? 0.3) * 100)}%` }}
                />
              </div>
            )}
            {job.message && <p className="muted small">{uiJobStep(job.message)}</p>}
            {job.error && job.status === 'failed' && <ErrorText error={job.error} small />}
            <div className="job-foot">
              <time className="muted small">{uiDateTime(job.createdAt)}</time>
              {job.status === 'running' && (
                <button
                  className="small"
                  data-testid="job-cancel"
                  onClick={() => cancel.mutate({ id: job.id })}
                >
                  {t('jobs.cancel')}
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
    </aside>
  );
}
