import { useCallback } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { JobRecord } from '../../../shared/api';
import { explainError, jobKindKey } from '../../../shared/i18n';
import { useAction, useCall, useEvent } from '../api';
import { Icon } from './Icon';

export const LIST_INPUT = { limit: 30 };

/** Keeps the jobs list current from `job.updated` events, without polling. */
export function useJobs(): JobRecord[] {
  const client = useQueryClient();
  const jobs = useCall('jobs.list', LIST_INPUT);
  const onUpdate = useCallback(
    (job: JobRecord) => {
      client.setQueryData<JobRecord[]>(['jobs.list', LIST_INPUT], (old = []) => {
        const rest = old.filter((j) => j.id !== job.id);
        return [job, ...rest].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).slice(0, 30);
      });
    },
    [client],
  );
  useEvent('job.updated', onUpdate);
  return jobs.data ?? [];
}

/** The live state of one job (the list above is kept current by events while the app runs). */
export function useJob(jobId: string | null): JobRecord | null {
  const client = useQueryClient();
  const list = client.getQueryData<JobRecord[]>(['jobs.list', LIST_INPUT]) ?? [];
  useJobs(); // subscribe this component to list changes
  return jobId ? (list.find((j) => j.id === jobId) ?? null) : null;
}

export function JobsDrawer(props: { jobs: JobRecord[]; onClose: () => void }) {
  const { t, i18n } = useTranslation();
  const cancel = useAction('jobs.cancel');
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
              <strong>{t(jobKindKey(job.kind))}</strong>
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
            {job.message && (
              <p className="muted small">
                {t(`jobs.step.${job.message.key}`, job.message.params ?? {})}
              </p>
            )}
            {job.error && job.status === 'failed' && (
              <p className="error small">{explainError((k, p) => t(k, p ?? {}), job.error)}</p>
            )}
            <div className="job-foot">
              <time className="muted small">
                {new Date(job.createdAt).toLocaleString(i18n.language)}
              </time>
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
