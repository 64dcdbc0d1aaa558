import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DOCTOR_RULES_NS, type CheckOutcome } from '../../../../shared/api';
import { useAction } from '../../api';
import { Dialog } from '../../components/Dialog';
import { ErrorText } from '../../components/ErrorText';
import { useText } from '../../i18n';
import { StatusBadge } from './StageStatus';
import { statusClass } from './status';

const WAIVER_NAME_KEY = 'amw.waiverName';

/**
 * One check's outcome, the same in every stage: status, title, summary, remediation, evidence,
 * its waiver, and (where the stage allows) rerunning it alone and waiving it.
 */
export function CheckCard(props: {
  check: CheckOutcome;
  sessionId: number;
  /** The host the check ran on (waivers are per host). */
  host: string;
  /** Absent where a check cannot be rerun alone (the code stage rescans the whole tree). */
  onRerun?: () => void;
  /** Whether a failure may be waived here (the code stage's are cleared by fixing the code). */
  waivable?: boolean;
  busy: boolean;
}) {
  const { t } = useTranslation();
  const text = useText();
  const c = props.check;
  const [waiving, setWaiving] = useState(false);
  const unwaive = useAction('checks.unwaive', ['sessions.get', 'sessions.list']);
  const waivable =
    !!props.waivable && (c.status === 'fail' || c.status === 'warn' || c.status === 'error');
  return (
    <article
      className={`check-card ${statusClass(c.status)}${c.waiver ? ' waived' : ''}`}
      data-testid={`check-${c.id}`}
      data-status={c.status}
    >
      <header>
        <StatusBadge status={c.status} />
        <strong>{text(c.title)}</strong>
      </header>
      <p>{text(c.summary)}</p>
      {c.remediation && c.status !== 'pass' && <pre className="remedy">{text(c.remediation)}</pre>}
      {c.diagnosis?.length ? (
        <div className="diagnosis" data-testid="diagnosis">
          <strong>{t('sessions.diagnosis')}</strong>
          <ul>
            {c.diagnosis.map((d) => (
              <li key={`${d.rule}:${d.line}`} data-rule={d.rule}>
                <b>{t(`${DOCTOR_RULES_NS}:${d.rule}.title`)}</b> —{' '}
                {t(`${DOCTOR_RULES_NS}:${d.rule}.cause`)}
                <div className="small">→ {t(`${DOCTOR_RULES_NS}:${d.rule}.fix`)}</div>
                <code className="small muted">{d.text}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {c.waiver && (
        <p className="waiver" data-testid="waiver">
          {t('sessions.waivedBy', { by: c.waiver.by, reason: c.waiver.reason })}
        </p>
      )}
      <details>
        <summary>{t('sessions.evidence')}</summary>
        <pre className="cli evidence">{JSON.stringify(c.evidence, null, 2)}</pre>
      </details>
      {unwaive.error && <ErrorText error={unwaive.error} />}
      <footer>
        <code className="muted small">{c.id}</code>
        <div className="spacer" />
        {props.onRerun && (
          <button
            className="small"
            onClick={props.onRerun}
            disabled={props.busy}
            data-testid="rerun-check"
          >
            {t('sessions.rerun')}
          </button>
        )}
        {waivable && !c.waiver && (
          <button className="small" onClick={() => setWaiving(true)} data-testid="waive">
            {t('sessions.waive')}
          </button>
        )}
        {c.waiver && (
          <button
            className="small"
            disabled={unwaive.isPending}
            onClick={() =>
              unwaive.mutate({ sessionId: props.sessionId, checkId: c.id, host: props.host })
            }
            data-testid="unwaive"
          >
            {t('sessions.unwaive')}
          </button>
        )}
      </footer>
      {waiving && (
        <WaiveDialog
          sessionId={props.sessionId}
          host={props.host}
          check={c}
          onClose={() => setWaiving(false)}
        />
      )}
    </article>
  );
}

function WaiveDialog(props: {
  sessionId: number;
  host: string;
  check: CheckOutcome;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const text = useText();
  const waive = useAction('checks.waive', ['sessions.get', 'sessions.list']);
  const [reason, setReason] = useState('');
  const [by, setBy] = useState(() => localStorage.getItem(WAIVER_NAME_KEY) ?? '');
  const ok = reason.trim().length >= 3 && by.trim().length > 0;
  return (
    <Dialog
      // named as its card names it; the id after, as the card's footer shows it
      title={t('sessions.waiveTitle', {
        check: `${text(props.check.title)}${t('common.paren', { text: props.check.id })}`,
      })}
      onClose={props.onClose}
      testId="waive-dialog"
    >
      <p className="muted">{text(props.check.summary)}</p>
      <label className="field stacked">
        <span>{t('sessions.waiveReason')}</span>
        <textarea
          rows={3}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          data-testid="waive-reason"
        />
      </label>
      <label className="field stacked">
        <span>{t('sessions.waiveBy')}</span>
        <input value={by} onChange={(e) => setBy(e.target.value)} data-testid="waive-by" />
      </label>
      {waive.error && <ErrorText error={waive.error} />}
      <div className="row end">
        <button onClick={props.onClose}>{t('common.cancel')}</button>
        <button
          className="primary"
          disabled={!ok || waive.isPending}
          data-testid="waive-save"
          onClick={() => {
            localStorage.setItem(WAIVER_NAME_KEY, by.trim());
            waive.mutate(
              {
                sessionId: props.sessionId,
                checkId: props.check.id,
                host: props.host,
                reason: reason.trim(),
                by: by.trim(),
              },
              { onSuccess: props.onClose },
            );
          }}
        >
          {t('sessions.waive')}
        </button>
      </div>
    </Dialog>
  );
}
