import { useState, useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { FIX_MODES, type FixMode } from '../../../../shared/api';
import { useAction, useCall, useEvent } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useJob } from '../../components/JobsDrawer';
import { PageHead } from '../../components/PageHead';
import { StartSteps } from '../StartPage';
import { ScanReview } from './ScanReview';
import { uiDateTime } from '../../format';
import { parseCodeRoute, parseScanFor } from '../../routes';

/** The Code page: start a scan of a local folder, list earlier scans, open one for review. */
export function CodePage(props: { selected: string | null; open: (id: string | null) => void }) {
  const { t } = useTranslation();
  const scans = useCall('code.scans', {});
  const sessions = useCall('sessions.list', {});
  const start = useAction('code.scan');
  const [path, setPath] = useState('');
  const info = useCall('app.info', {});
  const projects = useCall('projects.list', {});
  const [mode, setMode] = useState<FixMode>('rewrite');
  // opened from a session's code stage: the scan is for that session
  const [sessionId, setSessionId] = useState<number | ''>(() => parseScanFor(props.selected) ?? '');
  // a relative folder is read from the session's project folder, else from where the engine
  // runs: neither is something the browser can know, so the form says which
  const relative = path.trim() !== '' && !/^(\/|~(\/|$)|[A-Za-z]:[\\/]|\\\\)/.test(path.trim());
  const project = sessionId ? sessions.data?.find((x) => x.id === sessionId)?.project : null;
  const projectDir = projects.data?.find((p) => p.name === project)?.codeLocation;
  const relativeTo =
    projectDir && /^(\/|~(\/|$))/.test(projectDir) ? projectDir : info.data?.workDir;
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useJob(jobId);
  // what a finished scan makes stale is refreshed by jobs/invalidation.ts; here: open our scan
  // (inside a session it runs as the code stage, job kind `stage.code`, so match the job id)
  useEvent('job.updated', (j) => {
    if (j.id === jobId && j.status === 'succeeded') {
      const result = j.result as { scanId?: number } | null;
      if (result?.scanId) props.open(String(result.scanId));
    }
  });
  // a small scan can end before its job id is back from code.scan (its event then came too
  // early to match): the job as listed opens it instead
  const opened = useRef<string | null>(null);
  useEffect(() => {
    if (!job || job.status !== 'succeeded' || opened.current === job.id) return;
    opened.current = job.id;
    const result = job.result as { scanId?: number } | null;
    if (result?.scanId) props.open(String(result.scanId));
  }, [job, props]);

  // `#/code/12` opens scan 12; `#/code/12/src/model.py@34` opens that file at that line
  const route = parseCodeRoute(props.selected);
  if (route) {
    return (
      <ScanReview
        // another scan is another review: nothing of the last one's state carries over
        key={route.scanId}
        scanId={route.scanId}
        initialFile={route.file}
        initialLine={route.line}
        onBack={() => props.open(null)}
      />
    );
  }

  const list = scans.data ?? [];
  return (
    <section className="page" data-testid="page-code">
      <PageHead icon="code" title={t('pages.code.title')} />
      <form
        className="scan-form"
        data-testid="scan-form"
        onSubmit={(e) => {
          e.preventDefault();
          start.mutate(
            { path: path.trim(), mode, ...(sessionId ? { sessionId } : {}) },
            { onSuccess: (r) => setJobId(r.jobId) },
          );
        }}
      >
        <label className="grow">
          <span>{t('code.folder')}</span>
          <input
            data-testid="scan-path"
            value={path}
            required
            placeholder="/home/me/my-model"
            onChange={(e) => setPath(e.target.value)}
            aria-describedby={relative ? 'scan-path-relative' : undefined}
          />
          {relative && relativeTo && (
            <small className="muted" id="scan-path-relative" data-testid="scan-path-relative">
              {t('code.relativeFolder', { dir: relativeTo })}
            </small>
          )}
        </label>
        <label>
          <span>{t('code.mode')}</span>
          <select
            data-testid="scan-mode"
            value={mode}
            onChange={(e) => setMode(e.target.value as FixMode)}
          >
            {FIX_MODES.map((m) => (
              <option key={m} value={m}>
                {t(`code.modes.${m}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>{t('code.session')}</span>
          <select
            data-testid="scan-session"
            value={sessionId}
            onChange={(e) => setSessionId(e.target.value ? Number(e.target.value) : '')}
          >
            <option value="">{t('code.noSession')}</option>
            {(sessions.data ?? []).map((s) => (
              <option key={s.id} value={s.id}>
                #{s.id} {s.title}
              </option>
            ))}
          </select>
        </label>
        <button
          className="primary"
          type="submit"
          data-testid="scan-start"
          disabled={start.isPending || job?.status === 'running'}
        >
          {t('code.scan')}
        </button>
      </form>
      <p className="muted small">{t(`code.modeHelp.${mode}`)}</p>
      {start.error && <ErrorText error={start.error} />}
      {job && job.status === 'running' && (
        <p className="notice" data-testid="scan-running">
          {t('code.scanning')} {job.progress !== null && `${Math.round(job.progress * 100)}%`}
        </p>
      )}
      {job?.status === 'failed' && job.error && <ErrorText error={job.error} />}
      {scans.error && <ErrorText error={scans.error} />}
      {scans.data && list.length === 0 && (
        <div className="empty">
          <p className="lead">{t('pages.code.lead')}</p>
          <StartSteps page="code" />
        </div>
      )}
      {list.length > 0 && (
        <table className="table" data-testid="scans-table">
          <thead>
            <tr>
              <th>#</th>
              <th>{t('code.folder')}</th>
              <th>{t('code.mode')}</th>
              <th>{t('code.session')}</th>
              <th>{t('code.findings')}</th>
              <th>{t('code.effortCol')}</th>
              <th>{t('code.when')}</th>
            </tr>
          </thead>
          <tbody>
            {list.map((s) => (
              <tr
                key={s.id}
                className="clickable"
                data-testid="scan-row"
                onClick={() => props.open(String(s.id))}
              >
                <td>{s.id}</td>
                <td>
                  <code>{s.root}</code>
                </td>
                <td>{t(`code.modes.${s.mode}`)}</td>
                <td>{s.sessionId ? `#${s.sessionId}` : '—'}</td>
                <td>
                  <span className="sev error">{s.counts.error}</span>{' '}
                  <span className="sev warning">{s.counts.warning}</span>{' '}
                  <span className="sev info">{s.counts.info}</span>
                </td>
                <td>{t(`code.level.${s.effort.level}`)}</td>
                <td>{uiDateTime(s.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
