import { useCallback, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { HostKeyInfo } from '../../../shared/api';
import { useEvent, useTransport } from '../api';
import { Dialog } from './Dialog';
import { InlineCode } from './InlineCode';

/**
 * Answers `hostkey.prompt`: shows the key type and SHA256 fingerprint of a host the workbench has
 * never seen, and asks. There is no such dialog for a changed key: that is refused, not asked.
 */
export function HostKeyDialog() {
  const { t } = useTranslation();
  const transport = useTransport();
  const [queue, setQueue] = useState<{ promptId: string; info: HostKeyInfo }[]>([]);
  const onPrompt = useCallback(
    (p: { promptId: string; info: HostKeyInfo }) => setQueue((q) => [...q, p]),
    [],
  );
  useEvent('hostkey.prompt', onPrompt);
  const current = queue[0];
  if (!current) return null;
  const answer = (accept: boolean) => {
    void transport
      .call('hosts.answerHostKey', { promptId: current.promptId, accept })
      .catch(() => undefined);
    setQueue((q) => q.slice(1));
  };
  const { info } = current;
  return (
    <Dialog title={t('hosts.hostKey.title')} onClose={() => answer(false)} testId="hostkey-dialog">
      <p>{t('hosts.hostKey.lead', { name: info.name, host: `${info.host}:${info.port}` })}</p>
      <dl className="facts">
        <dt>{t('hosts.hostKey.type')}</dt>
        <dd data-testid="hostkey-type">{info.keyType}</dd>
        <dt>{t('hosts.hostKey.fingerprint')}</dt>
        <dd>
          <code data-testid="hostkey-fingerprint">{info.fingerprint}</code>
        </dd>
      </dl>
      {info.knownTypes.length > 0 && (
        <p className="warn-text">
          {t('hosts.hostKey.otherTypes', { types: info.knownTypes.join(', ') })}
        </p>
      )}
      <p className="muted small">
        <InlineCode text={t('hosts.hostKey.verify')} />
      </p>
      <div className="row end">
        <button onClick={() => answer(false)} data-testid="hostkey-reject">
          {t('common.cancel')}
        </button>
        <button className="primary" onClick={() => answer(true)} data-testid="hostkey-accept">
          {t('hosts.hostKey.trust')}
        </button>
      </div>
    </Dialog>
  );
}
