import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionRecord } from '../../../../shared/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { useText } from '../../i18n';
import { href, navigate } from '../../routes';
import { stageUi } from '../../stages/registry';
import { useStageName } from '../../stages/shared/names';
import { StatusBadge } from '../../stages/shared/StageStatus';
import type { StageInfo } from '../../stages/shared/types';
import { SessionHostsDialog } from '../../components/SessionHostsDialog';
import { Gate, NextStep, ProgressRail, Timeline, guideAddsHosts, stageProgress } from './Guide';
import { uiDateTime, uiHost } from '../../format';

/**
 * One session: its stages as a rail (every stage of a migration, from `app.info`, in order) and
 * the chosen stage's view from the stage registry. The stage is in the route
 * (`#/sessions/ID/STAGE`), so it can be linked and survives a reload. Nothing here knows a
 * stage by its id.
 */
export function SessionView(props: { id: number; stage: string | null }) {
  const { t } = useTranslation();
  const session = useCall('sessions.get', { id: props.id });
  const info = useCall('app.info', {});
  const [compareWith, setCompareWith] = useState<number | null>(null);
  const [hostsOpen, setHostsOpen] = useState(false);
  const all = useCall('sessions.list', {});
  const s = session.data;
  const stages = info.data?.stages ?? [];
  // no stage in the route: the first this build has
  const current = props.stage ?? stages.find((st) => st.built)?.id ?? null;
  const stage = stages.find((st) => st.id === current) ?? null;
  const progress = s ? stageProgress(s, stages) : [];
  return (
    <section className="page" data-testid="session-view" data-stage={current ?? undefined}>
      <header className="page-head">
        <button
          className="icon-button"
          onClick={() => navigate(href.session(null))}
          aria-label={t('common.back')}
        >
          ←
        </button>
        <div>
          <h1 data-testid="session-title">{s?.title ?? '…'}</h1>
          {s && (
            <span className="muted small" data-testid="session-meta">
              {[
                s.project ? t('sessions.inProject', { project: s.project }) : t('sessions.adHoc'),
                `#${s.id}`,
                uiDateTime(s.createdAt),
              ].join(' · ')}
            </span>
          )}
        </div>
        <div className="spacer" />
        {s && (
          <span className="muted small" data-testid="session-hosts">
            {s.hosts.length
              ? t('sessions.hostsList', { hosts: s.hosts.map(uiHost).join(t('common.join.list')) })
              : t('sessions.hostsNone')}
          </span>
        )}
        {s && (
          <button onClick={() => setHostsOpen(true)} data-testid="session-hosts-open">
            {t('sessions.hostsEdit')}
          </button>
        )}
      </header>
      {session.error && <ErrorText error={session.error} />}
      {info.error && <ErrorText error={info.error} />}
      {s && info.data && (
        <NextStep
          session={s}
          progress={progress}
          current={current}
          onAddHosts={() => setHostsOpen(true)}
        />
      )}
      {s && <ProgressRail sessionId={s.id} progress={progress} current={current} />}
      {s && <Gate sessionId={s.id} progress={progress} current={current} />}
      {s && info.data && (
        <StageView
          session={s}
          stage={stage}
          id={current}
          // the guide above offers it already: one button for one thing
          onAddHosts={guideAddsHosts(s, progress) ? null : () => setHostsOpen(true)}
        />
      )}
      {s && info.data && <Timeline session={s} stages={stages} />}
      {hostsOpen && s && <SessionHostsDialog session={s} onClose={() => setHostsOpen(false)} />}
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

/** The chosen stage's view, or why there is none (not built, no view for it here, no such stage). */
function StageView(props: {
  session: SessionRecord;
  stage: StageInfo | null;
  id: string | null;
  onAddHosts: (() => void) | null;
}) {
  const { t } = useTranslation();
  const name = useStageName();
  const { session, stage } = props;
  if (!stage)
    return (
      <p className="notice warn" data-testid="stage-unknown">
        {t('sessions.noSuchStage', { stage: props.id ?? '' })}
      </p>
    );
  if (!stage.built)
    return (
      <p className="notice" data-testid="stage-not-built">
        {t('sessions.stageNotBuilt', { stage: name(stage) })}
      </p>
    );
  const ui = stageUi(stage.id);
  if (!ui)
    return (
      <p className="notice warn" data-testid="stage-no-view">
        {t('sessions.stageNoView', { stage: name(stage), id: stage.id })}
      </p>
    );
  const runs = session.runs.filter((r) => r.stage === stage.id);
  const hosts =
    stage.runsOn === 'local'
      ? []
      : session.hosts.length
        ? session.hosts
        : [...new Set(runs.map((r) => r.host))];
  // a stage that runs on hosts, in a session with none: say so, and offer what provides them
  const needsHosts = stage.runsOn !== 'local' && hosts.length === 0 && (
    <div className="notice empty-stage" data-testid="stage-needs-hosts">
      <p>{t('sessions.needsHosts', { stage: name(stage) })}</p>
      {props.onAddHosts && (
        <button className="primary" onClick={props.onAddHosts} data-testid="stage-add-host">
          {t('sessions.addHost')}
        </button>
      )}
    </div>
  );
  if (needsHosts && !ui.opensWithoutHosts) return needsHosts;
  return (
    <>
      {needsHosts}
      <ui.View
        key={`${session.id}-${stage.id}`}
        session={session}
        stage={stage}
        runs={runs}
        hosts={hosts}
      />
    </>
  );
}

/** Two sessions' checks side by side, the earlier one first: a change reads from it to the later. */
export function Compare(props: { a: number; b: number }) {
  const { t } = useTranslation();
  const text = useText();
  const [a, b] = props.a < props.b ? [props.a, props.b] : [props.b, props.a];
  const rows = useCall('sessions.compare', { a, b });
  if (rows.error) return <ErrorText error={rows.error} />;
  return (
    <table className="table" data-testid="compare-table">
      <thead>
        <tr>
          <th>{t('sessions.col.hosts')}</th>
          <th>{t('sessions.check')}</th>
          <th>{`#${a}`}</th>
          <th>{`#${b}`}</th>
          <th>{t('sessions.changeFromTo', { a, b })}</th>
        </tr>
      </thead>
      <tbody>
        {(rows.data ?? []).map((r) => (
          <tr
            key={`${r.host}-${r.checkId}`}
            data-testid={`compare-${r.host}-${r.checkId}`}
            data-change={r.change}
          >
            <td>{uiHost(r.host)}</td>
            <td title={r.checkId}>{text(r.title)}</td>
            <td>{r.a ? <StatusBadge status={r.a} /> : '—'}</td>
            <td>{r.b ? <StatusBadge status={r.b} /> : '—'}</td>
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
