import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { Language, Settings } from '../../shared/api';
import { useAction, useCall, useEvent, useTransport } from './api';
import { Icon } from './components/Icon';
import { JobsDrawer, useJobs } from './components/JobsDrawer';
import { useHostFeed, useJobFeed } from './jobs/invalidation';
import { setLanguage } from './i18n';
import { useLocalisedValidity } from './form-validity';
import { SettingsPage } from './pages/SettingsPage';
import { HostsPage } from './pages/hosts/HostsPage';
import { SessionsPage } from './pages/sessions/SessionsPage';
import { CodePage } from './pages/code/CodePage';
import { ReportsPage } from './pages/reports/ReportsPage';
import { DoctorPage } from './pages/doctor/DoctorPage';
import { HostKeyDialog } from './components/HostKeyDialog';
import { SecretDialog } from './components/SecretDialog';
import { PAGES, href, parseSessionRoute, useRoute, type Page } from './routes';
import { useTheme } from './theme';
import type { ConnectionState } from './transport';

export function App() {
  const { t } = useTranslation();
  const client = useQueryClient();
  const transport = useTransport();
  const [route, go] = useRoute();
  const page = route.page;
  const [drawer, setDrawer] = useState(false);
  const [conn, setConn] = useState<ConnectionState>('open');
  const settings = useCall('settings.get', {}).data;
  const setSettings = useAction('settings.set');
  useJobFeed(); // the one job.updated listener: the jobs list, and what finished jobs make stale
  useHostFeed(); // the one hosts.changed listener: every host list shown, on any page
  useLocalisedValidity(); // the browser's refusals of a field, in the app's language
  const jobs = useJobs();
  const running = jobs.filter((j) => j.status === 'running').length;

  useTheme(settings?.theme ?? 'system');
  useEffect(() => {
    if (settings) setLanguage(settings.language);
  }, [settings]);
  // Another window, the CLI or this one changed settings: take the new value.
  useEvent('settings.changed', (s: Settings) => client.setQueryData(['settings.get', {}], s));
  useEffect(() => transport.onState(setConn), [transport]);
  useEffect(() => {
    document.getElementById('root')!.dataset.appState = 'ready';
  }, []);

  const switchLanguage = (language: Language) => setSettings.mutate({ language });

  return (
    <div className="shell">
      <nav className="sidebar" aria-label={t('nav.main')}>
        <div className="brand">
          <img src="/favicon.svg" alt="" width={28} height={28} />
          <div>
            <strong data-testid="app-name">{t('app.name')}</strong>
            <span className="muted small">{t('app.tagline')}</span>
          </div>
        </div>
        <ul>
          {PAGES.map((p: Page) => (
            <li key={p}>
              <a
                href={href.page(p)}
                data-testid={`nav-${p}`}
                aria-current={page === p ? 'page' : undefined}
                onClick={(e) => {
                  e.preventDefault();
                  go(p);
                }}
              >
                <Icon name={p} />
                <span>{t(`nav.${p}`)}</span>
              </a>
            </li>
          ))}
        </ul>
      </nav>

      <div className="main">
        <header className="topbar">
          {conn !== 'open' && (
            <span className="banner" role="status" data-testid="connection-lost">
              {t('common.connectionLost')}
            </span>
          )}
          <div className="spacer" />
          <div className="lang-switch" role="group" aria-label={t('pages.settings.language')}>
            {(['zh-CN', 'en'] as const).map((l) => (
              <button
                key={l}
                data-testid={`lang-${l}`}
                lang={l}
                aria-pressed={settings?.language === l}
                onClick={() => switchLanguage(l)}
              >
                {l === 'zh-CN' ? '中文' : 'EN'}
              </button>
            ))}
          </div>
          <button
            className="icon-button"
            data-testid="theme-toggle"
            aria-label={t('pages.settings.theme')}
            onClick={() =>
              setSettings.mutate({
                theme: document.documentElement.dataset.theme === 'dark' ? 'light' : 'dark',
              })
            }
          >
            <Icon name={settings?.theme === 'dark' ? 'sun' : 'moon'} />
          </button>
          <button
            className="jobs-button"
            data-testid="jobs-toggle"
            aria-expanded={drawer}
            onClick={() => setDrawer((d) => !d)}
          >
            <Icon name="jobs" />
            <span>{t('jobs.open')}</span>
            {running > 0 && (
              <span className="badge running" data-testid="jobs-running">
                {t('jobs.running', { count: running })}
              </span>
            )}
          </button>
        </header>

        <main className={drawer ? 'content beside-drawer' : 'content'}>
          {page === 'settings' && settings && (
            <SettingsPage settings={settings} onOpenJobs={() => setDrawer(true)} />
          )}
          {page === 'hosts' && (
            <HostsPage selected={route.sub} open={(name) => go('hosts', name)} />
          )}
          {page === 'sessions' && <SessionsPage route={parseSessionRoute(route.sub)} />}
          {page === 'code' && <CodePage selected={route.sub} open={(id) => go('code', id)} />}
          {page === 'reports' && <ReportsPage />}
          {page === 'doctor' && <DoctorPage />}
        </main>
      </div>
      {drawer && <JobsDrawer jobs={jobs} onClose={() => setDrawer(false)} />}
      <HostKeyDialog />
      <SecretDialog />
    </div>
  );
}
