import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHead } from '../components/PageHead';
import type {
  BackupResult,
  CheckResult,
  JobRecord,
  Language,
  Settings,
  Theme,
} from '../../../shared/api';
import { useAction, useCall } from '../api';
import { ErrorText } from '../components/ErrorText';
import { useJob } from '../components/JobsDrawer';
import { uiJobStep, uiNumber } from '../format';

export function SettingsPage(props: { settings: Settings; onOpenJobs: () => void }) {
  const { t } = useTranslation();
  const info = useCall('app.info', {});
  const set = useAction('settings.set');
  const backup = useAction('maintenance.backup', ['jobs.list']);
  const check = useAction('maintenance.check', ['jobs.list']);
  const startJob = (action: typeof backup) =>
    action.mutate({}, { onSuccess: () => props.onOpenJobs() });
  // the last run of each, followed to its end: what it did is said here, not only in the drawer
  const backupJob = useJob(backup.data?.jobId ?? null);
  const checkJob = useJob(check.data?.jobId ?? null);

  return (
    <section className="page" data-testid="page-settings">
      <PageHead icon="settings" title={t('pages.settings.title')} />

      <div className="card">
        <label className="field">
          <span>{t('pages.settings.language')}</span>
          <select
            data-testid="settings-language"
            value={props.settings.language}
            onChange={(e) => set.mutate({ language: e.target.value as Language })}
          >
            <option value="zh-CN" lang="zh-CN">
              简体中文
            </option>
            <option value="en" lang="en">
              English
            </option>
          </select>
        </label>
        <label className="field">
          <span>{t('pages.settings.theme')}</span>
          <select
            data-testid="settings-theme"
            value={props.settings.theme}
            onChange={(e) => set.mutate({ theme: e.target.value as Theme })}
          >
            <option value="system">{t('pages.settings.themeSystem')}</option>
            <option value="light">{t('pages.settings.themeLight')}</option>
            <option value="dark">{t('pages.settings.themeDark')}</option>
          </select>
        </label>
        {set.error && <ErrorText error={set.error} />}
      </div>

      <h2>{t('pages.settings.storage')}</h2>
      <div className="card">
        {info.error && <ErrorText error={info.error} />}
        {info.data && (
          <dl className="facts" data-testid="app-info">
            <dt>{t('pages.settings.version')}</dt>
            <dd>{info.data.version}</dd>
            <dt>{t('pages.settings.dataDir')}</dt>
            <dd>
              <code>{info.data.dataDir}</code>
            </dd>
            <dt>{t('pages.settings.dbPath')}</dt>
            <dd>
              <code>{info.data.dbPath}</code>
            </dd>
            <dt>{t('pages.settings.schema')}</dt>
            <dd>{info.data.schemaVersion}</dd>
          </dl>
        )}
      </div>

      <h2>{t('pages.settings.maintenance')}</h2>
      <div className="card">
        <p className="muted">{t('pages.settings.maintenanceLead')}</p>
        <div className="row">
          <button data-testid="start-backup" onClick={() => startJob(backup)}>
            {t('pages.settings.backup')}
          </button>
          <button data-testid="start-check" onClick={() => startJob(check)}>
            {t('pages.settings.check')}
          </button>
        </div>
        {(backup.error ?? check.error) && <ErrorText error={backup.error ?? check.error} />}
        {backupJob && (
          <JobOutcome job={backupJob} testId="backup-result">
            {(r: BackupResult) => (
              <p className="notice ok">
                {t('pages.settings.backupDone', { file: r.file, bytes: uiNumber(r.bytes) })}
              </p>
            )}
          </JobOutcome>
        )}
        {checkJob && (
          <JobOutcome job={checkJob} testId="check-result">
            {(r: CheckResult) => <CheckOutcome result={r} />}
          </JobOutcome>
        )}
      </div>
    </section>
  );
}

/** A maintenance job as it stands: its step while it runs, then its result or why it failed. */
function JobOutcome<R>(props: {
  job: JobRecord;
  testId: string;
  children: (result: R) => ReactNode;
}) {
  const { t } = useTranslation();
  const { job } = props;
  const body =
    job.status === 'succeeded' ? (
      props.children(job.result as R)
    ) : job.status === 'failed' || job.error ? (
      <ErrorText error={job.error} />
    ) : job.status === 'queued' || job.status === 'running' ? (
      <span className="muted">{job.message ? uiJobStep(job.message) : t('common.loading')}</span>
    ) : (
      t(`jobs.status.${job.status}`)
    );
  return (
    <div className="maintenance-result" data-testid={props.testId} data-status={job.status}>
      {body}
    </div>
  );
}

/** What the database check found: all well, or each kind of problem and SQLite's own lines. */
function CheckOutcome(props: { result: CheckResult }) {
  const { t } = useTranslation();
  const r = props.result;
  if (r.ok)
    return (
      <p className="notice ok">{t('pages.settings.checkOk', { count: r.artifacts.checked })}</p>
    );
  return (
    <div className="notice fail" role="alert">
      <p>
        {t('pages.settings.checkProblems', {
          integrity: r.integrity.length,
          fk: r.foreignKeys.length,
          missing: r.artifacts.missing.length,
          corrupt: r.artifacts.corrupt.length,
        })}
      </p>
      {r.integrity.length > 0 && (
        <ul className="small">
          {r.integrity.slice(0, 10).map((line, i) => (
            <li key={i}>
              <code>{line}</code>
            </li>
          ))}
        </ul>
      )}
      {!!r.artifacts.files?.length && (
        <ul className="small" data-testid="check-files">
          {r.artifacts.files.slice(0, 10).map((f) => (
            <li key={f.sha256}>
              {t(`pages.settings.fileProblem.${f.problem}`, {
                kind: t(`pages.settings.artifactKind.${f.kind}`, { defaultValue: f.kind }),
              })}
              {t('common.colon')}
              <code>{f.path}</code>
            </li>
          ))}
          {/* all of them counted, as the check counts them (amw db check --json lists 200) */}
          {r.artifacts.missing.length + r.artifacts.corrupt.length > 10 && (
            <li className="muted">
              {t('common.more', {
                count: r.artifacts.missing.length + r.artifacts.corrupt.length - 10,
              })}
            </li>
          )}
        </ul>
      )}
      <p className="small">{t('pages.settings.checkRestore')}</p>
    </div>
  );
}
