import { useTranslation } from 'react-i18next';
import { PageHead } from '../components/PageHead';
import type { Language, Settings, Theme } from '../../../shared/api';
import { useAction, useCall } from '../api';
import { ErrorText } from '../components/ErrorText';

export function SettingsPage(props: { settings: Settings; onOpenJobs: () => void }) {
  const { t } = useTranslation();
  const info = useCall('app.info', {});
  const set = useAction('settings.set');
  const backup = useAction('maintenance.backup', ['jobs.list']);
  const check = useAction('maintenance.check', ['jobs.list']);
  const startJob = (action: typeof backup) =>
    action.mutate({}, { onSuccess: () => props.onOpenJobs() });

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
      </div>
    </section>
  );
}
