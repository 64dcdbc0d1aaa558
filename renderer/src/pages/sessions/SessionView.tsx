import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { CheckOutcome, Language, StageRunRecord } from '../../../../shared/api';
import { stageNs } from '../../../../shared/stages';
import { explainError } from '../../../../shared/i18n';
import { useAction, useCall } from '../../api';
import { useText } from '../../i18n';
import { Dialog } from '../../components/Dialog';
import { ErrorText } from '../../components/ErrorText';
import { useJob } from '../../components/JobsDrawer';
import { CodeStage } from './CodeStage';
import { OpsStage } from './OpsStage';
import { statusClass } from './SessionsPage';

const WAIVER_NAME_KEY = 'amw.waiverName';

export function SessionView(props: { id: number; onBack: () => void }) {
  const { t, i18n } = useTranslation();
  const lang = (i18n.language === 'zh-CN' ? 'zh-CN' : 'en') as Language;
  const session = useCall('sessions.get', { id: props.id });
  const [stage, setStage] = useState<string>('env');
  const info = useCall('app.info', {});
  const text = useText();
  const [compareWith, setCompareWith] = useState<number | null>(null);
  const all = useCall('sessions.list', {});
  const s = session.data;
  return (
    <section className="page" data-testid="session-view">
      <header className="page-head">
        <button className="icon-button" onClick={props.onBack} aria-label={t('common.back')}>
          ←
        </button>
        <div>
          <h1 data-testid="session-title">{s?.title ?? '…'}</h1>
          {s && (
            <span className="muted small">
              {[
                s.project ? t('sessions.inProject', { project: s.project }) : t('sessions.adHoc'),
                `#${s.id}`,
                new Date(s.createdAt).toLocaleString(),
              ].join(' · ')}
            </span>
          )}
        </div>
      </header>
      {session.error && <ErrorText error={session.error} />}
      <nav className="stage-rail" aria-label={t('sessions.stages')}>
        {(info.data?.stages ?? []).map((st) => (
          <button
            key={st.id}
            className={st.id === stage ? 'active' : ''}
            disabled={!st.built}
            onClick={() => setStage(st.id)}
            data-testid={`stage-${st.id}`}
          >
            <span>{st.built ? t(`${stageNs(st.id)}:name`) : text(st.name)}</span>
            {!st.built && <small className="muted">{t('common.notYet')}</small>}
          </button>
        ))}
      </nav>
      {s && stage === 'code' && <CodeStage session={s} lang={lang} />}
      {s && stage === 'ops' && <OpsStage session={s} lang={lang} />}
      {s && stage === 'env' && (
        <div className="host-columns">
          {(s.hosts.length
            ? s.hosts
            : [...new Set(s.runs.filter((r) => r.stage === 'env').map((r) => r.host))]
          ).map((host) => (
            <HostColumn
              key={host}
              sessionId={s.id}
              host={host}
              run={s.runs.find((r) => r.stage === 'env' && r.host === host) ?? null}
              lang={lang}
            />
          ))}
        </div>
      )}
      {s && (all.data?.length ?? 0) > 1 && (
        <>
          <h2>{t('sessions.compare')}</h2>
          <select
            value={compareWith ?? ''}
            onChange={(e) => setCompareWith(e.target.value ? Number(e.target.value) : null)}
            data-testid="compare-with"
          >
            <option value="">{t('sessions.comparePick')}</option>
            {all
              .data!.filter((x) => x.id !== s.id)
              .map((x) => (
                <option key={x.id} value={x.id}>{`#${x.id} ${x.title}`}</option>
              ))}
          </select>
          {compareWith !== null && <Compare a={compareWith} b={s.id} />}
        </>
      )}
    </section>
  );
}

function HostColumn(props: {
  sessionId: number;
  host: string;
  run: StageRunRecord | null;
  lang: Language;
}) {
  const { t } = useTranslation();
  const run = useAction('stages.run', ['jobs.list']);
  const job = useJob(run.data?.jobId ?? null);
  const running = job?.status === 'running' || run.isPending;
  const start = (checks?: string[]) =>
    run.mutate({
      host: props.host,
      stage: 'env',
      sessionId: props.sessionId,
      ...(checks ? { checks } : {}),
    });
  const r = props.run;
  return (
    <div className="host-column" data-testid={`host-column-${props.host}`}>
      <header>
        <strong>{props.host}</strong>
        {r && (
          <span className={`badge ${statusClass(r.status)}`} data-testid="stage-status">
            {t(`sessions.status.${r.status}`)}
          </span>
        )}
        <div className="spacer" />
        <button
          className={r ? '' : 'primary'}
          disabled={running}
          onClick={() => start()}
          data-testid="run-stage"
        >
          {r ? t('sessions.rerunStage') : t('sessions.runStage')}
        </button>
      </header>
      {running && (
        <p className="muted small">
          {job?.message
            ? t(`jobs.step.${job.message.key}`, job.message.params ?? {})
            : t('common.loading')}
        </p>
      )}
      {run.error && <ErrorText error={run.error} />}
      {job?.status === 'failed' && job.error && (
        <p className="error small">{explainError((k, p) => t(k, p ?? {}), job.error)}</p>
      )}
      {!r && !running && <p className="muted small">{t('sessions.notRun')}</p>}
      {r?.checks.map((c) => (
        <CheckCard
          key={c.id}
          check={c}
          lang={props.lang}
          sessionId={props.sessionId}
          host={props.host}
          onRerun={() => start([c.id])}
          busy={running}
        />
      ))}
    </div>
  );
}

export function CheckCard(props: {
  check: CheckOutcome;
  lang: Language;
  sessionId: number;
  host: string;
  /** Absent where a check cannot be rerun alone (the code stage rescans the whole tree). */
  onRerun?: () => void;
  busy: boolean;
}) {
  const { t } = useTranslation();
  const text = useText();
  const c = props.check;
  const [waiving, setWaiving] = useState(false);
  const unwaive = useAction('checks.unwaive', ['sessions.get', 'sessions.list']);
  // waivers are per host; the code stage's checks are cleared by fixing the code instead
  const waivable =
    !!props.onRerun && (c.status === 'fail' || c.status === 'warn' || c.status === 'error');
  return (
    <article
      className={`check-card ${statusClass(c.status)}${c.waiver ? ' waived' : ''}`}
      data-testid={`check-${c.id}`}
      data-status={c.status}
    >
      <header>
        <span className={`badge ${statusClass(c.status)}`}>{t(`sessions.status.${c.status}`)}</span>
        <strong>{text(c.title)}</strong>
      </header>
      <p>{text(c.summary)}</p>
      {c.remediation && c.status !== 'pass' && <pre className="remedy">{text(c.remediation)}</pre>}
      {c.waiver && (
        <p className="waiver" data-testid="waiver">
          {t('sessions.waivedBy', { by: c.waiver.by, reason: c.waiver.reason })}
        </p>
      )}
      <details>
        <summary>{t('sessions.evidence')}</summary>
        <pre className="cli evidence">{JSON.stringify(c.evidence, null, 2)}</pre>
      </details>
      <footer>
        <code className="muted small">{c.id}</code>
        <div className="spacer" />
        {props.onRerun && (
          <button
            className="small"
            onClick={props.onRerun}
            disabled={props.busy}
            data-testid="rerun-check"
          >
            {t('sessions.rerun')}
          </button>
        )}
        {waivable && !c.waiver && (
          <button className="small" onClick={() => setWaiving(true)} data-testid="waive">
            {t('sessions.waive')}
          </button>
        )}
        {c.waiver && (
          <button
            className="small"
            onClick={() =>
              unwaive.mutate({ sessionId: props.sessionId, checkId: c.id, host: props.host })
            }
          >
            {t('sessions.unwaive')}
          </button>
        )}
      </footer>
      {waiving && (
        <WaiveDialog
          sessionId={props.sessionId}
          host={props.host}
          check={c}
          lang={props.lang}
          onClose={() => setWaiving(false)}
        />
      )}
    </article>
  );
}

function WaiveDialog(props: {
  sessionId: number;
  host: string;
  check: CheckOutcome;
  lang: Language;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const text = useText();
  const waive = useAction('checks.waive', ['sessions.get', 'sessions.list']);
  const [reason, setReason] = useState('');
  const [by, setBy] = useState(() => localStorage.getItem(WAIVER_NAME_KEY) ?? '');
  const ok = reason.trim().length >= 3 && by.trim().length > 0;
  return (
    <Dialog
      title={t('sessions.waiveTitle', { id: props.check.id })}
      onClose={props.onClose}
      testId="waive-dialog"
    >
      <p className="muted">{text(props.check.summary)}</p>
      <label className="field stacked">
        <span>{t('sessions.waiveReason')}</span>
        <textarea
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          data-testid="waive-reason"
        />
      </label>
      <label className="field stacked">
        <span>{t('sessions.waiveBy')}</span>
        <input value={by} onChange={(e) => setBy(e.target.value)} data-testid="waive-by" />
      </label>
      {waive.error && <ErrorText error={waive.error} />}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.cancel')}</button>
        <button
          className="primary"
          disabled={!ok || waive.isPending}
          data-testid="waive-save"
          onClick={() => {
            localStorage.setItem(WAIVER_NAME_KEY, by.trim());
            waive.mutate(
              {
                sessionId: props.sessionId,
                checkId: props.check.id,
                host: props.host,
                reason: reason.trim(),
                by: by.trim(),
              },
              { onSuccess: props.onClose },
            );
          }}
        >
          {t('sessions.waive')}
        </button>
      </div>
    </Dialog>
  );
}

function Compare(props: { a: number; b: number }) {
  const { t } = useTranslation();
  const rows = useCall('sessions.compare', { a: props.a, b: props.b });
  if (rows.error) return <ErrorText error={rows.error} />;
  return (
    <table className="table" data-testid="compare-table">
      <thead>
        <tr>
          <th>{t('sessions.col.hosts')}</th>
          <th>{t('sessions.check')}</th>
          <th>{`#${props.a}`}</th>
          <th>{`#${props.b}`}</th>
          <th>{t('sessions.change')}</th>
        </tr>
      </thead>
      <tbody>
        {(rows.data ?? []).map((r) => (
          <tr
            key={`${r.host}-${r.checkId}`}
            data-testid={`compare-${r.host}-${r.checkId}`}
            data-change={r.change}
          >
            <td>{r.host}</td>
            <td>
              <code>{r.checkId}</code>
            </td>
            <td>
              {r.a ? (
                <span className={`badge ${statusClass(r.a)}`}>{t(`sessions.status.${r.a}`)}</span>
              ) : (
                '—'
              )}
            </td>
            <td>
              {r.b ? (
                <span className={`badge ${statusClass(r.b)}`}>{t(`sessions.status.${r.b}`)}</span>
              ) : (
                '—'
              )}
            </td>
            <td
              className={
                r.change === 'improved' ? 'ok-text' : r.change === 'regressed' ? 'error' : 'muted'
              }
            >
              {t(`sessions.changes.${r.change}`)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
