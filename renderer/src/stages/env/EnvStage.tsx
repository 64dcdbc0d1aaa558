import { useTranslation } from 'react-i18next';
import type { StageRunRecord } from '../../../../shared/api';
import { CheckCard } from '../shared/CheckCard';
import { RunBlock, useJobAction } from '../shared/RunBlock';
import { StageStatusBadge } from '../shared/StageStatus';
import type { StageViewProps } from '../shared/types';
import { uiHost } from '../../format';

/** The environment stage: one column per host, each with its checks, rerun one or all. */
export function EnvStage(props: StageViewProps) {
  const { t } = useTranslation();
  if (!props.hosts.length) return <p className="muted">{t('stage-env:noHosts')}</p>;
  return (
    <div className="host-columns" data-testid="env-stage">
      {props.hosts.map((host) => (
        <HostColumn
          key={host}
          sessionId={props.session.id}
          host={host}
          run={props.runs.find((r) => r.host === host) ?? null}
        />
      ))}
    </div>
  );
}

function HostColumn(props: { sessionId: number; host: string; run: StageRunRecord | null }) {
  const { t } = useTranslation();
  const run = useJobAction('stages.run');
  const start = (checks?: string[]) =>
    run.start({
      stage: 'env',
      host: props.host,
      sessionId: props.sessionId,
      ...(checks ? { checks } : {}),
    });
  const r = props.run;
  return (
    <div className="host-column" data-testid={`host-column-${props.host}`}>
      <header>
        <strong>{uiHost(props.host)}</strong>
        <StageStatusBadge status={r?.status} />
        <div className="spacer" />
        <button
          className={r ? '' : 'primary'}
          disabled={run.running}
          onClick={() => start()}
          data-testid="run-stage"
        >
          {r ? t('sessions.rerunStage') : t('stage-env:run')}
        </button>
      </header>
      <RunBlock run={run} idle={!r && <p className="muted small">{t('sessions.notRun')}</p>} />
      {r?.checks.map((c) => (
        <CheckCard
          key={c.id}
          check={c}
          sessionId={props.sessionId}
          host={props.host}
          onRerun={() => start([c.id])}
          busy={run.running}
        />
      ))}
    </div>
  );
}
