import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SessionRecord } from '../../../shared/api';
import { useAction } from '../api';
import { href } from '../routes';
import { Dialog } from './Dialog';
import { ErrorText } from './ErrorText';
import { HostPicker } from './ProjectDialog';

/** Adds or removes the hosts a session targets, at any time (its runs so far stay). */
export function SessionHostsDialog(props: { session: SessionRecord; onClose: () => void }) {
  const { t } = useTranslation();
  const [hosts, setHosts] = useState(props.session.hosts);
  const save = useAction('sessions.setHosts', ['sessions.get', 'sessions.list']);
  return (
    <Dialog
      title={t('sessions.hostsTitle', { title: props.session.title })}
      onClose={props.onClose}
      testId="session-hosts-dialog"
    >
      <p className="muted small">{t('sessions.hostsExplain')}</p>
      <HostPicker value={hosts} onChange={setHosts} />
      <p className="small">
        <a href={href.page('hosts')}>{t('sessions.hostsNew')}</a>
      </p>
      {save.error && <ErrorText error={save.error} />}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.cancel')}</button>
        <button
          className="primary"
          data-testid="session-hosts-save"
          disabled={save.isPending}
          onClick={() => save.mutate({ id: props.session.id, hosts }, { onSuccess: props.onClose })}
        >
          {t('sessions.hostsSave', { count: hosts.length })}
        </button>
      </div>
    </Dialog>
  );
}
