import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { PageHead } from '../../components/PageHead';
import { useAction, useCall } from '../../api';
import { Dialog } from '../../components/Dialog';
import { ErrorText } from '../../components/ErrorText';
import { href, navigate, type SessionRoute } from '../../routes';
import { overallStatus } from '../../stages/shared/status';
import { StatusBadge } from '../../stages/shared/StageStatus';
import { StartSteps } from '../StartPage';
import { Compare, SessionView } from './SessionView';
import { HostPicker, ProjectDialog } from '../../components/ProjectDialog';
import type { ProjectRecord, SessionRecord } from '../../../../shared/api';
import { uiDateTime, uiHost } from '../../format';

/**
 * The sessions list, or one session (`#/sessions/ID/STAGE`). Finished stage runs refresh what
 * shows them through the one job-kind map (jobs/invalidation.ts).
 */
export function SessionsPage(props: { route: SessionRoute | null }) {
  const { t } = useTranslation();
  const sessions = useCall('sessions.list', {});
  const projects = useCall('projects.list', {});
  const [dialog, setDialog] = useState<
    { kind: 'session'; project?: string } | { kind: 'project'; project?: ProjectRecord } | null
  >(null);
  const [saved, setSaved] = useState<{ name: string; created: boolean } | null>(null);
  const [picked, setPicked] = useState<number[]>([]);
  if (props.route) return <SessionView id={props.route.id} stage={props.route.stage} />;
  const list = sessions.data ?? [];
  const projectList = projects.data ?? [];
  const pick = (id: number, on: boolean) =>
    setPicked((p) =>
      on ? [...p.filter((x) => x !== id), id].slice(-2) : p.filter((x) => x !== id),
    );
  return (
    <section className="page" data-testid="page-sessions">
      <PageHead icon="sessions" title={t('pages.sessions.title')}>
        <div className="spacer" />
        <button onClick={() => setDialog({ kind: 'project' })} data-testid="open-new-project">
          {t('sessions.newProject')}
        </button>
        <button
          className="primary"
          onClick={() => setDialog({ kind: 'session' })}
          data-testid="open-new-session"
        >
          {t('sessions.newSession')}
        </button>
      </PageHead>
      {sessions.error && <ErrorText error={sessions.error} />}
      {projects.error && <ErrorText error={projects.error} />}
      {saved && (
        <p className="notice ok" data-testid="project-saved">
          {t(saved.created ? 'sessions.project.created' : 'sessions.project.saved', {
            name: saved.name,
          })}{' '}
          {saved.created && (
            <button
              className="link"
              data-testid="project-saved-session"
              onClick={() => setDialog({ kind: 'session', project: saved.name })}
            >
              {t('sessions.project.startSession')}
            </button>
          )}
        </p>
      )}
      {sessions.data && projects.data && list.length === 0 && projectList.length === 0 && (
        <div className="empty">
          <p className="lead">{t('pages.sessions.lead')}</p>
          <StartSteps page="sessions" />
        </div>
      )}
      {projectList.length > 0 && (
        <>
          <h2>{t('sessions.projects')}</h2>
          <table className="table" data-testid="projects-table">
            <thead>
              <tr>
                <th>{t('sessions.project.name')}</th>
                <th>{t('sessions.project.codeCol')}</th>
                <th>{t('sessions.project.targets')}</th>
                <th>{t('sessions.project.baselineCol')}</th>
                <th>{t('sessions.project.sessionsCol')}</th>
                <th>{t('sessions.project.lastStatus')}</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {projectList.map((p) => (
                <ProjectRow
                  key={p.name}
                  project={p}
                  sessions={list.filter((x) => x.project === p.name)}
                  onEdit={() => setDialog({ kind: 'project', project: p })}
                  onSession={() => setDialog({ kind: 'session', project: p.name })}
                />
              ))}
            </tbody>
          </table>
        </>
      )}
      {list.length > 0 && (
        <>
          <h2>{t('sessions.sessions')}</h2>
          <p className="muted small">{t('sessions.comparePickTwo')}</p>
          <table className="table" data-testid="sessions-table">
            <thead>
              <tr>
                <th aria-label={t('sessions.compare')} />
                <th>#</th>
                <th>{t('sessions.col.title')}</th>
                <th>{t('sessions.col.project')}</th>
                <th>{t('sessions.col.hosts')}</th>
                <th>{t('sessions.col.status')}</th>
                <th>{t('sessions.col.created')}</th>
              </tr>
            </thead>
            <tbody>
              {list.map((s) => {
                const st = overallStatus(s);
                return (
                  <tr
                    key={s.id}
                    className="clickable"
                    data-testid={`session-row-${s.id}`}
                    onClick={() => navigate(href.session(s.id))}
                  >
                    <td onClick={(e) => e.stopPropagation()}>
                      <input
                        type="checkbox"
                        aria-label={t('sessions.comparePickOne', { id: s.id })}
                        data-testid={`compare-pick-${s.id}`}
                        checked={picked.includes(s.id)}
                        onChange={(e) => pick(s.id, e.target.checked)}
                      />
                    </td>
                    <td>{s.id}</td>
                    <td>
                      <strong>{s.title}</strong>
                    </td>
                    <td>{s.project ?? '—'}</td>
                    <td>{s.hosts.map(uiHost).join(t('common.join.list')) || '—'}</td>
                    <td>
                      {st ? (
                        <StatusBadge status={st} />
                      ) : (
                        <span className="muted">{t('sessions.notRun')}</span>
                      )}
                    </td>
                    <td>{uiDateTime(s.createdAt)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {picked.length === 2 && (
            <section data-testid="list-compare">
              <h2>
                {t('sessions.compareTitle', { a: Math.min(...picked), b: Math.max(...picked) })}
              </h2>
              <Compare a={Math.min(...picked)} b={Math.max(...picked)} />
            </section>
          )}
        </>
      )}
      {dialog?.kind === 'session' && (
        <NewSessionDialog
          project={dialog.project}
          onClose={() => setDialog(null)}
          onCreated={(id) => {
            setDialog(null);
            navigate(href.session(id));
          }}
        />
      )}
      {dialog?.kind === 'project' && (
        <ProjectDialog
          project={dialog.project}
          onClose={() => setDialog(null)}
          onSaved={(p) => {
            setSaved({ name: p.name, created: !dialog.project });
            setDialog(null);
          }}
        />
      )}
    </section>
  );
}

function ProjectRow(props: {
  project: ProjectRecord;
  sessions: SessionRecord[];
  onEdit: () => void;
  onSession: () => void;
}) {
  const { t } = useTranslation();
  const { project: p } = props;
  const last = props.sessions[0] ?? null; // newest first
  const st = last ? overallStatus(last) : null;
  const b = p.baseline;
  const baseline = b
    ? [
        b.gpuModel,
        b.stepTimeMs !== undefined ? t('sessions.project.stepValue', { ms: b.stepTimeMs }) : null,
        b.throughput !== undefined
          ? t('sessions.project.throughputValue', { n: b.throughput })
          : null,
      ]
        .filter(Boolean)
        .join(' · ')
    : '';
  return (
    <tr data-testid={`project-row-${p.name}`}>
      <td>
        <strong>{p.name}</strong>
      </td>
      <td>{p.codeLocation ? <code>{p.codeLocation}</code> : <span className="muted">—</span>}</td>
      <td>{p.targetHosts.map(uiHost).join(t('common.join.list')) || '—'}</td>
      <td>{baseline || '—'}</td>
      <td>{t('sessions.project.sessionCount', { count: props.sessions.length })}</td>
      <td>
        {last ? (
          <button className="link" onClick={() => navigate(href.session(last.id))}>
            {st ? <StatusBadge status={st} /> : t('sessions.notRun')} #{last.id}
          </button>
        ) : (
          <span className="muted">{t('sessions.project.noSessions')}</span>
        )}
      </td>
      <td className="row end">
        <button className="small" onClick={props.onEdit} data-testid={`project-edit-${p.name}`}>
          {t('common.edit')}
        </button>
        <button
          className="small primary"
          onClick={props.onSession}
          data-testid={`project-session-${p.name}`}
        >
          {t('sessions.newSession')}
        </button>
      </td>
    </tr>
  );
}

function NewSessionDialog(props: {
  project?: string;
  onClose: () => void;
  onCreated: (id: number) => void;
}) {
  const { t } = useTranslation();
  const projects = useCall('projects.list', {});
  const create = useAction('sessions.create', ['sessions.list']);
  const [project, setProject] = useState(props.project ?? '');
  const [title, setTitle] = useState('');
  const [hosts, setHosts] = useState<string[]>([]);
  const chosen = projects.data?.find((p) => p.name === project);
  return (
    <Dialog title={t('sessions.newSession')} onClose={props.onClose} testId="new-session-dialog">
      <div className="form-grid">
        <label className="field stacked">
          <span>{t('sessions.col.project')}</span>
          <select
            value={project}
            onChange={(e) => setProject(e.target.value)}
            data-testid="session-project"
          >
            <option value="">{t('sessions.adHoc')}</option>
            {(projects.data ?? []).map((p) => (
              <option key={p.name} value={p.name}>
                {p.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field stacked">
          <span>{t('sessions.col.title')}</span>
          <input
            value={title}
            onChange={(e) => setTitle(e.target.value)}
            placeholder={t('sessions.titlePlaceholder')}
            data-testid="session-title"
          />
        </label>
        <div className="field stacked span">
          <span>{t('sessions.col.hosts')}</span>
          {chosen && chosen.targetHosts.length > 0 && !hosts.length ? (
            <p className="muted small">
              {t('sessions.projectHosts', {
                hosts: chosen.targetHosts.map(uiHost).join(t('common.join.list')),
              })}
            </p>
          ) : null}
          <HostPicker value={hosts} onChange={setHosts} />
        </div>
        {create.error && <ErrorText error={create.error} />}
        <div className="row end span">
          <button onClick={props.onClose}>{t('common.cancel')}</button>
          <button
            className="primary"
            data-testid="session-create"
            disabled={create.isPending}
            onClick={() =>
              create.mutate(
                {
                  ...(project ? { project } : {}),
                  ...(title.trim() ? { title: title.trim() } : {}),
                  ...(hosts.length ? { hosts } : {}),
                },
                { onSuccess: (s) => props.onCreated(s.id) },
              )
            }
          >
            {t('sessions.create')}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
