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
import { SessionView } from './SessionView';

/**
 * The sessions list, or one session (`#/sessions/ID/STAGE`). Finished stage runs refresh what
 * shows them through the one job-kind map (jobs/invalidation.ts).
 */
export function SessionsPage(props: { route: SessionRoute | null }) {
  const { t } = useTranslation();
  const sessions = useCall('sessions.list', {});
  const [dialog, setDialog] = useState<'session' | 'project' | null>(null);
  if (props.route) return <SessionView id={props.route.id} stage={props.route.stage} />;
  const list = sessions.data ?? [];
  return (
    <section className="page" data-testid="page-sessions">
      <PageHead icon="sessions" title={t('pages.sessions.title')}>
        <div className="spacer" />
        <button onClick={() => setDialog('project')} data-testid="open-new-project">
          {t('sessions.newProject')}
        </button>
        <button
          className="primary"
          onClick={() => setDialog('session')}
          data-testid="open-new-session"
        >
          {t('sessions.newSession')}
        </button>
      </PageHead>
      {sessions.error && <ErrorText error={sessions.error} />}
      {sessions.data && list.length === 0 && (
        <div className="empty">
          <p className="lead">{t('pages.sessions.lead')}</p>
          <StartSteps page="sessions" />
        </div>
      )}
      {list.length > 0 && (
        <table className="table" data-testid="sessions-table">
          <thead>
            <tr>
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
                  <td>{s.id}</td>
                  <td>
                    <strong>{s.title}</strong>
                  </td>
                  <td>{s.project ?? '—'}</td>
                  <td>{s.hosts.join(', ') || '—'}</td>
                  <td>
                    {st ? (
                      <StatusBadge status={st} />
                    ) : (
                      <span className="muted">{t('sessions.notRun')}</span>
                    )}
                  </td>
                  <td>{new Date(s.createdAt).toLocaleString()}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {dialog === 'session' && (
        <NewSessionDialog
          onClose={() => setDialog(null)}
          onCreated={(id) => {
            setDialog(null);
            navigate(href.session(id));
          }}
        />
      )}
      {dialog === 'project' && <NewProjectDialog onClose={() => setDialog(null)} />}
    </section>
  );
}

function HostPicker(props: { value: string[]; onChange: (v: string[]) => void }) {
  const hosts = useCall('hosts.list', {});
  const { t } = useTranslation();
  if (!hosts.data?.length) return <p className="muted small">{t('sessions.noHosts')}</p>;
  return (
    <div className="checks-list">
      {hosts.data.map((h) => (
        <label key={h.name} className="inline">
          <input
            type="checkbox"
            data-testid={`pick-host-${h.name}`}
            checked={props.value.includes(h.name)}
            onChange={(e) =>
              props.onChange(
                e.target.checked
                  ? [...props.value, h.name]
                  : props.value.filter((x) => x !== h.name),
              )
            }
          />
          {h.name}
        </label>
      ))}
    </div>
  );
}

function NewSessionDialog(props: { onClose: () => void; onCreated: (id: number) => void }) {
  const { t } = useTranslation();
  const projects = useCall('projects.list', {});
  const create = useAction('sessions.create', ['sessions.list']);
  const [project, setProject] = useState('');
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
              {t('sessions.projectHosts', { hosts: chosen.targetHosts.join(', ') })}
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

function NewProjectDialog(props: { onClose: () => void }) {
  const { t } = useTranslation();
  const create = useAction('projects.create', ['projects.list']);
  const [f, setF] = useState({
    name: '',
    codeLocation: '',
    gpuModel: '',
    stepTimeMs: '',
    throughput: '',
    accuracyMetric: '',
  });
  const [hosts, setHosts] = useState<string[]>([]);
  const num = (v: string) => (v.trim() ? Number(v) : undefined);
  const input = (key: keyof typeof f, label: string, placeholder = '') => (
    <label className="field stacked">
      <span>{label}</span>
      <input
        value={f[key]}
        placeholder={placeholder}
        onChange={(e) => setF({ ...f, [key]: e.target.value })}
        data-testid={`project-${key}`}
      />
    </label>
  );
  return (
    <Dialog title={t('sessions.newProject')} onClose={props.onClose} testId="new-project-dialog">
      <div className="form-grid">
        {input('name', t('sessions.project.name'), 'llama-sft')}
        {input(
          'codeLocation',
          t('sessions.project.code'),
          '/work/llama-sft  or  npu-01:/data/llama-sft',
        )}
        <div className="field stacked span">
          <span>{t('sessions.project.targets')}</span>
          <HostPicker value={hosts} onChange={setHosts} />
        </div>
        <h3 className="span">{t('sessions.project.baseline')}</h3>
        {input('gpuModel', t('sessions.project.gpu'), 'A100 80GB')}
        {input('stepTimeMs', t('sessions.project.step'), '850')}
        {input('throughput', t('sessions.project.throughput'), '3200')}
        {input('accuracyMetric', t('sessions.project.metric'), 'eval loss 1.92')}
        {create.error && <ErrorText error={create.error} />}
        <div className="row end span">
          <button onClick={props.onClose}>{t('common.cancel')}</button>
          <button
            className="primary"
            data-testid="project-create"
            disabled={!f.name.trim() || create.isPending}
            onClick={() =>
              create.mutate(
                {
                  name: f.name.trim(),
                  codeLocation: f.codeLocation.trim() || null,
                  targetHosts: hosts,
                  baseline: {
                    ...(f.gpuModel.trim() ? { gpuModel: f.gpuModel.trim() } : {}),
                    ...(num(f.stepTimeMs) ? { stepTimeMs: num(f.stepTimeMs) } : {}),
                    ...(num(f.throughput) ? { throughput: num(f.throughput) } : {}),
                    ...(f.accuracyMetric.trim() ? { accuracyMetric: f.accuracyMetric.trim() } : {}),
                  },
                },
                { onSuccess: props.onClose },
              )
            }
          >
            {t('sessions.project.create')}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
