import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { HostInput } from '../../../shared/api';
import { useAction } from '../api';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';

/** Add a host; the same zod schema as the engine checks the fields as they are typed. */
export function AddHostDialog(props: {
  onClose: () => void;
  onAdded: (name: string) => void;
  jumpCandidates: string[];
}) {
  const { t } = useTranslation();
  const add = useAction('hosts.add', ['hosts.list', 'fleet.table']);
  const [form, setForm] = useState({
    name: '',
    hostname: '',
    port: '22',
    username: '',
    identityFile: '',
    jump: '',
    group: '',
  });
  const [touched, setTouched] = useState(false);
  const candidate = {
    name: form.name.trim(),
    hostname: form.hostname.trim(),
    port: Number(form.port),
    username: form.username.trim() || null,
    identityFile: form.identityFile.trim() || null,
    jump: form.jump || null,
    group: form.group.trim() || null,
  };
  const parsed = HostInput.safeParse(candidate);
  const fieldError = (field: string) =>
    touched && !parsed.success
      ? parsed.error.issues.find((i) => i.path[0] === field)?.message
      : undefined;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setTouched(true);
    if (!parsed.success) return;
    add.mutate(candidate, { onSuccess: (h) => props.onAdded(h.name) });
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
    <Dialog title={t('hosts.add.title')} onClose={props.onClose} testId="add-host-dialog">
      <form onSubmit={submit} className="form-grid">
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
            {props.jumpCandidates.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        {field('group', t('hosts.add.group'), { placeholder: 'cluster-a' })}
        {add.error && <ErrorText error={add.error} />}
        <div className="row end span">
          <button type="button" onClick={props.onClose}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            className="primary"
            data-testid="host-save"
            disabled={add.isPending}
          >
            {t('hosts.add.save')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
