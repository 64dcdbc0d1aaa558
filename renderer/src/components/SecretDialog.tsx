import { useCallback, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useEvent, useTransport } from '../api';
import { Dialog } from './Dialog';

/** Asks for a private key's passphrase when the engine needs it; it is used once and not kept. */
export function SecretDialog() {
  const { t } = useTranslation();
  const transport = useTransport();
  const [queue, setQueue] = useState<{ promptId: string; file: string }[]>([]);
  const [value, setValue] = useState('');
  const onPrompt = useCallback(
    (p: { promptId: string; file: string }) => setQueue((q) => [...q, p]),
    [],
  );
  useEvent('secret.prompt', onPrompt);
  const current = queue[0];
  if (!current) return null;
  const answer = (secret: string | null) => {
    void transport
      .call('hosts.answerSecret', { promptId: current.promptId, secret })
      .catch(() => undefined);
    setValue('');
    setQueue((q) => q.slice(1));
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    answer(value);
  };
  return (
    <Dialog title={t('hosts.passphrase.title')} onClose={() => answer(null)} testId="secret-dialog">
      <form onSubmit={submit}>
        <p>{t('hosts.passphrase.lead', { file: current.file })}</p>
        <input
          type="password"
          autoFocus
          autoComplete="off"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          data-testid="secret-input"
        />
        <div className="row end">
          <button type="button" onClick={() => answer(null)}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" data-testid="secret-ok">
            {t('hosts.passphrase.ok')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
