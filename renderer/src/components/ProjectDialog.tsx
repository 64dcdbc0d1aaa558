import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ProjectRecord } from '../../../shared/api';
import { explainIssue, fieldIssues } from '../../../shared/i18n';
import { toWireError } from '../../../shared/errors';
import { useAction, useCall } from '../api';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';
import { uiHost } from '../format';
import { LOCAL_HOST_NAME } from '../../../shared/api/hosts';

/** Hosts to pick from, by name (the hosts the workbench knows). */
export function HostPicker(props: { value: string[]; onChange: (v: string[]) => void }) {
  const hosts = useCall('hosts.list', {});
  const { t } = useTranslation();
  // this machine is always there to pick (the engine adds its built-in host when first named)
  const names = [
    LOCAL_HOST_NAME,
    ...(hosts.data ?? []).map((h) => h.name).filter((n) => n !== LOCAL_HOST_NAME),
  ];
  return (
    <>
      {names.length === 1 && <p className="muted small">{t('sessions.noHosts')}</p>}
      <div className="checks-list">
        {names.map((name) => (
          <label key={name} className="inline">
            <input
              type="checkbox"
              data-testid={`pick-host-${name}`}
              checked={props.value.includes(name)}
              onChange={(e) =>
                props.onChange(
                  e.target.checked ? [...props.value, name] : props.value.filter((x) => x !== name),
                )
              }
            />
            {uiHost(name)}
          </label>
        ))}
      </div>
    </>
  );
}

type NumberField = 'stepTimeMs' | 'throughput';
const NUMBER_FIELDS: NumberField[] = ['stepTimeMs', 'throughput'];

/**
 * Creates a project, or edits one (`project` given: its name stays). Numbers are checked as typed
 * ("abc" is refused by its field, never dropped); the engine's refusals show by their field too.
 */
export function ProjectDialog(props: {
  project?: ProjectRecord;
  onClose: () => void;
  onSaved: (p: ProjectRecord) => void;
}) {
  const { t } = useTranslation();
  const editing = props.project;
  const create = useAction('projects.create', ['projects.list']);
  const update = useAction('projects.update', ['projects.list', 'sessions.list', 'sessions.get']);
  const save = editing ? update : create;
  const b = editing?.baseline ?? {};
  const [f, setF] = useState({
    name: editing?.name ?? '',
    codeLocation: editing?.codeLocation ?? '',
    gpuModel: b.gpuModel ?? '',
    stepTimeMs: b.stepTimeMs !== undefined ? String(b.stepTimeMs) : '',
    throughput: b.throughput !== undefined ? String(b.throughput) : '',
    accuracyMetric: b.accuracyMetric ?? '',
  });
  const [hosts, setHosts] = useState<string[]>(editing?.targetHosts ?? []);
  const [local, setLocal] = useState<Partial<Record<string, string>>>({});
  const tr = (k: string, p?: Record<string, unknown>) => t(k, p ?? {});
  const engine = save.error ? fieldIssues(toWireError(save.error)) : new Map();
  const fieldError = (key: string) => {
    if (local[key]) return local[key];
    const issue = engine.get(key);
    return issue ? explainIssue(tr, issue) : undefined;
  };
  const input = (key: keyof typeof f, label: string, placeholder = '', hint?: string) => {
    const error = fieldError(key);
    return (
      <label className="field stacked">
        <span>{label}</span>
        <input
          value={f[key]}
          placeholder={placeholder}
          disabled={key === 'name' && !!editing}
          aria-invalid={error ? true : undefined}
          onChange={(e) => setF({ ...f, [key]: e.target.value })}
          data-testid={`project-${key}`}
        />
        {hint && <small className="muted">{hint}</small>}
        {error && (
          <small className="error" data-testid={`project-${key}-error`}>
            {error}
          </small>
        )}
      </label>
    );
  };
  const submit = () => {
    const bad: Record<string, string> = {};
    const nums: Partial<Record<NumberField, number>> = {};
    for (const k of NUMBER_FIELDS) {
      const v = f[k].trim();
      if (!v) continue;
      const n = Number(v);
      if (!Number.isFinite(n)) bad[k] = explainIssue(tr, { path: k, field: k, rule: 'number' });
      else if (n <= 0)
        bad[k] = explainIssue(tr, { path: k, field: k, rule: 'greaterThan', params: { min: 0 } });
      else nums[k] = n;
    }
    setLocal(bad);
    if (Object.keys(bad).length) return;
    const baseline = {
      ...(f.gpuModel.trim() ? { gpuModel: f.gpuModel.trim() } : {}),
      ...nums,
      ...(f.accuracyMetric.trim() ? { accuracyMetric: f.accuracyMetric.trim() } : {}),
    };
    const body = {
      name: f.name.trim(),
      codeLocation: f.codeLocation.trim() || null,
      targetHosts: hosts,
      baseline: Object.keys(baseline).length ? baseline : null,
    };
    if (editing) update.mutate(body, { onSuccess: props.onSaved });
    else create.mutate(body, { onSuccess: props.onSaved });
  };
  const unexplained = save.error && engine.size === 0;
  return (
    <Dialog
      title={
        editing ? t('sessions.project.editTitle', { name: editing.name }) : t('sessions.newProject')
      }
      onClose={props.onClose}
      testId="project-dialog"
    >
      <div className="form-grid">
        {input('name', t('sessions.project.name'), 'llama-sft')}
        {input(
          'codeLocation',
          t('sessions.project.code'),
          '/work/llama-sft  ·  npu-01:/data/llama-sft',
          t('sessions.project.codeHint'),
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
        {unexplained && <ErrorText error={save.error} />}
        <div className="row end span">
          <button onClick={props.onClose}>{t('common.cancel')}</button>
          <button
            className="primary"
            data-testid="project-save"
            disabled={!f.name.trim() || save.isPending}
            onClick={submit}
          >
            {editing ? t('sessions.project.save') : t('sessions.project.create')}
          </button>
        </div>
      </div>
    </Dialog>
  );
}
