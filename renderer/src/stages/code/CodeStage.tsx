import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ProjectDialog } from '../../components/ProjectDialog';
import { useCall } from '../../api';
import { href } from '../../routes';
import { CheckCard } from '../shared/CheckCard';
import { RunBlock, useJobAction } from '../shared/RunBlock';
import { StageStatusBadge } from '../shared/StageStatus';
import type { StageViewProps } from '../shared/types';
import { uiDateTime } from '../../format';

/**
 * The session's code stage: scan the project's local folder, see each scan's counts (so the
 * history shows findings going down), one check per rule from the newest scan, and a way into
 * the diff review.
 */
export function CodeStage(props: StageViewProps) {
  const { t } = useTranslation();
  const { session } = props;
  const projects = useCall('projects.list', {});
  const scans = useCall('code.scans', { sessionId: session.id });
  // inside a session, a scan is this stage's run (job kind stage.code)
  const scan = useJobAction('code.scan');
  const location = projects.data?.find((p) => p.name === session.project)?.codeLocation ?? null;
  // host:path locations are scanned after fetching the code; a scan here reads the local disk
  // (an absolute folder, or one relative to where the engine runs, as the CLI resolves it)
  const local = location && !/^[^/\\]+:/.test(location) ? location : null;
  const project = projects.data?.find((p) => p.name === session.project) ?? null;
  const [editing, setEditing] = useState(false);
  const run = props.runs[0] ?? null;
  return (
    <div className="code-stage" data-testid="code-stage">
      <header className="stage-head">
        <h2>{t('code.stageTitle')}</h2>
        <StageStatusBadge status={run?.status} />
        <div className="spacer" />
        {local && (
          <button
            className="primary"
            disabled={scan.running}
            data-testid="code-stage-scan"
            onClick={() => scan.start({ path: local, sessionId: session.id })}
          >
            {t('code.stageScan', { path: local })}
          </button>
        )}
      </header>
      {!local && (
        <div className="notice empty-stage" data-testid="code-stage-needs-location">
          <p>{project ? t('code.stageNoLocation') : t('code.stageNoProject')}</p>
          {project ? (
            <button
              className="primary"
              onClick={() => setEditing(true)}
              data-testid="code-stage-set-location"
            >
              {t('code.stageSetLocation')}
            </button>
          ) : (
            <a
              className="button"
              href={href.scanFor(session.id)}
              data-testid="code-stage-open-code"
            >
              {t('code.stageOpenCode')}
            </a>
          )}
        </div>
      )}
      {editing && project && (
        <ProjectDialog
          project={project}
          onClose={() => setEditing(false)}
          onSaved={() => setEditing(false)}
        />
      )}
      <RunBlock run={scan} />
      {scans.data && scans.data.length === 0 && <p className="muted">{t('code.stageEmpty')}</p>}
      {scans.data && scans.data.length > 0 && (
        <table className="table" data-testid="code-stage-scans">
          <thead>
            <tr>
              <th>#</th>
              <th>{t('code.folder')}</th>
              <th>{t('code.when')}</th>
              <th>{t('code.findings')}</th>
              <th>{t('code.effortCol')}</th>
              <th>{t('code.reviewCol')}</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {scans.data.map((s) => (
              <tr key={s.id} data-testid="code-stage-scan-row">
                <td>{s.id}</td>
                {/* a session may scan more than one folder: which one each scan was */}
                <td data-testid="code-stage-folder">
                  <code title={s.root}>{s.root.split('/').filter(Boolean).pop() ?? s.root}</code>
                </td>
                <td>{uiDateTime(s.createdAt)}</td>
                <td>
                  <span className="sev error">{s.counts.error}</span>{' '}
                  <span className="sev warning">{s.counts.warning}</span>{' '}
                  <span className="sev info">{s.counts.info}</span>
                </td>
                <td>{t(`code.level.${s.effort.level}`)}</td>
                <td data-testid="code-stage-reviewed">
                  {t('code.reviewedCount', {
                    accepted: s.reviewed.accepted + s.reviewed.edited + s.reviewed.applied,
                    changed: s.reviewed.changed,
                  })}
                  {/* an edited file is accepted, but not as proposed: say how many */}
                  {s.reviewed.inPart > 0 && t('code.reviewedInPart', { count: s.reviewed.inPart })}
                </td>
                <td>
                  <a href={href.scan(s.id)}>{t('code.open')}</a>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="code-checks">
        {run?.checks.map((c) => (
          <CheckCard
            key={c.id}
            check={c}
            sessionId={session.id}
            host={run.host}
            busy={scan.running}
          />
        ))}
      </div>
    </div>
  );
}
