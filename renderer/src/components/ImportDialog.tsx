import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useAction, useCall } from '../api';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';

/** ~/.ssh/config import: preview every host (Include and ProxyJump resolved), pick, import. */
export function ImportDialog(props: { onClose: () => void; onAddByHand?: () => void }) {
  const { t } = useTranslation();
  // a file chosen by path (a path on the machine the engine runs on: in serve mode, the server)
  const [file, setFile] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const preview = useCall('hosts.importSshConfig', { dryRun: true, ...(file ? { file } : {}) });
  const run = useAction('hosts.importSshConfig', ['hosts.list', 'fleet.table']);
  const [picked, setPicked] = useState<Set<string> | null>(null);
  const candidates = preview.data?.candidates ?? [];
  const chosen = picked ?? new Set(candidates.map((c) => c.name));
  return (
    <Dialog title={t('hosts.import.title')} onClose={props.onClose} testId="import-dialog" wide>
      {preview.isLoading && <p className="muted">{t('common.loading')}</p>}
      {preview.error && <ErrorText error={preview.error} />}
      {preview.data?.missing && (
        <p className="notice warn" data-testid="import-missing">
          {t('hosts.import.missing', { path: preview.data.missing })}
        </p>
      )}
      {preview.data && !preview.data.missing && candidates.length === 0 && (
        <p className="muted">{t('hosts.import.none')}</p>
      )}
      {(preview.data?.missing || preview.error || file) && (
        <div className="row">
          <label className="field stacked">
            <span>{t('hosts.import.file')}</span>
            <input
              value={typed}
              placeholder="/home/me/ssh_config"
              onChange={(e) => setTyped(e.target.value)}
              data-testid="import-file"
            />
          </label>
          <button
            disabled={!typed.trim()}
            onClick={() => {
              setPicked(null);
              setFile(typed.trim());
            }}
            data-testid="import-file-read"
          >
            {t('hosts.import.read')}
          </button>
          {props.onAddByHand && (
            <button onClick={props.onAddByHand} data-testid="import-by-hand">
              {t('hosts.import.byHand')}
            </button>
          )}
        </div>
      )}
      {candidates.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th />
              <th>{t('hosts.col.name')}</th>
              <th>{t('hosts.col.address')}</th>
              <th>{t('hosts.add.jump')}</th>
            </tr>
          </thead>
          <tbody>
            {candidates.map((c) => (
              <tr key={c.name}>
                <td>
                  <input
                    type="checkbox"
                    checked={chosen.has(c.name)}
                    onChange={(e) => {
                      const next = new Set(chosen);
                      if (e.target.checked) next.add(c.name);
                      else next.delete(c.name);
                      setPicked(next);
                    }}
                  />
                </td>
                <td>{c.name}</td>
                <td>
                  <code>{`${c.username ? `${c.username}@` : ''}${c.hostname}:${c.port ?? 22}`}</code>
                </td>
                <td>{c.jump ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {run.data && (
        <p className="ok-text" data-testid="import-result">
          {t('cli.imported', {
            added: run.data.added.length,
            updated: run.data.updated.length,
            skipped: run.data.skipped.length,
          })}
        </p>
      )}
      {run.error && <ErrorText error={run.error} />}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.close')}</button>
        <button
          className="primary"
          disabled={!chosen.size || run.isPending}
          onClick={() => run.mutate({ names: [...chosen], ...(file ? { file } : {}) })}
        >
          {t('hosts.import.run', { count: chosen.size })}
        </button>
      </div>
    </Dialog>
  );
}
