import { useEffect, type ReactNode } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { SessionRecord, StageStatus, TimelineEvent } from '../../../../shared/api';
import { useCall } from '../../api';
import { ErrorText } from '../../components/ErrorText';
import { href, navigate } from '../../routes';
import { useStageName } from '../../stages/shared/names';
import { StatusBadge } from '../../stages/shared/StageStatus';
import type { StageInfo } from '../../stages/shared/types';
import { uiDateTime, uiHost } from '../../format';
import { useText } from '../../i18n';

const WORST_FIRST: StageStatus[] = [
  'fail',
  'error',
  'interrupted',
  'cancelled',
  'running',
  'warn',
  'pass',
];

/** Where one stage of a session stands: its status over hosts, its evidence and its waivers. */
export interface StageProgress {
  stage: StageInfo;
  /** Worst over the stage's runs; null when it has not run in this session. */
  status: StageStatus | null;
  /** Check results recorded (each with its evidence). */
  evidence: number;
  waived: number;
  /** Failing checks nobody waived: what holds the stages after it. */
  failing: number;
}

export function stageProgress(session: SessionRecord, stages: StageInfo[]): StageProgress[] {
  return stages.map((stage) => {
    const runs = session.runs.filter((r) => r.stage === stage.id);
    const checks = runs.flatMap((r) => r.checks);
    return {
      stage,
      status: WORST_FIRST.find((st) => runs.some((r) => r.status === st)) ?? null,
      evidence: checks.length,
      waived: checks.filter((c) => c.waiver).length,
      failing: checks.filter((c) => (c.status === 'fail' || c.status === 'error') && !c.waiver)
        .length,
    };
  });
}

const holds = (p: StageProgress) => p.failing > 0 || p.status === 'fail' || p.status === 'error';

/** The progress rail: every stage in the migration's order, with status, evidence and waivers. */
export function ProgressRail(props: {
  sessionId: number;
  progress: StageProgress[];
  current: string | null;
}) {
  const { t } = useTranslation();
  const name = useStageName();
  return (
    <nav className="stage-rail" aria-label={t('sessions.stages')} data-testid="progress-rail">
      {props.progress.map((p, i) => (
        <button
          key={p.stage.id}
          className={p.stage.id === props.current ? 'active' : ''}
          aria-current={p.stage.id === props.current ? 'page' : undefined}
          disabled={!p.stage.built}
          onClick={() => navigate(href.session(props.sessionId, p.stage.id))}
          data-testid={`stage-${p.stage.id}`}
          data-built={p.stage.built}
          data-status={p.status ?? 'none'}
        >
          <span>
            <span className="muted small">{i + 1}.</span> {name(p.stage)}
          </span>
          {!p.stage.built ? (
            <small className="muted">{t('common.notYet')}</small>
          ) : (
            <small className="rail-facts">
              {p.status ? (
                <StatusBadge status={p.status} />
              ) : (
                <span className="muted">{t('sessions.notRun')}</span>
              )}
              {p.evidence > 0 && (
                <span className="muted" data-testid="rail-evidence">
                  {t('sessions.rail.evidence', { count: p.evidence })}
                </span>
              )}
              {p.waived > 0 && (
                <span className="warn-text" data-testid="rail-waived">
                  {t('sessions.rail.waived', { count: p.waived })}
                </span>
              )}
            </small>
          )}
        </button>
      ))}
    </nav>
  );
}

/** The stage the guide points at: the first built one, in order, not passed (or passed with warnings). */
const nextProgress = (progress: StageProgress[]): StageProgress | null =>
  progress.find((p) => p.stage.built && p.status !== 'pass' && p.status !== 'warn') ?? null;

/** Whether the guide's next step is adding a host (then nothing else on the page offers it too). */
export function guideAddsHosts(session: SessionRecord, progress: StageProgress[]): boolean {
  const next = nextProgress(progress);
  return !!next && !next.status && next.stage.runsOn !== 'local' && session.hosts.length === 0;
}

/**
 * What to do now and why: the first stage this build has, in the migration's order, that has no
 * result, holds failures nobody waived, or ended without one; else the report.
 */
export function NextStep(props: {
  session: SessionRecord;
  progress: StageProgress[];
  /** The stage on screen: no button to open what is already open. */
  current: string | null;
  onAddHosts: () => void;
}) {
  const { t } = useTranslation();
  const name = useStageName();
  const { session, progress } = props;
  const built = progress.filter((p) => p.stage.built);
  const order = built.map((p) => name(p.stage)).join(' → ');
  const next = nextProgress(progress);
  let what: string;
  let why: string;
  let action: { label: string; go: () => void; testId: string } | null = null;
  const goStage = (p: StageProgress, label: string) =>
    p.stage.id === props.current
      ? null
      : {
          label,
          go: () => navigate(href.session(session.id, p.stage.id)),
          testId: 'next-go',
        };
  if (!next) {
    const later = progress.filter((p) => !p.stage.built).map((p) => name(p.stage));
    what = t('sessions.next.report');
    why = later.length
      ? t('sessions.next.reportWhyLater', { later: later.join(t('common.join.list')) })
      : t('sessions.next.reportWhy');
    action = {
      label: t('sessions.next.reportGo'),
      go: () => navigate(href.page('reports')),
      testId: 'next-report',
    };
  } else {
    const stage = name(next.stage);
    if (guideAddsHosts(session, progress)) {
      what = t('sessions.next.addHost');
      why = t('sessions.next.addHostWhy', { stage });
      action = { label: t('sessions.addHost'), go: props.onAddHosts, testId: 'next-add-host' };
    } else if (!next.status) {
      what = t('sessions.next.run', { stage });
      why = t('sessions.next.runWhy', { stage, order });
      action = goStage(next, t('sessions.next.open', { stage }));
    } else if (next.status === 'running') {
      what = t('sessions.next.running', { stage });
      why = t('sessions.next.runningWhy');
      action = goStage(next, t('sessions.next.open', { stage }));
    } else if (holds(next)) {
      what = t('sessions.next.fix', { stage });
      why = t('sessions.next.fixWhy', { count: next.failing, stage });
      action = goStage(next, t('sessions.next.open', { stage }));
    } else {
      what = t('sessions.next.retry', { stage });
      why = t('sessions.next.retryWhy', { status: t(`sessions.status.${next.status}`) });
      action = goStage(next, t('sessions.next.open', { stage }));
    }
  }
  return (
    <aside className="next-step" data-testid="next-step" data-next={next?.stage.id ?? 'report'}>
      <div>
        <strong className="small muted">{t('sessions.next.title')}</strong>
        <p className="next-what" data-testid="next-what">
          {what}
        </p>
        <p className="muted small" data-testid="next-why">
          {why}
        </p>
      </div>
      {action && (
        <button className="primary" onClick={action.go} data-testid={action.testId}>
          {action.label}
        </button>
      )}
    </aside>
  );
}

/** A later stage warns when an earlier one fails and nobody waived it. */
export function Gate(props: {
  sessionId: number;
  progress: StageProgress[];
  current: string | null;
}) {
  const { t } = useTranslation();
  const name = useStageName();
  const at = props.progress.findIndex((p) => p.stage.id === props.current);
  const blocking = props.progress
    .slice(0, Math.max(at, 0))
    .filter((p) => p.stage.built && holds(p));
  if (!blocking.length) return null;
  return (
    <div className="notice warn" data-testid="stage-gate">
      {t('sessions.gate', {
        count: blocking.length,
        stages: blocking.map((p) => name(p.stage)).join(t('common.join.list')),
      })}{' '}
      <button
        className="link"
        onClick={() => navigate(href.session(props.sessionId, blocking[0]!.stage.id))}
      >
        {t('sessions.next.open', { stage: name(blocking[0]!.stage) })}
      </button>
    </div>
  );
}

/** The session's history, newest first: stage runs, waivers, code review decisions, reviews. */
export function Timeline(props: { session: SessionRecord; stages: StageInfo[] }) {
  const { t } = useTranslation();
  const name = useStageName();
  const client = useQueryClient();
  const events = useCall('sessions.timeline', { id: props.session.id });
  // the session refetched (a run ended, a waiver was given): so is its history
  useEffect(() => {
    void client.invalidateQueries({ queryKey: ['sessions.timeline'] });
  }, [client, props.session]);
  const stageName = (id: string) => {
    const st = props.stages.find((s) => s.id === id);
    return st ? name(st) : id;
  };
  const show = useText();
  // a waived check by its title, as its card names it; its id where no run has it any more
  const checkTitle = (id: string, host: string) => {
    const check = props.session.runs
      .filter((r) => r.host === host)
      .flatMap((r) => r.checks)
      .find((c) => c.id === id);
    return check ? show(check.title) : id;
  };
  const line = (e: TimelineEvent): { badge: ReactNode; text: string; hint?: string } => {
    switch (e.kind) {
      case 'run':
        return {
          badge: <StatusBadge status={e.status} />,
          // a run with no host (a stage of the engine's own) is just the stage, no "on —"
          text: e.host
            ? t('sessions.timeline.run', { stage: stageName(e.stage), host: uiHost(e.host) })
            : stageName(e.stage),
        };
      case 'waiver':
        return {
          badge: <span className="badge warn">{t('sessions.timeline.waived')}</span>,
          text: t('sessions.timeline.waiver', {
            check: checkTitle(e.checkId, e.host),
            host: uiHost(e.host),
            by: e.by,
            reason: e.reason,
          }),
          hint: e.checkId,
        };
      case 'waiver-removed':
        return {
          badge: <span className="badge">{t('sessions.timeline.unwaived')}</span>,
          text: t(e.by ? 'sessions.timeline.waiverRemovedBy' : 'sessions.timeline.waiverRemoved', {
            check: checkTitle(e.checkId, e.host),
            host: uiHost(e.host),
            by: e.by,
            waivedBy: e.waivedBy,
          }),
          hint: e.checkId,
        };
      case 'code-review':
        return {
          badge: <span className="badge">{t('sessions.timeline.reviewed')}</span>,
          text: t('sessions.timeline.codeReview', {
            file: e.file,
            review: e.partial
              ? t(
                  e.review === 'applied' ? 'code.review.appliedPartial' : 'code.review.partial',
                  e.partial,
                )
              : t(`code.review.${e.review}`),
            scan: e.scanId,
          }),
        };
      case 'comment':
        return {
          badge: <span className="badge">{t('sessions.timeline.commented')}</span>,
          text: t('sessions.timeline.comment', { author: e.author, text: e.text }),
        };
      case 'decision':
        return {
          badge: (
            <span className={`badge ${e.decision === 'approve' ? 'ok' : 'warn'}`}>
              {t(`sessions.timeline.decision.${e.decision}`)}
            </span>
          ),
          text: t('sessions.timeline.decided', { by: e.by, note: e.note || '—' }),
        };
    }
  };
  const list = events.data ?? [];
  return (
    <section className="timeline" data-testid="timeline">
      <h2>{t('sessions.timeline.title')}</h2>
      {events.error && <ErrorText error={events.error} />}
      {events.data && list.length === 0 && (
        <p className="muted small">{t('sessions.timeline.empty')}</p>
      )}
      {list.length > 0 && (
        <ol>
          {list.map((e, n) => {
            const l = line(e);
            return (
              <li key={n} data-testid={`timeline-${e.kind}`} title={l.hint}>
                <span className="muted small">{uiDateTime(e.at)}</span> {l.badge} {l.text}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}
