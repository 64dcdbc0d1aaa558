import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { HostInput, LOCAL_HOST_NAME, type HostRecord, type Text } from '../../../shared/api';
import { fieldIssues } from '../../../shared/api/validation';
import { useText } from '../i18n';
import { useAction, useCall } from '../api';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';

/**
 * Add or edit a host; the same zod schema as the engine checks the fields as they are typed.
 * With `initial` it edits that host.
 */
export function AddHostDialog(props: {
  onClose: () => void;
  onAdded: (name: string) => void;
  initial?: HostRecord;
}) {
  const { t } = useTranslation();
  const add = useAction('hosts.add', ['hosts.list', 'fleet.table']);
  const update = useAction('hosts.update', ['hosts.list', 'hosts.get', 'fleet.table']);
  const all = useCall('hosts.list', {});
  const i = props.initial;
  const action = i ? update : add;
  const [form, setForm] = useState({
    name: i?.name ?? '',
    hostname: i?.hostname ?? '',
    port: String(i?.port ?? 22),
    username: i?.username ?? '',
    identityFile: i?.identityFile ?? '',
    jump: i?.jump ?? '',
    group: i?.group ?? '',
    tags: (i?.tags ?? []).join(' '),
  });
  const [touched, setTouched] = useState(false);
  // this machine (the built-in `local`) is not reached over SSH, so nothing can hop through it
  const jumpCandidates = (all.data ?? [])
    .map((h) => h.name)
    .filter((n) => n !== i?.name && n !== LOCAL_HOST_NAME);
  const candidate = {
    name: form.name.trim(),
    hostname: form.hostname.trim(),
    port: Number(form.port),
    username: form.username.trim() || null,
    identityFile: form.identityFile.trim() || null,
    jump: form.jump || null,
    group: form.group.trim() || null,
    tags: form.tags.split(/[\s,]+/).filter(Boolean),
  };
  const parsed = HostInput.safeParse(candidate);
  // the engine's rules, said in the language shown (one message per field)
  const issues = !parsed.success ? fieldIssues(parsed.error, candidate) : [];
  const fieldError = (field: string) => {
    const issue = touched ? issues.find((x) => x.path.split('.')[0] === field) : undefined;
    return issue ? t(`validation.rule.${issue.rule}`, issue.params) : undefined;
  };
  const [warned, setWarned] = useState<{ name: string; warnings: Text[] } | null>(null);
  const text = useText();
  const saved = (h: { name: string; warnings?: Text[] }) =>
    h.warnings?.length ? setWarned({ name: h.name, warnings: h.warnings }) : props.onAdded(h.name);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!parsed.success) return;
    if (i) update.mutate({ name: i.name, patch: candidate }, { onSuccess: saved });
    else add.mutate(candidate, { onSuccess: saved });
  };
  const field = (
    key: keyof typeof form,
    label: string,
    extra: { placeholder?: string; type?: string } = {},
  ) => (
    <label className="field stacked">
      <span>{label}</span>
      <input
        data-testid={`host-${key}`}
        value={form[key]}
        type={extra.type ?? 'text'}
        placeholder={extra.placeholder}
        aria-invalid={!!fieldError(key)}
        onChange={(e) => setForm({ ...form, [key]: e.target.value })}
      />
      {fieldError(key) && <small className="error">{fieldError(key)}</small>}
    </label>
  );
  return (
    <Dialog
      title={i ? t('hosts.add.editTitle', { name: i.name }) : t('hosts.add.title')}
      onClose={props.onClose}
      testId="add-host-dialog"
    >
      <form onSubmit={submit} className="form-grid">
        {/* saved, with a warning: what was saved is no longer a form to submit again (a second
            save was a conflict with itself) */}
        {warned ? (
          <div className="notice warn span" data-testid="host-warnings">
            {warned.warnings.map((w, n) => (
              <p key={n}>{text(w)}</p>
            ))}
            <button
              type="button"
              className="primary"
              onClick={() => props.onAdded(warned.name)}
              data-testid="host-warnings-ok"
            >
              {t('hosts.warn.continue')}
            </button>
          </div>
        ) : (
          <>
            {field('name', t('hosts.add.name'), { placeholder: 'npu-01' })}
            {field('hostname', t('hosts.add.hostname'), { placeholder: '10.0.0.21' })}
            {field('port', t('hosts.add.port'), { type: 'number' })}
            {field('username', t('hosts.add.username'), { placeholder: 'ascend' })}
            {field('identityFile', t('hosts.add.identity'), { placeholder: '~/.ssh/id_ed25519' })}
            <label className="field stacked">
              <span>{t('hosts.add.jump')}</span>
              <select
                data-testid="host-jump"
                value={form.jump}
                onChange={(e) => setForm({ ...form, jump: e.target.value })}
              >
                <option value="">{t('hosts.add.noJump')}</option>
                {jumpCandidates.map((n) => (
                  <option key={n} value={n}>
                    {n}
                  </option>
                ))}
              </select>
            </label>
            {field('group', t('hosts.add.group'), { placeholder: 'cluster-a' })}
            {field('tags', t('hosts.add.tags'), { placeholder: 'a2 train' })}
            {action.error && <ErrorText error={action.error} />}
            <div className="row end span">
              <button type="button" onClick={props.onClose}>
                {t('common.cancel')}
              </button>
              <button
                type="submit"
                className="primary"
                data-testid="host-save"
                disabled={action.isPending}
              >
                {i ? t('hosts.add.update') : t('hosts.add.save')}
              </button>
            </div>
          </>
        )}
      </form>
    </Dialog>
  );
}
